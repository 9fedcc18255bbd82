# SPDX-License-Identifier: Apache-2.0
"""The what-if engine InfluxDB 1.6: its private server, its backend folder, our subscriber's writer.

The server runs in a private stack of this module (`influxdb` is started only on request), beside
the session stack's Tango database where a test needs devices.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from hdbbench.stack.servers import homes
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint
from hdbbench.stack.stack import Stack
from tests.harness.servers import private_stack

pytestmark = pytest.mark.skipif(not Path("/usr/bin/influxd").exists(),
                                reason="influxd is not installed (Debian package influxdb)")


@pytest.fixture(scope="module")
def influx_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with private_stack(components=("influxdb",)) as stack:
        yield stack


@pytest.fixture(scope="module")
def influx(influx_stack: Stack) -> InfluxDBEndpoint:
    endpoint = influx_stack.up()["influxdb"]
    assert isinstance(endpoint, InfluxDBEndpoint)
    return endpoint


def _listening(pid: int) -> list[tuple[str, int]]:
    return [(c.laddr.ip, c.laddr.port) for c in psutil.Process(pid).net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN]


def test_server_up_status_down_leaves_nothing() -> None:
    with private_stack(components=("influxdb",)) as stack:
        endpoint = stack.up()["influxdb"]
        status = stack.server("influxdb").status()
        assert status.ready and status.version and status.version.startswith("InfluxDB 1.")
        assert status.pid is not None
        listening = _listening(status.pid)
        # The HTTP API and the RPC service of backups, both on loopback, nothing else.
        assert len(listening) == 2 and {ip for ip, _ in listening} == {"127.0.0.1"}, listening
        assert endpoint.port in {port for _, port in listening}
        # Authentication is on: without credentials the API refuses, with the administrator's it answers.
        with pytest.raises(urllib.request.HTTPError) as refused:
            urllib.request.urlopen(f"{endpoint.url}/query?q=SHOW+DATABASES", timeout=5)
        assert refused.value.code == 401
        assert endpoint.request("GET", "/query", {"q": "SHOW DATABASES"})[0] == 200
        process = psutil.Process(status.pid)
        state_dir = stack.config.state_dir
    assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    assert not homes.home_path(state_dir, "influxdb").exists()

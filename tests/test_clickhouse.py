# SPDX-License-Identifier: Apache-2.0
"""ClickHouse, the what-if engine: its private server comes up only when named, listens on loopback
only and goes down completely; the HDB++-shaped backend on it stores, counts, reads back and sizes
what it is given."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from hdbbench.stack.servers.process import ProcessRecord
from hdbbench.stack.stack import DEFAULT_COMPONENTS
from tests.harness import REPO
from tests.harness.runs import HDBBENCH

KIND = "clickhouse"

pytestmark = pytest.mark.skipif(shutil.which("clickhouse-server") is None
                                and not Path("/usr/sbin/clickhouse-server").exists(),
                                reason="clickhouse-server is not installed (apt-get install clickhouse-server)")


def cli(*args: str, timeout_s: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HDBBENCH, *args], check=False, capture_output=True, text=True, timeout=timeout_s, cwd=REPO)


@pytest.fixture
def scratch_state_dir() -> Iterator[Path]:
    path = REPO / ".hdbbench" / f"pytest-ch-{uuid.uuid4().hex[:8]}"
    yield path
    cli("stack", "down", "--state-dir", str(path), timeout_s=120)
    shutil.rmtree(path, ignore_errors=True)


def _server_process(state_dir: Path) -> psutil.Process | None:
    record = ProcessRecord.load(state_dir / KIND / "process.json")
    return record.process() if record else None


def test_up_only_when_named_status_down_leaves_nothing(scratch_state_dir: Path) -> None:
    state = ["--state-dir", str(scratch_state_dir)]
    up = cli("stack", "up", "--only", KIND, *state, "--json")
    assert up.returncode == 0, up.stderr
    endpoint = json.loads(up.stdout)[KIND]
    assert endpoint["host"] == "127.0.0.1" and endpoint["port"] > 0
    server = _server_process(scratch_state_dir)
    assert server is not None
    listening = [c.laddr for c in server.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert len(listening) == 2  # HTTP and the native protocol, no interserver port
    assert {addr.ip for addr in listening} == {"127.0.0.1"}

    status = cli("stack", "status", "--only", KIND, *state, "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)["servers"][KIND]
    assert report["ready"] is True and report["version"].startswith("ClickHouse 18.")

    down = cli("stack", "down", *state)  # without --only: a kind started on request is stopped too
    assert down.returncode == 0, down.stderr
    _, alive = psutil.wait_procs([server], timeout=30)
    assert alive == []
    assert not (scratch_state_dir / KIND / "process.json").exists()


def test_default_stack_does_not_name_it() -> None:
    assert KIND not in DEFAULT_COMPONENTS

# SPDX-License-Identifier: Apache-2.0
"""The what-if engine InfluxDB 1.6: its private server, its backend folder, our subscriber's writer.

The server runs in a private stack of this module (`influxdb` is started only on request), beside
the session stack's Tango database where a test needs devices.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hdbbench.backends import Backend
from hdbbench.backends.base import SQL_SCHEMA, extraction_of
from hdbbench.backends.influxdb import writer as influx_writer
from hdbbench.backends.influxdb.tables import att_conf_id
from hdbbench.backends.registry import DEFAULT_BACKENDS, backend_class, lib_configuration
from hdbbench.model.errors import ConfigError, SchemaError, ServerError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType
from hdbbench.stack.servers import homes
from hdbbench.stack.servers import influxdb as influx_server
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint
from hdbbench.stack.stack import Stack
from hdbbench.subscribers.launcher import DEFAULT_BINARY
from tests.harness.composed import Harness
from tests.harness.databases import fresh_backend
from tests.harness.every_event import assert_every_event_stored_once
from tests.harness.records import ATTRIBUTES, Unprinted, record_line
from tests.harness.servers import private_stack
from tests.harness.values import PROPERTY, Clock, assert_read_back, event

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


# ------------------------------------------------------------------------------ the backend


def test_the_layout_refuses_what_influxdb_cannot_hold() -> None:
    cls = backend_class("influxdb")
    assert cls.cannot_hold(TangoType.DEV_ULONG64, AttrFormat.SCALAR)
    assert cls.cannot_hold(TangoType.DEV_ENCODED, AttrFormat.SCALAR)
    assert cls.cannot_hold(TangoType.DEV_DOUBLE, AttrFormat.IMAGE) is None
    assert "influxdb" not in DEFAULT_BACKENDS  # a what-if engine runs only where a scenario names it
    assert cls.refusal(SQL_SCHEMA) is not None


def test_a_name_whose_id_is_taken_is_refused(influx: InfluxDBEndpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids are the names' hashes (the C++ writer computes the same: subscriber/tests); a second name
    whose id att_conf holds for another is refused, not merged into the other's series."""
    with fresh_backend("influxdb", influx) as db:
        first = AttributeInfo("tango://h:1/a/b/c/d", TangoType.DEV_DOUBLE)
        with db.bulk_writer() as writer:
            assert writer.register_attribute(first) == att_conf_id(first.name)
        monkeypatch.setattr(influx_writer, "att_conf_id", lambda name: att_conf_id(first.name))
        with db.bulk_writer() as writer, pytest.raises(SchemaError, match="same att_conf_id"):
            writer.register_attribute(AttributeInfo("tango://h:1/a/b/c/e", TangoType.DEV_DOUBLE))


# ------------------------------------------------------------------------------ through our subscriber

@pytest.mark.subscriber
def test_our_subscriber_stores_every_event_once(influx: InfluxDBEndpoint, harness: Harness, tmp_path: Path) -> None:
    """InfluxDB would replace a point of the same series and time, so a re-delivered event must not
    reach it as a second write of another value."""
    # quote, comma, space and equals: what line protocol escapes
    assert_every_event_stored_once(harness, "influxdb", influx, tmp_path, seed=5454, string_text='m"s,g =',
                                   subscriber_id=97)


def test_outside_counter_and_visibility_follow_the_stored_events(influx: InfluxDBEndpoint) -> None:
    """The counter is this database's data points only (configuration points and other databases do
    not count); the probe sees exactly the events newer than each bound."""
    with fresh_backend("influxdb", influx) as db, fresh_backend("influxdb", influx) as other:
        figures = backend_class("influxdb").outside_figures()
        assert figures is not None
        reader = figures.reader(db)
        try:
            before = reader.baseline()
            t0 = datetime(2026, 1, 1, tzinfo=UTC)
            info = AttributeInfo("tango://h:1/a/b/c/v", TangoType.DEV_LONG)
            events = [Event(info.name, t0 + timedelta(seconds=k), k) for k in range(5)]
            with db.bulk_writer() as writer, other.bulk_writer() as elsewhere:
                writer.register_attribute(info, t0)
                writer.write_history(info.name, "start", t0)
                assert writer.write(events) == 5
                elsewhere.register_attribute(info, t0)
                elsewhere.write(events)
            assert reader.rows_inserted() - before == 5
            seen_after = reader.event_times_after({info.name: t0 + timedelta(seconds=2)})
            assert seen_after == {info.name: [e.data_time for e in events[3:]]}
            assert reader.event_times_after({info.name: t0 + timedelta(seconds=4)}) == {}
        finally:
            reader.close()


def test_size_plan_counts_shards_of_the_retention() -> None:
    cls = backend_class("influxdb")
    db = cls(InfluxDBEndpoint("127.0.0.1", 1, "u", "p"), "plan")
    assert db.parts_for("att_scalar_devdouble", None, 30) == 5  # 7-day shard groups
    assert db.parts_for("att_scalar_devdouble", "interval=1d", 30) == 30


# ------------------------------------------------------------------------------ any value, through the C++ writer

HELD = [info for info in ATTRIBUTES if backend_class("influxdb").cannot_hold(info.type, info.format) is None]


CLOCK = Clock()


def _driver() -> Path:
    """hdbbench-es-write-records beside the subscriber binary the tests use."""
    return Path(os.environ.get("HDBBENCH_SUBSCRIBER_BINARY", str(DEFAULT_BINARY))).with_name(
        "hdbbench-es-write-records")


@pytest.fixture(scope="module")
def influx_target(influx: InfluxDBEndpoint) -> Iterator[tuple[Backend, list[str]]]:
    if not _driver().exists():
        pytest.skip(f"driver not built: {_driver()}")
    with fresh_backend("influxdb", influx) as db:
        yield db, Unprinted(lib_configuration("influxdb", db.database, {"influxdb": influx}))


def _run_driver(lib: list[str], lines: list[str]) -> subprocess.CompletedProcess[str]:
    args = [str(_driver())] + [part for line in lib for part in ("--lib", line)]
    return subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60,
                          check=False)


def _write(lib: list[str], lines: list[str]) -> dict[str, Any]:
    done = _run_driver(lib, lines)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return dict(json.loads(done.stdout))


@PROPERTY
@given(data=st.data())
def test_any_value_it_holds_round_trips_through_the_subscriber_writer(
        influx_target: tuple[Backend, list[str]], data: st.DataObject) -> None:
    """What the C++ writer encodes (line protocol, JSON arrays, NaN words) the Python reader decodes."""
    db, lib = influx_target
    info = data.draw(st.sampled_from(HELD), label="attribute")
    events = [data.draw(event(info, CLOCK()), label=f"event {k}") for k in range(data.draw(st.integers(1, 3)))]
    result = _write(lib, [record_line(info, e) for e in events])
    assert result["rejected"] == 0 and result["stored"] == len(events)
    assert_read_back(db, info, events)


def test_types_it_cannot_hold_are_rejected_by_the_writer(influx_target: tuple[Backend, list[str]]) -> None:
    db, lib = influx_target
    info = AttributeInfo("tango://testhost:10000/prop/devulong64/scalar/read", TangoType.DEV_ULONG64)
    done = _run_driver(lib, [record_line(info, Event(info.name, CLOCK(), 2**64 - 1))])
    assert json.loads(done.stdout)["rejected"] == 1 and "DevULong64" in done.stderr
    assert db.fetch_events(info.name) == []


def test_a_missing_package_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(influx_server, "BINARY", "influxd-not-installed")
    monkeypatch.setattr(influx_server, "FALLBACK_BINARY", tmp_path / "influxd")
    with pytest.raises(ServerError, match="install Debian's package `influxdb`"):
        influx_server.InfluxDBServer(tmp_path, {}, attached=True).up()


def test_the_memory_rule_sizes_the_write_cache_and_refuses_too_small_a_budget() -> None:
    assert influx_server.buffers_for(256 << 20) == {"cache-max-memory-size": str(64 << 20),
                                                    "cache-snapshot-memory-size": str(8 << 20)}
    assert influx_server.buffers_for(4 << 30)["cache-snapshot-memory-size"] == str(25 << 20)  # the default, at most
    with pytest.raises(ConfigError, match="at least 128 MiB"):
        influx_server.buffers_for(64 << 20)


def test_explain_gives_the_servers_time_of_a_query(influx: InfluxDBEndpoint) -> None:
    with fresh_backend("influxdb", influx) as db:
        info = AttributeInfo("tango://h:1/a/b/c/x", TangoType.DEV_DOUBLE)
        t0 = datetime(2026, 1, 1, tzinfo=UTC)
        with db.bulk_writer() as writer:
            att = writer.register_attribute(info, t0)
            writer.write([Event(info.name, t0 + timedelta(seconds=k), float(k)) for k in range(50)])
        reader = extraction_of(db)
        span = (att, t0, t0 + timedelta(hours=1))
        conn = reader.reader()
        for query in (reader.range_sql(reader.table_for(info), False), reader.aggregate_sql(reader.table_for(info), 60)):
            explained = reader.explain(conn, query, span)
            assert explained["server_ms"] is not None and explained["server_ms"] > 0, explained
            assert explained["pages_read"] is not None


def test_an_external_server_is_reached_by_its_url_and_a_wrong_login_is_named(influx: InfluxDBEndpoint) -> None:
    external = InfluxDBEndpoint.from_url(influx.external_value())
    assert (external.host, external.port, external.user, external.external) == (influx.host, influx.port,
                                                                                 influx.user, True)
    influx_server.probe(external)
    with pytest.raises(ServerError, match="refused 'hdbbench' \\(401"):
        influx_server.probe(InfluxDBEndpoint(influx.host, influx.port, influx.user, "wrong"))
    with pytest.raises(ConfigError, match="not an InfluxDB URL"):
        InfluxDBEndpoint.from_url("http://127.0.0.1:8086")

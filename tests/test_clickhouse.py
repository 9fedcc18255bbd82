# SPDX-License-Identifier: Apache-2.0
"""ClickHouse, the what-if engine: its private server comes up only when named, listens on loopback
only and goes down completely; the HDB++-shaped backend on it stores, counts, reads back and sizes
what it is given."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest

from hdbbench.backends import Backend, get_backend
from hdbbench.backends.registry import backend_class
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType
from hdbbench.stack.servers.process import ProcessRecord
from hdbbench.stack.stack import DEFAULT_COMPONENTS, Stack, StackConfig
from tests.harness import REPO
from tests.harness.databases import double_events, fresh_backend
from tests.harness.runs import HDBBENCH
from tests.harness.values import ERROR_DESC, all_attributes, events_for, expected, now_ms, same_event

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


# ------------------------------------------------------------------------------- the backend


@pytest.fixture(scope="module")
def clickhouse(test_state_dir: Path) -> Iterator[Any]:
    """A private ClickHouse of this module, in a state directory beside the session's."""
    stack = Stack(StackConfig(state_dir=test_state_dir.parent / f"{test_state_dir.name}-{KIND}",
                              components=(KIND,), attached=True))
    try:
        yield stack.up()[KIND]
    finally:
        stack.down()
        shutil.rmtree(stack.state_dir, ignore_errors=True)


@pytest.fixture
def backend(clickhouse: Any) -> Iterator[Backend]:
    with fresh_backend(KIND, clickhouse) as b:
        yield b


def held_attributes() -> list[AttributeInfo]:
    return [a for a in all_attributes() if backend_class(KIND).cannot_hold(a.type, a.format) is None]


def test_schema_is_created_verified_and_a_difference_found(backend: Backend) -> None:
    assert backend.verify_schema() == []
    backend.session().execute("ALTER TABLE att_scalar_devdouble DROP COLUMN value_w")
    assert backend.verify_schema() == ["att_scalar_devdouble: missing column value_w Nullable(Float64)"]


def test_variants_it_cannot_build_are_refused_in_one_line(clickhouse: Any) -> None:
    b = get_backend(KIND, clickhouse, "never_created")
    for variant in ("pk+2", "nofk"):
        with pytest.raises(ConfigError, match=re.escape(variant)):
            b.expected_tables(variant)


def test_every_held_type_and_format_reads_back_as_written(backend: Backend) -> None:
    t0 = now_ms()
    written: dict[str, tuple[AttributeInfo, list[Event]]] = {}
    with backend.bulk_writer() as writer:
        for info in held_attributes():
            writer.register_attribute(info, t0)
            events = events_for(info, t0, big=info.type == TangoType.DEV_DOUBLE)
            assert writer.write(events) == len(events)
            written[info.name] = (info, events)
    for name, (info, events) in written.items():
        got = backend.fetch_events(name)
        want = [expected(KIND, info, e) for e in events]
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert same_event(g, w), f"read {g!r}, expected {w!r}"
    counts = backend.count_rows_by_attribute(since=t0)
    assert counts == {name: len(events) for name, (_, events) in written.items()}
    errors = backend.count_error_events(t0)
    assert errors == {name: {ERROR_DESC: 1} for name in written}


def test_devencoded_is_refused(backend: Backend) -> None:
    assert backend_class(KIND).cannot_hold(TangoType.DEV_ENCODED, AttrFormat.SCALAR) is not None
    with backend.bulk_writer() as writer, pytest.raises(ConfigError, match="DevEncoded"):
        writer.register_attribute(AttributeInfo("tango://h:1/a/b/c/enc", TangoType.DEV_ENCODED))


def test_two_writers_registering_one_attribute_agree(backend: Backend) -> None:
    info = AttributeInfo("tango://h:1/a/b/c/twice", TangoType.DEV_LONG)
    with backend.bulk_writer() as first, backend.bulk_writer() as second:
        assert first.register_attribute(info) == second.register_attribute(info)
    assert [name for _, i in backend.attribute_catalog() for name in [i.name]] == [info.name]


def test_sizes_outside_counter_and_merges(backend: Backend) -> None:
    att = AttributeInfo("tango://h:1/a/b/c/sized", TangoType.DEV_DOUBLE)
    reader = backend.outside_figures().reader(backend)
    try:
        before = reader.rows_inserted()
        with backend.bulk_writer() as writer:
            writer.register_attribute(att)
            for n in range(3):  # three inserts: three parts
                writer.write(double_events(att, 1000, now_ms() + timedelta(seconds=n * 10)))
        assert reader.rows_inserted() - before == 3000
        latest = reader.event_times_after({att.name: now_ms() - timedelta(hours=1)})[att.name]
        assert len(latest) == 3000
    finally:
        reader.close()
    table = backend.table_for(att)
    (size,) = backend.table_sizes([table])
    assert size.total_bytes == size.data_bytes + size.index_bytes > 0
    assert backend.size_bytes() >= size.total_bytes
    assert backend.cluster() == [f"OPTIMIZE TABLE {table} FINAL"]
    assert backend.count_rows_by_attribute() == {att.name: 3000}
    assert backend.parts_for(table, None, 90) == 3
    assert backend.parts_for("att_conf", None, 90) is None

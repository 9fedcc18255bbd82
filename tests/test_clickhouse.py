# SPDX-License-Identifier: Apache-2.0
"""ClickHouse, the what-if engine: its private server comes up only when named, listens on loopback
only and goes down completely; the HDB++-shaped backend on it stores, counts, reads back and sizes
what it is given."""

from __future__ import annotations

import csv
import json
import os
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
from hypothesis import given
from hypothesis import strategies as st

from hdbbench.backends import Backend, get_backend
from hdbbench.backends.clickhouse.tables import fnv1a64
from hdbbench.backends.registry import backend_class, lib_configuration
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import (
    AttParameter,
    AttrFormat,
    AttributeInfo,
    Encoded,
    Event,
    TangoType,
    WriteType,
)
from hdbbench.parts.extraction.dumps import dump, load
from hdbbench.stack.servers.clickhouse import buffers_for
from hdbbench.stack.servers.endpoints import ClickHouseEndpoint
from hdbbench.stack.servers.process import ProcessRecord
from hdbbench.stack.stack import DEFAULT_COMPONENTS, Stack, StackConfig
from hdbbench.subscribers.launcher import DEFAULT_BINARY
from tests.harness import REPO, eventually, seen
from tests.harness.composed import Harness, profile_toml
from tests.harness.databases import double_events, fresh_backend
from tests.harness.every_event import assert_every_event_stored_once
from tests.harness.records import ATTRIBUTES, Unprinted, record_line
from tests.harness.runs import HDBBENCH
from tests.harness.values import (
    ERROR_DESC,
    NON_ASCII,
    PROPERTY,
    Clock,
    all_attributes,
    assert_read_back,
    event,
    events_for,
    expected,
    now_ms,
    same_event,
)

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


def test_memory_rule_and_external_url() -> None:
    budget = buffers_for(1 << 30)
    assert int(budget["max_memory_usage"]) == 1 << 29 and int(budget["mark_cache_size"]) == 1 << 27
    with pytest.raises(ConfigError, match="at least 256 MiB"):
        buffers_for(128 << 20)
    endpoint = ClickHouseEndpoint.from_url("clickhouse://u:p%40ss@198.18.0.5:8124")
    assert (endpoint.host, endpoint.port, endpoint.user, endpoint.password, endpoint.external) == \
        ("198.18.0.5", 8124, "u", "p@ss", True)
    assert ClickHouseEndpoint.from_url(endpoint.external_value()) == endpoint
    with pytest.raises(ConfigError, match="not a ClickHouse URL"):
        ClickHouseEndpoint.from_url("mysql://u:p@h:1")


def test_lib_configuration_names_our_writer_and_its_keys() -> None:
    endpoint = ClickHouseEndpoint("127.0.0.1", 28123, "hdbbench", "pw")
    lines = lib_configuration(KIND, "hdbpp", {KIND: endpoint}, {"batch_size": 500})
    assert lines == ["backend=clickhouse", "host=127.0.0.1", "port=28123", "user=hdbbench", "password=pw",
                     "dbname=hdbpp", "batch_size=500"]

# ------------------------------------------------------------------------------- the backend


@pytest.fixture(scope="module")
def clickhouse_stack(test_state_dir: Path) -> Iterator[Stack]:
    """A private ClickHouse of this module, in a state directory beside the session's."""
    stack = Stack(StackConfig(state_dir=test_state_dir.parent / f"{test_state_dir.name}-{KIND}",
                              components=(KIND,), attached=True))
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        shutil.rmtree(stack.state_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def clickhouse(clickhouse_stack: Stack) -> Any:
    return clickhouse_stack.up()[KIND]  # running: its endpoint


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


def test_parameters_and_history_are_stored(backend: Backend) -> None:
    info = AttributeInfo("tango://h:1/a/b/c/param", TangoType.DEV_ENUM)
    labels = ("zero", "it's\tone", NON_ASCII)
    with backend.bulk_writer() as writer:
        writer.register_attribute(info, now_ms())
        writer.write_parameter(AttParameter(info.name, now_ms(), label="l'\\x", unit="mm", enum_labels=labels))
    session = backend.session()
    assert session.all("SELECT label, unit, enum_labels FROM att_parameter") == [("l'\\x", "mm", list(labels))]
    assert [e for (e,) in session.all("SELECT event FROM att_history ORDER BY event_time")] == ["add", "insert_param"]

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


def test_a_dump_loads_into_another_database(backend: Backend, clickhouse: Any, tmp_path: Path) -> None:
    """`data dump` of one type's scalar table and `data load` of it elsewhere give the same events."""
    att = AttributeInfo("tango://h:1/a/b/c/dumped", TangoType.DEV_DOUBLE, write_type=WriteType.READ_WRITE)
    events = [Event(att.name, now_ms() + timedelta(seconds=k), k / 7, None if k % 2 else -k / 3) for k in range(50)]
    with backend.bulk_writer() as writer:
        writer.register_attribute(att)
        writer.write(events)
    dumped = dump(backend, TangoType.DEV_DOUBLE, "pk", tmp_path / "devdouble.csv")
    assert dumped.rows == len(events)
    with fresh_backend(KIND, clickhouse) as other:
        assert load(other, dumped.path).rows == len(events)
        got = other.fetch_events(att.name)
    assert len(got) == len(events)
    for g, e in zip(got, events):
        assert same_event(g, e), f"read {g!r}, expected {e!r}"

# ------------------------------------------------------------------- extraction and disk, by the CLI


def test_extraction_of_the_small_query_set(clickhouse_stack: Stack, tmp_path: Path) -> None:
    """Every query of the set runs, first and warm, unclustered and merged, with server figures."""
    run = cli("extract", "query_sets/small.toml", "--backend", KIND, "--variant", "pk", "--no-cold",
              "--state-dir", str(clickhouse_stack.state_dir), "--runs", str(tmp_path), timeout_s=600)
    assert run.returncode == 0, run.stderr
    (run_dir,) = tmp_path.iterdir()
    with open(run_dir / "queries.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["state"] for r in rows} == {"unclustered", "clustered"}
    assert [(r["query"], r["state"], r["temperature"]) for r in rows if int(r["rows"]) == 0] == []
    warm = [r for r in rows if r["temperature"] == "warm"]
    assert warm and [(r["query"], r["state"]) for r in warm if r["server_ms"] == ""] == []


def test_disk_per_tango_type(clickhouse_stack: Stack, tmp_path: Path) -> None:
    """Bytes per event of a scalar and a spectrum table, fitted over sizes, before and after merging."""
    run = cli("size", "measure", "--backend", KIND, "--events", "20000", "--case", "scalar:devlong",
              "--case", "spectrum:devdouble:10", "--state-dir", str(clickhouse_stack.state_dir), "--runs",
              str(tmp_path), timeout_s=600)
    assert run.returncode == 0, run.stderr
    (run_dir,) = tmp_path.iterdir()
    with open(run_dir / "sizes.csv", newline="") as handle:
        rows = {(r["variant"], r["case_label"]): r for r in csv.DictReader(handle)}
    scalar = rows[("pk", "scalar_devlong_ro")]
    spectrum = rows[("pk", "spectrum_devdouble_ro_x10")]
    assert scalar["table"] == "att_scalar_devlong" and scalar["fit_ok"] == "True"
    # compressed columns: a DevLong row costs less than its raw bytes; ten random doubles cannot shrink to 40
    assert 0 < float(scalar["bytes_per_event"]) < float(scalar["raw_per_event"])
    assert float(spectrum["bytes_per_event"]) > 40
    assert ("pk,clustered", "scalar_devlong_ro") in rows


# ------------------------------------------------------------------- any value, through the C++ writer

CLOCK = Clock()


def _driver() -> Path:
    """hdbbench-es-write-records beside the subscriber binary the tests use."""
    return Path(os.environ.get("HDBBENCH_SUBSCRIBER_BINARY", str(DEFAULT_BINARY))).with_name(
        "hdbbench-es-write-records")


@pytest.fixture(scope="module")
def written_by_the_writer(clickhouse: Any) -> Iterator[tuple[Backend, list[str]]]:
    if not _driver().exists():
        pytest.skip(f"driver not built: {_driver()}")
    with fresh_backend(KIND, clickhouse) as db:
        yield db, Unprinted(lib_configuration(KIND, db.database, {KIND: clickhouse}))


def _write(lib: list[str], lines: list[str]) -> tuple[dict[str, Any], str]:
    args = [str(_driver())] + [part for line in lib for part in ("--lib", line)]
    done = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)), done.stderr


@PROPERTY
@given(data=st.data())
def test_any_value_it_holds_round_trips_through_the_subscriber_writer(
        written_by_the_writer: tuple[Backend, list[str]], data: st.DataObject) -> None:
    """What the C++ writer encodes (RowBinary) the Python reader decodes, exactly."""
    db, lib = written_by_the_writer
    held = [a for a in ATTRIBUTES if backend_class(KIND).cannot_hold(a.type, a.format) is None]
    info = data.draw(st.sampled_from(held), label="attribute")
    events = [data.draw(event(info, CLOCK()), label=f"event {k}") for k in range(data.draw(st.integers(1, 3)))]
    result, errors = _write(lib, [record_line(info, e) for e in events])
    assert result["rejected"] == 0 and result["stored"] == len(events), errors
    assert_read_back(db, info, events)


def test_devencoded_records_are_rejected_by_the_writer(written_by_the_writer: tuple[Backend, list[str]]) -> None:
    db, lib = written_by_the_writer
    info = AttributeInfo("tango://testhost:10000/prop/devencoded/scalar/read", TangoType.DEV_ENCODED)
    result, errors = _write(lib, [record_line(info, Event(info.name, CLOCK(), Encoded("raw", b"\x00\x01")))])
    assert result["rejected"] == 1 and "unsupported data type" in errors
    assert db.session().scalar(f"SELECT count() FROM att_conf WHERE att_name = '{info.name}'") == 0

# --------------------------------------------------------------------------- through our subscriber

@pytest.mark.subscriber
def test_our_subscriber_stores_every_event_once(clickhouse: Any, harness: Harness, tmp_path: Path) -> None:
    # tab, quote and backslash: what TabSeparated would escape (the configuration rows go as text)
    assert_every_event_stored_once(harness, KIND, clickhouse, tmp_path, seed=5455, string_text="t\ta'b\\c",
                                   subscriber_id=98)


@pytest.mark.subscriber
def test_a_ttl_set_on_the_subscriber_reaches_att_conf(clickhouse: Any, harness: Harness, tmp_path: Path) -> None:
    sims = harness.devices(profile_toml(tmp_path, "chttl", rate_hz=2.0, count=2))
    db = harness.database(KIND, endpoint=clickhouse, prefix="ttl")
    es = harness.subscriber(99, db, sims.names, flush_interval_ms=50)
    harness.archiving(es, db, sims)
    name = sims.names[0]
    es.SetAttributeTTL([name, "48"])
    session = db.session()
    quoted = name.replace("'", "\\'")

    def ttl() -> Any:
        got = session.all(f"SELECT ttl FROM att_conf WHERE att_name = '{quoted}'")
        return seen(got == [(48,)], got)

    eventually(ttl, 20, "att_conf ttl updated")
    events = [e for (e,) in session.all(f"SELECT event FROM att_history WHERE att_conf_id = {fnv1a64(name)}")]
    assert "update_ttl" in events and "add" in events

# SPDX-License-Identifier: Apache-2.0
"""Disk usage per type (hdbbench.parts.disk) and facility sizing (hdbbench.parts.disk.sizing) against the session's servers.

Sizes are small and only their bookkeeping is asserted (every table has a figure, parts add up to the
server's total, every event is accounted for, the fit of fixed + marginal x events reproduces the sizes
it was made on); bytes-per-event figures come from benchmarks and `size validate`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends import DEFAULT_BACKENDS, backend_class
from hdbbench.backends.base import TableSize
from hdbbench.load.inventory.model import load_inventory, parse_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, WriteType
from hdbbench.model.records import read, write
from hdbbench.parts.disk import CaseResult, measure_variant, parse_case, run_measure, sizing
from hdbbench.parts.disk.fit import LINEAR_TOLERANCE, fit_sizes, geometric_sizes
from hdbbench.parts.disk.validate import validate, write_validation
from hdbbench.results.disk import CaseSize
from hdbbench.results.document import load_results
from hdbbench.stack.servers.endpoints import StackEndpoints
from tests.harness import REPO
from tests.harness.databases import fresh_backend
from tests.harness.servers import endpoint_or_skip
from tests.harness.synthetic import disk_case

SMALL_CASES = ("devdouble", "devstring:rw", "devboolean", "spectrum:devdouble:4", "spectrum:devdouble:16")
# The variant each backend is measured in here: its default index set (plain PostgreSQL: the primary
# key alone, a smaller table to measure).
DEFAULT_VARIANT = {"postgresql": "pk"}


def _variant(backend: str) -> str:
    return DEFAULT_VARIANT.get(backend, backend_class(backend).default_indexes)



def _check_size(size: TableSize) -> None:
    parts = size.data_bytes + size.index_bytes + size.toast_bytes + size.free_bytes
    assert parts == size.total_bytes, size
    assert min(size.data_bytes, size.index_bytes, size.toast_bytes, size.free_bytes) >= 0, size


@pytest.mark.parametrize("backend", ["timescaledb", "postgresql"])
def test_a_measured_table_and_the_chunks_it_grows_are_kept_from_autovacuum(
        endpoint_of: Callable[[str], Any], backend: str) -> None:
    # Our servers look for tables to vacuum every second; a vacuum between two size points would add
    # its maps to one of them. prepare_sizes holds it off, chunks created later included.
    info = AttributeInfo("tango://disk:10000/av/hold/1/x", TangoType.DEV_DOUBLE, AttrFormat.SCALAR, WriteType.READ)
    with fresh_backend(backend, endpoint_of(backend), None) as db, db.bulk_writer() as writer:
        db.prepare_sizes(["att_scalar_devdouble"])
        writer.register_attribute(info)
        now = datetime.now(timezone.utc)
        writer.write([Event(info.name, now - timedelta(days=40 * k), float(k)) for k in range(3)])
        with db.connect() as conn:
            options = conn.execute(
                "SELECT c.oid::regclass::text, c.reloptions FROM pg_class c WHERE c.relkind = 'r' AND "
                "(c.oid = 'public.att_scalar_devdouble'::regclass OR c.oid IN (SELECT inhrelid FROM pg_inherits "
                "WHERE inhparent = 'public.att_scalar_devdouble'::regclass))").fetchall()
    assert len(options) >= (3 if backend == "timescaledb" else 1), options  # 40 days apart: a chunk each
    assert all("autovacuum_enabled=false" in (reloptions or []) for _, reloptions in options), options


@pytest.mark.parametrize("backend", DEFAULT_BACKENDS)
def test_every_table_has_a_split_that_adds_up(stack_endpoints: StackEndpoints, backend: str) -> None:
    cases = [parse_case(c, 300 if c.startswith("spectrum") else 1000, 5, span=10) for c in SMALL_CASES]
    outcome = measure_variant(backend, endpoint_or_skip(stack_endpoints, backend), _variant(backend), cases, seed=7)
    assert outcome.unavailable is None
    clustered = [_variant(backend) + ",clustered"] if backend_class(backend).separate_clustering else []
    variants = [_variant(backend), *clustered]
    for variant in variants:
        got = {r.case.label: r for r in outcome.results if r.variant == variant}
        assert sorted(got) == sorted(c.label for c in cases), variant
        for case in cases:
            r: CaseResult = got[case.label]
            _check_size(r.before)
            _check_size(r.after)
            assert r.events == case.events and r.raw_bytes > 0
            assert [p.events for p in r.points] == list(case.sizes if "clustered" not in variant else case.sizes[-1:])
            assert len(case.sizes) >= 3
            assert r.after.total_bytes > r.before.total_bytes, (variant, case.label, r.before, r.after)
            row = write(r.record())
            # Tables this small may fit in the pages they started with: the average is positive, the
            # marginal may be 0 (and is then flagged), never negative.
            assert row["average_bytes_per_event"] > 0 and row["bytes_per_event"] >= 0
            assert row["fit_ok"] or "not a line" in row["fit_note"]
            assert row["documented_min_row_bytes"] is not None and row["documented_min_row_bytes"] > 18
    spectrum_rows = [write(r.record()) for r in outcome.results if r.case.elements > 1]
    per_element = backend_class(backend).row_per_element
    assert all(r["rows"] == r["events"] * (r["case_elements"] if per_element else 1) for r in spectrum_rows)


def test_myrocks_is_measured_or_said_unavailable(stack_endpoints: StackEndpoints) -> None:
    cases = [parse_case("devlong", 200, 2)]
    outcome = measure_variant("mysql", endpoint_or_skip(stack_endpoints, "mysql"), "pk,myrocks", cases)
    if outcome.unavailable:
        assert "ROCKSDB" in outcome.unavailable or "myrocks" in outcome.unavailable.lower()
        assert outcome.results == []
    else:
        assert [r.case.label for r in outcome.results] == ["scalar_devlong_ro"]


def test_plan_projects_and_checks_a_measured_inventory(stack_endpoints: StackEndpoints, tmp_path: Path) -> None:
    inventory = load_inventory(REPO / "inventories" / "small-test.toml")
    cases = [parse_case(c, 600, 5) for c in ("devdouble", "devstring:rw", "spectrum:devdouble:10",
                                             "spectrum:devdouble:100")]
    run_dir = run_measure(stack_endpoints, {"postgresql": ["pk"]}, cases, 42, tmp_path, "disk",
                          (inventory, 60.0, 0.5))
    results = load_results(run_dir / "results.json")
    assert results["kind"] == "disk" and (run_dir / "sizes.csv").exists() and (run_dir / "fits.csv").exists()
    projections = sizing.project(inventory, results)
    assert {(p["backend"], p["variant"]) for p in projections} == {("postgresql", "pk"), ("postgresql", "pk,clustered")}
    for p in projections:
        assert p["complete"] and p["bytes_at_retention"] > 0
        assert abs(sum(g["share_at_retention"] for g in p["groups"]) - 1.0) < 1e-9
    checks = sizing.check(inventory, results, results)
    assert len(checks) == 2 and all(c["measured_bytes"] > 0 and c["error"] is not None for c in checks)
    # One load measured before and after CLUSTER: the same rows, the same empty tables before it.
    unclustered, clustered = results["results"]["inventory_runs"]
    assert (unclustered["variant"], clustered["variant"]) == ("pk", "pk,clustered")
    assert clustered["groups"] == unclustered["groups"]
    assert [t["before"] for t in clustered["tables"]] == [t["before"] for t in unclustered["tables"]]


BROKEN = [
    ('retention_days = 10\n[[attributes]]\ntype = "devdouble"\nrate_hz = 1\n', "name"),
    ('name = "x"\n', "attributes"),
    ('name = "x"\n[[attributes]]\ntype = "devdoubel"\nrate_hz = 1\n', "[[attributes]] #1 type"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\nrate_hz = -1\n', "[[attributes]] #1 rate_hz"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\n', "[[attributes]] #1 rate_hz"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\nrate_hz = 1\nperiod_s = 2\n', "[[attributes]] #1 rate_hz"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\nformat = "spectrum"\nrate_hz = 1\n', "[[attributes]] #1 elements"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\nformat = "image"\ndims = [3]\nrate_hz = 1\n', "dims"),
    ('name = "x"\n[[attributes]]\ntype = "devlong"\ncount = 0\nrate_hz = 1\n', "[[attributes]] #1 count"),
    ('name = "x"\n[[attributes]]\ntype = "devlong"\nrate_hz = 1\ncolour = "red"\n', "[[attributes]] #1 colour"),
    ('name = "x"\n[[attributes]]\ntype = "devlong"\nrate_hz = 1\n[[attributes]]\ntype = "devlong"\nrate_hz = 2\n',
     "attributes"),
    ('name = "x"\n[[attributes]]\ntype = "devencoded"\nformat = "spectrum"\nelements = 3\nrate_hz = 1\n', "format"),
    ('name = "x"\n[[attributes]\n', "not valid TOML"),
]


@pytest.mark.parametrize(("text", "key"), BROKEN)
def test_plan_refuses_a_broken_inventory(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_inventory(path)
    message = str(info.value)
    assert str(path) in message and key in message and "\n" not in message


def test_plan_command_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\n[[attributes]]\ntype = "devdouble"\nrate_hz = 0\n')
    proc = subprocess.run([sys.executable, "-m", "hdbbench", "size", "plan", str(path), "--from", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "[[attributes]] #1 rate_hz: must be > 0" in proc.stderr


def test_shipped_inventories_are_valid() -> None:
    for path in sorted((REPO / "inventories").glob("*.toml")):
        assert load_inventory(path).groups


@pytest.mark.parametrize("backend", DEFAULT_BACKENDS)
def test_fit_reproduces_each_measured_size(stack_endpoints: StackEndpoints, backend: str) -> None:
    """Column path (devdouble) and bulk-writer path (devlong64 as READ_WRITE goes by columns too, so a
    devstring case): every size lies within 2 % of fixed + marginal x events."""
    cases = [parse_case("devdouble", 300_000, 20, span=10), parse_case("devlong:rw", 300_000, 20, span=10)]
    outcome = measure_variant(backend, endpoint_or_skip(stack_endpoints, backend), _variant(backend), cases, seed=3)
    rows = [r for r in outcome.results if r.variant == _variant(backend)]
    assert len(rows) == 2
    for r in rows:
        fit = r.fit()
        assert len(fit.sizes) >= 3 and fit.sizes[-1] / fit.sizes[0] >= 10
        assert fit.marginal_bytes_per_event > 0 and fit.linear, (r.case.label, fit)
        for point in r.points:
            measured = r.measured(point.size)
            assert abs(fit.at(point.events) - measured) <= 0.02 * measured, (r.case.label, point.events, fit)
        row = write(r.record())
        assert row["bytes_per_event"] == row["marginal_bytes_per_event"] == fit.marginal_bytes_per_event
        parts = row["data_per_event"] + row["index_per_event"] + row["toast_per_event"]
        assert abs(parts - row["bytes_per_event"]) <= 1e-6 * row["bytes_per_event"]
        assert row["slack_bytes"] >= 0 and row["fit_ok"] is True


def test_results_carry_the_fit_of_every_case(stack_endpoints: StackEndpoints, tmp_path: Path) -> None:
    cases = [parse_case("devdouble", 4000, 20, span=100), parse_case("devstring", 2000, 20, span=10)]
    run_dir = run_measure(stack_endpoints, {"mysql": ["pk"]}, cases, 42, tmp_path, "disk")
    rows = load_results(run_dir / "results.json")["results"]["cases"]
    assert [r["case_label"] for r in rows] == ["scalar_devdouble_ro", "scalar_devstring_ro"]
    for r, case in zip(rows, cases):
        for key in ("marginal_bytes_per_event", "fixed_bytes", "fit_r2", "fit_max_residual", "fit_sizes", "fit_ok",
                    "fit_note", "slack_bytes", "average_bytes_per_event", "sizes"):
            assert key in r, key
        assert r["fit_sizes"] == list(case.sizes) == [s["events"] for s in r["sizes"]]
        assert all(s["measured_bytes"] == s["data_bytes"] + s["index_bytes"] + s["toast_bytes"] for s in r["sizes"])
        assert r["bytes_per_event"] == r["marginal_bytes_per_event"] > 0
    header = (run_dir / "sizes.csv").read_text().splitlines()[0].split(",")
    assert {"bytes_per_event", "fixed_bytes", "fit_max_residual", "fit_ok", "slack_bytes"} <= set(header)


def test_a_case_off_a_line_is_flagged_and_not_planned_on() -> None:
    sizes = list(geometric_sizes(1_000_000, 100, 20))
    assert len(sizes) >= 3 and sizes[-1] / sizes[0] >= 100
    line = fit_sizes(sizes, [50_000 + 52.0 * n for n in sizes])
    assert line.linear and abs(line.marginal_bytes_per_event - 52.0) < 1e-6 and abs(line.fixed_bytes - 50_000) < 1e-3
    curve = fit_sizes(sizes, [1e-4 * n * n + 40.0 * n for n in sizes])
    assert not curve.linear and curve.max_residual > LINEAR_TOLERANCE and "not a line" in curve.note
    inventory = parse_inventory(
        {"name": "x", "attributes": [{"type": "devdouble", "rate_hz": 1.0, "count": 10}]}, Path("x.toml"))
    row = {"backend": "mysql", "variant": "pk", "case_type": "devdouble", "case_format": "scalar", "case_write": "ro",
           "case_elements": 1, "bytes_per_event": curve.marginal_bytes_per_event, "fit_ok": False, "fit_note": curve.note}
    [projection] = sizing.project(inventory, {"results": {"cases": [row]}})
    assert not projection["complete"] and projection["groups"][0]["bytes_per_event"] is None
    assert "not a line" in projection["groups"][0]["source"]
    [ok] = sizing.project(inventory, {"results": {"cases": [row | {"fit_ok": True, "bytes_per_event": 52.0}]}})
    assert ok["complete"] and ok["groups"][0]["bytes_per_event"] == 52.0


def test_validate_compares_the_fit_with_a_larger_load(stack_endpoints: StackEndpoints, tmp_path: Path) -> None:
    results = validate(stack_endpoints, ["timescaledb", "mysql"], ["pk"], ["time", "pk"], rows=60_000,
                       fit_events=20_000, span=10, attributes=20, seed=5)
    assert [(v.backend, v.order) for v in results] == [("timescaledb", "time"), ("timescaledb", "pk"),
                                                       ("mysql", "time"), ("mysql", "pk")]
    for v in results:
        assert v.rows == 60_000 and v.marginal_bytes_per_event > 0 and len(v.fit_sizes) >= 3
        assert v.measured_bytes > 0 and v.file_bytes >= v.measured_bytes
        assert v.projected_bytes == v.fixed_bytes + v.marginal_bytes_per_event * 60_000
        assert abs(v.error) < 1.0  # a real comparison; the ±10 % target is for millions of rows
    run_dir = write_validation(tmp_path, "validate", stack_endpoints, {"rows": 60_000}, results)
    doc = load_results(run_dir / "results.json")
    assert doc["kind"] == "disk-validate" and len(doc["results"]["validations"]) == 4
    assert (run_dir / "validate.csv").read_text().count("\n") == 5


def test_published_reference_sits_beside_ours_with_the_ratio() -> None:
    from hdbbench.parts.disk.reference import ROWS, compare

    def case(backend: str, variant: str, type_: str, marginal: float) -> CaseSize:
        return replace(read(CaseSize, disk_case(backend, type_, marginal / 1.5)), variant=variant,
                       bytes_per_event=marginal)

    ours = [case("mysql", "pk", "devdouble", 52.0), case("timescaledb", "pk+2", "devdouble", 80.0),
            case("postgresql", "pk", "devlong", 50.0)]
    rows = [write(r) for r in compare(ours)]
    assert {(r["backend"], r["order"]) for r in rows} == {("mysql", "pk"), ("mysql", "time"), ("timescaledb", "pk"),
                                                          ("timescaledb", "time")}
    mysql_pk = next(r for r in rows if r["backend"] == "mysql" and r["order"] == "pk")
    assert abs(mysql_pk["published_bytes_per_row"] - 202e9 / ROWS) < 1e-9
    assert abs(mysql_pk["ratio"] - 52.0 / mysql_pk["published_bytes_per_row"]) < 1e-12 and not mysql_pk["differs"]
    far = [r for r in rows if r["backend"] == "timescaledb"]
    assert all(r["differs"] and r["why"] for r in far)  # 80 against 164 / 194 B/row


def test_plan_adds_the_logs_kept_and_the_replicas() -> None:
    inventory = parse_inventory(
        {"name": "x", "retention_days": 100, "attributes": [{"type": "devdouble", "rate_hz": 1.0, "count": 10}]},
        Path("x.toml"))
    row = {"backend": "mysql", "variant": "pk", "case_type": "devdouble", "case_format": "scalar", "case_write": "ro",
           "case_elements": 1, "bytes_per_event": 50.0, "fit_ok": True, "log_per_event": {"binlog": 10.0}}
    [p] = sizing.project(inventory, {"results": {"cases": [row]}}, replicas=2, log_retention_days=7)
    events_per_day = 10 * 86_400
    assert abs(p["bytes_at_retention"] - 50.0 * events_per_day * 100) < 1e-3
    assert abs(p["log_bytes_retained"] - 10.0 * events_per_day * 7) < 1e-3
    assert abs(p["total_bytes"] - 2 * (p["bytes_at_retention"] + p["log_bytes_retained"])) < 1e-3
    assert p["groups"][0]["parts_at_retention"] is None  # InnoDB pk: not partitioned
    hyper = row | {"backend": "timescaledb", "variant": "pk+2,clustered"}
    parted = row | {"variant": "pk,partitioned"}
    by_backend = {(q["backend"], q["variant"]): q for q in sizing.project(inventory, {"results": {"cases": [hyper, parted]}})}
    assert by_backend[("timescaledb", "pk+2,clustered")]["groups"][0]["parts_at_retention"] == 8  # 100 days / 14
    assert by_backend[("mysql", "pk,partitioned")]["groups"][0]["parts_at_retention"] == 2  # bimonthly


def test_servers_are_measured_side_by_side_and_a_failure_on_one_cleans_both(stack_endpoints: StackEndpoints,
                                                                tmp_path: Path) -> None:
    cases = [parse_case("devdouble", 20_000, 4, span=10), parse_case("devlong", 20_000, 4, span=10)]
    run_dir = run_measure(stack_endpoints, {"postgresql": ["pk"], "mysql": ["pk"]}, cases, 42, tmp_path, "disk")
    rows = load_results(run_dir / "results.json")["results"]["cases"]
    assert [(r["backend"], r["variant"]) for r in rows] == [("postgresql", "pk")] * 2 + [
        ("postgresql", "pk,clustered")] * 2 + [("mysql", "pk")] * 2
    with pytest.raises(ConfigError, match="foreign keys"):
        run_measure(stack_endpoints, {"postgresql": ["pk", "pk+2"], "mysql": ["nofk"]}, cases, 42, tmp_path, "disk")
    with stack_endpoints["postgres"].connect(autocommit=True) as conn:
        left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'hdbdisk%'").fetchall()
    assert left == []
    conn = stack_endpoints["mariadb"].connect()
    try:
        cur = conn.cursor()
        cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'hdbdisk%'")
        assert cur.fetchall() == []
    finally:
        conn.close()


@pytest.mark.parametrize("backend", DEFAULT_BACKENDS)
def test_a_later_variant_is_sent_the_recorded_stream_and_stores_the_same_events(
        stack_endpoints: StackEndpoints, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk measurement builds and encodes a server's events once: a second database of the same
    layout is sent what the writer recorded, and holds the same events, value for value."""
    from hdbbench.backends import get_backend
    from hdbbench.parts.disk import cases as disk_cases

    endpoint = endpoint_or_skip(stack_endpoints, backend)
    made = [parse_case("devstring:rw", 60, 3), parse_case("spectrum:devdouble:16", 30, 3)]
    databases = [get_backend(backend, endpoint, f"hdbdisk_replay_{k}") for k in range(2)]
    disk_cases.clear_made()
    try:
        stored = []
        for k, db in enumerate(databases):
            db.drop_schema()
            db.create_schema(_variant(backend))
            if k == 1:  # the events are not built again: only the recorded stream can fill this one
                monkeypatch.setattr(disk_cases, "case_batches", _refuse)
            counts = []
            for case in made:
                infos = disk_cases.case_attributes(case, "tango://disk:10000/replay")
                tally = disk_cases.Tally()
                counts.append(disk_cases.recorded_load(db, case, infos, 7, disk_cases.case_start_time(case),
                                                       0, case.events, tally))
                assert tally.events == case.events
            stored.append(counts)
        assert stored[0] == stored[1] == [c.events for c in made]
        for case in made:
            for info in disk_cases.case_attributes(case, "tango://disk:10000/replay"):
                first, second = (db.fetch_events(info.name) for db in databases)
                assert first and [_event_key(e) for e in first] == [_event_key(e) for e in second], info.name
    finally:
        disk_cases.clear_made()
        for db in databases:
            db.drop_schema()


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("the events were built again instead of the recorded stream being sent")


def _event_key(e: Event) -> tuple[object, ...]:
    return (e.data_time, e.value_r, e.value_w, e.quality)

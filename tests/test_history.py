# SPDX-License-Identifier: Apache-2.0
"""Aged histories (hdbbench.parts.aging.history) and the load-order measurement (hdbbench.parts.aging.load_order)
on real servers: tiny histories (a month of 50 attributes, a few thousand rows) in the facility layout."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends.registry import backend_for_stack
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttributeInfo, Event, TangoType, WriteType
from hdbbench.parts.aging.history import HistorySize, MixAttribute, build_history
from hdbbench.parts.aging.load_order import LoadOrderSpec, _make_copy, load_mix, load_rows, run_load_order
from hdbbench.results.aging import HistoryRecord
from hdbbench.scenario.scenario import load_scenario
from hdbbench.trials.insertion import reset_history
from tests.harness.databases import sql

BACKENDS = ("postgresql", "timescaledb", "mysql")
PERIOD_S = 7200.0     # 50 attributes every 2 h: 18,000 rows are 30 days, over chunk and month bounds
ROWS = 18_000
MIX = [MixAttribute(AttributeInfo(f"tango://hdbbench-test:10000/aged/dev/d{i:02d}", TangoType.DEV_DOUBLE), 1 / PERIOD_S)
       for i in range(45)]
MIX += [MixAttribute(AttributeInfo(f"tango://hdbbench-test:10000/aged/dev/l{i}", TangoType.DEV_LONG,
                                   write_type=WriteType.READ_WRITE), 1 / PERIOD_S) for i in range(5)]


def variant(backend: str) -> str:
    return "pk" if backend == "mysql" else "pk+2"


@pytest.fixture
def histories(stack_endpoints: Any, endpoint_of: Callable[[str], Any]) -> Iterator[Callable[..., HistoryRecord]]:
    """Builds histories on the session stack; every database it made is dropped afterwards."""
    made: list[HistoryRecord] = []

    def build(backend: str, seed: int = 7, **kwargs: Any) -> HistoryRecord:
        endpoint_of(backend)  # skips without the server
        record = build_history(stack_endpoints, backend, variant(backend), MIX, HistorySize(rows=ROWS), seed, **kwargs)
        made.append(record)
        return record

    yield build
    for record in made:
        backend_for_stack(record.backend, stack_endpoints, database=record.database).drop_schema()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_history_has_its_size_in_time_order_and_the_facility_layout(
        backend: str, histories: Callable[..., HistoryRecord], stack_endpoints: Any) -> None:
    record = histories(backend)
    db = backend_for_stack(backend, stack_endpoints, database=record.database)
    counts = db.count_rows_by_attribute()
    assert record.rows == sum(counts.values()) == ROWS
    assert max(counts.values()) - min(counts.values()) <= 1  # every attribute at its own (here equal) rate
    start, end = datetime.fromisoformat(record.start), datetime.fromisoformat(record.end)
    assert 29 < record.days < 31
    table = db.table_for(MIX[0].info)
    spans = sql(db, f"SELECT att_conf_id, min(data_time), max(data_time) FROM {table} GROUP BY att_conf_id")
    period = timedelta(seconds=PERIOD_S)
    for _, first, last in spans:  # every attribute advanced over the whole span, together
        assert _naive(first) < _naive(start + period) and _naive(last) > _naive(end - 2 * period)
    _check_layout(backend, db, table, record)


def _naive(at: datetime) -> datetime:
    """UTC without a zone (MariaDB's DATETIME reads back so)."""
    return at.astimezone(timezone.utc).replace(tzinfo=None) if at.tzinfo is not None else at


def _check_layout(backend: str, db: Any, table: str, record: HistoryRecord) -> None:
    if backend == "postgresql":  # plain tables, written in time order: the heap is in time order
        times = [r[0] for r in sql(db, f"SELECT data_time FROM {table} ORDER BY ctid")]
        assert times == sorted(times)
        assert not record.clustered
    elif backend == "timescaledb":
        chunks = sql(db, "SELECT hypertable_name, range_end - range_start FROM timescaledb_information.chunks "
                         "WHERE hypertable_name IN ('att_scalar_devdouble', 'att_scalar_devlong')")
        assert {(name, width.days) for name, width in chunks} == {("att_scalar_devdouble", 14), ("att_scalar_devlong", 28)}
        assert sum(1 for name, _ in chunks if name == "att_scalar_devdouble") >= 3  # 30 days
        assert record.clustered
        leaves = sql(db, "SELECT format('%%I.%%I', chunk_schema, chunk_name) FROM timescaledb_information.chunks "
                         "WHERE hypertable_name = 'att_scalar_devdouble' ORDER BY range_end")
        oldest = [tuple(r) for r in sql(db, f"SELECT att_conf_id, data_time FROM {leaves[0][0]} ORDER BY ctid")]
        newest = [r[0] for r in sql(db, f"SELECT data_time FROM {leaves[-1][0]} ORDER BY ctid")]
        assert oldest == sorted(oldest) and newest == sorted(newest)  # reordered on the key; as archived
    else:
        ops = db.aging_layout()
        per_partition = ops.partition_rows(db, table)
        assert per_partition["p000"] == per_partition["future"] == 0
        assert sum(per_partition.values()) == db_rows(db, table)
        for name, rows in per_partition.items():
            if name.startswith("p2"):  # p<YYYYMM>: exactly that month's rows
                month = sql(db, f"SELECT COUNT(*) FROM {table} WHERE DATE_FORMAT(data_time, '%Y%m') = {{}}", (name[1:],))
                assert rows == month[0][0]
        assert sum(1 for name, rows in per_partition.items() if rows) >= 2  # 30 days span two months


def db_rows(db: Any, table: str) -> int:
    return int(sql(db, f"SELECT COUNT(*) FROM {table}")[0][0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_history_is_reused_by_its_key_and_rebuilt_with_another_seed(
        backend: str, histories: Callable[..., HistoryRecord]) -> None:
    first = histories(backend)
    again = histories(backend)
    assert again.reused and again.seconds == 0 and again.database == first.database and again.rows == first.rows
    other = histories(backend, seed=8)
    assert not other.reused and other.database != first.database


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_trials_rows_are_removed_after_it(backend: str, histories: Callable[..., HistoryRecord],
                                            stack_endpoints: Any) -> None:
    record = histories(backend)
    db = backend_for_stack(backend, stack_endpoints, database=record.database)
    ops = db.aging_layout()
    end = datetime.fromisoformat(record.end)
    table = db.table_for(MIX[0].info)
    before = ops.checksum(db, table, end - timedelta(days=60))
    with db.bulk_writer() as writer:  # what a trial's subscriber does: continue the attributes after the end
        for att in MIX[:10]:
            writer.register_attribute(att.info)
        writer.write([Event(a.info.name, end + timedelta(seconds=s + 1), 1.5) for a in MIX[:10] for s in range(20)])
    assert sum(db.count_rows_by_attribute().values()) == ROWS + 200
    assert reset_history(db, record) == 200
    assert sum(db.count_rows_by_attribute().values()) == ROWS
    assert ops.checksum(db, table, end - timedelta(days=60)) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_load_orders_load_the_same_rows_one_record_each(backend: str, stack_endpoints: Any,
                                                             endpoint_of: Callable[[str], Any]) -> None:
    endpoint_of(backend)
    spec = LoadOrderSpec(rows=(3_000,), attributes=60)
    histories, records = run_load_order(stack_endpoints, backend, [variant(backend)], spec, 11, asked_rows=6_000)
    try:
        assert [(r.backend, r.order, r.rows, r.attributes) for r in records] == [
            (backend, "pk", 3_000, 60), (backend, "time", 3_000, 60)]
        assert all(r.seconds > 0 and r.history_bytes > 0 for r in records)
        assert all((r.cluster_seconds is None) == (backend == "mysql") for r in records)
        # One attribute's loaded rows read back after each load: all of them (3,000 rows / 60
        # attributes), whatever the order; warm always, cold only where the cache can be dropped
        # (these test servers have no memory group).
        assert [(r.query_rows, r.query_cold_s) for r in records] == [(50, None), (50, None)]
        assert all(r.query_warm_s is not None and r.query_warm_s > 0 for r in records)
        base = histories[0]
        mix = load_mix(60, 6_000, None)
        sums = []
        for order in ("pk", "time"):
            copy = backend_for_stack(backend, stack_endpoints, database=f"{base.database}_copy")
            ops = copy.aging_layout()
            try:
                _make_copy(stack_endpoints, copy, base, mix, HistorySize(rows=6_000), 11, variant(backend),
                           _confined(), None, lambda text, done: None)
                end = datetime.fromisoformat(base.end)
                load_rows(copy, mix, 11, end, 3_000, order)
                sums.append(ops.checksum(copy, copy.table_for(mix[0].info), end))
            finally:
                ops.drop_copy(copy)
        assert sums[0] == sums[1] and sums[0][0] == 3_000
    finally:
        for h in histories:
            backend_for_stack(backend, stack_endpoints, database=h.database).drop_schema()


def _confined() -> Any:
    from hdbbench.parts.aging.history import Confinement
    return Confinement()


SCENARIO = """
name = "aged"
backends = {backends}
[history]
{history}
"""


@pytest.mark.parametrize(("backends", "history", "problem"), [
    ('["postgresql"]', "days = 3\nrows = 100", "[history] rows: give exactly one of days and rows"),
    ('["postgresql"]', "cluster = true", "[history]: give its size"),
    ('["postgresql"]', "days = -1", "[history] days: must be >= 0.001"),
    ('["postgresql"]', "rows = 10\nload_order = { rows = [0] }", "[history.load_order] rows: must be a list"),
    ('["postgresql"]', "rows = 10\nload_order = { rows = [10], variants = ['pk+3'] }", "variants: unknown schema"),
    ('["null"]', "rows = 10", "backend null has no extraction"),
    ('["postgresql"]', "rows = 10\ncluster = 'yes'", "[history] cluster: must be"),
    ('["postgresql"]', "rows = 10\nsize = 3", "[history] size: unknown key"),
])
def test_bad_history_input_is_refused_in_one_line(tmp_path: Path, backends: str, history: str, problem: str) -> None:
    path = tmp_path / "aged.toml"
    path.write_text(SCENARIO.format(backends=backends, history=history))
    with pytest.raises(ConfigError) as caught:
        load_scenario(path)
    text = str(caught.value)
    assert problem in text and "\n" not in text and str(path) in text


def test_the_query_set_runs_cold_and_warm_on_a_history(histories: Callable[..., HistoryRecord], stack_endpoints: Any,
                                                       tmp_path: Path) -> None:
    import json

    from hdbbench.parts.extraction.extraction import ExtractionOptions, run_extraction
    from hdbbench.parts.extraction.queries import load_query_set

    record = histories("postgresql")
    options = ExtractionOptions(backends=("postgresql",), variants=(record.variant,), cluster=False, validate=False,
                                histories=(("postgresql", record.database),))
    run = run_extraction(load_query_set(Path(__file__).parent.parent / "query_sets" / "aged.toml"), stack_endpoints,
                         options, tmp_path)
    results = json.loads((run / "results.json").read_text())["results"]
    runs = {(q["att_name"], q["interval_s"]) for q in results["queries"]}
    assert {interval for _, interval in runs} == {86400.0, 604800.0, 2592000.0}
    assert all(name.startswith("tango://hdbbench-test:10000/aged/dev/d") for name, _ in runs)
    assert results["loads"] == [] and results["clustering"] == []
    assert sum(1 for _ in (tmp_path.glob("*"))) == 1
    assert sum(db_rows(backend_for_stack("postgresql", stack_endpoints, database=record.database), t)
               for t in ("att_scalar_devdouble", "att_scalar_devlong")) == ROWS  # left as it was


@pytest.mark.parametrize("backend", ("postgresql", "mysql"))
def test_a_history_sized_in_bytes_stops_there_and_is_built_again_alike(
        backend: str, stack_endpoints: Any, endpoint_of: Callable[[str], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from hdbbench.parts.aging import history

    monkeypatch.setattr(history, "SIZE_CHECK_ROWS", 2_000)  # read the size often: the history is tiny
    monkeypatch.setattr(history, "CHUNK_ROWS", 1_000)
    endpoint_of(backend)
    size = HistorySize(rows=ROWS, min_bytes=1)  # any size is enough: it stops at the first check
    record = build_history(stack_endpoints, backend, variant(backend), MIX, size, 7)
    copy = build_history(stack_endpoints, backend, variant(backend), MIX, size, 7, copy_of=record,
                         database=f"{record.database}_again")
    try:
        assert 2_000 <= record.rows < ROWS and copy.rows == record.rows
        assert (copy.start, copy.end) == (record.start, record.end)
        sums = []
        for r in (record, copy):
            db = backend_for_stack(backend, stack_endpoints, database=r.database)
            sums.append(db.aging_layout().checksum(db, db.table_for(MIX[0].info), datetime(2000, 1, 1, tzinfo=timezone.utc)))
        assert sums[0] == sums[1]
    finally:
        for r in (record, copy):
            backend_for_stack(backend, stack_endpoints, database=r.database).drop_schema()


def test_days_beyond_what_can_be_built_are_refused_by_the_plan(tmp_path: Path) -> None:
    from hdbbench.scenario.plan import RunOptions, plan_run

    path = tmp_path / "aged.toml"
    path.write_text(SCENARIO.format(backends='["postgresql"]', history="days = 1000"))
    with pytest.raises(ConfigError, match=r"\[history\] days: 1000 days of the mix's .* rows, more than .*: give rows"):
        plan_run(load_scenario(path), RunOptions())
    path.write_text(SCENARIO.format(backends='["postgresql"]', history="days = 2"))
    assert "history: 2 days (≈ " in "\n".join(plan_run(load_scenario(path), RunOptions()).lines())

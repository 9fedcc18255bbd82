# SPDX-License-Identifier: Apache-2.0
"""HDB++ aggregates without continuous aggregates: the maintenance part's `aggregates` job.

The HDB++ TimescaleDB project ships continuous aggregates `cagg_scalar_<type>_<level>` per numeric
scalar type: per attribute and time bucket, count_rows (every row), count_errors, and per value side
(_r, _w) count (values not NULL), count_nan (NaN and ±Infinity), mean, min, max and stddev (sample)
with NaN/±Infinity left out. Debian's Apache-only TimescaleDB refuses continuous aggregates, so the
same figures are materialised as ordinary tables, `cagg_` + the data table's name without `att_` +
`_<level>`, refreshed incrementally by the backend folder's `aggregates.py` (found as `layout_ops`
finds `aging.py`): each refresh replaces the buckets from a watermark (the start of the newest bucket
written last time, which was possibly partial) with the aggregates of the raw rows up to now.

Backend modules provide: data_tables, refresh, materialised, check, span, hourly, drop (see
hdbbench/backends/postgres/aggregates.py). Arrays are not aggregated: the project's aggregates are
of scalars only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from types import ModuleType
from typing import Any, cast

from hdbbench.backends.base import Backend, ExtractionBackend
from hdbbench.model.errors import ConfigError
from hdbbench.results.maintenance import AggregateQuery, AggregateRefresh

LEVELS = ("1min", "10min", "1hour", "8hour", "1day")
LEVEL_SECONDS = {"1min": 60, "10min": 600, "1hour": 3600, "8hour": 8 * 3600, "1day": 86400}
SPAN_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
SOURCES = ("raw", "aggregate")
# Materialised and recomputed figures sum the same values, perhaps in another order (parallel plans):
# equal within this relative tolerance. No absolute one: HDB++ values can be tiny (pressures, currents).
REL_TOL = 1e-9
Query = tuple[str, str, int, datetime, datetime]  # data table, 1hour table, att_conf_id, start, end


def cagg_table(data_table: str, level: str) -> str:
    """`att_scalar_devdouble` + `1hour` -> `cagg_scalar_devdouble_1hour` (MariaDB: `..._ro_1hour`)."""
    return f"cagg_{data_table.removeprefix('att_')}_{level}"


def aggregate_ops(backend: Backend | type[Backend] | str) -> ModuleType | None:
    """The `aggregates` module of the backend's folder (None: the backend has none, as `null`)."""
    from hdbbench.backends.registry import folder_module

    return folder_module(backend, "aggregates")


def _ops(backend: Backend) -> ModuleType:
    ops = aggregate_ops(backend)
    if ops is None:
        raise ConfigError(f"backend {backend.name} has no aggregates (no aggregates.py in its folder)")
    return ops


def refresh_all(backend: Backend) -> list[AggregateRefresh]:
    """Refresh every level of every numeric scalar data table holding rows; one record per level
    (its seconds over all tables, the aggregate rows written)."""
    ops = _ops(backend)
    tables = ops.data_tables(backend)
    out = []
    for level in LEVELS:
        started, rows = time.perf_counter(), 0
        for table in tables:
            rows += ops.refresh(backend, table, cagg_table(table, level), level, LEVEL_SECONDS[level])
        out.append(AggregateRefresh(level=level, seconds=time.perf_counter() - started, rows=rows))
    return out


def unequal_tables(backend: Backend) -> list[str]:
    """The aggregate tables whose rows differ from the same aggregation computed now over the raw rows
    they claim to cover (from their first refresh's oldest row to their last refresh's upper bound)."""
    ops = _ops(backend)
    return [cagg for table, cagg, level in ops.materialised(backend)
            if not ops.check(backend, table, cagg, LEVEL_SECONDS[level], REL_TOL)]


def aggregates_equal(backend: Backend) -> bool:
    """Every aggregate table equals its raw rows aggregated now (True when none was materialised).
    Rows written after the last refresh with an older data_time than its upper bound make it False:
    the aggregates are then stale, which is what this check is for (refresh first for a final verdict)."""
    return not unequal_tables(backend)


def drop_aggregates(backend: Backend) -> None:
    """Drop every aggregate table and the watermarks (a history reset: the next refresh starts over)."""
    _ops(backend).drop(backend)


def compare_extraction(backend: Backend, att_conf_id: int, spans: Sequence[str] = tuple(SPAN_DAYS),
                       cold: Callable[[], bool] | None = None) -> list[AggregateQuery]:
    """For each span (day, week, month, year), one attribute's per-hour count/mean/min/max of value_r
    from the raw rows and from the `1hour` aggregate table: two records, each timed cold (after
    `cold()`, None when there is no `cold` or it returns False) and warm (run once, then timed), and
    `equal` when both sources gave the same rows. The span ends at the `1hour` table's watermark, the
    start of its newest (possibly partial) bucket, so only hours the refresh saw whole are compared; a
    span longer than the hours both sources hold is cut to them (`days`: what was compared)."""
    ops = _ops(backend)
    unknown = [s for s in spans if s not in SPAN_DAYS]
    if unknown:
        raise ConfigError(f"unknown span(s) {', '.join(unknown)}: expected {', '.join(SPAN_DAYS)}")
    info = dict(cast(ExtractionBackend, backend).attribute_catalog()).get(att_conf_id)
    if info is None:
        raise ConfigError(f"no attribute with att_conf_id {att_conf_id} in {backend.database}")
    table = backend.table_for(info)
    cagg = cagg_table(table, "1hour")
    held = ops.span(backend, cagg, att_conf_id)
    if held is None:
        raise ConfigError(f"{info.name} has no rows in {cagg}: refresh the aggregates first (refresh_all)")
    first, end = held
    # Retention removes raw rows the aggregates keep (a facility keeps its aggregates longer): compare
    # only the whole hours both still hold.
    raw = ops.oldest_raw(backend, table, att_conf_id)
    if raw is not None:
        hour = raw.replace(minute=0, second=0, microsecond=0)
        first = max(first, hour if hour == raw else hour + timedelta(hours=1))
    out = []
    for span in spans:
        start = min(max(end - timedelta(days=SPAN_DAYS[span]), first), end)
        query = (table, cagg, att_conf_id, start, end)
        measured = {source: _measure(backend, ops, source, query, cold) for source in SOURCES}
        equal = _same_rows(measured["raw"][0], measured["aggregate"][0])
        for source, (rows, cold_s, warm_s) in measured.items():
            out.append(AggregateQuery(backend=backend.name, span=span, days=(end - start) / timedelta(days=1),
                                      source=source, rows=len(rows), cold_s=cold_s, warm_s=warm_s,
                                      equal=equal))
    return out


def _measure(backend: Backend, ops: ModuleType, source: str, query: Query,
             cold: Callable[[], bool] | None) -> tuple[list[tuple[Any, ...]], float | None, float]:
    """(rows of the timed warm run, cold seconds or None, warm seconds), as the read-only account runs
    them. Only the query and its fetch are timed, not the connection (a cold restart ends those)."""
    cold_s = None
    if cold is not None and cold():
        cold_s = _timed(backend, ops, source, query, runs=1)[1]
    rows, warm_s = _timed(backend, ops, source, query, runs=2)
    return rows, cold_s, warm_s


def _timed(backend: Backend, ops: ModuleType, source: str, query: Query,
           runs: int) -> tuple[list[tuple[Any, ...]], float]:
    """The rows and seconds of the last of `runs` runs on one connection (the earlier ones warm it)."""
    conn = cast(ExtractionBackend, backend).reader()
    rows: list[tuple[Any, ...]] = []
    seconds = 0.0
    try:
        for _ in range(runs):
            started = time.perf_counter()
            rows = ops.hourly(backend, conn, source, *query)
            seconds = time.perf_counter() - started
        return rows, seconds
    finally:
        conn.close()


def _same_rows(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    """Same hours and counts; means, minima, maxima within REL_TOL (NULL only equal to NULL)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x[0] != y[0] or int(x[1]) != int(y[1]):
            return False
        for u, v in zip(x[2:], y[2:]):
            if (u is None) != (v is None):
                return False
            if u is not None and not math.isclose(float(u), float(v), rel_tol=REL_TOL):
                return False
    return True

# SPDX-License-Identifier: Apache-2.0
"""HDB++ aggregates without continuous aggregates, checked and queried: the maintenance part's
questions of the aggregate tables the `aggregates` job refreshes.

The tables, their levels and their refresh are the backend's `aggregates()` ability
(hdbbench.backends.abilities.aggregates, where `refresh_all` is, since the job is the backend's):
`cagg_` + the data table's name without `att_` + `_<level>`, refreshed incrementally from a watermark.
Here: whether they equal the same aggregation recomputed now over the raw rows (`aggregates_equal`),
and the same hourly question answered from the raw rows and from the `1hour` tables, cold and warm
(`compare_extraction`). Arrays are not aggregated: the project's aggregates are of scalars only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from hdbbench.backends.abilities.aggregates import LEVEL_SECONDS, Aggregates, aggregates_of, cagg_table
from hdbbench.backends.base import Backend, ExtractionBackend
from hdbbench.model.errors import ConfigError
from hdbbench.results.maintenance import AggregateQuery

SPAN_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
SOURCES = ("raw", "aggregate")
# Materialised and recomputed figures sum the same values, perhaps in another order (parallel plans):
# equal within this relative tolerance. No absolute one: HDB++ values can be tiny (pressures, currents).
REL_TOL = 1e-9
Query = tuple[str, str, int, datetime, datetime]  # data table, 1hour table, att_conf_id, start, end


def unequal_tables(backend: Backend) -> list[str]:
    """The aggregate tables whose rows differ from the same aggregation computed now over the raw rows
    they claim to cover (from their first refresh's oldest row to their last refresh's upper bound)."""
    ops = aggregates_of(backend)
    return [cagg for table, cagg, level in ops.materialised(backend)
            if not ops.check(backend, table, cagg, LEVEL_SECONDS[level], REL_TOL)]


def aggregates_equal(backend: Backend) -> bool:
    """Every aggregate table equals its raw rows aggregated now (True when none was materialised).
    Rows written after the last refresh with an older data_time than its upper bound make it False:
    the aggregates are then stale, which is what this check is for (refresh first for a final verdict)."""
    return not unequal_tables(backend)


def drop_aggregates(backend: Backend) -> None:
    """Drop every aggregate table and the watermarks (a history reset: the next refresh starts over)."""
    aggregates_of(backend).drop(backend)


def compare_extraction(backend: Backend, att_conf_id: int, spans: Sequence[str] = tuple(SPAN_DAYS),
                       cold: Callable[[], bool] | None = None) -> list[AggregateQuery]:
    """For each span (day, week, month, year), one attribute's per-hour count/mean/min/max of value_r
    from the raw rows and from the `1hour` aggregate table: two records, each timed cold (after
    `cold()`, None when there is no `cold` or it returns False) and warm (run once, then timed), and
    `equal` when both sources gave the same rows. The span ends at the `1hour` table's watermark, the
    start of its newest (possibly partial) bucket, so only hours the refresh saw whole are compared; a
    span longer than the hours both sources hold is cut to them (`days`: what was compared)."""
    ops = aggregates_of(backend)
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


def _measure(backend: Backend, ops: Aggregates, source: str, query: Query,
             cold: Callable[[], bool] | None) -> tuple[list[tuple[Any, ...]], float | None, float]:
    """(rows of the timed warm run, cold seconds or None, warm seconds), as the read-only account runs
    them. Only the query and its fetch are timed, not the connection (a cold restart ends those)."""
    cold_s = None
    if cold is not None and cold():
        cold_s = _timed(backend, ops, source, query, runs=1)[1]
    rows, warm_s = _timed(backend, ops, source, query, runs=2)
    return rows, cold_s, warm_s


def _timed(backend: Backend, ops: Aggregates, source: str, query: Query,
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

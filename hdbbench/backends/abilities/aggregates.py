# SPDX-License-Identifier: Apache-2.0
"""The aggregates ability: HDB++'s aggregates materialised as ordinary tables, refreshed incrementally.

The HDB++ TimescaleDB project ships continuous aggregates `cagg_scalar_<type>_<level>` per numeric
scalar type: per attribute and time bucket, count_rows (every row), count_errors, and per value side
(_r, _w) count (values not NULL), count_nan (NaN and ±Infinity), mean, min, max and stddev (sample)
with NaN/±Infinity left out. Debian's Apache-only TimescaleDB refuses continuous aggregates, so the
same figures are materialised as ordinary tables, `cagg_` + the data table's name without `att_` +
`_<level>`, by the backend's `Aggregates`: each refresh replaces the buckets from a watermark (the
start of the newest bucket written last time, which was possibly partial) with the aggregates of the
raw rows up to now. Arrays are not aggregated: the project's aggregates are of scalars only.

`refresh_all` is here, not with the maintenance part (hdbbench.parts.maintenance.aggregates, which
checks and queries them), because it is also a backend's maintenance job (`aggregates_job`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from hdbbench.model.errors import ConfigError

LEVELS = ("1min", "10min", "1hour", "8hour", "1day")
LEVEL_SECONDS = {"1min": 60, "10min": 600, "1hour": 3600, "8hour": 8 * 3600, "1day": 86400}


@dataclass(frozen=True)
class LevelRefresh:
    """One aggregate level refreshed: its seconds over every table, the aggregate rows written."""

    level: str
    seconds: float
    rows: int


class Aggregates(Protocol):
    """A backend's aggregate tables; every method takes that backend first."""

    def data_tables(self, backend: Any) -> list[str]:
        """The numeric scalar data tables holding rows (arrays are not aggregated)."""

    def refresh(self, backend: Any, table: str, cagg: str, level: str, seconds: int) -> int:
        """Replace `cagg`'s buckets from its watermark on (from the oldest row the first time) with the
        aggregates of `table`'s raw rows up to now, in one transaction with the watermark's move; the
        rows written."""

    def materialised(self, backend: Any) -> list[tuple[str, str, str]]:
        """(data table, aggregate table, level) of every aggregate table a refresh made."""

    def check(self, backend: Any, table: str, cagg: str, seconds: int, rel_tol: float) -> bool:
        """`cagg`'s rows equal the aggregation recomputed now over the raw rows it claims to cover;
        floats within `rel_tol`, NULL equal to NULL."""

    def span(self, backend: Any, cagg: str, att_conf_id: int) -> tuple[datetime, datetime] | None:
        """(the attribute's oldest materialised bucket, the table's watermark), or None (nothing)."""

    def hourly(self, backend: Any, conn: Any, source: str, table: str, cagg: str, att_conf_id: int,
               start: datetime, end: datetime) -> list[tuple[Any, ...]]:
        """(hour, count, mean, min, max) of value_r per hour in [start, end) from the raw rows
        (`source` "raw") or the `1hour` aggregate table ("aggregate"), on `conn` (the caller times it)."""

    def drop(self, backend: Any) -> None:
        """Drop every aggregate table and the watermarks (a history reset: the next refresh starts over)."""

    def oldest_raw(self, backend: Any, table: str, att_conf_id: int) -> datetime | None:
        """The attribute's oldest raw row: retention may have removed what the aggregates keep."""


def cagg_table(data_table: str, level: str) -> str:
    """`att_scalar_devdouble` + `1hour` -> `cagg_scalar_devdouble_1hour` (MariaDB: `..._ro_1hour`)."""
    return f"cagg_{data_table.removeprefix('att_')}_{level}"


def aggregates_of(backend: Any) -> Aggregates:
    """The backend's Aggregates; refused in one line when it has none (as `null`)."""
    ops: Aggregates | None = backend.aggregates()
    if ops is None:
        raise ConfigError(f"backend {backend.name} has no aggregates")
    return ops


def refresh_all(backend: Any) -> list[LevelRefresh]:
    """Refresh every level of every numeric scalar data table holding rows; one record per level
    (its seconds over all tables, the aggregate rows written)."""
    ops = aggregates_of(backend)
    tables = ops.data_tables(backend)
    out = []
    for level in LEVELS:
        started, rows = time.perf_counter(), 0
        for table in tables:
            rows += ops.refresh(backend, table, cagg_table(table, level), level, LEVEL_SECONDS[level])
        out.append(LevelRefresh(level=level, seconds=time.perf_counter() - started, rows=rows))
    return out

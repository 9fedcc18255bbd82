# SPDX-License-Identifier: Apache-2.0
"""HDB++ aggregates as ordinary tables (hdbbench.parts.maintenance.aggregates) on the session's real servers.

Three DevDouble scalars (two READ, one READ_WRITE: on MariaDB the `_ro` and `_rw` tables) get an event
every 20 s for three hours, with NaN, +Infinity, NULL values and error events among them, through
the backend's bulk writer. The aggregates are refreshed, checked against the raw rows and, for one
hour, against figures computed here in Python; half an hour more is written and refreshed again
(only the newest buckets are rewritten); one attribute's hourly figures are read from both sources;
the oldest raw rows are removed (the check still holds), then one aggregate row is altered, which
the check must see.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from contextlib import closing
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hdbbench.backends import Backend, backend_class
from hdbbench.backends.abilities.aggregates import LEVELS, cagg_table, refresh_all
from hdbbench.model.hdbtypes import AttributeInfo, Event, Quality, TangoType, WriteType
from hdbbench.parts.maintenance.aggregates import (
    aggregates_equal,
    compare_extraction,
    drop_aggregates,
    unequal_tables,
)
from tests.harness.databases import fresh_backend, sql

ATTRIBUTES = [AttributeInfo(f"tango://agghost:10000/agg/dev/1/{name}", TangoType.DEV_DOUBLE, write_type=wt)
              for name, wt in (("a", WriteType.READ), ("b", WriteType.READ_WRITE), ("c", WriteType.READ))]
STEP = timedelta(seconds=20)
FIRST_HOURS = 3
SECOND = timedelta(minutes=30)
SPOT = ATTRIBUTES[1]  # READ_WRITE: both sides are checked


def _value(i: int, k: int) -> float | None:
    """A wandering value, with NaN, +Infinity and NULL among them."""
    if k % 50 == 7:
        return math.nan
    if k % 77 == 5:
        return math.inf
    if k % 31 == 3:
        return None
    return math.sin(k / 10) * 100 + k * 0.25 + i


def _events(start: datetime, end: datetime, k0: int) -> list[Event]:
    events = []
    for i, info in enumerate(ATTRIBUTES):
        k, at = k0, start
        while at < end:
            if k % 97 == 11:
                events.append(Event(info.name, at, None, None, Quality.INVALID, "read failed: timeout"))
            else:
                r = _value(i, k)
                w = _value(i + 7, k + 13) if info.write_type == WriteType.READ_WRITE else None
                quality = Quality.INVALID if r is None else Quality.VALID
                events.append(Event(info.name, at, r, w, quality))
            k, at = k + 1, at + STEP
    return events


def _expected(backend: str, events: list[Event], sides: tuple[str, ...]) -> list[Any]:
    """count_rows, count_errors, then per side count, count_nan, mean, min, max, stddev (sample), as
    the backend stores the values: MariaDB has no NaN/Infinity and stores NULL."""
    out: list[Any] = [len(events), sum(e.error_desc is not None for e in events)]
    for side in sides:
        stored = [getattr(e, f"value_{side}") for e in events]
        if backend == "mysql":
            stored = [v if v is not None and math.isfinite(v) else None for v in stored]
        finite = [v for v in stored if v is not None and math.isfinite(v)]
        out += [sum(v is not None for v in stored),
                sum(v is not None and not math.isfinite(v) for v in stored),
                statistics.fmean(finite), min(finite), max(finite), statistics.stdev(finite)]
    return out


def _same(got: list[Any], want: list[Any]) -> bool:
    return len(got) == len(want) and all(
        (g is None and w is None)
        or (g is not None and w is not None and math.isclose(float(g), float(w), rel_tol=1e-9))
        for g, w in zip(got, want))


def _at(db: Backend, at: datetime) -> datetime:
    """A time as the driver passes it: MariaDB's DATETIME(6) holds naive UTC."""
    return at.replace(tzinfo=None) if db.name == "mysql" else at


def _alter(db: Backend, statement: str, params: tuple[Any, ...]) -> int:
    """Run one statement that returns no rows; the rows it changed."""
    with closing(db.endpoint.connect(db.database)) as conn:
        cur = conn.cursor()
        cur.execute(statement.replace("{}", getattr(db, "placeholder", "%s")), params)
        conn.commit()
        return int(cur.rowcount)


def _write(db: Backend, events: list[Event]) -> None:
    with db.bulk_writer() as writer:
        for info in ATTRIBUTES:  # a new writer knows the attributes already archived once registered
            writer.register_attribute(info, events[0].data_time - timedelta(seconds=1))
        assert writer.write(events) == len(events)


def test_a_backend_without_aggregates_has_none() -> None:
    assert backend_class("null").aggregates() is None
    assert backend_class("postgresql").aggregates() is not None


@pytest.mark.parametrize("backend", ["timescaledb", "postgresql", "mysql"])
def test_aggregates_refresh_incrementally_and_match_the_raw_rows(endpoint_of: Callable[[str], Any],
                                                                  backend: str) -> None:
    now = datetime.now(timezone.utc)
    t0 = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=FIRST_HOURS + 1)
    first_end = t0 + timedelta(hours=FIRST_HOURS)
    with fresh_backend(backend, endpoint_of(backend)) as db:
        assert [r.rows for r in refresh_all(db)] == [0] * len(LEVELS)  # no rows yet: nothing to materialise
        assert aggregates_equal(db)

        first = _events(t0, first_end, 0)
        _write(db, first)
        refreshed = refresh_all(db)
        assert [r.level for r in refreshed] == list(LEVELS)
        by_level = {r.level: r.rows for r in refreshed}
        minutes = FIRST_HOURS * 60
        assert by_level["1min"] == len(ATTRIBUTES) * minutes  # every attribute has rows in every minute
        assert by_level["10min"] == len(ATTRIBUTES) * minutes // 10
        assert by_level["1hour"] == len(ATTRIBUTES) * FIRST_HOURS
        assert aggregates_equal(db), unequal_tables(db)

        # One whole hour of the READ_WRITE attribute against Python's figures.
        ids = {info.name: att_id for att_id, info in db.attribute_catalog()}  # type: ignore[attr-defined]
        cagg = cagg_table(db.table_for(SPOT), "1hour")
        hour = [e for e in first if e.att_name == SPOT.name and t0 <= e.data_time < t0 + timedelta(hours=1)]
        assert any(e.error_desc for e in hour) and any(e.value_r is None and not e.error_desc for e in hour)
        assert any(e.value_r is not None and math.isnan(e.value_r) for e in hour)
        names = ["count_rows", "count_errors"]
        names += [f"{c}_{s}" for s in ("r", "w") for c in ("count", "count_nan", "mean", "min", "max",
                                                            "stddev")]
        got = sql(db, f"SELECT {', '.join(names)} FROM {cagg} "
                      "WHERE att_conf_id = {} AND data_time = {}", (ids[SPOT.name], _at(db, t0)))
        assert len(got) == 1
        want = _expected(backend, hour, ("r", "w"))
        assert _same(list(got[0]), want), (got[0], want)
        if backend == "mysql":
            assert got[0][3] == 0 and got[0][9] == 0  # no NaN in MariaDB: stored as NULL
        else:
            assert got[0][3] > 0

        # Half an hour more: only the buckets from each watermark on are written again.
        more = _events(first_end, first_end + SECOND, len(first) // len(ATTRIBUTES))
        _write(db, more)
        again = {r.level: r.rows for r in refresh_all(db)}
        assert sum(again.values()) < sum(by_level.values())
        assert again["1min"] == len(ATTRIBUTES) * (1 + 30)  # the last minute of the first part, then 30 new
        assert aggregates_equal(db), unequal_tables(db)

        # The hourly figures of one attribute, from the raw rows and from the aggregate table.
        queries = compare_extraction(db, ids[SPOT.name], ("day", "year"), cold=lambda: True)
        assert [(q.span, q.source) for q in queries] == [("day", "raw"), ("day", "aggregate"),
                                                          ("year", "raw"), ("year", "aggregate")]
        for q in queries:
            assert q.equal and q.rows == FIRST_HOURS and q.backend == backend
            assert q.days == pytest.approx(FIRST_HOURS / 24)  # cut to the hours held before the watermark
            assert q.cold_s is not None and q.cold_s >= 0 and q.warm_s >= 0
        no_cold = compare_extraction(db, ids[SPOT.name], ("day",), cold=None)
        assert all(q.cold_s is None and q.equal for q in no_cold)
        refused = compare_extraction(db, ids[SPOT.name], ("day",), cold=lambda: False)
        assert all(q.cold_s is None for q in refused)

        # Raw rows removed (a retention job): the aggregates keep them; the check compares from the first
        # bucket still whole.
        assert _alter(db, f"DELETE FROM {db.table_for(SPOT)} WHERE data_time < {{}}",
                      (_at(db, t0 + timedelta(minutes=30)),)) > 0
        assert aggregates_equal(db), unequal_tables(db)

        # One altered aggregate row is seen.
        assert _alter(db, f"UPDATE {cagg} SET max_r = max_r + 1 "
                          "WHERE att_conf_id = {} AND data_time = {}",
                      (ids[SPOT.name], _at(db, t0 + timedelta(hours=1)))) == 1
        assert not aggregates_equal(db)
        assert unequal_tables(db) == [cagg]
        altered = compare_extraction(db, ids[SPOT.name], ("day",))
        assert [q.equal for q in altered] == [False, False]

        # Dropped, they are built again from the oldest row.
        drop_aggregates(db)
        assert db.aggregates().materialised(db) == []  # type: ignore[union-attr]
        assert refresh_all(db)[0].rows > 0 and aggregates_equal(db)

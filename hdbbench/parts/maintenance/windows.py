# SPDX-License-Identifier: Apache-2.0
"""The figures of one window of a maintenance trial, from its 1 Hz series and the reader's queries.

Every figure comes from what never waits on the database's table locks, so a job that locks a table
cannot stall the sampling that measures it, and the core ones from outside the subscriber, the same
for every subscriber kind (hdbbench.trials.outside): the stored count is the database server's counter
of inserted rows (its statistics views, which take no table lock), the age the probe attributes'
visibility lag, the queue HDB++'s AttributePendingNumber. Ours adds its EventAgeAtCommitP99 over a short
StatisticsTimeWindow and its LostEventNumber; the lock waits are the server's session list. A backend
without the counter (or a run of an older format) has the subscribers' RowsStoredNumber instead, and so
has a job's window where the counter also counts the job's own writes (MariaDB's server-wide
Handler_write: OPTIMIZE rewrites every row); a kind that does not publish it has none there.

* stored rate: the stored count's rise from the last sample at or before the window's start to the
  first at or after its end, over the time between those samples (a job shorter than a sample period
  still gets a rate, over the samples around it);
* visibility lag, event age p99 and queue: the highest sample from the window's start to `lag_s` after
  its end (an event held up by a job is committed, and counted, after it: the trial gives a job's window
  the subscribers' StatisticsTimeWindow as lag, the quiet window before it none);
* lock wait: the samples in the window × the sampling period × the sessions waiting in each;
* query p95: the queries of the reader that overlapped the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hdbbench.model.sampling import TimeSeries
from hdbbench.results.maintenance import WindowFigures
from hdbbench.subscribers import statistics as st
from hdbbench.trials.outside import COUNTER_COLUMN, LAG_COLUMN

STORED = f"sub.{st.ROWS_STORED_NUMBER}"
STORED_OUTSIDE = COUNTER_COLUMN   # the database's inserted-row counter (any kind)
VISIBILITY = LAG_COLUMN           # the probe attributes' visibility lag (any kind)
OUTSIDE_MIN_SPAN_S = 2.0          # the counter's resolution (1 s) and one sample period
QUEUE = f"sub.{st.ATTRIBUTE_PENDING_NUMBER}"
AGE_P99 = f"sub.{st.EVENT_AGE_AT_COMMIT_P99}"
LOST = f"sub.{st.LOST_EVENT_NUMBER}"
LOCKS = "locks.lock_waiters"
CSV_HEADER = ["t_s", "stored_rate", "event_age_p99_s", "queue", "lock_waiters", "visibility_lag_s"]


@dataclass(frozen=True)
class Query:
    """One query of the extraction reader: when it started and how long it took (trial clock)."""

    start_s: float
    seconds: float


def window(series: TimeSeries, queries: Sequence[Query], start_s: float, end_s: float, period_s: float = 1.0,
           lag_s: float = 2.0, counter_counts_the_job: bool = False) -> WindowFigures:
    """The figures of [start_s, end_s] (the module docstring). `counter_counts_the_job`: a job runs in
    the window and the database's counter counts its own writes (OutsideReader.counts_maintenance_writes):
    the stored rate is then the subscribers' RowsStoredNumber where they publish it, else not measured."""
    rows = series.rows
    outside = any(STORED_OUTSIDE in r for r in rows) and not counter_counts_the_job
    ours = any(STORED in r for r in rows)
    if outside:
        # The counter is published about once a second (PostgreSQL): a window shorter than that plus a
        # sample period would read a flush or none, so its rate is taken over that span around it.
        pad = max(0.0, OUTSIDE_MIN_SPAN_S - (end_s - start_s)) / 2
        stored = _rate(rows, STORED_OUTSIDE, start_s - pad, end_s + pad)
    else:
        stored = _rate(rows, STORED, start_s, end_s)
    ages = _values(rows, AGE_P99, start_s, end_s + lag_s) or _after(rows, AGE_P99, end_s)
    visible = _values(rows, VISIBILITY, start_s, end_s + lag_s) or _after(rows, VISIBILITY, end_s)
    queue = _values(rows, QUEUE, start_s, end_s + lag_s) or _after(rows, QUEUE, end_s)
    lost = _rise(rows, LOST, start_s, end_s)
    locks = _values(rows, LOCKS, start_s, end_s)
    has_locks = any(LOCKS in r for r in rows)
    overlapping = [q.seconds for q in queries if q.start_s <= end_s and q.start_s + q.seconds >= start_s]
    return WindowFigures(
        start_s=round(start_s, 3), end_s=round(end_s, 3), stored_rate=stored,
        event_age_p99_s=max(ages) if ages else None, queue_max=int(max(queue)) if queue else None,
        lost=int(lost or 0), lock_wait_s=sum(locks) * period_s if has_locks else None,
        query_p95_s=float(np.percentile(overlapping, 95)) if overlapping else None, queries=len(overlapping),
        stored_from="database" if outside else "subscriber" if ours else None,
        visibility_lag_s=max(visible) if visible else None)


def _values(rows: Sequence[dict[str, float]], column: str, start_s: float, end_s: float) -> list[float]:
    return [r[column] for r in rows if column in r and start_s <= r["t_s"] <= end_s]


def _after(rows: Sequence[dict[str, float]], column: str, t_s: float) -> list[float]:
    """The first sample after t_s, alone (a window too short to hold a sample)."""
    return next(([r[column]] for r in rows if column in r and r["t_s"] >= t_s), [])


def _bracket(rows: Sequence[dict[str, float]], column: str, start_s: float,
             end_s: float) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """(t, value) of the last sample at or before start_s and the first at or after end_s."""
    have = [(r["t_s"], r[column]) for r in rows if column in r]
    before = [p for p in have if p[0] <= start_s]
    after = [p for p in have if p[0] >= end_s]
    if not before or not after:
        return None
    return before[-1], after[0]


def _rate(rows: Sequence[dict[str, float]], column: str, start_s: float, end_s: float) -> float | None:
    found = _bracket(rows, column, start_s, end_s)
    if found is None or found[1][0] <= found[0][0]:
        return None
    return (found[1][1] - found[0][1]) / (found[1][0] - found[0][0])


def _rise(rows: Sequence[dict[str, float]], column: str, start_s: float, end_s: float) -> float | None:
    found = _bracket(rows, column, start_s, end_s)
    return None if found is None else found[1][1] - found[0][1]


def series_table(series: TimeSeries, period_s: float = 1.0) -> tuple[list[str], list[list[object]]]:
    """The trial's timeline as the report reads it (CSV_HEADER; an unknown figure is an empty cell)."""
    out: list[list[object]] = []
    previous: dict[str, float] | None = None
    stored = STORED_OUTSIDE if any(STORED_OUTSIDE in r for r in series.rows) else STORED
    for row in series.rows:
        rate = None
        if previous is not None and stored in row and stored in previous and row["t_s"] > previous["t_s"]:
            rate = (row[stored] - previous[stored]) / (row["t_s"] - previous["t_s"])
        out.append([row["t_s"], rate, row.get(AGE_P99), row.get(QUEUE), row.get(LOCKS), row.get(VISIBILITY)])
        previous = row
    return CSV_HEADER, [["" if v is None else v for v in r] for r in out]

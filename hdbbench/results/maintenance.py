# SPDX-License-Identifier: Apache-2.0
"""The records the maintenance part writes (results.json kind "insertion", key `maintenance`).

Typed records (hdbbench.model.records): read exactly as written. They live in the results stage, beside
the other records of a results file, so that the report and ``hdbbench migrate`` read them without
importing the part (hdbbench.parts.maintenance) that measures them. Times are seconds on the trial's clock
(t_s = 0 when the load started), rates events per second; a figure that could not be read is null.
"""

from __future__ import annotations

from dataclasses import dataclass

from hdbbench.model.records import omitted


@dataclass(frozen=True, kw_only=True)
class WindowFigures:
    """What the archiving did over one window of a maintenance trial (a job's run, or the quiet load before it)."""

    start_s: float
    end_s: float
    stored_rate: float | None        # events stored per second (the database's rows)
    event_age_p99_s: float | None    # the largest of the subscribers' p99 event age at commit sampled in it
    queue_max: int | None            # events pending in the subscribers, highest sample
    lost: int                        # events the subscribers counted as lost in it
    lock_wait_s: float | None        # subscriber sessions waiting on a lock: samples × the sampling period
    query_p95_s: float | None        # extraction queries run meanwhile (one attribute's last 10 minutes)
    queries: int
    # From outside the subscriber, the same for every kind (hdbbench.trials.outside): where the stored
    # rate came from ("database": the server's inserted-row counter; "subscriber": RowsStoredNumber, a
    # run of an older format or a backend without the counter), and the probe attributes' largest
    # visibility lag (source time to the row readable by a reader).
    stored_from: str | None = omitted()
    visibility_lag_s: float | None = omitted()

    @property
    def lag(self) -> tuple[str, float | None]:
        """The age figure the words use: the visibility lag (any kind), else our event age p99."""
        if self.visibility_lag_s is not None:
            return "visibility lag", self.visibility_lag_s
        return "event age p99", self.event_age_p99_s


@dataclass(frozen=True, kw_only=True)
class AggregateRefresh:
    """One aggregate level refreshed by the `aggregates` job."""

    level: str                       # 1min | 10min | 1hour | 8hour | 1day
    seconds: float
    rows: int                        # aggregate rows written (the buckets recomputed)


@dataclass(frozen=True, kw_only=True)
class MaintenanceRecord:
    """One maintenance job run during a sustained trial, against the quiet window (`gap_s`) just before it."""

    backend: str
    job: str                         # hdbbench.parts.maintenance.part.JOB_KINDS
    label: str                       # the trial's
    started_s: float
    duration_s: float | None         # None: it failed before it could be timed
    lost: int                        # events lost during the job (the subscribers' counters)
    before: WindowFigures
    during: WindowFigures
    detail: str                      # what it did, in words ("dropped 1 chunk of 412,000 rows")
    error: str | None = omitted()    # one line when the job failed; the trial went on
    bytes: int | None = omitted()    # backup: bytes written
    levels: list[AggregateRefresh] | None = omitted()


@dataclass(frozen=True, kw_only=True)
class MaintenanceTrial:
    """One sustained trial per backend that the jobs ran in, and what was counted after it."""

    backend: str
    label: str
    rate: float                      # offered events/s
    seconds: float                   # from the load's start to its stop
    database: str                    # the history's database, or the trial's fresh one
    emitted: int
    stored: int                      # rows stamped since the load started
    lost: int                        # emitted − stored, counted per attribute after the drain
    rows_match: bool                 # every attribute's rows equal the events its device emitted
    aggregates_equal: bool | None    # the aggregate tables against the same SQL over raw rows (None: no aggregates job)
    error: str | None = omitted()


@dataclass(frozen=True, kw_only=True)
class AggregateQuery:
    """One attribute's mean/min/max per hour over a span, from raw rows or from the aggregate tables."""

    backend: str
    span: str                        # day | week | month | year
    days: float                      # the span held in the database (a year is cut to the history's span)
    source: str                      # raw | aggregate
    rows: int                        # hourly rows returned
    cold_s: float | None             # the server's page cache and buffers dropped first (None: cannot)
    warm_s: float
    equal: bool                      # its rows equal the other source's


@dataclass(frozen=True, kw_only=True)
class MaintenanceResults:
    trials: list[MaintenanceTrial]
    jobs: list[MaintenanceRecord]
    extraction: list[AggregateQuery]

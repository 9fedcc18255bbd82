# SPDX-License-Identifier: Apache-2.0
"""The records of a run's replica-reads part: ``replica.json`` (kind "replica", ``results.trials[]``
of `ReplicaReads`), written by hdbbench.parts.replica_reads and read by the report's replica section.

Typed records (hdbbench.model.records): read exactly as written, an unknown or missing key refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class QueryTimes:
    """One query of the readers on the standby, over the stretch with readers."""

    name: str
    runs: int                        # completed
    errors: int                      # a standby may cancel a query that conflicts with the WAL it replays
    rows: int                        # of the last run
    p50_s: float | None
    p95_s: float | None
    max_s: float | None
    first_error: str | None


@dataclass(frozen=True)
class ReplicaReads:
    """One backend's two stretches of archiving, without and with readers on a standby."""

    backend: str
    rate: float
    duration_s: float
    readers: int
    query_set: str
    loaded_rows: int = 0
    # Per stretch ("without", "with"): stored_rate_p1/p50/mean (rows/s), age_p50_s, age_p99_s,
    # age_max_s, age_resolution_s; empty when the trial failed before the stretch.
    without: dict[str, float | None] = field(default_factory=dict)
    with_readers: dict[str, float | None] = field(default_factory=dict)
    queries: list[QueryTimes] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplicaResults:
    """``results`` of kind "replica"."""

    trials: list[ReplicaReads]

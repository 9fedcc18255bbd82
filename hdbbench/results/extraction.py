# SPDX-License-Identifier: Apache-2.0
"""The records of an extraction results file: ``extraction.json`` (kind "extraction"), written by
hdbbench.parts.extraction and read by the report (``results.summary[]``) and ``hdbbench migrate``.

Typed records (hdbbench.model.records): read exactly as written, an unknown or missing key refused.
Times are seconds, sizes bytes; a figure that could not be read is null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class TimeStats:
    """count, median, 95th percentile and maximum of a set of times (seconds)."""

    count: int
    p50: float
    p95: float
    max: float


@dataclass(frozen=True)
class QuerySummary:
    """``results.summary[]``: one backend x variant x layout x group x interval x cache state."""

    backend: str
    variant: str
    state: str          # unclustered | clustered
    group: str
    interval_s: float
    temperature: str    # cold | warm
    client_s: TimeStats
    server_s: TimeStats
    rows_mean: float
    pages_read_mean: float | None


@dataclass(frozen=True, kw_only=True)
class DataLoad:
    """``results.loads[]``: one database of the query set's data set, generated and loaded (hdbbench.parts.datagen)."""

    backend: str
    database: str
    order: str                       # time | pk: the order the rows were loaded in
    events: int
    seconds: float                   # the backend's bulk loads (generation excluded)
    wall_s: float                    # generation included
    events_per_s: float
    size_bytes: int
    variant: str
    table_sizes: dict[str, int]      # bytes per data table ({} where the backend cannot tell)


@dataclass(frozen=True, kw_only=True)
class Clustering:
    """``results.clustering[]``: one database reordered as the official job does, before its clustered queries."""

    backend: str
    variant: str
    seconds: float
    size_before: int
    size_after: int
    size_change: int
    table_sizes_before: dict[str, int]
    table_sizes_after: dict[str, int]
    actions: int                     # statements run
    note: str | None                 # the one statement, when there was one


@dataclass(frozen=True, kw_only=True)
class Checksum:
    """One query's order-independent checksum, as the first backend returned it (hdbbench.parts.extraction.checksums)."""

    reference: str                   # backend/variant whose rows the others were checked against
    rows: int
    items: int
    nulls: int
    time_us_sum: int
    value_sum: float


@dataclass(frozen=True, kw_only=True)
class Validation:
    """``results.validation``: whether every backend returned the same rows for every query."""

    status: Literal["ok", "skipped"]
    queries: int
    checksums: dict[str, Checksum]   # by query id


@dataclass(frozen=True, kw_only=True)
class IntervalFit:
    """``results.fits[]``: p95 client time against interval length, per backend x variant x layout x group x cache state."""

    backend: str
    variant: str
    state: str
    group: str
    temperature: str
    points: int
    slope_s_per_s: float
    intercept_s: float
    r2: float
    inverse_slope: float | None


@dataclass(frozen=True, kw_only=True)
class QueryRecord:
    """``results.queries[]``: one concrete query, the same on every backend (hdbbench.parts.extraction.queries.Query)."""

    id: str
    group: str
    kind: str
    att_name: str
    type: str                        # Tango type suffix: devdouble
    format: str                      # scalar | spectrum | image
    start: str                       # ISO 8601
    end: str
    interval_s: float
    bucket_s: int
    cold: bool


@dataclass(frozen=True, kw_only=True)
class ExtractionResults:
    """``results`` of kind "extraction"."""

    cold_mode: str                   # how a cold query was made cold, in words
    os_cache_dropped: bool
    loads: list[DataLoad]
    clustering: list[Clustering]
    validation: Validation
    summary: list[QuerySummary]
    fits: list[IntervalFit]
    queries: list[QueryRecord]

# SPDX-License-Identifier: Apache-2.0
"""The records a run writes about the archive's age, memory and storage (results.json, kind "insertion").

They are typed records (hdbbench.model.records): read exactly as written, an unknown or missing key refused.
They live in the results stage, beside the other records of a results file, so that the report and
``hdbbench migrate`` read them without importing the part (hdbbench.parts.aging) that measures them.
Bytes are bytes, times seconds, rates events per second; a figure that could not be read is null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hdbbench.model.records import omitted
from hdbbench.stack.servers.confine.records import ServerConfinement, StorageClassName

LoadOrder = Literal["pk", "time"]


@dataclass(frozen=True, kw_only=True)
class HistoryRecord:
    """An aged history a run's trials started from."""

    backend: str
    variant: str                     # the schema variant (hdbbench.backends.model.SchemaVariant)
    key: str                         # what identifies it for reuse: backend, variant, mix, size, seed
    database: str
    attributes: int
    days: float                      # the span of archive time it covers
    rows: int
    bytes: int                       # the database's size once built
    start: str                       # ISO 8601 UTC, the first and last event time
    end: str
    seconds: float                   # building it (0 when reused)
    reused: bool
    clustered: bool                  # older chunks/partitions reordered as the official job does
    memory_limit_bytes: int | None   # of the server, read back (ServerConfinement)
    storage_class: StorageClassName
    measured_read_iops: float | None  # the storage probe's figure


@dataclass(frozen=True, kw_only=True)
class LoadOrderRecord:
    """One load of `rows` rows in primary-key or time order into a table that holds a history."""

    backend: str
    variant: str
    order: LoadOrder
    rows: int
    attributes: int
    seconds: float
    rows_per_s: float
    history_bytes: int               # the table's database size before the load
    cluster_seconds: float | None    # CLUSTER after the load (None where the backend has none)
    memory_limit_bytes: int | None
    storage_class: StorageClassName
    repeat: int = 0                  # which repetition of the same load
    # Elettra's own measurement on the loaded table: one attribute's loaded rows read back, first with
    # the server's page cache dropped (None where it cannot be dropped: no memory group), then again.
    query_rows: int | None = omitted()
    query_cold_s: float | None = omitted()
    query_warm_s: float | None = omitted()


@dataclass(frozen=True, kw_only=True)
class GrowthInterval:
    """One interval of a growth trial."""

    t_s: float                        # since the load started, at the interval's end
    stored_rate: float | None         # events stored per second over the interval
    event_age_p99_s: float | None
    queue: int | None                 # events pending in the subscribers
    read_bytes: int | None            # the server's storage reads over the interval
    database_bytes: int | None        # the database's size at the interval's end


@dataclass(frozen=True, kw_only=True)
class GrowthRecord:
    """A growth trial: a fixed offered rate while the database grows past the memory budget."""

    backend: str
    variant: str
    offered_rate: float
    interval_s: float
    memory_limit_bytes: int | None
    storage_class: StorageClassName
    intervals: list[GrowthInterval]
    knee_bytes: int | None            # the size from which the stored rate stayed below the offered one
    knee_memory_ratio: float | None   # knee_bytes / memory_limit_bytes
    final_bytes: int
    lost: int                         # events emitted and never stored


@dataclass(frozen=True, kw_only=True)
class AgingResults:
    """The part of an insertion results file about the archive's age (every list may be empty)."""

    confinement: list[ServerConfinement]
    history: list[HistoryRecord]
    load_order: list[LoadOrderRecord]
    growth: list[GrowthRecord]



def confinement_only(records: list[ServerConfinement]) -> AgingResults:
    """The insertion results' `aging` part with the confinement filled in (history, load order and
    growth are the other parts' to add)."""
    return AgingResults(confinement=list(records), history=[], load_order=[], growth=[])

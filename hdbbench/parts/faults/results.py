# SPDX-License-Identifier: Apache-2.0
"""The records of a run's faults part: ``faults.json`` (kind "faults", ``results.trials[]`` of
`FaultTrial`), ``faults-table.csv`` (the fault table) and ``faults-series-<label>.csv`` (1 Hz) beside it.

Kept here rather than in hdbbench.results.document (which holds the other parts' records) to keep that module
short; the kind is registered there on import, so `read_results` checks these records too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hdbbench.parts.faults.accounting import REASONS
from hdbbench.results.document import RECORDS, _fields_of

RESULTS_KIND = "faults"
NAMES_KEPT = 10           # never-resumed attributes named in a record (a facility's can be hundreds)
TABLE_CSV = "table.csv"   # written through RunPart(run, "faults"): faults-table.csv


@dataclass(frozen=True)
class FaultTrial:
    """One fault on one backend with one subscriber kind (hdbbench.parts.faults.run)."""

    backend: str
    kind: str                       # subscriber kind (hdbbench.subscribers.kinds)
    fault: str                      # hdbbench.parts.faults.part.FAULT_KINDS
    label: str                      # the trial's series: faults-series-<label>.csv
    rate: float                     # events/s offered
    hold_s: float
    spool_mode: str
    spool_sync_ms: int
    queue_capacity: int             # configured, records
    emitted: int = 0
    stored: int = 0
    lost: int = 0
    duplicates: int = 0
    lost_by_reason: dict[str, int] = field(default_factory=dict)   # adds up to `lost`
    recovery_s: float | None = None  # hdbbench.parts.faults.accounting: from the fault's end
    write_stall_s: float | None = None  # hdbbench.parts.faults.accounting: the longest window with nothing stored
    caught_up_s: float | None = None    # from the fault's begin until the back-log is as before the fault
    # A cluster's fault (hdbbench.parts.faults.cluster): the largest replication lag of a standby (bytes of WAL,
    # Patroni's /cluster) at the fault's begin, and the largest of the 1 Hz samples from the load's start.
    lag_bytes_at_begin: int | None = None
    lag_bytes_max: int | None = None
    peak_memory_bytes: int | None = None  # VmHWM, the subscriber's processes, max
    memory_queue_max: float | None = None  # ours: MemoryQueueMaxNumber
    memory_queue_capacity: float | None = None  # ours: MemoryQueueCapacity
    wal_replayed: float | None = None  # ours: events a restarted subscriber queued again from its write-ahead log
    # device_kill (hdbbench.parts.faults.accounting.resumption): the server killed and restarted, its attributes,
    # those with no event stored after the restart (the first NAMES_KEPT names), the time to resume, and
    # those silent before the kill (emitted, nothing stored) with how many of them resumed.
    killed_server: str | None = None
    killed_attributes: int | None = None
    never_resumed: int | None = None
    never_resumed_names: list[str] = field(default_factory=list)
    resume_p50_s: float | None = None
    resume_max_s: float | None = None
    silent_before_kill: int | None = None
    silent_resumed: int | None = None
    marks: dict[str, float] = field(default_factory=dict)  # time.time() of the fault's steps
    load_started: float | None = None
    drained: bool = False
    error: str | None = None        # the trial did not complete: why

    @property
    def database_fault(self) -> bool:
        from hdbbench.parts.faults.part import DATABASE_FAULTS

        return self.fault in DATABASE_FAULTS

    def problems(self) -> list[str]:
        """What makes this trial a failure, one sentence each (empty: it passed)."""
        out = []
        where = f"{self.fault} on {self.backend} ({self.kind})"
        if self.error:
            out.append(f"{where} did not complete: {self.error}")
            return out
        if self.database_fault and self.lost:
            out.append(f"{where} lost {self.lost:,} events: a database fault must lose none")
        if unattributed := self.lost_by_reason.get("unattributed", 0):
            out.append(f"{where}: {unattributed:,} lost events have no reason")
        if sum(self.lost_by_reason.values()) != self.lost:
            out.append(f"{where}: the reasons add up to {sum(self.lost_by_reason.values()):,}, not {self.lost:,}")
        if self.recovery_s is None:
            out.append(f"{where} did not recover: the database never held every event emitted before the end")
        if self.never_resumed:
            names = ", ".join(self.never_resumed_names[:3]) + (", ..." if self.never_resumed > 3 else "")
            out.append(f"{where}: {self.never_resumed:,} of {self.killed_attributes or 0:,} attributes of the restarted "
                       f"server {self.killed_server} never resumed ({names})")
        if not self.drained:
            out.append(f"{where}: the subscriber's queue did not drain in time")
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FaultTrial:
        return cls(**_fields_of(cls, data))


RECORDS[RESULTS_KIND] = ("trials", FaultTrial)

TABLE_COLUMNS = ("backend", "kind", "fault", "spool_mode", "emitted", "stored", "lost", *REASONS, "duplicates",
                 "recovery_s", "write_stall_s", "caught_up_s", "lag_bytes_at_begin", "lag_bytes_max", "killed_server", "killed_attributes", "never_resumed", "resume_p50_s", "resume_max_s",
                 "silent_before_kill", "silent_resumed",
                 "peak_memory_bytes", "memory_queue_max", "memory_queue_capacity", "queue_capacity",
                 "wal_replayed",
                 "error")


def table_rows(trials: Sequence[FaultTrial]) -> list[list[Any]]:
    """The fault table as CSV rows of TABLE_COLUMNS."""
    rows = []
    for t in trials:
        values = {**t.to_dict(), **{r: t.lost_by_reason.get(r, 0) for r in REASONS}}
        rows.append(["" if values[c] is None else values[c] for c in TABLE_COLUMNS])
    return rows

# SPDX-License-Identifier: Apache-2.0
"""The records of a run's faults part: ``faults.json`` (kind "faults", ``results.trials[]`` of
`FaultTrial`), written by hdbbench.parts.faults and read by the report's faults section.

Typed records (hdbbench.model.records): read exactly as written, an unknown or missing key refused.
What makes a trial a failure (`FaultTrial.problems`) is read from the record alone, so the report
judges a run without the part that ran it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Database faults must lose nothing; the process and filesystem faults lose what their reason says
# (hdbbench.parts.faults.part lists every fault kind).
DATABASE_FAULTS = ("database_stop", "database_kill", "table_lock", "database_full")


@dataclass(frozen=True)
class FaultTrial:
    """One fault on one backend with one subscriber kind (hdbbench.parts.faults.run)."""

    backend: str
    kind: str                       # subscriber kind (hdbbench.subscribers.kinds)
    fault: str                      # hdbbench.parts.faults.part.FAULT_KINDS
    label: str                      # the trial's series: faults-series-<label>.csv
    rate: float                     # events/s offered
    hold_s: float
    # Our subscriber's spool and queue (hdbbench-es's keys); None for a kind they do not apply to.
    spool_mode: str | None
    spool_sync_ms: int | None
    queue_capacity: int | None      # configured, records
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
    # device_kill (hdbbench.parts.faults.accounting.resumption): the server killed and restarted, its
    # attributes, those with no event stored after the restart (the first NAMES_KEPT names,
    # hdbbench.parts.faults.results), the time to resume, and those silent before the kill (emitted,
    # nothing stored) with how many of them resumed.
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


@dataclass(frozen=True, kw_only=True)
class FaultsResults:
    """``results`` of kind "faults"."""

    trials: list[FaultTrial]

# SPDX-License-Identifier: Apache-2.0
"""The maintenance ability: the jobs facilities run on a live archive (hdbbench.parts.maintenance).

A backend's `MaintenanceJobs` names the jobs of hdbbench.parts.maintenance.part.JOB_KINDS it has a
form of, each a function that runs the job to its end on its own connections (it runs in a thread
while the trial samples) and says what it did, and counts the event subscriber's sessions waiting on a
lock. A backend without it has no jobs, and a `[maintenance]` that only it could run is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from hdbbench.backends.abilities.aggregates import LevelRefresh, refresh_all


@dataclass(frozen=True)
class JobContext:
    """What a job may need besides its backend."""

    backup_dir: Path                 # a directory of this job's own (created empty)
    endpoint: Any                    # the backend's server endpoint (host, port, admin account)
    protect_after: datetime          # the trial's start: retention never removes rows stamped after it


@dataclass(frozen=True)
class JobOutcome:
    detail: str                      # what it did, in words
    bytes: int | None = None         # backup: bytes written
    levels: list[LevelRefresh] = field(default_factory=list)  # aggregates: each level refreshed
    seconds: float | None = None     # the job's own statements (a Stopwatch's); None: the whole call


class Stopwatch:
    """The seconds of a job's own statements, without what it reads around them for its words (the
    rows of a chunk it drops): the job's duration is what a facility's job would take."""

    def __init__(self) -> None:
        self.seconds = 0.0

    @contextmanager
    def timing(self) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - began


Job = Callable[[Any, JobContext], JobOutcome]   # (the backend, its context) -> what it did


class MaintenanceJobs(Protocol):
    """A backend's maintenance jobs; `lock_waiters` takes that backend."""

    def jobs(self) -> Mapping[str, Job]:
        """The jobs it has a form of, by kind (hdbbench.parts.maintenance.part.JOB_KINDS)."""

    def lock_waiters(self, backend: Any) -> int:
        """Sessions of the event subscriber's account waiting on a lock now."""


def aggregates_job(backend: Any, ctx: JobContext) -> JobOutcome:
    """The `aggregates` job, the same on every backend with `Aggregates`: every level refreshed."""
    levels = refresh_all(backend)
    rows = sum(r.rows for r in levels)
    return JobOutcome(f"{len(levels)} aggregate levels refreshed, {rows:,} rows written", levels=levels)

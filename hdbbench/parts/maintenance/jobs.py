# SPDX-License-Identifier: Apache-2.0
"""The maintenance jobs, found in each backend folder's ``maintenance.py``.

A backend folder that has maintenance jobs gives, in its ``maintenance.py``:

* ``jobs(backend_name) -> dict[str, Callable[[backend, JobContext], JobOutcome]]``: the jobs of
  hdbbench.parts.maintenance.part.JOB_KINDS it has a form of, each a function that runs the job to its end
  on its own connections (it runs in a thread while the trial samples) and says what it did;
* ``lock_waiters(backend) -> int``: sessions of the event subscriber's account waiting on a lock now.

Nothing here names a backend: a backend without the module has no jobs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from hdbbench.results.maintenance import AggregateRefresh


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
    levels: list[AggregateRefresh] = field(default_factory=list)
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


Job = Callable[[Any, JobContext], JobOutcome]


def _module_of(backend: Any) -> ModuleType | None:
    from hdbbench.backends.registry import folder_module

    return folder_module(backend, "maintenance")


def jobs_of(backend: Any) -> Mapping[str, Job]:
    """The jobs backend `backend` (a name, class or instance) has, by kind; {} without any."""
    module = _module_of(backend)
    if module is None:
        return {}
    name = backend if isinstance(backend, str) else getattr(backend, "name")
    return dict(module.jobs(name))


def lock_waiters(backend: Any) -> int | None:
    """The event subscriber's sessions waiting on a lock now (None: the backend cannot tell)."""
    module = _module_of(backend)
    return None if module is None else int(module.lock_waiters(backend))

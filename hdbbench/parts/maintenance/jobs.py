# SPDX-License-Identifier: Apache-2.0
"""The maintenance jobs a backend has: its `maintenance()` ability (hdbbench.backends.abilities.maintenance,
where the jobs' context and outcome types live too), asked by backend name, class or instance.

Nothing here names a backend: a backend whose class returns no `MaintenanceJobs` has no jobs.
"""

from __future__ import annotations

from collections.abc import Mapping

from hdbbench.backends.abilities.maintenance import Job
from hdbbench.backends.base import Backend
from hdbbench.backends.registry import backend_class


def jobs_of(backend: str | Backend | type[Backend]) -> Mapping[str, Job]:
    """The jobs backend `backend` (a name, class or instance) has, by kind; {} without any."""
    maintenance = (backend_class(backend) if isinstance(backend, str) else backend).maintenance()
    return {} if maintenance is None else dict(maintenance.jobs())


def lock_waiters(backend: Backend) -> int | None:
    """The event subscriber's sessions waiting on a lock now (None: the backend cannot tell)."""
    maintenance = backend.maintenance()
    return None if maintenance is None else int(maintenance.lock_waiters(backend))

# SPDX-License-Identifier: Apache-2.0
"""The ``[maintenance]`` table of a scenario: which jobs run while a subscriber archives, and when.

One sustained trial per backend (on the backend's aged history when the scenario builds one, else on a
fresh database): warm-up, then for each job in order a quiet window of `gap_s` (the "before" figures),
the job (the "during" figures, as long as it runs), `settle_s` of load after it. A job a backend has no
form of (reorder on MariaDB, partition rotation on PostgreSQL) is skipped on that backend; a job named
that no backend of the scenario has is refused. Every key has a default, so ``[maintenance]`` alone
runs every job the scenario's backends have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hdbbench.model.tomlfile import suggestion
from hdbbench.parts.maintenance.jobs import jobs_of

if TYPE_CHECKING:
    from hdbbench.model.tomlfile import Table

# In the order facilities' cron tables run them; each backend's maintenance() says which it has.
JOB_KINDS = ("reorder", "retention", "partition_rotation", "aggregates", "vacuum_analyze", "optimize", "backup")
MAX_S = 3600.0


@dataclass(frozen=True)
class MaintenancePart:
    """``[maintenance]`` (the module docstring)."""

    jobs: tuple[str, ...] = JOB_KINDS
    rate: float = 2000.0             # events/s offered through the trial
    warmup_s: float = 10.0           # load before the first quiet window
    gap_s: float = 15.0              # the quiet window before each job: its "before" figures
    settle_s: float = 5.0            # load after a job before the next quiet window
    job_timeout_s: float = 900.0     # a job still running then is cancelled and recorded as failed
    drain_timeout_s: float = 60.0    # after the load stops, until the queues are empty
    queries: bool = True             # an extraction reader queries the archive throughout
    backup_dir: str = ""             # where backups go ("": the run's state directory)


def parse_maintenance(reader: Table, backends: Sequence[str]) -> MaintenancePart:
    """``[maintenance]`` checked completely; ConfigError "file:line: [maintenance] key: problem" otherwise."""
    kinds = {job for backend in backends for job in jobs_of(backend)}
    if not reader.has("jobs"):  # every job some backend of the scenario has
        if not kinds:
            raise reader.fail(None, f"none of the scenario's backends ({', '.join(backends)}) has maintenance jobs")
        jobs = tuple(j for j in JOB_KINDS if j in kinds)
    else:
        jobs = tuple(reader.list_of("jobs", str, non_empty=True))
    for job in jobs:
        if job not in JOB_KINDS:
            raise reader.fail("jobs", f"names an unknown job {job!r}" + suggestion(job, JOB_KINDS))
        if job not in kinds:
            raise reader.fail("jobs", f"{job!r} applies to none of the scenario's backends ({', '.join(backends)})")
    if twice := next((j for j in jobs if jobs.count(j) > 1), None):
        raise reader.fail("jobs", f"names {twice!r} twice")
    part = MaintenancePart(
        jobs=jobs,
        rate=reader.number("rate", MaintenancePart.rate, positive=True, maximum=1_000_000),
        warmup_s=reader.number("warmup_s", MaintenancePart.warmup_s, minimum=0.0, maximum=MAX_S),
        gap_s=reader.number("gap_s", MaintenancePart.gap_s, minimum=2.0, maximum=MAX_S),
        settle_s=reader.number("settle_s", MaintenancePart.settle_s, minimum=0.0, maximum=MAX_S),
        job_timeout_s=reader.number("job_timeout_s", MaintenancePart.job_timeout_s, positive=True, maximum=24 * MAX_S),
        drain_timeout_s=reader.number("drain_timeout_s", MaintenancePart.drain_timeout_s, positive=True, maximum=MAX_S),
        queries=reader.boolean("queries", True),
        backup_dir=reader.string("backup_dir", ""),
    )
    reader.finish()
    return part

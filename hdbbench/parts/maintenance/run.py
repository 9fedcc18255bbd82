# SPDX-License-Identifier: Apache-2.0
"""The maintenance part of ``hdbbench run``: one trial per backend (hdbbench.parts.maintenance.trial), then,
where the aggregates job ran, the same questions answered from raw rows and from the aggregates.

Its records go into the run's results.json (kind "insertion", key `maintenance`), rewritten after each
trial, and each trial's timeline into maintenance/<label>.csv. It runs last: its jobs change the aged
history they run on (a chunk dropped, a partition added, aggregate tables written), so afterwards the
history's database is dropped and the next run builds it again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.backends.registry import server_of
from hdbbench.load.offered import LoadTarget
from hdbbench.model.records import write
from hdbbench.parts.maintenance.aggregates import compare_extraction
from hdbbench.parts.maintenance.part import MaintenancePart
from hdbbench.parts.maintenance.trial import MaintenanceTrialPlan, MaintenanceTrialRun, TrialOutcome
from hdbbench.parts.maintenance.windows import series_table
from hdbbench.results.maintenance import (
    AggregateQuery,
    MaintenanceRecord,
    MaintenanceResults,
    MaintenanceTrial,
)
from hdbbench.stack.servers.confine import drop_cache

SPANS = ("day", "week", "month", "year")
Say = Callable[[str], object]


@dataclass(frozen=True)
class MaintenancePlan:
    part: MaintenancePart
    trials: tuple[MaintenanceTrialPlan, ...]


def run_maintenance(plan: MaintenancePlan, results: dict[str, Any], save: Callable[[], object],
                    write_csv: Callable[[str, Sequence[str], Sequence[Sequence[Any]]], None], endpoints: Any,
                    load: LoadTarget, state_dir: Path, histories: Mapping[str, Any], say: Say) -> MaintenanceResults:
    """Every planned trial in order; `results` (the insertion results as a dict) gets the records and
    `save` rewrites results.json after each trial."""
    trials: list[MaintenanceTrial] = []
    jobs: list[MaintenanceRecord] = []
    extraction: list[AggregateQuery] = []
    for planned in plan.trials:
        history = histories.get(planned.backend)
        if history is not None:
            planned = dataclasses.replace(planned, history_database=history.database, history_end=history.end)
        say(f"maintenance on {planned.backend}: {', '.join(planned.jobs)}")
        run = MaintenanceTrialRun(planned, plan.part, endpoints, load, state_dir, say)
        try:
            outcome = run.run()
            trials.append(outcome.trial)
            jobs += outcome.jobs
            header, rows = series_table(outcome.series)
            write_csv(f"maintenance/{planned.label}.csv", header, rows)
            if _aggregated(outcome):
                say(f"maintenance on {planned.backend}: hourly figures from raw rows and from the aggregates")
                extraction += _compare(run.backend, load, state_dir)
        finally:
            if history is not None:  # also after a failure or Ctrl-C: a job may have changed it already
                _forget(run.backend)
        results["maintenance"] = write(MaintenanceResults(trials=trials, jobs=jobs, extraction=extraction))
        save()
        for line in outcome_lines(outcome):
            say(line)
    return MaintenanceResults(trials=trials, jobs=jobs, extraction=extraction)


def _aggregated(outcome: TrialOutcome) -> bool:
    return outcome.trial.error is None and any(r.job == "aggregates" and r.error is None for r in outcome.jobs)


def _compare(backend: Any, load: LoadTarget, state_dir: Path) -> list[AggregateQuery]:
    """One archived attribute's hourly mean/min/max over each span, from raw rows and from the aggregates;
    cold = the server's page cache dropped first (where the stack confines its memory)."""
    wanted = set(load.attributes)
    catalog = sorted(i for i, info in backend.attribute_catalog() if info.name in wanted)
    if not catalog:
        return []
    server = server_of(backend.name) or ""
    return list(compare_extraction(backend, catalog[0], SPANS, lambda: drop_cache(state_dir.resolve(), server)))


def _forget(backend: Any) -> None:
    """Drop the history the jobs changed (its aging layout knows how), so no later run reuses it."""
    ops = backend.aging_layout()
    if ops is not None:
        ops.drop_copy(backend)


def outcome_lines(outcome: TrialOutcome) -> list[str]:
    """One line per job and one for the trial, as the run prints them."""
    out = []
    for r in outcome.jobs:
        head = f"  {r.job} on {r.backend}: "
        if r.error:
            out.append(head + f"failed: {r.error}")
            continue
        age = (f"age p99 {_ms(r.before.event_age_p99_s)} before, {_ms(r.during.event_age_p99_s)} during"
               if r.during.event_age_p99_s is not None else "age not measured")
        out.append(head + f"{r.duration_s:.1f} s; {age}; lost {r.lost:,}; {r.detail}")
    t = outcome.trial
    if t.error:
        out.append(f"  maintenance trial on {t.backend} failed: {t.error}")
    else:
        out.append(f"  {t.backend}: emitted {t.emitted:,}, stored {t.stored:,}, lost {t.lost:,}, rows "
                   f"{'match' if t.rows_match else 'DO NOT match'} the devices' counters"
                   + ("" if t.aggregates_equal is None else
                      f", aggregates {'equal' if t.aggregates_equal else 'NOT equal'} to the raw rows' SQL"))
    return out


def _ms(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds * 1000:,.0f} ms"

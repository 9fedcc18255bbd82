# SPDX-License-Identifier: Apache-2.0
"""The aged-history part of ``hdbbench run``: a history per backend before the insertion trials, then
the load-order measurement; their records for `InsertionResults.aging` and the CSVs beside
(history.csv, load_order.csv).

The servers' memory budgets and storage (`AgingResults.confinement`) are the confine part's: it
passes its `ServerConfinement` records in, and the histories and loads record the figures of
their server from them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from hdbbench.backends.registry import server_of
from hdbbench.model.records import write
from hdbbench.parts.aging.history import build_history, confinement_of, mix_from_devices
from hdbbench.parts.aging.load_order import LoadOrderSpec, run_load_order
from hdbbench.results.aging import AgingResults, HistoryRecord, LoadOrderRecord
from hdbbench.stack.servers.confine.records import ServerConfinement

Progress = Callable[[str, float, dict[str, float]], None]


@dataclass(frozen=True)
class AgingRun:
    """What the part gives the rest of the run: the records, and the history each backend's trials use."""

    results: AgingResults
    histories: dict[str, HistoryRecord]


def run_history(plan: Any, devices: Sequence[Any], tango_host: str, endpoints: Any, state_dir: Path,
                progress: Any, confinement: Sequence[ServerConfinement] = ()) -> AgingRun:
    """Every backend's history (reused when built before), then the load orders; the records and the
    history each backend's trials run on. `plan`: hdbbench.scenario.plan.HistoryPlan; `progress`: a TrialProgress."""
    mix = mix_from_devices(devices, tango_host)
    histories: dict[str, HistoryRecord] = {}
    loads: list[LoadOrderRecord] = []
    extra: list[HistoryRecord] = []
    for backend in plan.backends:
        server = server_of(backend)
        confined = confinement_of(confinement, server)
        progress.new_trial(f"history {backend}")
        histories[backend] = build_history(endpoints, backend, plan.variant, mix, plan.size, plan.seed,
                                           state_dir=state_dir, confinement=confined, say=_say(progress))
        if plan.load_order is not None:
            part = plan.load_order
            spec = LoadOrderSpec(tuple(part.rows), part.attributes, part.repeat)
            progress.new_trial(f"load order {backend}")
            built, records = run_load_order(
                endpoints, backend, part.variants or (plan.variant,), spec, plan.seed,
                budget=confined.memory_limit_bytes, asked_rows=plan.size.rows, days=plan.size.days,
                confinement=confined, state_dir=state_dir, say=_say(progress))
            extra += built
            loads += records
    aging = AgingResults(confinement=list(confinement), history=[*histories.values(), *extra], load_order=loads,
                         growth=[])
    return AgingRun(aging, histories)


def _say(progress: Any) -> Callable[[str, float], None]:
    return lambda text, done: progress(text, done, {})


def write_csvs(run: Any, aging: AgingResults) -> None:
    """history.csv and load_order.csv beside results.json (one row per record, the records' fields)."""
    for name, cls, records in (("history.csv", HistoryRecord, aging.history),
                               ("load_order.csv", LoadOrderRecord, aging.load_order)):
        header = [f.name for f in fields(cls)]
        run.write_csv(name, header, [[write(r).get(h) for h in header] for r in records])


def history_lines(aging: AgingResults) -> list[str]:
    """One line per history and per load, as the run prints them."""
    out = [f"history {h.backend} {h.variant}: {h.rows:,} rows of {h.attributes:,} attributes over {h.days:.1f} days, "
           f"{h.bytes / 2**20:,.0f} MiB, " + ("reused" if h.reused else f"built in {h.seconds:.0f} s "
                                               f"({h.rows / max(h.seconds, 1e-9):,.0f} rows/s)") for h in aging.history]
    out += [f"load order {r.backend} {r.variant} {r.order}: {r.rows:,} rows in {r.seconds:.1f} s "
            f"({r.rows_per_s:,.0f} rows/s)" + (f", CLUSTER {r.cluster_seconds:.1f} s" if r.cluster_seconds is not None else "")
            for r in aging.load_order]
    return out

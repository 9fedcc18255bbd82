# SPDX-License-Identifier: Apache-2.0
"""`size measure` as a run: every backend and variant, results.json and CSVs in a run directory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from hdbbench.backends import endpoint_for, server_of
from hdbbench.backends.registry import backend_class, server_facts
from hdbbench.model.records import write
from hdbbench.parts.disk.cases import clear_made
from hdbbench.parts.disk.inventory import measure_inventory
from hdbbench.parts.disk.measure import array_fits, measure_variant
from hdbbench.parts.disk.reference import compare as compare_with_reference
from hdbbench.parts.disk.sizing import group_case
from hdbbench.parts.side_by_side import GroupProgress, ItemProgress, side_by_side
from hdbbench.results.disk import CaseSize, DiskResults, InventoryLoad, VariantRun
from hdbbench.results.document import RunDirectory, RunPart, environment_facts, results_document

# ------------------------------------------------------------------------------ run output

CSV_COLUMNS = (
    "backend", "variant", "case_label", "case_type", "case_format", "case_write", "case_elements", "table", "engine",
    "parts", "events", "rows", "raw_bytes", "bytes_per_event", "fixed_bytes", "fit_sizes", "fit_r2", "fit_max_residual",
    "fit_ok", "fit_note", "average_bytes_per_event", "data_per_event", "index_per_event", "toast_per_event",
    "slack_bytes", "free_per_event", "allocated_blocks", "raw_per_event", "ratio_disk_to_raw", "overhead_per_event",
    "data_per_row", "documented_min_row_bytes", "row_overhead_bytes",
)
LOG_NAMES = ("wal", "redo", "binlog")


def csv_row(case: CaseSize) -> list[Any]:
    cells = [" ".join(map(str, v)) if isinstance(v, list) else v for v in (getattr(case, c) for c in CSV_COLUMNS)]
    return cells + [case.log_per_event.get(k) for k in LOG_NAMES]


@dataclass
class _Measured:
    """What one backend's variants gave: their cases, whether each was measured, their inventory runs."""

    rows: list[CaseSize] = field(default_factory=list)
    variants: list[VariantRun] = field(default_factory=list)
    inventory_runs: list[InventoryLoad] = field(default_factory=list)


def run_measure(endpoints: Any, chosen: dict[str, list[str]], cases: Sequence[Any], seed: int, runs_root: Path,
                name: str, inventory_run: tuple[Any, float, float] | None = None,
                progress: Callable[[str, float], None] = lambda text, done: None, into: RunPart | None = None) -> Path:
    """Measure every backend/variant, write results.json + CSVs into a new run directory (or, `into` a
    part of another run, disk.json + disk-*.csv there); return its path.
    `progress` gets the case being measured and the fraction of the whole done
    (hdbbench.trials.progress.PhaseProgress).

    Each server's backends are measured one after the other, so that server-wide log figures stay
    theirs; the servers side by side, each in a process of its own (hdbbench.parts.side_by_side). Each
    variant drops its database also on an error or Ctrl-C."""
    run = into or RunDirectory.create(runs_root, name)
    try:
        by_server: dict[str, list[str]] = {}
        for backend in chosen:
            by_server.setdefault(server_of(backend) or backend, []).append(backend)
        per_variant = len(cases) + (1 if inventory_run else 0)
        totals = [sum(len(chosen[b]) for b in group) * per_variant for group in by_server.values()]
        tally = GroupProgress(progress, totals)
        measure = partial(_measure_backends, chosen=chosen, endpoints=endpoints, cases=cases, seed=seed,
                          inventory_run=inventory_run)
        done = side_by_side(list(by_server.values()), measure, tally)
        measured = {backend: part for parts in done for backend, part in parts.items()}
        rows = [r for b in chosen for r in measured[b].rows]
        variants = [v for b in chosen for v in measured[b].variants]
        inv_runs = [i for b in chosen for i in measured[b].inventory_runs]
        _write_measure(run, endpoints, chosen, cases, seed, rows, variants, inv_runs, inventory_run)
        run.set_status("completed")
    except BaseException as exc:
        run.set_status("interrupted" if isinstance(exc, KeyboardInterrupt) else "failed", str(exc))
        raise
    return run.path


def _measure_backends(backends: Sequence[str], progress: ItemProgress, stop: Any, *, chosen: dict[str, list[str]],
                      endpoints: Any, cases: Sequence[Any], seed: int,
                      inventory_run: tuple[Any, float, float] | None) -> dict[str, _Measured]:
    """The backends of one server, one after the other: rows, variants and inventory runs of each.
    `stop` (an event, or None): set by the caller, the measurement ends at its next step."""
    try:
        return _measure_each(backends, progress, stop, chosen, endpoints, cases, seed, inventory_run)
    finally:
        clear_made()  # the events made once for every backend and variant


def _measure_each(backends: Sequence[str], progress: ItemProgress, stop: Any, chosen: dict[str, list[str]],
                  endpoints: Any, cases: Sequence[Any], seed: int,
                  inventory_run: tuple[Any, float, float] | None) -> dict[str, _Measured]:
    out: dict[str, _Measured] = {}
    for backend in backends:
        part = out[backend] = _Measured()
        endpoint = endpoint_for(backend, endpoints)
        if endpoint is None:
            part.variants = [VariantRun(backend=backend, variant=v, unavailable="no server in the stack")
                             for v in chosen[backend]]
            continue
        # A what-if engine's cases of types it cannot hold (Backend.cannot_hold) are not measured on it.
        held = [c for c in cases if backend_class(backend).cannot_hold(c.type, c.format) is None]
        for v in chosen[backend]:
            who = f"{backend} {v}"
            progress(f"{who}: loading")
            for case in (c for c in cases if c not in held):
                progress.tick(f"{who}: {case.label} not held")

            def measured(case: Any, who: str = who) -> None:
                progress.tick(f"{who}: {case.label} measured")

            outcome = measure_variant(backend, endpoint, v, held, seed, stop=stop, tick=measured)
            part.variants.append(VariantRun(backend=backend, variant=outcome.variant, unavailable=outcome.unavailable))
            part.rows += [r.record() for r in outcome.results]
            if inventory_run:
                part.inventory_runs += _inventory_run(backend, endpoint, v, inventory_run, seed, progress)
                progress.tick(f"{backend} {v}: inventory measured")
    return out


def _inventory_run(backend: str, endpoint: Any, variant: str, spec: tuple[Any, float, float],
                   seed: int, progress: Callable[[str], None]) -> list[InventoryLoad]:
    inv, simulated_s, scale = spec
    groups = [(g.label, group_case(g, simulated_s, scale)) for g in inv.groups]
    progress(f"{backend} {variant}: inventory {inv.name}")
    runs = measure_inventory(backend, endpoint, variant, groups, seed, then_clustered=True)
    return [r.record() for r in runs]


def _write_measure(run: RunDirectory | RunPart, endpoints: Any, chosen: dict[str, list[str]], cases: Sequence[Any], seed: int,
                   rows: list[CaseSize], variants: list[VariantRun], inv_runs: list[InventoryLoad],
                   inventory_run: tuple[Any, float, float] | None) -> None:
    scenario = {"variants": chosen, "cases": [write(c.shape()) for c in cases], "seed": seed,
                "loader": "column loader (binary COPY / LOAD DATA) for scalar numeric types, bulk writer otherwise",
                "inventory": inventory_run[0].to_dict() if inventory_run else None,
                "simulated_s": inventory_run[1] if inventory_run else None,
                "scale": inventory_run[2] if inventory_run else None}
    results = DiskResults(
        cases=rows, fits=array_fits(rows), reference=compare_with_reference(rows), variants=variants,
        inventory_runs=inv_runs,
        raw_bytes="8 (timestamp) + 4 (attribute id) + 1 (quality) + value bytes of each side present",
        bytes_per_event="marginal: slope of bytes = fixed + marginal x events over the case's sizes "
                        "(pages in use; allocated blocks for sparse files); slack reported apart")
    run.write_json("results.json", results_document("disk", scenario, environment_facts(server_facts(endpoints)),
                                                    results))
    log_cols = [f"{k}_per_event" for k in LOG_NAMES]
    run.write_csv("sizes.csv", [*CSV_COLUMNS, *log_cols], (csv_row(r) for r in rows))
    run.write_csv("fits.csv", ["backend", "variant", "type", "format", "write", "elements", "a_bytes",
                               "b_bytes_per_element", "r2"],
                  ([f.backend, f.variant, f.type, f.format, f.write, " ".join(map(str, f.elements)), f.a_bytes,
                    f.b_bytes_per_element, f.r2] for f in results.fits))
    run.write_csv("inventory.csv", ["backend", "variant", "measured_bytes", "unavailable"],
                  ([r.backend, r.variant, r.measured_bytes, r.unavailable] for r in inv_runs))

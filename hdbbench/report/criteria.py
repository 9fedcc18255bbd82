# SPDX-License-Identifier: Apache-2.0
"""The ranking criteria's figures per backend, from every results file of a run (report and compare)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from hdbbench.model import measure
from hdbbench.report import data
from hdbbench.report.data import Insertion, num
from hdbbench.report.text import Spread
from hdbbench.results.disk import DiskResults
from hdbbench.results.extraction import ExtractionResults
from hdbbench.results.trials import TrialKind

DAY_S = 86400.0


def criteria_table(run_dir: Path) -> dict[str, dict[str, float | None]]:
    """backend → ranking criterion → figure, from every results file present."""
    table: dict[str, dict[str, float | None]] = {}
    loaded = data.load_file(run_dir, data.FILES["insertion"])
    if loaded.insertion is not None:
        view = data.insertion_view(run_dir, loaded)
        for backend in view.backends:
            table[backend] = insertion_criteria(view, backend)
    for backend, row in extraction_criteria(run_dir).items():
        table.setdefault(backend, {}).update(row)
    for backend, value in disk_criteria(run_dir).items():
        table.setdefault(backend, {})["bytes_per_event"] = value
    return table


def insertion_criteria(view: Insertion, backend: str) -> dict[str, float | None]:
    main = view.one(backend, "throughput")
    sat = view.one(backend, "saturation")
    sus = view.one(backend, "sustained")
    sweeps = [t for t in view.trials if t.backend == backend and t.kind in ("batch_sweep", "subscriber_sweep")]
    batch_pts = sweep_points(view, backend, "batch_sweep")
    slope = measure.fit_log2([p[0] for p in batch_pts], [p[1] for p in batch_pts]).slope if len(batch_pts) > 1 else None
    medians = [num(t.stored_rate.median) for t in sweeps]
    return {
        "stored_median": num(main.stored_rate.median) if main else None,
        "peak_rate": max((m for m in medians if m is not None), default=None),
        "saturation_rate": num(sat.saturation.last_sustainable_rate) if sat and sat.saturation else None,
        "sustained_share": num(sus.sustained_share) if sus else None,
        "batch_slope": slope if slope is not None and math.isfinite(slope) else None,
        "event_age_p99": num(main.event_age_at_commit_s.p99) if main else None,
        "pending_max": num(main.pending_events.max) if main else None,
        "cpu_us_per_event": data.archiving_cpu_us(main, backend) if main else None,
    }


def sweep_points(view: Insertion, backend: str, kind: TrialKind) -> list[tuple[float, float, float, float]]:
    """(x, median, p1, p99) for the batch (x = batch size) or subscriber (x = count) sweep's trials."""
    out = []
    for t in view.trials:
        if t.backend != backend or t.kind != kind:
            continue
        x = t.batch_size if kind == "batch_sweep" else t.subscribers
        spread = Spread.of(t.stored_rate)
        if x is not None and spread is not None:
            out.append((float(x), spread.median, spread.p1, spread.p99))
    return sorted(out)


def query_subset(figures: Sequence[data.QueryFigure]) -> list[data.QueryFigure]:
    """Warm and clustered queries when the file has them (the steady state), else everything."""
    preferred = [f for f in figures if f.cold is not True and f.clustered is not False and f.p95_s is not None]
    return preferred or [f for f in figures if f.p95_s is not None]


def query_p95_by_interval(figures: Sequence[data.QueryFigure], backend: str) -> list[tuple[float, float]]:
    by_interval: dict[float, list[float]] = {}
    for f in query_subset([f for f in figures if f.backend == backend]):
        by_interval.setdefault(f.interval_s, []).append(f.p95_s or 0.0)
    return sorted((k, measure.percentile(v, 50)) for k, v in by_interval.items())


def extraction_criteria(run_dir: Path) -> dict[str, dict[str, float | None]]:
    results = data.load_file(run_dir, data.FILES["extraction"]).results(ExtractionResults)
    figures = data.extraction_figures(results) if results is not None else []
    out: dict[str, dict[str, float | None]] = {}
    for backend in dict.fromkeys(f.backend for f in figures):
        pts = query_p95_by_interval(figures, backend)
        fit = measure.fit_line([p[0] / DAY_S for p in pts], [p[1] for p in pts]) if len(pts) > 1 else None
        out[backend] = {"query_p95_slope": fit.slope if fit and math.isfinite(fit.slope) else None,
                        "query_p95": pts[-1][1] if pts else None}
    return out


def disk_criteria(run_dir: Path) -> dict[str, float | None]:
    """backend → marginal bytes per event of the scalar devdouble table (the largest table of most
    HDB++ installations, and Elettra's reference) in the run's schema variant, else the backend's
    first measured variant. Marginal: what a large table costs per event, not a small table's
    fixed overhead; cases whose sizes do not fit a line are not used (data.disk_figures)."""
    results = data.load_file(run_dir, data.FILES["disk"]).results(DiskResults)
    sizes = data.disk_figures(results) if results is not None else []
    insertion = data.load_file(run_dir, data.FILES["insertion"]).document
    wanted = (data.run_facts(insertion.scenario, {}).schema_variant if insertion is not None else None) or ""
    out: dict[str, float | None] = {}
    for backend in dict.fromkeys(s.backend for s in sizes):
        mine = [s for s in sizes if s.backend == backend and s.table == "devdouble scalar ro" and s.bytes_per_event]
        chosen = next((s for s in mine if s.variant == wanted), mine[0] if mine else None)
        out[backend] = chosen.bytes_per_event if chosen else None
    return out

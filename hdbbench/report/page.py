# SPDX-License-Identifier: Apache-2.0
"""``hdbbench report <run dir>``: one self-contained ``report.html`` built only from the run's files.

Sections render from whatever the run directory holds (see hdbbench.report.data for the files and their
shapes): insertion (throughput, queue lag, batch and subscriber sweeps, saturation, sustained load,
CPU, loss), extraction, disk, sizing, the multi-criteria ranking and the environment. A section
without its file says so in one line. Each section is figures, a table, then words generated from
the same numbers (hdbbench.report.text) and a recommendation. Plots are inline SVG; there is no script, no
external style sheet, font or image, so the file opens from disk with no network.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hdbbench.backends.registry import REGISTRY
from hdbbench.model import measure
from hdbbench.model.units import human_bytes
from hdbbench.report import (
    aging,
    criteria,
    data,
    disk,
    faults,
    hardware,
    kinds,
    plan,
    plots,
    ranking,
    replica,
    searches,
    text,
)
from hdbbench.report.costs import unit_costs_table
from hdbbench.report.data import Insertion, RunFacts, num
from hdbbench.report.hosts import hosts_section
from hdbbench.report.maintenance import maintenance_section
from hdbbench.report.placement import placement_section
from hdbbench.report.render import Section, html_table, render_page
from hdbbench.report.text import Spread, fmt
from hdbbench.results.document import ResultsDocument
from hdbbench.results.extraction import ExtractionResults
from hdbbench.results.trials import CpuShare, TrialSummary

REPORT_NAME = "report.html"


# --- insertion sections ------------------------------------------------------------------------
def _series(view: Insertion, label: str) -> dict[str, list[float]]:
    return data.read_series(view.series_dir / f"{label}.csv")


def throughput_section(view: Insertion, colours: plots.Colours) -> Section:
    section = Section("throughput", "Insertion throughput")
    trials = {b: t for b in view.backends if (t := view.one(b, "throughput"))}
    if not trials:
        section.missing = "No throughput trial in this run ([measurements] throughput = false)."
        return section
    over_time = {b: data.stored_rates(_series(view, t.label)) for b, t in trials.items()}
    offered = {b: num(t.offered_rate) for b, t in trials.items()}
    same_offer = len(set(offered.values())) == 1
    section.figures.append(("Events stored per second over time, database counter (throughput trial)", plots.lines(
        over_time, colours, "time since start (s)", "stored rate (events/s)",
        hline=next(iter(offered.values())) if same_offer else None, hline_label="offered rate",
        shade_to=view.warmup_s)))
    steady = {b: data.recorded_window(s, view.warmup_s, trials[b].stored_rate.count) for b, s in over_time.items()}
    section.figures.append(("Distribution of the per-second stored rate after warm-up (whiskers p1..p99)",
                            plots.distributions(steady, colours, "stored rate (events/s)")))
    spreads = {b: s for b, t in trials.items() if (s := Spread.of(t.stored_rate))}
    lost = {b: t.accounting.lost for b, t in trials.items()}
    rows = [[b, fmt(offered[b]), fmt(s.median), fmt(s.p1), fmt(s.p99), fmt(num(trials[b].stored_rate.mean)),
             str(s.count), f"{lost[b]:,}"] for b, s in spreads.items()]
    section.tables.append(html_table(["backend", "offered", "median", "p1", "p99", "mean", "seconds", "lost"], rows,
                                 "events/s; per-second rates after warm-up"))
    section.finding = text.throughput(spreads, offered, lost)
    return section


def lag_section(view: Insertion, colours: plots.Colours) -> Section:
    section = Section("lag", "Queue lag")
    trials = {b: t for b in view.backends if (t := view.one(b, "throughput"))}
    if not trials:
        section.missing = "No throughput trial, so no queue lag figures."
        return section
    series = {b: _series(view, t.label) for b, t in trials.items()}
    section.figures.append(("Pending queue length (events waiting), 1 Hz", plots.lines(
        {b: data.column(s, "sub.PendingEventNumber") for b, s in series.items()}, colours,
        "time since start (s)", "pending events")))
    section.figures.append(("Age of the oldest pending event, 1 Hz", plots.lines(
        {b: data.column(s, "sub.PendingEventAge") for b, s in series.items()}, colours,
        "time since start (s)", "pending event age (s)")))
    ages = {b: t.event_age_at_commit_s for b, t in trials.items()}
    section.figures.append(("Event age at commit (commit time − source timestamp)", plots.bars(
        ["p50", "p99", "max"], {b: [num(a.p50), num(a.p99), num(a.max)] for b, a in ages.items()}, colours,
        "seconds")))
    rows = [[b, fmt(num(t.event_age_at_commit_s.p50)), fmt(num(t.event_age_at_commit_s.p99)),
             fmt(num(t.event_age_at_commit_s.max)), fmt(num(t.event_age_at_reception_s.p99)),
             fmt(num(t.time_in_subscriber_s.p99)), fmt(num(t.pending_events.max)), fmt(num(t.pending_age_s.max))]
            for b, t in trials.items()]
    section.tables.append(html_table(["backend", "age p50 (s)", "age p99 (s)", "age max (s)",
                                  "at reception p99 (s)", "in subscriber p99 (s)", "pending max",
                                  "pending age max (s)"], rows,
                                 "throughput trial; age at commit = age at reception (device and Tango "
                                 "delivery) + time in the subscriber (queue, batch, commit)"))
    section.finding = text.lag({b: num(a.p99) for b, a in ages.items()}, {b: num(a.max) for b, a in ages.items()},
                               {b: num(t.pending_events.max) for b, t in trials.items()})
    return section


def batch_section(view: Insertion, colours: plots.Colours) -> Section:
    section = Section("batch", "Rate against batch size")
    points = {b: pts for b in view.backends if (pts := criteria.sweep_points(view, b, "batch_sweep"))}
    if not points:
        section.missing = "No batch-size sweep in this run ([measurements] batch_sweep is empty)."
        return section
    fits = {b: measure.fit_log2([p[0] for p in pts], [p[1] for p in pts]) for b, pts in points.items()}
    usable = {b: (f.slope, f.intercept) for b, f in fits.items() if math.isfinite(f.slope)}
    section.figures.append(("Median stored rate (bars p1..p99) against batch size, log2 axis; dotted: fit",
                            plots.sweep(points, colours, "batch size (log2)", "stored rate (events/s)", log2=True,
                                        fits=usable)))
    rows = [[b, f"{p[0]:g}", fmt(p[1]), fmt(p[2]), fmt(p[3])] for b, pts in points.items() for p in pts]
    section.tables.append(html_table(["backend", "batch size", "median", "p1", "p99"], rows,
                                 "offered above capacity (4 × the scenario rate), so the stored rate is capacity"))
    section.tables.append(html_table(["backend", "slope (events/s per doubling)", "r²"],
                                 [[b, fmt(f.slope), fmt(f.r2)] for b, f in fits.items()], "fit of rate on log2(batch)"))
    section.finding = text.batch_sweep(
        {b: [(int(p[0]), Spread(p[1], p[2], p[3], 0)) for p in pts] for b, pts in points.items()},
        {b: s for b, (s, _) in usable.items()})
    return section


def subscribers_section(view: Insertion, colours: plots.Colours) -> Section:
    section = Section("subscribers", "Rate against subscribers")
    points = {b: pts for b in view.backends if (pts := criteria.sweep_points(view, b, "subscriber_sweep"))}
    if not points:
        section.missing = "No subscriber-count sweep in this run ([measurements] subscriber_sweep is empty)."
        return section
    scaling = {b: measure.fit_scaling([p[0] for p in pts], [p[1] for p in pts]) for b, pts in points.items()}
    fits = {b: (s.fit.slope, s.fit.intercept) for b, s in scaling.items() if math.isfinite(s.fit.slope)}
    section.figures.append(("Median stored rate (bars p1..p99) against the number of subscribers", plots.sweep(
        points, colours, "subscribers", "stored rate (events/s)", fits=fits)))
    rows = [[b, f"{p[0]:g}", fmt(p[1]), fmt(p[2]), fmt(p[3])] for b, pts in points.items() for p in pts]
    section.tables.append(html_table(["backend", "subscribers", "median", "p1", "p99"], rows, "events/s"))
    section.finding = text.subscriber_sweep({b: [(int(p[0]), p[1]) for p in pts] for b, pts in points.items()},
                                            {b: s for b, (s, _) in fits.items()},
                                            {b: s.saturation_at for b, s in scaling.items()})
    return section


def sustained_section(view: Insertion, colours: plots.Colours) -> Section:
    section = Section("sustained", "Sustained load")
    trials = {b: t for b in view.backends if (t := view.one(b, "sustained"))}
    if not trials:
        section.missing = "No sustained-load trial in this run ([measurements] sustained is not set)."
        return section
    shares = {b: num(t.sustained_share) for b, t in trials.items()}
    section.figures.append(("Share of seconds at or above the offered rate (dashed: 99 % = stable)", plots.bars(
        ["sustained share"], {b: [v] for b, v in shares.items()}, colours, "share of seconds", hline=0.99)))
    section.finding = text.sustained(shares, {b: num(t.offered_rate) for b, t in trials.items()})
    same = {b: t.same_as for b, t in trials.items() if t.same_as}
    if same:  # a sustained load equal to an earlier trial's was measured once (hdbbench.run.runner)
        section.finding.sentences.append("Measured once with the trial of the same load: " + ", ".join(
            f"{b} {label}" for b, label in same.items()) + ".")
    return section


def cpu_section(view: Insertion) -> Section:
    section = Section("cpu", "CPU per stored event")
    trials = {b: t for b in view.backends if (t := view.one(b, "throughput"))}
    groups = sorted({g for t in trials.values() for g in t.cpu})
    if not trials or not groups:
        section.missing = "No CPU figures in this run."
        return section

    def us(figures: Mapping[str, CpuShare], group: str) -> float | None:
        return num(figures[group].us_per_event) if group in figures else None

    values = {g: [us(trials[b].cpu, g) for b in trials] for g in groups}
    section.figures.append(("CPU µs per stored event by process group (throughput trial)", plots.bars(
        list(trials), values, plots.Colours(groups, plots.PROCESS_PALETTE), "µs per event")))
    rows = [[b] + [fmt(us(t.cpu, g)) for g in groups] for b, t in trials.items()]
    section.tables.append(html_table(["backend"] + groups, rows, "µs of CPU per stored event"))
    threads = {b: t.subscriber_cpu_by_thread for b, t in trials.items()}
    if any(threads.values()):
        rows = [[b, fmt(us(th, "writer")), fmt(us(th, "tango_and_other"))] for b, th in threads.items()]
        section.tables.append(html_table(["backend", "writer thread", "other threads"], rows,
                                     "the subscribers' µs per stored event by thread: its writer (batching, "
                                     "encoding, database client) against the rest, mostly Tango's event reception"))
    if (costs := unit_costs_table(view.trials)) is not None:  # every trial's and step's, for planners
        section.tables.append(costs)
    section.finding = text.cpu({b: data.archiving_cpu_us(t, b) for b, t in trials.items()})
    return section


def loss_section(trials: Sequence[TrialSummary]) -> Section:
    """Every trial of the run, of every subscriber kind: a no-loss claim covers all of them or none."""
    section = Section("loss", "Loss accounting")
    if not trials:
        section.missing = "No trials in this run."
        return section
    full = [(t.label, t.accounting.emitted, t.accounting.stored, t.accounting.lost, t.accounting.duplicates)
            for t in trials]
    reasons = {t.label: dict(t.accounting.lost_by_reason.items()) for t in trials}
    shown = list(dict.fromkeys(r for by in reasons.values() for r in by))
    errors = {t.label: (t.accounting.error_events or 0, t.accounting.missed_event_errors or 0) for t in trials}
    section.tables.append(html_table(
        ["trial", "emitted", "stored", "lost", *[f"lost: {r.replace('_', ' ')}" for r in shown], "duplicates",
         "error events stored", "of which missed events"],
        [[label, f"{emitted:,}", f"{stored:,}", f"{lost:,}", *(f"{reasons[label].get(k, 0):,}" for k in shown),
          f"{duplicates:,}", f"{errors[label][0]:,}", f"{errors[label][1]:,}"]
         for label, emitted, stored, lost, duplicates in full],
        "per trial, all attributes: the devices' counters against the rows; the reasons add up to the loss "
        "(hdbbench.trials.figures.loss_by_reason)"))
    overload = {t.label: sum(s.lost or 0 for s in t.saturation.steps if s.saturated)
                for t in trials if t.saturation is not None}
    section.finding = text.loss(full, reasons, overload, list(dict.fromkeys(t.subscriber_kind for t in trials)))
    for t in trials:
        if unproven := t.delivery_unproven or 0:
            cause = t.delivery_unproven_cause or "cause not recorded"
            section.finding.warnings.append(f"{t.label}: {unproven:,} attribute{'s' if unproven > 1 else ''} delivered "
                                            "no event before the load "
                                            f"(their events count as lost): {cause}.")
    undrained = [f"{t.label} ({t.accounting.not_drained.left_in_subscriber_queue:,} left in the subscriber's queue)"
                 for t in trials if t.accounting.not_drained is not None]
    if undrained:
        section.finding.warnings.append("did not drain within the timeout: " + ", ".join(undrained))
    return section


# --- extraction, disk, sizing --------------------------------------------------------------------
def extraction_section(run_dir: Path, colours: plots.Colours) -> Section:
    section = Section("extraction", "Extraction")
    loaded = data.load_file(run_dir, data.FILES["extraction"])
    results = loaded.results(ExtractionResults)
    if results is None:
        section.missing = f"No extraction results: {loaded.problem}. Run the extraction benchmark to fill this section."
        return section
    figures = data.extraction_figures(results)
    if not figures:
        section.missing = "extraction.json holds no query times (its results.summary is empty)."
        return section
    backends = list(dict.fromkeys(f.backend for f in figures))
    series = {b: criteria.query_p95_by_interval(figures, b) for b in backends}
    section.figures.append(("Query time p95 against interval length (warm, clustered where measured)",
                            plots.loglog({b: [(x / 3600, y) for x, y in pts] for b, pts in series.items()},
                                         colours, "interval length (hours)", "p95 (s)")))
    longest = max(f.interval_s for f in figures)
    combos = [(c, k) for c in (True, False) for k in (False, True)
              if any(f.cold is c and f.clustered is k for f in figures)]
    if combos:
        names = [f"{'cold' if c else 'warm'}, {'clustered' if k else 'unclustered'}" for c, k in combos]
        values = {b: [_p95_at(figures, b, longest, c, k) for c, k in combos] for b in backends}
        section.figures.append((f"p95 at the longest interval ({fmt(longest / 3600)} h): cache × layout",
                                plots.bars(names, values, colours, "p95 (s)")))
    rows = [[f.backend, fmt(f.interval_s / 3600), _yes_no(f.cold, "cold", "warm"),
             _yes_no(f.clustered, "clustered", "unclustered"), fmt(f.p50_s), fmt(f.p95_s), str(f.count or "–")]
            for f in figures]
    section.tables.append(html_table(["backend", "interval (h)", "cache", "layout", "p50 (s)", "p95 (s)", "queries"],
                                 rows, ""))
    crit = criteria.extraction_criteria(run_dir)
    section.finding = text.extraction({b: crit.get(b, {}).get("query_p95_slope") for b in backends},
                                      {b: crit.get(b, {}).get("query_p95") for b in backends},
                                      {b: _cold_warm(figures, b, longest) for b in backends})
    section.finding.warnings += loaded.warnings
    return section


def _yes_no(flag: bool | None, yes: str, no: str) -> str:
    return "–" if flag is None else yes if flag else no


def _p95_at(figures: Sequence[data.QueryFigure], backend: str, interval: float, cold: bool,
            clustered: bool) -> float | None:
    found = [f.p95_s for f in figures if f.backend == backend and f.interval_s == interval and f.cold is cold
             and f.clustered is clustered and f.p95_s is not None]
    return found[0] if found else None


def _cold_warm(figures: Sequence[data.QueryFigure], backend: str, interval: float) -> float | None:
    cold = [f.p95_s for f in figures if f.backend == backend and f.interval_s == interval and f.cold and f.p95_s]
    warm = [f.p95_s for f in figures if f.backend == backend and f.interval_s == interval and f.cold is False
            and f.p95_s]
    return cold[0] / warm[0] if cold and warm else None


# --- ranking and environment --------------------------------------------------------------------
def ranking_section(table: Mapping[str, Mapping[str, float | None]], weights: Mapping[str, float] | None,
                    weights_source: str, colours: plots.Colours) -> Section:
    section = Section("ranking", "Ranking: criteria combined")
    # Only backends with a figure on some criterion are ranked: all-empty rows would tie at 0 and
    # the order of their names would read as a verdict (growth trials, for one, are no criterion).
    table = {b: row for b, row in table.items() if any(v is not None for v in row.values())}
    if len(table) < 2:
        section.missing = ("A ranking needs figures of at least two backends on its criteria (throughput, "
                           "latency, queries, disk); this run has " +
                           (f"them for {next(iter(table))} only." if table else "none."))
        return section
    extra = {weights_source: dict(weights)} if weights else {}
    rankings = ranking.rank_across_sets(table, extra)
    primary = weights_source if weights else "balanced"
    main = rankings[primary]
    names = list(main.criteria)
    crit = [ranking.criterion(n) for n in names]
    raw_rows = [[backend_label(b)] + [fmt(main.raw[b][n]) for n in names] + [f"{main.scores[b]:.3f}", str(main.rank_of(b))]
                for b in main.order]
    head = [f"{c.label} ({c.unit}) {'↑' if c.higher_is_better else '↓'}" for c in crit]
    section.tables.append(html_table(["backend"] + head + ["score", "rank"], raw_rows,
                                 f"weights ({primary}): " + ", ".join(f"{n} {main.weights[n]:.2f}" for n in names)
                                 + "; ↑ higher is better, ↓ lower is better"))
    section.figures.append(("Each criterion normalised to the best backend (1 = best)", plots.heat(
        list(main.order), [c.label for c in crit], [[main.normalised[b][n] for n in names] for b in main.order])))
    sets = list(rankings)
    section.figures.append(("Score under each weight set", plots.bars(
        sets, {b: [rankings[s].scores[b] for s in sets] for b in main.order}, colours, "score (0..1)")))
    section.tables.append(html_table(["weight set"] + [f"rank {i + 1}" for i in range(len(main.order))],
                                 [[s] + [f"{b} ({rankings[s].scores[b]:.2f})" for b in rankings[s].order] for s in sets],
                                 "weight sets multiply the criteria of one group (throughput, latency, cost, query, "
                                 "disk) by 4"))
    section.note = ("Normalisation: ratio to the best (value/max, or min/value when lower is better) when every "
                    "figure is positive, else min–max; a missing figure scores 0. Weights are scaled to sum 1.")
    section.finding = text.ranking({s: r.order for s, r in rankings.items()}, primary)
    if what_if := what_if_backends(main.order):
        section.finding.warnings.append(
            f"{', '.join(what_if)}: what-if, not HDB++ backends (no HDB++ library writes them): ranked by the same "
            "criteria, they say what the engine would give an archive, not what HDB++ runs on today.")
    return section


def what_if_backends(names: Sequence[str]) -> list[str]:
    """The what-if engines among `names` (Backend.what_if), in their order."""
    marked = {e.name for e in REGISTRY if e.backend_class.what_if}
    return [n for n in names if n in marked]


def backend_label(name: str) -> str:
    """A backend's name as tables show it: a what-if engine marked as one."""
    return f"{name} (what-if)" if what_if_backends([name]) else name


def environment_section(run_dir: Path, insertion_doc: ResultsDocument[Any] | None) -> Section:
    """The recorded environment and scenario, every key shown as recorded (they are facts to read,
    not records to compute with: hdbbench.report.data.run_facts takes those)."""
    section = Section("environment", "Environment and settings")
    env = data.load_json(run_dir / "environment.json") or dict(insertion_doc.environment if insertion_doc else {})
    scenario = data.load_json(run_dir / "scenario.json") or dict(insertion_doc.scenario if insertion_doc else {})
    if not env:
        section.missing = "environment.json is not in this run directory."
        return section
    disk = env.get("disk") if isinstance(env.get("disk"), Mapping) else {}
    facts = [("CPU", env.get("cpu_model")), ("cores", env.get("cores")),
             ("memory", human_bytes(num(env.get("memory_bytes")))),
             ("disk", f"{disk.get('device') or '?'} ({disk.get('type') or 'unknown type'}), "
                      f"{human_bytes(num(disk.get('free_bytes')))} free"),
             ("kernel", env.get("kernel")), ("OS", env.get("os")), ("host", env.get("hostname")),
             ("Python", env.get("python")), ("hdbbench commit", env.get("hdbbench_commit")),
             *((label, env.get(key)) for key, label in _build_fact_labels().items()),
             ("OS page cache can be dropped", env.get("drop_caches_writable"))]
    section.tables.append(html_table(["fact", "value"], [[k, str(v)] for k, v in facts], "machine"))
    versions = [[f"server {k}", str(v)] for k, v in (env.get("servers") or {}).items()]
    versions += [[f"package {k}", str(v)] for k, v in (env.get("packages") or {}).items()]
    section.tables.append(html_table(["component", "version"], versions, "versions"))
    section.tables.append(html_table(["setting", "value"], _flatten(env.get("settings") or {}), "settings in force"))
    section.tables.append(html_table(["scenario key", "value"], _flatten(scenario), "scenario as resolved"))
    return section


def _build_fact_labels() -> dict[str, str]:
    """The environment keys the backends record about their servers' builds, with their words."""
    return {key: label for e in REGISTRY for key, label in e.backend_class.build_fact_labels.items()}


def _flatten(value: Any, prefix: str = "") -> list[list[str]]:
    if isinstance(value, Mapping):
        rows: list[list[str]] = []
        for k, v in value.items():
            rows += _flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return rows
    return [[prefix, str(value)]]


# --- assembly --------------------------------------------------------------------------------------
def _not_asked(facts: RunFacts | None, key: str) -> bool:
    """Whether the run's scenario left out the part behind section `key` (then a missing section is
    noise, not news); unknown without the insertion results' scenario."""
    return facts is not None and dict(facts.asked).get(key) is False

QUICK_NOTE = ("A quick run (hdbbench run --quick, hdbbench.run.quick): shorter trials, fewer batch sizes, a coarser "
              "saturation search, extraction warm only and disk usage on fewer events and variants. Its figures "
              "show a change's direction; compare full runs with full runs.")


def build_sections(run_dir: Path, weights: Mapping[str, float] | None = None) -> tuple[list[Section], list[str]]:
    """Every section of the report and page-level warnings (status, format)."""
    loaded = data.load_file(run_dir, data.FILES["insertion"])
    notes = list(loaded.warnings)
    status = data.load_json(run_dir / "status.json")
    if status.get("state") not in (None, "completed"):
        notes.append(f"This run is {status.get('state')}: {status.get('error') or 'figures may be partial'}.")
    doc = loaded.document
    facts = data.facts_of(run_dir, doc)
    if facts.quick:
        notes.append(QUICK_NOTE)
    view = data.insertion_view(run_dir, loaded) if loaded.insertion is not None else None
    colours = plots.Colours(view.backends if view else [])
    sections: list[Section] = []
    if view and view.trials:
        sections += [throughput_section(view, colours), lag_section(view, colours), batch_section(view, colours),
                     subscribers_section(view, colours), searches.saturation_section(view, colours),
                     sustained_section(view, colours), cpu_section(view), placement_section(view),
                     loss_section(loaded.insertion.trials if loaded.insertion else []),
                     *kinds.kinds_sections(run_dir, loaded)]
    load_rate = facts.rate
    if (archive_age := aging.aging_section(loaded.insertion, colours, load_rate)) is not None:  # with aging records
        sections.append(archive_age)
    elif view is None:  # a scenario without insertion trials has no such section
        sections.append(Section("insertion", "Insertion", missing=f"No insertion results: "
                                                                  f"{loaded.problem or 'no trials'}."))
    if (upkeep := maintenance_section(loaded.insertion, colours, run_dir)) is not None:
        sections.append(upkeep)  # with maintenance records
    parts = [extraction_section(run_dir, colours), disk.disk_section(run_dir, colours), plan.sizing_section(run_dir)]
    asked = data.run_facts(doc.scenario, {}) if doc is not None else None  # the insertion results' scenario
    sections += [s for s in parts if not (s.missing and _not_asked(asked, s.key))]
    if (planned := hardware.hardware_section(run_dir, colours)) is not None:
        sections.append(planned)
    if (fault_section := faults.faults_section(run_dir, colours)) is not None:
        sections.append(fault_section)
    if (replica_section := replica.replica_section(run_dir)) is not None:
        sections.append(replica_section)
    chosen, source = _weights(weights, facts)
    criteria_table = criteria.criteria_table(run_dir)
    sections.append(ranking_section(criteria_table, chosen, source, colours))
    if (hosts := hosts_section(loaded.insertion, view)) is not None:
        sections.append(hosts)
    # What this run measured comes first, its plots before anything a reader must scroll past; the
    # sections with nothing in this run (one line each saying why) follow, then the environment.
    sections = [s for s in sections if not s.missing] + [s for s in sections if s.missing]
    sections.append(environment_section(run_dir, doc))
    notes += _what_if_notes(list(view.backends if view else []) + list(criteria_table))
    return sections, notes


def _what_if_notes(backends: Sequence[str]) -> list[str]:
    """One page-level line per what-if engine of the run, with its own words (Backend.what_if)."""
    marked = {e.name: e.backend_class.what_if for e in REGISTRY if e.backend_class.what_if}
    return [f"{name}: {marked[name]}" for name in dict.fromkeys(backends) if name in marked]


def _weights(cli: Mapping[str, float] | None, facts: RunFacts) -> tuple[dict[str, float] | None, str]:
    if cli:
        return dict(cli), "command line"
    clean = {k: v for k, v in facts.weights if k in ranking.CRITERION_NAMES}
    if clean and any(clean.values()):
        return clean, "scenario"
    return None, "balanced"


def write_report(run_dir: Path, weights: Mapping[str, float] | None = None) -> Path:
    """Write ``report.html`` into `run_dir` and return its path."""
    run_dir = Path(run_dir)
    data.refuse_older_formats(run_dir)  # a run of an older hdbbench: one line, no report half-read
    sections, notes = build_sections(run_dir, weights)
    path = run_dir / REPORT_NAME
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render_page(f"hdbbench report — {run_dir.name}", sections, notes, _subtitle(run_dir)))
    tmp.replace(path)
    return path


def _subtitle(run_dir: Path) -> str:
    facts = data.run_facts(data.load_json(run_dir / "scenario.json"), {})
    status = data.load_json(run_dir / "status.json")
    quick = " (quick)" if facts.quick else ""
    return (f"scenario {facts.name or '?'}{quick}, seed {'?' if facts.seed is None else facts.seed}, profile "
            f"{facts.profile or '?'}, schema {facts.schema_variant or '?'}; run "
            f"{status.get('state', '?')}, {status.get('started', '?')} → {status.get('ended', '–')}")

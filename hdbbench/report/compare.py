# SPDX-License-Identifier: Apache-2.0
"""``hdbbench compare <run> <run> ...``: the same figures across runs, as ratios to the first run.

Runs may differ in settings, machine or subscriber. For every backend present and every figure
of the ranking criteria, each later run is shown as value and ratio to the first run, with a verdict:

* per-second distributions (median stored rate, peak sweep rate): **not significant** when the
  p1..p99 ranges of the two runs overlap, else significant;
* last sustainable rate: **not significant** when the two differ by no more than one step of the
  search, or its resolution for a bisect search (that fraction of the smaller rate; the coarser of
  the two runs'), since rates between steps were not measured; where the two searches met their
  limits at paces of the machine 15 % or more apart (the devices' CPU per event there), the limits are
  also set in proportion to the pace and judged the same way (paced_limits);
* figures without repeats (event age p99, CPU per event, sustained share, query slope, bytes per
  event): **no spread** — the ratio is shown, but no claim of significance can be made.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from hdbbench.model import measure
from hdbbench.report import data, kinds, plots, ranking
from hdbbench.report.criteria import criteria_table
from hdbbench.report.data import RunFacts, num
from hdbbench.report.render import Section, html_table, render_page
from hdbbench.report.text import Finding, Spread, fmt, overlaps
from hdbbench.results.trials import SaturationSearch

NOT_SIGNIFICANT, SIGNIFICANT, NO_SPREAD = "not significant", "significant", "no spread"


@dataclass(frozen=True)
class Figure:
    value: float | None
    spread: Spread | None = None
    step: float | None = None   # saturation search step fraction (a bisect search: its resolution)


@dataclass(frozen=True)
class Row:
    backend: str
    criterion: str
    figures: tuple[Figure, ...]          # one per run
    ratios: tuple[float | None, ...]     # to the first run
    verdicts: tuple[str, ...]            # first run: ""


def run_figures(run_dir: Path) -> dict[str, dict[str, Figure]]:
    """backend → criterion → figure (with its spread where the run measured one)."""
    data.refuse_older_formats(run_dir)
    table = criteria_table(run_dir)
    out = {b: {name: Figure(v) for name, v in row.items()} for b, row in table.items()}
    loaded = data.load_file(run_dir, data.FILES["insertion"])
    if loaded.insertion is None:
        return out
    view = data.insertion_view(run_dir, loaded)
    step = view.saturation_step
    for backend in view.backends:
        row = out.setdefault(backend, {})
        if (main := view.one(backend, "throughput")) and (s := Spread.of(main.stored_rate)):
            row["stored_median"] = Figure(s.median, s)
        sweeps = [s for t in view.trials if t.backend == backend and t.kind in ("batch_sweep", "subscriber_sweep")
                  if (s := Spread.of(t.stored_rate))]
        if sweeps:
            top = max(sweeps, key=lambda spread: spread.median)
            row["peak_rate"] = Figure(top.median, top)
        if "saturation_rate" in row:
            search = sat.saturation if (sat := view.one(backend, "saturation")) is not None else None
            precision = data.search_precision(search, step)[1] if search is not None else step
            row["saturation_rate"] = Figure(row["saturation_rate"].value, step=precision)
    # The subscriber kinds after the first, as rows "<backend> · <kind>" (hdbbench.report.kinds).
    for name, figures in kinds.compare_figures(run_dir, loaded).items():
        out[name] = {key: Figure(value) for key, value in figures.items()}
    return out


def verdict(base: Figure, other: Figure) -> str:
    if base.value is None or other.value is None:
        return ""
    if base.spread and other.spread:
        return NOT_SIGNIFICANT if overlaps(base.spread, other.spread) else SIGNIFICANT
    if base.step is not None and other.step is not None:
        smaller = min(base.value, other.value)
        # A stepped run against a bisected one: the coarser of the two searches decides.
        coarser = max(base.step, other.step)
        return NOT_SIGNIFICANT if abs(base.value - other.value) <= smaller * coarser * 1.0001 else SIGNIFICANT
    return NO_SPREAD


def compare_rows(runs: Sequence[dict[str, dict[str, Figure]]]) -> list[Row]:
    backends = list(dict.fromkeys(b for run in runs for b in run))
    rows = []
    for backend in backends:
        for name in ranking.CRITERION_NAMES:
            figures = tuple(run.get(backend, {}).get(name, Figure(None)) for run in runs)
            if all(f.value is None for f in figures):
                continue
            base = figures[0]
            ratios = tuple(_ratio(base.value, f.value) for f in figures)
            verdicts = ("",) + tuple(verdict(base, f) for f in figures[1:])
            rows.append(Row(backend, name, figures, ratios, verdicts))
    return rows


def _ratio(base: float | None, value: float | None) -> float | None:
    """value / base; none when either is missing or the base is not positive (a slope that changes sign
    has no meaningful ratio)."""
    if base is None or value is None or base <= 0 or value < 0:
        return None
    return value / base


def run_labels(paths: Sequence[Path]) -> list[str]:
    labels = []
    for i, path in enumerate(paths):
        label = Path(path).name or str(path)
        labels.append(label if label not in labels else f"{label} ({i + 1})")
    return labels


def _cell(figure: Figure, ratio: float | None, verdict_text: str) -> str:
    if figure.value is None:
        return "–"
    if not verdict_text:
        return fmt(figure.value)
    ratio_text = f"{ratio:.2f}×" if ratio is not None and math.isfinite(ratio) else "–"
    return f"{fmt(figure.value)} ({ratio_text}, {verdict_text})"


def terminal_table(rows: Sequence[Row], labels: Sequence[str]) -> Table:
    table = Table(title="hdbbench compare (ratios to the first run)")
    table.add_column("backend")
    table.add_column("figure")
    for label in labels:
        table.add_column(label, justify="right")
    for row in rows:
        crit = ranking.criterion(row.criterion)
        table.add_row(row.backend, f"{crit.label} {'↑' if crit.higher_is_better else '↓'}",
                      *(_cell(f, r, v) for f, r, v in zip(row.figures, row.ratios, row.verdicts)))
    return table


def summary(rows: Sequence[Row], labels: Sequence[str]) -> Finding:
    finding = Finding()
    for row in rows:
        crit = ranking.criterion(row.criterion)
        for label, figure, ratio, word in zip(labels[1:], row.figures[1:], row.ratios[1:], row.verdicts[1:]):
            if word == SIGNIFICANT and ratio is not None:
                better = (ratio > 1) == crit.higher_is_better
                finding.sentences.append(f"{row.backend}, {crit.label}: {label} is {ratio:.2f}× the first run — "
                                         f"{'better' if better else 'worse'}, beyond the spread.")
    if not finding.sentences:
        finding.sentences.append("No difference beyond the spread: every figure with a spread overlaps the first run.")
    if any(NO_SPREAD in r.verdicts for r in rows):
        finding.warnings.append("Figures marked 'no spread' are single values: repeat the runs to judge them.")
    finding.recommendation = ("Act only on the differences called significant; the others are within the noise of "
                              "these runs.")
    return finding


def _searches(run_dir: Path) -> tuple[dict[str, SaturationSearch], float | None]:
    """backend → its saturation search in a run, and the scenario's step (for older records)."""
    loaded = data.load_file(run_dir, data.FILES["insertion"])
    if loaded.insertion is None:
        return {}, None
    view = data.insertion_view(run_dir, loaded)
    step = view.saturation_step
    return {b: t.saturation for b in view.backends
            if (t := view.one(b, "saturation")) is not None and t.saturation is not None}, step


def device_pace(run_dir: Path) -> dict[str, dict[float, float]]:
    """backend → offered rate → the devices' CPU per event (µs) at the first step of that rate in its
    saturation search. A bisect search offers the same first rates in every run of a scenario."""
    out: dict[str, dict[float, float]] = {}
    for backend, search in _searches(run_dir)[0].items():
        for step in search.steps:
            rate, cpu = num(step.offered_rate), num(step.device_cpu_us)
            if rate is not None and cpu is not None and not step.source_behind:
                out.setdefault(backend, {}).setdefault(rate, cpu)
    return out


NEAR_RATE = 0.05  # steps this close in offered rate compare their devices' CPU per event


def _near_rates(rates: Sequence[float], base: Sequence[float]) -> list[tuple[float, float]]:
    """Each rate paired with the base's nearest one within NEAR_RATE. A stepped search (12k, +10 % a
    step) offers other rates than a bisect one (40k, 80k, ...); the devices' work per event changes
    by a few per cent between rates 5 % apart (their fixed cost per second spreads over the events),
    far less than the slow periods that data.DEVICE_PACE_SPREAD catches."""
    pairs = []
    for rate in rates:
        nearest = min(base, key=lambda b: abs(b / rate - 1), default=None)
        if nearest is not None and abs(nearest / rate - 1) <= NEAR_RATE:
            pairs.append((rate, nearest))
    return pairs


def pace_warnings(paces: Sequence[dict[str, dict[float, float]]], labels: Sequence[str]) -> list[str]:
    """A warning per later run and backend whose devices spent more (or less) CPU per event than in
    the first run at the same or nearby offered rates (within NEAR_RATE): the machine ran at another
    pace, and every process on it did more or less per second, the subscriber and the server too."""
    warnings = []
    for label, pace in zip(labels[1:], paces[1:]):
        for backend, steps in pace.items():
            base = paces[0].get(backend, {})
            pairs = _near_rates(sorted(steps), list(base))
            if not pairs:
                continue
            ratio = measure.percentile([steps[r] / base[b] for r, b in pairs], 50)
            if abs(ratio - 1) >= data.DEVICE_PACE_SPREAD:
                same = all(r == b for r, b in pairs)
                warnings.append(
                    f"{backend}: in {label} the devices spent {ratio:.2f}× the first run's CPU per event "
                    f"at the {'same' if same else 'same or nearby (within 5 %)'} offered rates "
                    f"({', '.join(fmt(r) for r, _ in pairs)} events/s). Their work per event is the "
                    f"same, so the machine ran {'slower' if ratio > 1 else 'faster'}, and every process on it with them: "
                    "the saturation figures compare the machine's pace as much as the settings.")
    return warnings


@dataclass(frozen=True)
class LimitPace:
    """A saturation search's answer (events/s), the devices' CPU per event at it (µs,
    data.pace_at_limit) and the search's resolution (data.search_precision)."""

    limit: float
    device_cpu_us: float
    resolution: float | None


def limit_paces(run_dir: Path) -> dict[str, LimitPace]:
    """backend → its saturation search's LimitPace, where the search found a limit and the devices'
    CPU per event near it was recorded."""
    searches, step = _searches(run_dir)
    out = {}
    for backend, search in searches.items():
        limit, pace = num(search.last_sustainable_rate), data.pace_at_limit(search)
        if limit is not None and pace is not None:
            out[backend] = LimitPace(limit, pace, data.search_precision(search, step)[1])
    return out


def paced_limits(limits: Sequence[dict[str, LimitPace]], labels: Sequence[str]) -> list[str]:
    """A sentence per later run and backend whose search met its limit at another pace than the first
    run's (the devices' CPU per event there data.DEVICE_PACE_SPREAD or more apart): the two limits
    set in proportion to their paces, as the devices' CPU per second at the limit (limit × CPU per
    event). On a machine whose CPUs the devices share with the archiving path, a slow period makes
    every process spend more per event alike: the limit falls and the devices' CPU per event rises
    in proportion, and their product stays. In eighteen pairs of a bisect and a stepped search on one
    machine (docs/default-run-time.md, "Limits in proportion to the pace") it agreed within 10 % in 15, the limits themselves
    in 8. The devices' fixed cost per second makes it understate a real difference a little."""
    sentences = []
    for label, later in zip(labels[1:], limits[1:]):
        for backend, other in later.items():
            base = limits[0].get(backend)
            if base is None or abs(other.device_cpu_us / base.device_cpu_us - 1) < data.DEVICE_PACE_SPREAD:
                continue
            raw = other.limit / base.limit
            paced = raw * other.device_cpu_us / base.device_cpu_us
            judged = _paced_verdict(paced, base, other)
            sentences.append(
                f"{backend}: {label}'s search met its limit ({raw:.2f}× the first run's) at another pace: "
                f"the devices spent {other.device_cpu_us:.2f} µs per event there, {base.device_cpu_us:.2f} "
                "in the first run. In proportion to the pace (the limit × that, the devices' CPU per "
                f"second at the limit) it is {paced:.2f}× the first run's, {judged}.")
    return sentences


def _paced_verdict(paced: float, base: LimitPace, other: LimitPace) -> str:
    """Whether two limits set in proportion to their paces differ by more than the coarser search's
    resolution (as verdict() judges the limits themselves)."""
    known = [r for r in (base.resolution, other.resolution) if r is not None]
    if not known:
        return "and the searches state no resolution to judge it by"
    if abs(paced - 1) <= max(known) * 1.0001:
        return f"within the {max(known):.0%} resolution: no difference beyond the machine's pace"
    return "beyond the resolution: a difference the machine's pace does not explain"


def write_html(paths: Sequence[Path], output: Path) -> Path:
    labels = run_labels(paths)
    runs = [run_figures(Path(p)) for p in paths]
    rows = compare_rows(runs)
    colours = plots.Colours(labels)
    section = Section("compare", "Figures across runs")
    for name in dict.fromkeys(r.criterion for r in rows):
        crit = ranking.criterion(name)
        mine = [r for r in rows if r.criterion == name]
        values = {label: [r.figures[i].value for r in mine] for i, label in enumerate(labels)}
        errors = {label: [(r.figures[i].spread.p1, r.figures[i].spread.p99) if r.figures[i].spread else None
                          for r in mine] for i, label in enumerate(labels)}
        section.figures.append((f"{crit.label} ({crit.unit}) {'higher' if crit.higher_is_better else 'lower'} is "
                                "better; bars p1..p99 where measured",
                                plots.bars([r.backend for r in mine], values, colours, crit.unit or "share",
                                           errors=errors)))
    section.tables.append(html_table(["backend", "figure"] + labels,
                                 [[r.backend, ranking.criterion(r.criterion).label] +
                                  [_cell(f, q, v) for f, q, v in zip(r.figures, r.ratios, r.verdicts)] for r in rows],
                                 "value (ratio to the first run, verdict)"))
    section.note = __doc__.split("\n\n", 1)[1].replace("*", "").replace("\n", " ") if __doc__ else ""
    section.finding = summary(rows, labels)
    section.finding.warnings.extend(pace_warnings([device_pace(Path(p)) for p in paths], labels))
    section.finding.sentences.extend(paced_limits([limit_paces(Path(p)) for p in paths], labels))
    # Each run's subscriber kinds side by side (stored-rate curves, visibility lag, loss by reason, ratios
    # to its first kind), from the same outside figures.
    kind_sections = []
    for label, p in zip(labels, paths):
        loaded = data.load_file(Path(p), data.FILES["insertion"])
        for kind_section in kinds.kinds_sections(Path(p), loaded) if loaded.insertion is not None else []:
            kind_section.key, kind_section.title = f"kinds-{len(kind_sections)}", f"{label}: subscriber kinds side by side"
            kind_sections.append(kind_section)
    env = Section("environments", "Runs and their environments")
    env.tables.append(html_table(["run"] + labels, _environment_rows(paths), "what differs between the runs"))
    path = Path(output)
    path.write_text(render_page("hdbbench compare", [section, *kind_sections, env], [],
                                "first run: " + html.escape(str(paths[0]))))
    return path


def _environment_rows(paths: Sequence[Path]) -> list[list[str]]:
    runs = [(data.run_facts(data.load_json(Path(p) / "scenario.json"), data.load_json(Path(p) / "environment.json")),
             p) for p in paths]
    facts: list[tuple[str, Callable[[RunFacts, Path], object]]] = [
        ("path", lambda f, p: str(p)), ("host", lambda f, p: f.host), ("CPU", lambda f, p: f.cpu_model),
        ("cores", lambda f, p: f.cores), ("disk", lambda f, p: f.disk_type), ("kernel", lambda f, p: f.kernel),
        ("profile", lambda f, p: f.settings_profile or f.profile), ("subscribers", lambda f, p: f.subscribers),
        ("subscriber kinds", lambda f, p: ", ".join(f.subscriber_kinds) or None),
        ("lib_configuration", lambda f, p: f.lib_configuration), ("rate", lambda f, p: f.rate),
        ("seed", lambda f, p: f.seed)]
    return [[name] + [str(value) if (value := get(f, p)) is not None else "–" for f, p in runs] for name, get in facts]

# SPDX-License-Identifier: Apache-2.0
"""The report's disk section: what one more event costs on each backend/variant, at a glance.

disk.json (``size measure``, or a run's disk part) holds one record per case (type × format × write ×
backend × variant) with its marginal bytes per event: the slope of bytes = fixed + marginal × events
over the case's sizes. The section shows, in this order: a grouped bar plot of the marginal per scalar
type, the spectra on log scales against their element count, one summary table (devdouble, devlong,
devboolean, devstring, a 1,000-element devdouble spectrum, fixed bytes and slack per contestant), the
published facility-scale reference beside ours, and every case folded away and written as
``disk-cases.csv`` beside report.html. A case whose sizes do not fit a line is shown flagged and is
never taken as a figure. The sizing projection is hdbbench.report.plan.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hdbbench.model.units import human_bytes
from hdbbench.parts.disk.reference import DIFFERS
from hdbbench.report import data, diskplots
from hdbbench.report.data import num
from hdbbench.report.plots import Colours
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import DISK_RESOLUTION, Finding, fmt, resolved, unresolved
from hdbbench.results.disk import DiskResults, ReferenceComparison

CASES_CSV = "disk-cases.csv"
SUMMARY_TYPES = ("devdouble", "devlong", "devboolean", "devstring")
SUMMARY_SPECTRUM = 1000          # elements of the summary's devdouble spectrum
AVERAGE_SHOWS_FIXED = 1.2        # average / marginal above this at the largest size: fixed costs still weigh
CSV_COLUMNS = ("backend", "variant", "table", "type", "format", "write", "elements", "marginal_bytes_per_event",
               "data_per_event", "index_per_event", "toast_per_event", "fixed_bytes", "slack_bytes",
               "average_bytes_per_event", "fit_r2", "fit_max_residual", "fit_sizes", "fit_ok", "fit_note")


@dataclass(frozen=True)
class DiskCase:
    """One case of disk.json as the section reads it."""

    backend: str
    variant: str
    table: str
    type: str
    format: str
    write: str
    elements: int
    string_chars: int | None
    marginal: float | None
    data: float | None
    index: float | None
    toast: float | None
    fixed_bytes: float | None
    slack_bytes: float | None
    average: float | None
    r2: float | None
    max_residual: float | None
    sizes: tuple[int, ...]
    fit_ok: bool
    note: str

    @property
    def contestant(self) -> str:
        return f"{self.backend} {self.variant}"

    @property
    def scalar(self) -> bool:
        return self.format == "scalar"

    @property
    def group(self) -> str:
        """The x label of a scalar case: its type, with the write side when it is not read-only."""
        return self.type if self.write == "ro" else f"{self.type} {self.write}"

    @property
    def figure(self) -> float | None:
        """The marginal when it can be used; None for a flagged case."""
        return self.marginal if self.fit_ok else None

    @property
    def name(self) -> str:
        size = f" ×{self.elements:,}" if self.elements > 1 else ""
        return f"{self.type} {self.format} {self.write}{size}"


def read_cases(results: DiskResults) -> list[DiskCase]:
    return [DiskCase(
        c.backend, c.variant, c.table, c.case_type, c.case_format, c.case_write, c.case_elements,
        c.case_string_chars, num(c.bytes_per_event), num(c.data_per_event), num(c.index_per_event),
        num(c.toast_per_event), num(c.fixed_bytes), num(c.slack_bytes), num(c.average_bytes_per_event),
        num(c.fit_r2), num(c.fit_max_residual), tuple(c.fit_sizes or ()), c.fit_ok is not False, c.fit_note)
        for c in results.cases]


def contestants(cases: Sequence[DiskCase]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((c.backend, c.variant) for c in cases))


def find(cases: Sequence[DiskCase], who: str, type_: str, format_: str = "scalar", elements: int = 1,
         write: str = "ro") -> DiskCase | None:
    return next((c for c in cases if c.contestant == who and c.type == type_ and c.format == format_
                 and c.elements == elements and c.write == write), None)


# --- the section ---------------------------------------------------------------------------------
def disk_section(run_dir: Path, colours: Colours) -> Section:
    section = Section("disk", "Disk usage")
    loaded = data.load_file(run_dir, data.FILES["disk"])
    results = loaded.results(DiskResults)
    if results is None:
        section.missing = f"No disk results: {loaded.problem}. Run the disk-usage benchmark to fill this section."
        return section
    cases = read_cases(results)
    if not cases:
        section.missing = "disk.json holds no measured cases (its results.cases is empty)."
        return section
    who = contestants(cases)
    shade = diskplots.contestant_colours(who, colours)
    _add_figures(section, cases, who, shade)
    section.tables.append(summary_table(cases, who))
    references = results.reference or []
    if references:
        section.tables.append(reference_table(references) + "".join(
            f"<p class='note'>{html.escape(line)}</p>" for line in reference_words(references)))
    csv_name = write_cases_csv(run_dir, cases)
    section.tables.append(full_table(cases, csv_name))
    section.finding = disk_finding(cases, who, references)
    section.finding.warnings += unavailable_warnings(results) + loaded.warnings
    return section


def _add_figures(section: Section, cases: Sequence[DiskCase], who: Sequence[tuple[str, str]],
                 shade: Mapping[str, str]) -> None:
    names = [f"{b} {v}" for b, v in who]
    groups = list(dict.fromkeys(c.group for c in cases if c.scalar))
    if groups:
        by = {(c.contestant, c.group): c for c in cases if c.scalar}
        values = {n: [_bar(by.get((n, g))) for g in groups] for n in names}
        section.figures.append((
            "Marginal bytes per event per scalar type (one bar per backend/variant; read-only unless marked rw)",
            diskplots.scalar_bars(groups, values, {f"{b} {v}": b for b, v in who}, shade,
                                  "marginal bytes per event")))
    arrays = [c for c in cases if not c.scalar and c.marginal is not None]
    if arrays:
        kinds = list(dict.fromkeys((c.type, c.format, c.write) for c in arrays))
        series: dict[str, list[tuple[float, float, bool]]] = {}
        owner: dict[str, str] = {}
        for c in arrays:
            key = c.contestant + ("" if len(kinds) == 1 else f" {c.type} {c.format} {c.write}")
            series.setdefault(key, []).append((float(c.elements), c.marginal or 0.0, not c.fit_ok))
            owner[key] = c.contestant
        variant_rank = {f"{b} {v}": [x for y, x in who if y == b].index(v) for b, v in who}
        shades = {k: shade[owner[k]] for k in series}
        markers = {k: variant_rank[owner[k]] for k in series}
        what = " ".join(kinds[0]) if len(kinds) == 1 else "arrays"
        section.figures.append((f"Marginal bytes per event of {what} against element count, log–log "
                                "(one line per backend/variant)", diskplots.spectra(series, shades, markers)))


def _bar(case: DiskCase | None) -> diskplots.Bar:
    if case is None:
        return diskplots.Bar(None)
    return diskplots.Bar(case.marginal, flagged=not case.fit_ok)


def _cell(case: DiskCase | None) -> str:
    if case is None or case.marginal is None:
        return "–"
    return fmt(case.marginal) if case.fit_ok else f"{fmt(case.marginal)} (flagged, not used)"


def _sum(values: Sequence[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return sum(found) if found else None


def summary_table(cases: Sequence[DiskCase], who: Sequence[tuple[str, str]]) -> str:
    chars = next((c.string_chars for c in cases if c.type == "devstring" and c.string_chars), None)
    head = ["backend / variant"] + [f"devstring ({chars} chars)" if t == "devstring" and chars else t
                                    for t in SUMMARY_TYPES]
    head += [f"devdouble spectrum ×{SUMMARY_SPECTRUM:,}", "fixed (all tables)", "slack (all tables)"]
    rows = []
    for backend, variant in who:
        name = f"{backend} {variant}"
        mine = [c for c in cases if c.contestant == name]
        rows.append([name] + [_cell(find(cases, name, t)) for t in SUMMARY_TYPES]
                    + [_cell(find(cases, name, "devdouble", "spectrum", SUMMARY_SPECTRUM))]
                    + [human_bytes(_sum([c.fixed_bytes for c in mine])), human_bytes(_sum([c.slack_bytes for c in mine]))])
    return html_table(head, rows, "marginal bytes per event (scalar, read-only): what one more event costs once the "
                                  "table is large. fixed: the fits' fixed bytes summed over the measured tables; "
                                  "slack: space allocated ahead (free extents) at the largest size, summed; "
                                  "'–': not measured")


def reference_table(references: Sequence[ReferenceComparison]) -> str:
    rows = [[r.published, r.order, fmt(num(r.published_bytes_per_row)), f"{r.backend} {r.variant}",
             fmt(num(r.ours_bytes_per_event)), f"{ratio:.2f}×" if (ratio := num(r.ratio)) is not None else "–",
             "yes" if r.differs else "no"] for r in references]
    setup = next((r.setup for r in references if r.setup), "")
    return html_table(["published (Elettra, FERMI att_scalar_devdouble_ro)", "load order", "bytes/row",
                       "ours (same table and index choice)", "marginal bytes/event", "ratio ours / published",
                       f"more than {DIFFERS:.0%} apart"], rows,
                      f"published: {setup}; ours: scalar devdouble read-only, loaded in time order")


def full_table(cases: Sequence[DiskCase], csv_name: str) -> str:
    rows = [[c.backend, c.variant, c.table, c.name, fmt(c.marginal), fmt(c.data), fmt(c.index), fmt(c.toast),
             human_bytes(c.fixed_bytes), human_bytes(c.slack_bytes), fmt(c.average),
             f"{c.r2:.5f}" if c.r2 is not None else "–", f"{c.max_residual:.1%}" if c.max_residual is not None else "–",
             " ".join(f"{s:,}" for s in c.sizes), "ok" if c.fit_ok else f"FLAGGED: {c.note or 'off a line'}"]
            for c in cases]
    table = html_table(["backend", "variant", "table", "case", "marginal B/event", "data", "index", "toast",
                        "fixed", "slack", "average B/event", "fit r²", "max residual", "sizes (events)", "fit"],
                       rows, "data / index / toast: the marginal split by part, bytes per event; average: bytes "
                             "over events at the largest size (fixed costs included)")
    flagged = sum(not c.fit_ok for c in cases)
    summary = (f"All {len(cases)} cases ({flagged} flagged), one row each — also as "
               f"<a href='{html.escape(csv_name)}'>{html.escape(csv_name)}</a>")
    return f"<details><summary>{summary}</summary>{table}</details>"


def cases_csv(cases: Sequence[DiskCase]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in cases:
        writer.writerow([c.backend, c.variant, c.table, c.type, c.format, c.write, c.elements,
                         *("" if v is None else repr(v) for v in (c.marginal, c.data, c.index, c.toast, c.fixed_bytes,
                                                                  c.slack_bytes, c.average, c.r2, c.max_residual)),
                         " ".join(map(str, c.sizes)), "yes" if c.fit_ok else "no", c.note])
    return out.getvalue()


def write_cases_csv(run_dir: Path, cases: Sequence[DiskCase]) -> str:
    """disk-cases.csv beside report.html (written whole, then renamed into place); its name."""
    path = run_dir / CASES_CSV
    tmp = path.with_suffix(".csv.tmp")
    tmp.write_text(cases_csv(cases))
    tmp.replace(path)
    return CASES_CSV


# --- words ---------------------------------------------------------------------------------------
def disk_finding(cases: Sequence[DiskCase], who: Sequence[tuple[str, str]],
                 references: Sequence[ReferenceComparison]) -> Finding:
    finding = Finding()
    names = [f"{b} {v}" for b, v in who]
    double = {n: c.figure for n in names if (c := find(cases, n, "devdouble")) and c.figure is not None}
    ordered = sorted(double.items(), key=lambda kv: (kv[1], kv[0]))
    if ordered:
        low, high = ordered[0], ordered[-1]
        sentence = f"Scalar devdouble, marginal: smallest {low[0]} ({fmt(low[1], 'B/event')})"
        if len(ordered) > 1:
            sentence += f", largest {high[0]} ({fmt(high[1], 'B/event')}, {high[1] / low[1]:.2f}× the smallest)"
        finding.sentences.append(sentence + ".")
    finding.sentences += _type_winners(cases, names) + _spectrum_words(cases, names) + _fixed_words(cases, names)
    finding.sentences += reference_summary(references)
    if not ordered:
        finding.sentences.append("No usable scalar devdouble marginal was measured.")
    tied = resolved(ordered, relative=DISK_RESOLUTION)
    if len(tied) > 1:
        words = f"scalar devdouble marginals within {DISK_RESOLUTION:.0%}"
        finding.recommendation = (f"Where disk is the constraint: {unresolved(tied, words)}; the sizing section "
                                  "weighs every type by a facility's inventory.")
    else:
        finding.recommendation = (f"Where disk is the constraint, prefer {ordered[0][0]} (smallest marginal on "
                                  "scalar devdouble, the commonest archived type); the sizing section weighs every "
                                  "type by a facility's inventory." if ordered else "")
    finding.warnings += [f"{c.contestant}, {c.name}: its sizes do not fit a line ({c.note or 'off a line'}); its "
                         f"marginal is shown flagged and is not used." for c in cases if not c.fit_ok]
    return finding


def _type_winners(cases: Sequence[DiskCase], names: Sequence[str]) -> list[str]:
    """Which contestant has the smallest marginal on how many scalar types."""
    if len(names) < 2:
        return []
    wins: dict[str, int] = {}
    groups = list(dict.fromkeys(c.group for c in cases if c.scalar))
    for g in groups:
        mine = [(c.figure, c.contestant) for c in cases if c.scalar and c.group == g and c.figure is not None]
        if mine:
            best = min(mine)[1]
            wins[best] = wins.get(best, 0) + 1
    if not wins:
        return []
    text = ", ".join(f"{n} on {k} of {len(groups)}" for n, k in sorted(wins.items(), key=lambda kv: (-kv[1], kv[0])))
    return [f"Smallest marginal per scalar type: {text}."]


def _spectrum_words(cases: Sequence[DiskCase], names: Sequence[str]) -> list[str]:
    found = sorted(((c.figure, n) for n in names
                    if (c := find(cases, n, "devdouble", "spectrum", SUMMARY_SPECTRUM)) and c.figure is not None))
    if not found:
        return []
    low, high = found[0], found[-1]
    text = (f"A {SUMMARY_SPECTRUM:,}-element devdouble spectrum costs {fmt(low[0], 'B/event')} on {low[1]} "
            f"({fmt(low[0] / SUMMARY_SPECTRUM)} B per element)")
    if len(found) > 1:
        text += f" up to {fmt(high[0], 'B/event')} on {high[1]} ({high[0] / low[0]:.2f}×)"
    return [text + "."]


def _fixed_words(cases: Sequence[DiskCase], names: Sequence[str]) -> list[str]:
    """Where the average at the largest size still sits well above the marginal: fixed costs and slack."""
    found = []
    for n in names:
        c = find(cases, n, "devdouble")
        if c is not None and c.figure and c.average and c.average >= AVERAGE_SHOWS_FIXED * c.figure:
            found.append(f"{n} {fmt(c.average)} against {fmt(c.figure)} ({c.average / c.figure:.1f}×; "
                         f"{human_bytes(c.fixed_bytes)} fixed, {human_bytes(c.slack_bytes)} allocated ahead)")
    if not found:
        return []
    return ["At the largest measured size the scalar devdouble average still sits above the marginal (B/event): "
            + "; ".join(found) + ". Fixed bytes and space allocated ahead weigh on a small table; a growing archive "
            "pays the marginal."]


def reference_words(references: Sequence[ReferenceComparison]) -> list[str]:
    """Ours beside the published figures of the same table and index choice: one sentence per ours,
    its ratio to each load order, and what differs when more than DIFFERS apart."""
    by_ours: dict[str, list[ReferenceComparison]] = {}
    for r in references:
        if num(r.ratio) is not None and num(r.ours_bytes_per_event) is not None:
            by_ours.setdefault(f"{r.backend} {r.variant}", []).append(r)
    out = []
    for ours, refs in by_ours.items():
        theirs = " / ".join(f"{fmt(num(r.published_bytes_per_row))} ({r.order} order)" for r in refs)
        ratios = " / ".join(f"{r.ratio:.2f}×" for r in refs)
        far = [r for r in refs if r.differs]
        text = (f"{ours}: {fmt(num(refs[0].ours_bytes_per_event), 'B/event')} against {theirs} B/row for "
                f"{refs[0].published}, {ratios}")
        if far:
            apart = ", ".join(f"{abs(r.ratio - 1):.0%} {'above' if r.ratio > 1 else 'below'} "
                              f"the {r.order}-order figure" for r in far)
            why = far[0].why or "the study does not say enough to tell"
            out.append(f"{text}: more than {DIFFERS:.0%} apart ({apart}). What differs: {why}.")
        else:
            out.append(f"{text}: within {DIFFERS:.0%}.")
    return out


def reference_summary(references: Sequence[ReferenceComparison]) -> list[str]:
    """The finding's sentence on the published reference: how many agree, and which do not and why."""
    usable = [r for r in references if num(r.ratio) is not None]
    if not usable:
        return []
    far = [r for r in usable if r.differs]
    text = (f"Beside Elettra's facility-scale figures (same table and index choice), ours are within {DIFFERS:.0%} "
            f"in {len(usable) - len(far)} of {len(usable)} comparisons")
    if not far:
        return [text + "."]
    named = "; ".join(f"{r.backend} {r.variant} vs {r.published} ({r.order} order) {r.ratio:.2f}×" for r in far)
    return [f"{text}; more than {DIFFERS:.0%} apart: {named}. Why: "
            + " ".join(dict.fromkeys(f"{r.backend}: {r.why}." for r in far if r.why))]


def unavailable_warnings(results: DiskResults) -> list[str]:
    return [f"{v.backend} {v.variant} was not measured: {v.unavailable}" for v in results.variants if v.unavailable]

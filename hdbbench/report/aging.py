# SPDX-License-Identifier: Apache-2.0
"""The report's section "As the archive ages": growth trials, the load-order table, histories and budgets.

Built only from a run's `InsertionResults.aging` records (hdbbench.results.aging) and, for the bytes
per event and the attribute count of a growth trial, its trial record; the section is absent from a
run without them. Plots first: the growth curve per backend (stored rate and event age p99 against the
database's size, the offered rate, the memory limit and the knee marked); then the load-order table
beside Elettra's figures (hdbbench.parts.disk.reference), then the growth, history and confinement tables
folded away; then the planning words. Every sentence comes from a record; a figure without its
record says "not measured".

Planning figures, stated once:

* bytes per event: the growth trial's database growth over the events it stored;
* bytes per day of the mix: bytes per event × the offered rate × 86,400;
* months the backend keeps up: the knee's size over the bytes per day (30.44 days a month), or, with
  no knee, at least the final size over it;
* GB per year per 1,000 attributes: bytes per day × 365.25 / 10⁹ × 1,000 / the trial's attributes.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from matplotlib.figure import Figure

from hdbbench.model.units import human_bytes
from hdbbench.parts.disk.reference import LOAD_ORDER_SOURCE, load_order_reference
from hdbbench.report import plots
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding, fmt
from hdbbench.results.aging import AgingResults, GrowthRecord, LoadOrderRecord
from hdbbench.results.trials import InsertionResults, TrialSummary

DAYS_PER_MONTH = 30.44
NOT_MEASURED = "not measured"
GIB = 2 ** 30


def aging_section(insertion: InsertionResults | None, colours: plots.Colours,
                  load_rate: float | None = None) -> Section | None:
    """The section, or None when the run has no aging records (the section then does not appear).
    `load_rate`: the scenario's `[load] rate`, at which the planning words fill the archive."""
    aging = insertion.aging if insertion is not None else None
    if aging is None:
        return None
    section = Section("aging", "As the archive ages")
    trials = list(insertion.trials) if insertion is not None else []
    growth = aging.growth
    for name in dict.fromkeys(g.backend for g in growth):
        colours[name]
    if growth:
        section.figures.append(("Stored rate per interval against the database's size (dashed: offered rate; "
                                "dotted: memory limit; ×: knee)", growth_curve(growth, colours, "rate")))
        section.figures.append(("Event age at commit p99 per interval against the database's size (dotted: memory "
                                "limit; ×: knee)", growth_curve(growth, colours, "age")))
    if aging.load_order:
        section.tables.append(_open(load_order_table(aging.load_order), "Load order, beside Elettra's figures"))
    if growth:
        section.tables.append(growth_table(growth, trials))
    section.tables += [t for t in (history_table(aging), confinement_table(aging)) if t]
    notes = (["Knee: the first interval from which the stored rate, as a rolling median of 3 intervals, stays "
              "more than 5 % below the offered rate until the end, for at least 3 intervals."] if growth else [])
    notes += [f"Elettra's figures: {LOAD_ORDER_SOURCE}."] if aging.load_order else []
    section.note = " ".join(notes)
    section.finding = planning(aging, trials, load_rate)
    return section


def _open(table: str, summary: str) -> str:
    """A table shown at once (the section folds its other tables away)."""
    return f"<details open><summary>{html.escape(summary)}</summary>{table}</details>"


# --- the growth curve ------------------------------------------------------------------------------
def growth_curve(records: Sequence[GrowthRecord], colours: plots.Colours, what: str) -> str:
    """`what` = "rate" (stored rate) or "age" (event age p99) against the database size in GiB."""
    fig = Figure(figsize=(5.6, 3.2), layout="constrained")
    ax = fig.add_subplot()
    for record in records:
        colour = colours[record.backend]
        points = [(i.database_bytes / GIB, i.stored_rate if what == "rate" else i.event_age_p99_s)
                  for i in record.intervals if i.database_bytes is not None]
        points = [(x, y) for x, y in points if y is not None]
        label = f"{record.backend} ({record.storage_class})"
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", color=colour, label=label)
        if what == "rate":
            ax.axhline(record.offered_rate, color=colour, linestyle="--", linewidth=1)
        if record.memory_limit_bytes:
            ax.axvline(record.memory_limit_bytes / GIB, color=colour, linestyle=":", linewidth=1)
        if record.knee_bytes is not None:
            at_knee = [p for p in points if abs(p[0] - record.knee_bytes / GIB) < 1e-12]
            y = at_knee[0][1] if at_knee else (points[-1][1] if points else 0.0)
            ax.plot([record.knee_bytes / GIB], [y], marker="x", markersize=11, markeredgewidth=2, color=colour)
    ax.set_xlabel("database size (GiB)")
    ax.set_ylabel("stored events/s" if what == "rate" else "event age p99 (s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize=8)
    return plots.to_svg(fig)


# --- tables ------------------------------------------------------------------------------------------
def load_order_table(records: Sequence[LoadOrderRecord]) -> str:
    """One row per load, eleven columns (figures of one kind merged so that the table fits a page)."""
    rows = []
    for r in records:
        pk = _seconds(records, r, "pk")
        ref = load_order_reference(r.backend, r.order, r.rows)
        cold_pk = _seconds(records, r, "pk", "query_cold_s")
        read = (f"{fmt(r.query_cold_s)} / {fmt(r.query_warm_s)} ({r.query_rows:,} rows)"
                if r.query_rows is not None else "–")
        rows.append([f"{r.backend} {r.variant}", f"{r.rows:,} of {r.attributes:,} attributes", r.order,
                     f"{fmt(r.seconds)} ({fmt(r.rows_per_s)} rows/s)", fmt(r.seconds / pk) if pk else "–",
                     fmt(r.cluster_seconds), read,
                     fmt(r.query_cold_s / cold_pk) if r.query_cold_s and cold_pk else "–",
                     human_bytes(r.history_bytes), f"{human_bytes(r.memory_limit_bytes)}, {r.storage_class}",
                     f"{fmt(ref.warm_s)}–{fmt(ref.cold_s)} ({ref.rows / 1e6:g} M)" if ref else "–"])
    return html_table(["backend, variant", "rows loaded", "order", "load (s)", "load × pk", "CLUSTER (s)",
                       "read-back cold / warm (s)", "cold × pk", "history", "memory, storage",
                       "Elettra read (s), warm–cold"], rows,
                      "ours: the load's seconds into a table holding the history, then one attribute's loaded "
                      "rows read back cold (page cache dropped; – where it cannot be) and warm; Elettra's: a "
                      "query of one attribute's rows from a table loaded in that order (see the note)")


def _seconds(records: Sequence[LoadOrderRecord], like: LoadOrderRecord, order: str,
             figure: str = "seconds") -> float | None:
    """The mean `figure` (the load's seconds, or a read-back time) of the loads like `like` (backend,
    variant, rows) in `order`; None when none has it."""
    found = [getattr(r, figure) for r in records if (r.backend, r.variant, r.rows, r.order) ==
             (like.backend, like.variant, like.rows, order) and getattr(r, figure) is not None]
    return sum(found) / len(found) if found else None


def growth_table(records: Sequence[GrowthRecord], trials: Sequence[TrialSummary]) -> str:
    rows = []
    for g in records:
        reads = [i.read_bytes for i in g.intervals if i.read_bytes is not None]
        bpe = bytes_per_event(g, _trial_of(g, trials))
        rows.append([g.backend, g.variant, g.storage_class, human_bytes(g.memory_limit_bytes), fmt(g.offered_rate),
                     str(len(g.intervals)), human_bytes(g.final_bytes), human_bytes(g.knee_bytes),
                     fmt(g.knee_memory_ratio), fmt(bpe), human_bytes(sum(reads)) if reads else "–", f"{g.lost:,}"])
    return html_table(["backend", "variant", "storage", "memory", "offered/s", "intervals", "final size", "knee",
                       "knee × memory", "bytes/event", "server reads", "lost"], rows, "growth trials")


def history_table(aging: AgingResults) -> str:
    if not aging.history:
        return ""
    rows = [[h.backend, h.variant, f"{h.attributes:,}", fmt(h.days), f"{h.rows:,}", human_bytes(h.bytes),
             "reused" if h.reused else fmt(h.seconds), "yes" if h.clustered else "no",
             human_bytes(h.memory_limit_bytes), h.storage_class, fmt(h.measured_read_iops)] for h in aging.history]
    return html_table(["backend", "variant", "attributes", "days", "rows", "size", "built in (s)", "clustered",
                       "memory", "storage", "measured IOPS"], rows, "aged histories the trials started from")


def confinement_table(aging: AgingResults) -> str:
    if not aging.confinement:
        return ""
    rows = [[c.server, human_bytes(c.memory_budget_bytes), human_bytes(c.memory_limit_bytes),
             ", ".join(f"{k}={v}" for k, v in c.buffers.items()) or "–", c.storage_class,
             fmt(c.read_iops_limit), fmt(c.write_iops_limit), fmt(c.probe.read_iops) if c.probe else "–"]
            for c in aging.confinement]
    return html_table(["server", "budget", "limit (kernel)", "buffers", "storage", "read IOPS limit",
                       "write IOPS limit", "probed read IOPS"], rows, "memory and storage of the servers, read back")


# --- planning words ------------------------------------------------------------------------------------
def _trial_of(record: GrowthRecord, trials: Sequence[TrialSummary]) -> TrialSummary | None:
    return next((t for t in trials if t.kind == "growth" and t.backend == record.backend
                 and t.offered_rate == record.offered_rate), None)


def bytes_per_event(record: GrowthRecord, trial: TrialSummary | None) -> float | None:
    """The database's growth over the events stored: the trial's accounting, else its intervals."""
    if trial is not None and trial.accounting.stored > 0 and trial.database_bytes.growth > 0:
        return trial.database_bytes.growth / trial.accounting.stored
    known = [i for i in record.intervals if i.database_bytes is not None and i.stored_rate is not None]
    events = sum(b.stored_rate * (b.t_s - a.t_s) for a, b in zip(known, known[1:]) if b.stored_rate)
    grown = known[-1].database_bytes - known[0].database_bytes if len(known) > 1 else 0
    return grown / events if events > 0 and grown > 0 else None


def planning(aging: AgingResults, trials: Sequence[TrialSummary], load_rate: float | None = None) -> Finding:
    """The planning words: per backend its growth trial and load order, "not measured" where missing.
    `load_rate`: the scenario's `[load] rate`, the rate at which the archive fills (default: each growth
    trial's offered rate)."""
    finding = Finding()
    backends = list(dict.fromkeys([*(g.backend for g in aging.growth), *(r.backend for r in aging.load_order),
                                   *(h.backend for h in aging.history)]))
    spans: dict[str, tuple[float, bool]] = {}   # backend -> (months, fell behind)
    for backend in backends:
        record = next((g for g in aging.growth if g.backend == backend), None)
        if record is None:
            finding.sentences.append(f"{backend}: growth at a fixed offered rate {NOT_MEASURED}.")
            continue
        sentence, months = _growth_words(record, _trial_of(record, trials), load_rate or record.offered_rate)
        finding.sentences.append(sentence)
        if months is not None:
            spans[backend] = (months, record.knee_bytes is not None)
    finding.sentences += load_order_words(aging.load_order, backends)
    finding.recommendation = _recommendation(spans, aging.growth)
    return finding


def _recommendation(spans: dict[str, tuple[float, bool]], records: Sequence[GrowthRecord]) -> str:
    if not spans:
        return ""
    if not any(behind for _, behind in spans.values()):
        largest = max(records, key=lambda g: g.final_bytes)
        return (f"No backend fell below its offered rate up to {human_bytes(largest.final_bytes)}: the knee lies "
                "beyond this trial; run it longer, or with a smaller memory budget, to find it.")
    # A backend that never fell behind keeps up longest; two or more that never did were all stopped
    # by the trial's end, so which of them lasts longer was not measured.
    to_the_end = [b for b, (_, behind) in spans.items() if not behind]
    if len(to_the_end) > 1:
        spans_words = ", ".join(f"{b} at least {_span(spans[b][0])}" for b in to_the_end)
        return (f"For this mix, memory and storage, {_names(to_the_end)} kept up to the trial's end ({spans_words} "
                "of archive): which keeps up longer lies beyond this trial; size memory from the knee, not from a "
                "fresh database's rate.")
    best = max(spans, key=lambda b: (not spans[b][1], spans[b][0]))
    months, behind = spans[best]
    which = f"{best} keeps up longest" if len(spans) > 1 else f"{best} keeps up"
    return (f"For this mix, memory and storage, {which} ({'' if behind else 'at least '}"
            f"{_span(months)} of archive); size memory from the knee, not from a fresh database's rate.")


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _growth_words(g: GrowthRecord, trial: TrialSummary | None, load_rate: float) -> tuple[str, float | None]:
    """One sentence on a growth trial and the months of archive, filled at `load_rate`, its backend keeps
    up with the trial's offered rate (None: not measured)."""
    where = f"{human_bytes(g.memory_limit_bytes)} of memory" if g.memory_limit_bytes else "no memory budget"
    head = f"{g.backend} at {fmt(g.offered_rate)} events/s ({where}, {g.storage_class} storage): "
    if g.knee_bytes is not None:
        ratio = f", {fmt(g.knee_memory_ratio)}× memory" if g.knee_memory_ratio is not None else ""
        head += f"below the offered rate from {human_bytes(g.knee_bytes)}{ratio} on."
    else:
        head += f"kept up to the end, {human_bytes(g.final_bytes)}."
    if g.lost:
        head += f" {g.lost:,} events were lost."
    bpe = bytes_per_event(g, trial)
    if bpe is None:
        return head + f" Bytes per event {NOT_MEASURED}, so months of archive {NOT_MEASURED}.", None
    per_day = bpe * load_rate * 86_400
    months = (g.knee_bytes if g.knee_bytes is not None else g.final_bytes) / per_day / DAYS_PER_MONTH
    span = _span(months) if g.knee_bytes is not None else f"at least {_span(months)}"
    head += (f" At {fmt(bpe)} bytes per event, archiving this mix at {fmt(load_rate)} events/s adds "
             f"{human_bytes(per_day)} a day: it keeps up with {fmt(g.offered_rate)} events/s for {span} of archive.")
    attributes = len(trial.accounting.per_attribute) if trial is not None else 0
    if attributes:
        head += (f" {fmt(per_day * 365.25 / 1e9 * 1000 / attributes)} GB per year per 1,000 attributes "
                 f"({attributes:,} attributes at {fmt(load_rate / attributes)} events/s each).")
    else:
        head += f" GB per year per 1,000 attributes {NOT_MEASURED}."
    return head, months


def _span(months: float) -> str:
    """A span of archive in the unit people plan in: months, else days, hours or minutes."""
    days = months * DAYS_PER_MONTH
    if months >= 2:
        return f"{fmt(months)} months"
    if days >= 1:
        return f"{fmt(days)} days"
    return f"{fmt(days * 24)} hours" if days * 24 >= 1 else f"{fmt(days * 1440)} minutes"


def load_order_words(records: Sequence[LoadOrderRecord], backends: Sequence[str]) -> list[str]:
    """Time-ordered against primary-key-ordered loads per backend and variant; "not measured" where a
    backend has none or one order is missing."""
    if not records:
        return [f"Load order: {NOT_MEASURED} in this run."]
    out = []
    for backend in backends:
        mine = [r for r in records if r.backend == backend]
        if not mine:
            out.append(f"{backend}: load order {NOT_MEASURED}.")
            continue
        for variant, rows in dict.fromkeys((r.variant, r.rows) for r in mine):
            like = next(r for r in mine if (r.variant, r.rows) == (variant, rows))
            pk, time_s = _seconds(mine, like, "pk"), _seconds(mine, like, "time")
            if pk is None or time_s is None:
                out.append(f"{backend} {variant}, {rows:,} rows: the {'time' if time_s is None else 'primary-key'}"
                           f"-ordered load {NOT_MEASURED}.")
                continue
            out.append(f"{backend} {variant}: {rows:,} rows of {like.attributes:,} attributes into a "
                       f"{human_bytes(like.history_bytes)} history took {fmt(time_s)} s in time order against "
                       f"{fmt(pk)} s in primary-key order ({fmt(time_s / pk)}×), with "
                       f"{human_bytes(like.memory_limit_bytes) if like.memory_limit_bytes else 'no memory budget'} "
                       f"on {like.storage_class} storage.")
            out.append(_read_back_words(mine, like))
    return out


def _read_back_words(mine: Sequence[LoadOrderRecord], like: LoadOrderRecord) -> str:
    """Elettra's own comparison: one attribute's rows read back from the table loaded in each order."""
    pk, time_s = _seconds(mine, like, "pk", "query_cold_s"), _seconds(mine, like, "time", "query_cold_s")
    if pk is None or time_s is None:
        return (f"{like.backend} {like.variant}: reading one attribute's loaded rows back cold "
                f"{NOT_MEASURED} (the server's page cache can only be dropped under a memory budget).")
    return (f"{like.backend} {like.variant}: one attribute's {like.query_rows or 0:,} loaded rows read back cold in "
            f"{fmt(time_s)} s after the time-ordered load against {fmt(pk)} s after the primary-key-ordered one "
            f"({fmt(time_s / pk)}×), Elettra's comparison at a smaller scale.")


# SPDX-License-Identifier: Apache-2.0
"""The report's sizing section: a facility inventory's disk per backend/variant (``size plan``, or a
run's disk part with an inventory), from the measured marginal bytes per event.

sizing.json ``results.projections[]`` holds one `Projection` per backend/variant: per inventory group
its bytes at retention and its chunks/partitions at retention, the logs (WAL / binary log) kept for a
stated number of days, and the replicas factor. The section plots each contestant's disk at retention
stacked by group, plus the logs kept and the other copies; its table gives growth, logs kept,
chunk/partition counts and the total × replicas; its words say which backend is smaller and by how much.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hdbbench.model.units import human_bytes
from hdbbench.report import data, diskplots
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding, fmt
from hdbbench.results.sizing import PlanResults, ProjectedGroup, Projection


def total(p: Projection) -> float:
    """(at retention + logs kept) × replicas: the figure to buy disks for."""
    return p.total


def comparable(p: Projection) -> bool:
    """Complete, and its logs counted when logs are kept: a total that can stand beside the others."""
    return p.complete and (p.log_days <= 0 or bool(p.log_bytes_per_day))


def name(p: Projection) -> str:
    return f"{p.backend} {p.variant}"


def size(value: float | None) -> str:
    """Binary units kept on one line in a table cell."""
    return human_bytes(value).replace(" ", "\u00a0")


def logs_text(p: Projection) -> str:
    if not p.log_bytes_per_day:
        return "not measured"
    return f"{size(p.logs_kept)} ({p.log_days:g}\u00a0d)"


def parts_text(p: Projection) -> str:
    """Chunks/partitions per table at retention, over the inventory's groups: one count or a range."""
    counts = sorted({g.parts_at_retention for g in p.groups if isinstance(g.parts_at_retention, int)})
    if not counts:
        return "not partitioned"
    return f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}–{counts[-1]:,}"


def sizing_section(run_dir: Path) -> Section:
    section = Section("sizing", "Sizing projection")
    loaded = data.load_file(run_dir, data.FILES["sizing"])
    results = loaded.results(PlanResults)
    if loaded.document is None or results is None:
        section.missing = f"No sizing projection: {loaded.problem}. `hdbbench size plan` writes it."
        return section
    projections = results.projections
    if not projections:
        section.missing = "sizing.json holds no projection (its results.projections is empty)."
        return section
    inventory = data.run_facts(loaded.document.scenario, {}).inventory or "the inventory"
    section.figures.append((f"Projected disk for {inventory} per backend/variant: its groups at retention, the logs "
                            "kept, and the replica copies (hatched); the total is written at the end",
                            plan_plot(projections)))
    section.tables.append(plan_table(projections))
    section.tables.append(groups_table(projections))
    section.finding = plan_finding(projections, inventory)
    section.finding.warnings += loaded.warnings
    return section


def plan_plot(projections: Sequence[Projection]) -> str:
    """Groups (not backends) carry the colours here."""
    names = [name(p) for p in projections]
    groups = list(dict.fromkeys(g.label for p in projections for g in p.groups))
    at_retention = {name(p): [sum(g.bytes_at_retention or 0.0 for g in p.groups if g.label == label)
                              for label in groups] for p in projections}
    logs = {name(p): p.logs_kept for p in projections}
    copies = {name(p): (p.bytes_at_retention + p.logs_kept) * (p.copies - 1) for p in projections}
    labels = {name(p): f"{human_bytes(total(p))}" + (f" (×{p.copies:g})" if p.copies != 1 else "")
              for p in projections}
    days = {p.log_days for p in projections}
    log_label = "logs kept" + (f" ({days.pop():g} days)" if len(days) == 1 else "")
    return diskplots.plan_stack(names, groups, at_retention, logs, copies, labels, log_label)


def plan_table(projections: Sequence[Projection]) -> str:
    rows = [[name(p), size(p.bytes_per_day), size(p.bytes_per_month), size(p.bytes_per_year),
             size(p.bytes_at_retention), parts_text(p), logs_text(p), f"×{p.copies:g}", size(total(p)),
             "yes" if p.complete else "NO: unmeasured groups left out"] for p in projections]
    return html_table(["backend / variant", "per day", "per month", "per year", "at retention",
                       "chunks / partitions per table", "logs kept", "replicas", "total × replicas",
                       "complete"], rows,
                      "binary units; chunks / partitions: per table at retention, over the inventory's tables; total = (at retention + WAL / binary log kept) × copies (primary + replicas)")


def groups_table(projections: Sequence[Projection]) -> str:
    rows = [[name(p), g.label, fmt(g.bytes_per_event), g.source, size(g.bytes_per_day), size(g.bytes_at_retention),
             f"{g.share_at_retention:.1%}" if isinstance(g.share_at_retention, float) else "–",
             f"{g.parts_at_retention:,}" if isinstance(g.parts_at_retention, int) else "–"]
            for p in projections for g in p.groups]
    table = html_table(["backend / variant", "group", "bytes/event", "from", "per day", "at retention", "share",
                        "chunks/partitions"], rows, "per inventory group; chunks/partitions of the group's table")
    return f"<details><summary>Per inventory group ({len(rows)} rows)</summary>{table}</details>"


def plan_finding(projections: Sequence[Projection], inventory: str) -> Finding:
    finding = Finding()
    usable = [p for p in projections if comparable(p)]
    if not usable:  # none complete: compare them as they are, said so, rather than say nothing
        usable = [p for p in projections if p.log_days <= 0 or p.log_bytes_per_day]
        if usable:
            finding.sentences.append("No projection is complete (see the warnings): the comparisons below leave "
                                     "the same unmeasured groups out of every total.")
    ordered = sorted(usable, key=lambda p: (total(p), name(p)))
    if ordered:
        low = ordered[0]
        finding.sentences.append(
            f"For {inventory}, the smallest projection is {name(low)}: {human_bytes(total(low))} in total "
            f"({human_bytes(low.bytes_at_retention)} at retention + {human_bytes(low.logs_kept)} of logs "
            f"kept, × {low.copies:g} {'copy' if low.copies == 1 else 'copies'}), growing {human_bytes(low.bytes_per_year)} a year.")
    finding.sentences += (backend_words(ordered) + scalar_array_words(ordered) + same_variant_words(ordered)
                          + log_words(ordered))
    if not ordered:
        finding.sentences.append("No projection can be compared: each leaves an unmeasured group or its logs out.")
    finding.warnings += incomplete_warnings(projections)
    finding.warnings += [f"{name(p)}: no write-ahead / binary log was measured for it (a variant measured after "
                         "CLUSTER carries none): its total leaves the logs out, and the comparisons above leave it out."
                         for p in projections if p.log_days > 0 and not p.log_bytes_per_day]
    finding.warnings.append("A projection multiplies measured marginal bytes/event by the inventory: check it against "
                            "a measured run (size plan --check, size validate) before buying disks.")
    finding.recommendation = (f"Provision for {human_bytes(total(ordered[0]))} or more on {name(ordered[0])} "
                              "(logs and copies included), plus headroom." if ordered else "")
    return finding


def incomplete_warnings(projections: Sequence[Projection]) -> list[str]:
    """One warning per set of unmeasured groups, naming the projections that lack them."""
    by_missing: dict[str, list[str]] = {}
    for p in projections:
        if not p.complete:
            missing = ", ".join(g.label for g in p.groups if g.bytes_per_event is None)
            by_missing.setdefault(missing, []).append(name(p))
    return [f"Incomplete: {missing} not measured for {', '.join(names)}; those totals are too small."
            for missing, names in by_missing.items()]


def best_per_backend(ordered: Sequence[Projection]) -> list[Projection]:
    """Each backend at its smallest variant, smallest first."""
    seen: dict[str, Projection] = {}
    for p in ordered:
        seen.setdefault(p.backend, p)
    return list(seen.values())


def _smaller(a: Projection, b: Projection) -> str:
    """'a is smaller than b by X (p %)', a being the smaller."""
    gap = total(b) - total(a)
    share = gap / total(b) if total(b) else 0.0
    return (f"{name(a)} is smaller than {name(b)} by {human_bytes(gap)} ({share:.0%}; {name(b)} needs "
            f"{total(b) / total(a):.2f}× it)" if total(a) else f"{name(a)} needs nothing")


def backend_words(ordered: Sequence[Projection]) -> list[str]:
    best = best_per_backend(ordered)
    if len(best) < 2:
        return []
    listing = ", ".join(f"{name(p)} {human_bytes(total(p))}" for p in best)
    return [f"Each backend at its smallest variant: {listing}. {best[0].backend} is the smallest: "
            f"{_smaller(best[0], best[1])}."]


def _is_array(group: ProjectedGroup) -> bool:
    """An array group's bytes per event come from the fit over element counts (hdbbench.parts.disk.sizing)."""
    return "elements" in group.source


def _split(p: Projection) -> tuple[float, float]:
    """(scalar, array) bytes at retention of a projection."""
    arrays = sum(g.bytes_at_retention or 0.0 for g in p.groups if _is_array(g))
    return p.bytes_at_retention - arrays, arrays


def scalar_array_words(ordered: Sequence[Projection]) -> list[str]:
    """The backends ranked on the scalar groups alone (what `size validate` checks at scale) and what
    the arrays add, when the two rankings differ: the reason a total can rank otherwise."""
    best = best_per_backend(ordered)
    if len(best) < 2 or not any(_split(p)[1] for p in best):
        return []
    scalar = sorted(best, key=lambda p: (_split(p)[0], name(p)))
    listing = ", ".join(f"{name(p)} {human_bytes(_split(p)[0])}" for p in scalar)
    words = f"The scalar groups alone: {listing} ({scalar[0].backend} smallest)."
    if scalar[0].backend != best[0].backend:
        arrays = ", ".join(f"{name(p)} {human_bytes(_split(p)[1])}" for p in best)
        words += (f" The arrays decide the total ({arrays}): a backend that stores one row per array element "
                  "pays for it there.")
    return [words]


def same_variant_words(ordered: Sequence[Projection]) -> list[str]:
    """Like for like: backends compared on the same index set (variant name)."""
    by_variant: dict[str, list[Projection]] = {}
    for p in ordered:
        by_variant.setdefault(p.variant, []).append(p)
    return [f"With the same variant {variant}: {_smaller(found[0], found[-1])}."
            for variant, found in by_variant.items() if len({p.backend for p in found}) > 1]


def log_words(ordered: Sequence[Projection]) -> list[str]:
    kept = [p for p in ordered if p.logs_kept > 0]
    if not kept:
        return ["No write-ahead / binary log retention is counted (size plan --log-retention-days adds it)."] \
            if ordered else []
    share = {name(p): p.logs_kept / (p.bytes_at_retention + p.logs_kept) for p in kept}
    most = max(share, key=lambda n: (share[n], n))
    days = max(p.log_days for p in kept)
    return [f"Logs kept for up to {days:g} days add from {min(share.values()):.1%} to {share[most]:.1%} ({most}) "
            "to the disk at retention."]


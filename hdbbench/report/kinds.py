# SPDX-License-Identifier: Apache-2.0
"""The subscriber kinds of a run side by side (report section and `hdbbench compare` rows).

A run with ``[[subscribers.kinds]]`` measured each kind on every backend with the same events. The
figures compared are those read from outside the subscriber (hdbbench.trials.outside): the stored rate from
the database's own counter, the visibility lag, the loss from the devices' counters against rows, the
CPU per event and the last sustainable rate; each later kind is shown with its ratio to the first.
Figures our subscriber publishes about itself are listed apart, marked "ours".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hdbbench.report import criteria, data, plots
from hdbbench.report.data import Insertion, num
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding, fmt
from hdbbench.results.trials import Accounting

# (key, label, unit, higher is better, how to read it from a kind's view on one backend)
_OUTSIDE_FIGURES: tuple[tuple[str, str, str, bool], ...] = (
    ("db_stored_median", "stored rate, database counter (median)", "events/s", True),
    ("rows_inserted", "rows inserted, database counter (throughput trial)", "rows", True),
    ("visibility_p50", "visibility lag p50", "s", False),
    ("visibility_p99", "visibility lag p99", "s", False),
    ("visibility_max", "visibility lag max", "s", False),
    ("lost", "events lost (devices' counters against rows, all trials)", "events", False),
    ("lost_event_delivery", "lost: in Tango's event delivery", "events", False),
    ("lost_in_subscriber", "lost: in the subscriber (its own count)", "events", False),
    ("lost_left_in_subscriber_queue", "lost: left in the subscriber's queue (not drained)", "events", False),
    ("lost_unattributed", "lost: unattributed (the kind does not say)", "events", False),
    ("error_events", "error events stored (all trials)", "events", False),
    ("saturation_rate", "last sustainable rate", "events/s", True),
    ("cpu_us_per_event", "archiving CPU per event", "µs", False),
)
_OURS_FIGURES: tuple[tuple[str, str, str], ...] = (
    ("ours_stored_median", "stored rate, RowsStoredNumber (median)", "events/s"),
    ("ours_rows_stored", "rows stored, RowsStoredNumber (throughput trial)", "rows"),
    ("ours_event_age_p99", "event age at commit p99", "s"),
)


def kind_figures(view: Insertion, backend: str) -> dict[str, float | None]:
    """The figures of one kind (its view) on one backend."""
    main = view.one(backend, "throughput")
    sat = view.one(backend, "saturation")
    outside = main.outside if main else None
    reported = main.subscriber_reported if main else None
    mine = [t for t in view.trials if t.backend == backend]

    def total(count: Callable[[Accounting], int | None]) -> float | None:
        """Summed over the trials of this backend (a trial that did not record the figure counts none)."""
        values = [v for t in mine if (v := count(t.accounting)) is not None]
        return float(sum(values)) if values else (0.0 if mine else None)

    return {
        "db_stored_median": num(outside.stored_rate.median) if outside else None,
        "rows_inserted": num(outside.rows_inserted) if outside else None,
        "visibility_p50": num(outside.visibility_lag_s.p50) if outside else None,
        "visibility_p99": num(outside.visibility_lag_s.p99) if outside else None,
        "visibility_max": num(outside.visibility_lag_s.max) if outside else None,
        "lost": float(sum(t.accounting.lost for t in mine)) if mine else None,
        "lost_event_delivery": total(lambda a: a.lost_by_reason.event_delivery),
        "lost_in_subscriber": total(lambda a: a.lost_by_reason.in_subscriber),
        "lost_left_in_subscriber_queue": total(lambda a: a.lost_by_reason.left_in_subscriber_queue),
        "lost_unattributed": total(lambda a: a.lost_by_reason.unattributed),
        "error_events": total(lambda a: a.error_events),
        "saturation_rate": num(sat.saturation.last_sustainable_rate) if sat and sat.saturation else None,
        "cpu_us_per_event": data.archiving_cpu_us(main, backend) if main else None,
        "ours_stored_median": num(reported.stored_rate.median) if reported and reported.stored_rate else None,
        "ours_rows_stored": num(reported.rows_stored) if reported else None,
        "ours_event_age_p99": num(main.event_age_at_commit_s.p99) if main else None,
    }


def kinds_table(run_dir: Path, loaded: data.Loaded) -> tuple[list[str], dict[str, dict[str, dict[str, float | None]]]]:
    """(kinds in run order, backend → kind → figures)."""
    kinds = data.subscriber_kinds(loaded)
    table: dict[str, dict[str, dict[str, float | None]]] = {}
    for kind in kinds:
        view = data.insertion_view(run_dir, loaded, kind)
        for backend in view.backends:
            table.setdefault(backend, {})[kind] = kind_figures(view, backend)
    return kinds, table


def ratio(base: float | None, value: float | None) -> float | None:
    if base is None or value is None or not math.isfinite(base) or not math.isfinite(value) or base <= 0:
        return None
    return value / base


def _cell(base: float | None, value: float | None, first: bool) -> str:
    if first or value is None:
        return fmt(value)
    r = ratio(base, value)
    return f"{fmt(value)} ({r:.2f}×)" if r is not None else fmt(value)


def kinds_sections(run_dir: Path, loaded: data.Loaded) -> list[Section]:
    """The kinds section when the run measured several subscriber kinds; none otherwise."""
    kinds, table = kinds_table(run_dir, loaded)
    if len(kinds) < 2:
        return []
    curves: dict[str, dict[str, list[tuple[float, float, bool]]]] = {}
    for kind in kinds:
        view = data.insertion_view(run_dir, loaded, kind)
        for backend in view.backends:
            if (sat := view.one(backend, "saturation")) is not None:
                curves.setdefault(backend, {})[kind] = data.step_points(sat)
    return [kinds_section(kinds, table, curves)]


def kinds_section(kinds: Sequence[str], table: Mapping[str, Mapping[str, Mapping[str, float | None]]],
                  curves_by_backend: Mapping[str, Mapping[str, list[tuple[float, float, bool]]]] | None = None) -> Section:
    section = Section("kinds", "Subscriber kinds side by side")
    head = ["backend", "figure"] + [kinds[0]] + [f"{k} (ratio to {kinds[0]})" for k in kinds[1:]]
    rows = [[backend, f"{label} ({unit})"] + [_cell(figs[kinds[0]].get(key), figs.get(k, {}).get(key), k == kinds[0])
                                             for k in kinds]
            for backend, figs in table.items() for key, label, unit, _ in _OUTSIDE_FIGURES]
    section.tables.append(html_table(head, rows, "read from outside the subscriber, the same for every kind"))
    ours = [[backend, f"{label} ({unit})"] + [fmt(figs.get(k, {}).get(key)) for k in kinds]
            for backend, figs in table.items() for key, label, unit in _OURS_FIGURES]
    section.tables.append(html_table(["backend", "figure (ours)"] + kinds, ours,
                                     "ours: hdbbench-es's own statistics, extra detail ('–' for a kind that does "
                                     "not publish them)"))
    values = {k: [table[b].get(k, {}).get("db_stored_median") for b in table] for k in kinds}
    section.figures.append(("Stored rate per backend and subscriber kind, from the database's own counter",
                            plots.bars(list(table), values, plots.Colours(kinds), "events/s")))
    for backend, curves in (curves_by_backend or {}).items():
        if any(curves.values()):
            section.figures.append((f"{backend}: stored rate per saturation step (database counter) against the "
                                    "offered rate, per kind (× = saturated)", plots.saturation(curves, plots.Colours(kinds))))
    lags = {k: [table[b].get(k, {}).get("visibility_p99") for b in table] for k in kinds}
    section.figures.append(("Visibility lag p99 (throughput trial), from outside", plots.bars(
        list(table), lags, plots.Colours(kinds), "s")))
    section.note = (__doc__ or "").split("\n\n", 1)[1].replace("\n", " ").strip()
    section.finding = finding(kinds, table)
    return section


def finding(kinds: Sequence[str], table: Mapping[str, Mapping[str, Mapping[str, float | None]]]) -> Finding:
    out = Finding()
    first = kinds[0]
    for backend, figs in table.items():
        for kind in kinds[1:]:
            mine = figs.get(kind, {})
            rate = ratio(figs[first].get("db_stored_median"), mine.get("db_stored_median"))
            lag = ratio(figs[first].get("visibility_p99"), mine.get("visibility_p99"))
            parts = [f"{kind} stored {rate:.2f}× the rate of {first}" if rate is not None else
                     f"{kind}: no stored rate to compare"]
            if lag is not None:
                parts.append(f"its visibility lag p99 is {lag:.2f}× as long")
            sustainable = ratio(figs[first].get("saturation_rate"), mine.get("saturation_rate"))
            if sustainable is not None:
                parts.append(f"its last sustainable rate is {fmt(mine.get('saturation_rate'))} events/s "
                             f"({sustainable:.2f}× that of {first})")
            if (lost := mine.get("lost")):
                parts.append(f"it lost {fmt(lost)} events")
            out.sentences.append(f"{backend}: " + ", ".join(parts) + ".")
            if figs[first].get("lost") or lost:
                out.warnings.append(f"{backend}: events were lost; compare the rates only where neither kind lost any.")
    out.recommendation = ("Judge subscribers by these outside figures; a single trial has no spread, so repeat the "
                          "run before acting on a ratio close to 1.")
    return out


def compare_figures(run_dir: Path, loaded: data.Loaded) -> dict[str, dict[str, float | None]]:
    """`hdbbench compare` rows for the kinds after the first: "<backend> · <kind>" → ranking criterion → figure
    (the first kind's figures are the run's plain backend rows)."""
    out: dict[str, dict[str, float | None]] = {}
    for kind in data.subscriber_kinds(loaded)[1:]:
        view = data.insertion_view(run_dir, loaded, kind)
        for backend in view.backends:
            row = criteria.insertion_criteria(view, backend)
            main = view.one(backend, "throughput")
            if row.get("stored_median") is None and main and main.outside:  # the database's counter instead
                row["stored_median"] = num(main.outside.stored_rate.median)
            out[f"{backend} · {kind}"] = row
    return out

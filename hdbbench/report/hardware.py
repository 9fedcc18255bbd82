# SPDX-License-Identifier: Apache-2.0
"""The report's hardware section: what an inventory needs on each backend, planned from the run's unit costs.

hardware.json (kind "hardware-plan", hdbbench.results.hardware) is written by `hdbbench plan hardware` and by a
run whose disk part has an inventory. The section plots the cores per backend (archivers and database server,
needed and with the headroom), gives one row per backend (archivers, cores, memory, write IOPS and the storage
class, disk) and one sentence per backend; the unit costs behind every figure, with their spread over the
trials, are folded away below; what a backend's plan could not measure is a warning, and what no plan can
know a note. A planned-against-measured check (`plan hardware --check`) gets its own table.
"""

from __future__ import annotations

from pathlib import Path

from hdbbench.model.units import human_bytes
from hdbbench.report import data, plots
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding
from hdbbench.results.hardware import HardwarePlanResults, PlannedFigure, years_text

FILE = "hardware.json"


def hardware_section(run_dir: Path, colours: plots.Colours) -> Section | None:
    """The section, or None for a run without a hardware plan (nothing asked for one)."""
    loaded = data.load_file(run_dir, FILE)
    if loaded.document is None:
        return None if not (run_dir / FILE).exists() else Section("hardware", "Hardware", missing=loaded.problem)
    plan = loaded.results(HardwarePlanResults)
    if plan is None or not plan.backends:
        return Section("hardware", "Hardware", missing=f"{FILE} holds no backend's plan.")
    title = f"Hardware for {plan.inventory}" + (f" at scale {plan.scale:g}" if plan.scale != 1 else "")
    section = Section("hardware", title)
    backends = [p.backend for p in plan.backends]
    section.figures.append((
        f"Cores needed at {plan.inventory}'s rate per backend, from the CPU per event the runs measured (the "
        f"table gives what to provide at {plan.headroom:.0%} headroom)", plots.bars(
            ["archivers' cores", "database server's cores"],
            {b: [p.archiver_cores.needed, p.database_cores.needed] for b, p in zip(backends, plan.backends)},
            colours, "cores")))
    section.tables.append(plan_table(plan))
    section.tables.append(f"<details><summary>Unit costs behind each figure ({len(plan.backends) * 9} rows)</summary>"
                          f"<div class='words'>{sources_table(plan)}</div></details>")
    if plan.checks:
        section.tables.append(checks_table(plan))
    finding = Finding()
    finding.sentences += [p.sentence for p in plan.backends]
    finding.warnings += [f"{p.backend}: not known: {u}" for p in plan.backends for u in p.unknown]
    finding.warnings.append(plan.cannot_know)
    section.finding = finding
    section.note = (f"{years_text(plan.years)} of archive (each group's retention caps them); every resource used at "
                    f"most {plan.headroom:.0%}; unit costs from {', '.join(Path(r).name for r in plan.runs)}; "
                    f"{plan.backends[0].machine}.")
    return section


def plan_table(plan: HardwarePlanResults) -> str:
    rows = [[p.backend, f"{p.events_per_s:,.0f}", f"{p.attributes:,}", _count(p.archivers), _cores(p.archiver_cores),
             _cores(p.database_cores), _bytes(p.hot_set), _bytes(p.memory), _rate(p.write_iops),
             p.storage_class or "–", _bytes(p.disk)] for p in plan.backends]
    return html_table(["backend", "events/s", "attributes", "archivers", "archiver cores", "database cores", "hot set",
                       "memory", "write IOPS", "storage class", f"disk, {years_text(plan.years)}"], rows,
                      f"needed (to provide at {plan.headroom:.0%} headroom); memory: the database server's own and "
                      "the hot set; storage class: the smallest of the stack's classes holding the write IOPS and "
                      "bandwidth to provide")


def sources_table(plan: HardwarePlanResults) -> str:
    names = ("archivers", "archiver_cores", "database_cores", "hot_set", "memory", "write_iops", "write_bytes_per_s",
             "log_bytes_per_s", "disk")
    rows = [[p.backend, name.replace("_", " "), f.source] for p in plan.backends for name in names
            for f in [getattr(p, name)]]
    return html_table(["backend", "figure", "from"], rows, "each figure's unit cost, its spread over the measured "
                                                           "windows and whether it held constant over their rates")


def checks_table(plan: HardwarePlanResults) -> str:
    rows = [[c.backend, c.quantity, f"{c.rate:,.0f}", _number(c.planned), _number(c.measured),
             f"{c.error:+.0%}" if c.error is not None else "–",
             "–" if c.within is None else ("yes" if c.within else "NO")] for c in plan.checks]
    return html_table(["backend", "quantity", "at events/s", "planned", "measured", "error", "within"], rows,
                      f"the plan's lines at the measured trial's stored rate and subscribers, against what it "
                      f"measured; tolerance ±{plan.checks[0].tolerance:.0%}")


def _count(f: PlannedFigure) -> str:
    return "–" if f.needed is None else f"{f.needed:,.0f}"


def _cores(f: PlannedFigure) -> str:
    return "–" if f.needed is None or f.provide is None else f"{f.needed:,.2f} ({f.provide:,.0f})"


def _bytes(f: PlannedFigure) -> str:
    return "–" if f.needed is None else f"{human_bytes(f.needed)} ({human_bytes(f.provide)})"


def _rate(f: PlannedFigure) -> str:
    return "–" if f.needed is None or f.provide is None else f"{f.needed:,.0f} ({f.provide:,.0f})"


def _number(x: float | None) -> str:
    return "–" if x is None else f"{x:,.3g}"

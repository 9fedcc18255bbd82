# SPDX-License-Identifier: Apache-2.0
"""The report's saturation section: each backend's search, step by step, its answer and resolution,
and what the machine did meanwhile (its busy share, the sampler's pace, the devices' CPU per event).

On a shared machine the limit follows the machine's pace: in the slow periods of one day's
machine every process did 30 to 45 % more CPU work per event for minutes, and the searches found
limits lower in proportion. The devices' work per event at a rate is fixed, so their CPU per event in
the steps near the answer is the pace the search met at its limit; the finding states it, and
``hdbbench compare`` warns when two runs' devices spent 15 % more or less per event at the rates
their searches share (hdbbench.report.compare).
"""

from __future__ import annotations

from hdbbench.report import data, plots, text
from hdbbench.report.data import Insertion, num
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import fmt
from hdbbench.results.trials import SaturationSearch, SearchStep

STEP_COLUMNS = ["backend", "offered", "emitted", "stored (counter)", "stored median/s", "lag growth (s)",
                "lost", "error events", "saturated by", "server work in the step", "machine CPUs busy",
                "machine pace", "devices' CPU per event (µs)", "rows stored before"]
STEP_NOTE = ("events/s unless stated; rule: {criterion}; server work: the database server's own "
             "background work whose count rose in the step (checkpoints started, autovacuums finished; "
             "InnoDB's waits for a free page or for the log), no rule; machine CPUs busy: the share of the "
             "CPUs of the machine hdbbench ran on that were busy in the step, no rule; machine pace: how "
             "fast the machine ran a fixed piece of CPU work in the step, against the search's fastest step "
             "(100 %), no rule; devices' CPU per event: fixed work at a given rate, so a pace between runs "
             "at the same rate, no rule; rows stored before: by the search's earlier steps")


def saturation_section(view: Insertion, colours: plots.Colours) -> Section:
    section = Section("saturation", "Saturation search")
    searches = {b: t.saturation for b in view.backends if (t := view.one(b, "saturation")) and t.saturation}
    if not searches:
        section.missing = "No saturation search in this run ([measurements] saturation is not set)."
        return section
    steps = {b: data.step_points(t) for b in searches if (t := view.one(b, "saturation"))}
    section.figures.append(("Stored rate per step (database counter) against the offered rate "
                            "(× = saturated)", plots.saturation(steps, colours)))
    last = {b: num(search.last_sustainable_rate) for b, search in searches.items()}
    how = {b: data.search_words(search, view.saturation_step) for b, search in searches.items()}
    shown = (next(iter(how.values())) if len(set(how.values())) == 1
             else "; ".join(f"{b}: {w}" for b, w in how.items()))
    section.figures.append((f"Last sustainable rate (search {shown})",
                            plots.bars(["last sustainable rate"], {b: [v] for b, v in last.items()}, colours,
                                       "events/s")))
    rows = [row for b, search in searches.items() for row in _step_rows(b, search)]
    criterion = next(iter(searches.values())).criterion
    section.tables.append(html_table(STEP_COLUMNS, rows, STEP_NOTE.format(criterion=criterion)))
    section.finding = finding = text.saturation(
        last, {b: max((p[0] for p in s), default=0.0) for b, s in steps.items()},
        {b: any(p[2] for p in s) for b, s in steps.items()},
        {b: list(search.ended_by) for b, search in searches.items()},
        {b: data.search_precision(search, view.saturation_step) for b, search in searches.items()})
    if pace := text.pace_at_limit({b: data.pace_at_limit(search) for b, search in searches.items()},
                                  data.LIMIT_BAND, data.DEVICE_PACE_SPREAD):
        finding.sentences.append(pace)
    if rows := text.rows_at_limit({b: data.rows_at_limit(search) for b, search in searches.items()},
                                  data.LIMIT_BAND):
        finding.sentences.append(rows)
    for backend, search in searches.items():
        _machine_words(finding, backend, search)
        if gap := _wide_gap(backend, search, view.saturation_step):
            finding.warnings.append(gap)
    return section


def _step_rows(backend: str, search: SaturationSearch) -> list[list[str]]:
    fastest = min((w for s in search.steps if (w := num(s.machine_work_ms)) and w > 0), default=None)
    rows = data.rows_before(search)
    return [[backend, fmt(num(s.offered_rate)), fmt(num(s.source_rate)), fmt(num(s.stored_rate)),
             fmt(num(s.stored_median)), fmt(num(s.visibility_lag_growth_s)), fmt(num(s.lost)),
             fmt(num(s.errors)), "source behind" if s.source_behind else (", ".join(s.rules) or "–"),
             ", ".join(w.replace("_", " ") for w in s.server_work) or "–",
             "–" if s.machine_busy is None else f"{s.machine_busy:.0%}", _pace(fastest, s),
             fmt(num(s.device_cpu_us)), "–" if before is None else text.rows_words(before)]
            for s, before in zip(search.steps, rows)]


def _machine_words(finding: text.Finding, backend: str, search: SaturationSearch) -> None:
    """What the database server and the machine did in the steps that ended the search."""
    if met := text.server_work_met(backend, [(s.saturated, s.server_work) for s in search.steps]):
        finding.sentences.append(met)
    counted = [s for s in search.steps if not s.source_behind]
    answer = num(search.last_sustainable_rate)
    busy = [(num(s.offered_rate) or 0.0, s.saturated, num(s.machine_busy)) for s in counted]
    if words := text.machine_limit_met(backend, busy, answer):
        finding.warnings.append(words)
    work = [(num(s.offered_rate) or 0.0, s.saturated, num(s.machine_work_ms)) for s in counted]
    if words := text.machine_pace_varied(backend, work, answer):
        finding.warnings.append(words)


def _wide_gap(backend: str, search: SaturationSearch, scenario_step: float | None) -> str | None:
    mode, resolution = data.search_precision(search, scenario_step)
    gap = data.search_gap(search)
    if mode != "bisect" or resolution is None or gap is None or gap <= resolution + 1e-6:
        return None
    return (f"{backend}: {gap:.0%} lie between the answer and the lowest saturated rate above it, more "
            f"than the search's resolution ({resolution:.0%}): it reached max_steps, a rate near the answer "
            "passed only on its repeat (no answer, as in the stepped search), or a verdict changed after the "
            "drain (events found lost, error events counted). The limit lies in that range.")


def _pace(fastest_ms: float | None, step: SearchStep) -> str:
    """A step's machine pace against the search's fastest step (the CPU time of the same fixed work)."""
    mine = num(step.machine_work_ms)
    return "–" if fastest_ms is None or mine is None or mine <= 0 else f"{fastest_ms / mine:.0%}"

# SPDX-License-Identifier: Apache-2.0
"""The report's section "Maintenance while archiving": jobs run during a sustained trial, their toll.

Built only from a run's `InsertionResults.maintenance` records (hdbbench.results.maintenance) and, for
the timelines, each trial's 1 Hz series ``maintenance/<label>.csv`` (columns t_s, stored_rate,
event_age_p99_s, queue, lock_waiters, visibility_lag_s; an empty cell = not measured); the section is absent from a run
without them. Plots first: per trial the stored rate and the event age p99 against the trial's clock,
each job's run shaded and named (a failed job hatched red). Then the jobs, trials and aggregate-vs-raw
tables folded away; then one sentence per job and per backend's aggregate query. Every sentence comes
from a record; a figure that is None says "not measured".

Wording, stated once (each job's run against the quiet window of `gap_s` just before it):

* "raised" the event age p99 (or the extraction p95) when during > ``RAISED`` × before and by more
  than ``FLOOR_S``, else "kept ... at";
* the stored rate "fell" when during < ``FELL`` × before;
* subscriber sessions "waited on locks" when the job's window holds any lock-wait sample.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from hdbbench.model.units import human_bytes
from hdbbench.report import data, plots
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding, fmt
from hdbbench.results.maintenance import (
    AggregateQuery,
    MaintenanceRecord,
    MaintenanceResults,
    MaintenanceTrial,
)
from hdbbench.results.trials import InsertionResults

SERIES_DIR = "maintenance"       # beside results.json: maintenance/<trial label>.csv
NOT_MEASURED = "not measured"
RAISED = 1.5                     # a figure during a job above 1.5× the window before is "raised"
FELL = 0.9                       # a stored rate during a job below 90 % of the window before "fell"
# ... and by more than this: a few milliseconds either way is the sampling's noise, not the job's doing.
FLOOR_S = 0.05
SPANS = ("day", "week", "month", "year")
JOB_SHADE: dict[str, Any] = {"color": "grey", "alpha": 0.18}
FAILED_SHADE: dict[str, Any] = {"facecolor": "#d62728", "edgecolor": "#d62728", "alpha": 0.25, "hatch": "//"}
NOTE = (f"Each job's figures are over its run against the quiet load just before it (the scenario's gap_s). Words: "
        f"\"raised\" when the event age p99 (or the extraction p95) during a job exceeds {RAISED:g}× the window "
        f"before and by more than {FLOOR_S * 1000:g} ms, else \"kept ... at\"; the stored rate \"fell\" when below "
        f"{FELL:.0%} of the window before; lock "
        "wait = samples of subscriber sessions waiting on a lock × the sampling period; extraction p95: one "
        "attribute's last 10 minutes queried meanwhile. Lost: the subscribers' counters during the job.")


def maintenance_section(insertion: InsertionResults | None, colours: plots.Colours,
                        run_dir: Path) -> Section | None:
    """The section, or None when the run has no maintenance records (the section then does not appear).
    `run_dir`: the run directory, whose ``maintenance/<label>.csv`` hold the trials' series."""
    found = insertion.maintenance if insertion is not None else None
    if found is None or not (found.trials or found.jobs or found.extraction):
        return None
    section = Section("maintenance", "Maintenance while archiving")
    finding = Finding()
    for label, backend in _trial_labels(found).items():
        series = data.read_series(run_dir / SERIES_DIR / f"{label}.csv")
        jobs = [j for j in found.jobs if j.label == label]
        if not series.get("t_s"):
            finding.warnings.append(f"{SERIES_DIR}/{label}.csv is not in this run directory (or is empty): "
                                    f"no timeline for {backend}'s trial {label}.")
            continue
        section.figures.append((f"{backend} ({label}): stored rate and event age p99 per second on the trial's "
                                "clock; shaded: a job's run, named; hatched red: a job that failed",
                                timeline(series, jobs, colours[backend])))
    if found.jobs:
        section.tables.append(_folded(jobs_table(found.jobs), f"Jobs ({len(found.jobs)})"))
    if found.trials:
        section.tables.append(_folded(trials_table(found.trials), "Trials the jobs ran in"))
    if found.extraction:
        section.tables.append(_folded(extraction_table(found.extraction),
                                      "Hourly mean/min/max: the aggregate tables against raw rows"))
    section.note = NOTE
    section.finding = words(found, finding)
    return section


def _folded(table: str, summary: str) -> str:
    """A table folded away under its own summary (plots first; render.fold_tables keeps it as it is)."""
    return f"<details><summary>{html.escape(summary)}</summary>{table}</details>"


def _trial_labels(found: MaintenanceResults) -> dict[str, str]:
    """label -> backend of every trial, and of jobs whose trial has no record (their series may exist)."""
    labels = {t.label: t.backend for t in found.trials}
    for job in found.jobs:
        labels.setdefault(job.label, job.backend)
    return labels


# --- the timeline ---------------------------------------------------------------------------------
def timeline(series: dict[str, list[float]], jobs: Sequence[MaintenanceRecord], colour: str) -> str:
    """Stored rate (top) and the visibility lag (bottom; our event age p99 where a run has no lag) against
    t_s, each job's span shaded on both. Empty cells are NaN, which matplotlib leaves as gaps: a second
    not measured is not drawn."""
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    rate_ax, age_ax = fig.subplots(2, 1, sharex=True)
    times = series.get("t_s") or []
    lags = series.get("visibility_lag_s") or []
    age = ("visibility_lag_s", "visibility lag (s)") if any(v == v for v in lags) else \
        ("event_age_p99_s", "event age p99 (s)")
    for ax, name, ylabel in ((rate_ax, "stored_rate", "stored events/s"), (age_ax, *age)):
        values = series.get(name) or []
        ax.plot(times[:len(values)], values, color=colour, linewidth=1)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        for job in jobs:
            _shade(ax, job, named=ax is rate_ax)
    age_ax.set_xlabel("time since the load started (s)")
    handles = [Patch(**JOB_SHADE, label="job")]
    if any(j.error for j in jobs):
        handles.append(Patch(**FAILED_SHADE, label="failed job"))
    rate_ax.legend(handles=handles, loc="lower left", fontsize=7)
    return plots.to_svg(fig)


def _shade(ax: Axes, job: MaintenanceRecord, named: bool) -> None:
    """The job's run [started_s, started_s + duration_s]; a job never timed as a dashed line at its start.
    The gid names the span in the SVG (job-span-<job> or failed-span-<job>)."""
    failed = job.error is not None
    end = job.started_s + (job.duration_s or 0.0)
    span: Artist
    if job.duration_s:
        span = ax.axvspan(job.started_s, end, **(FAILED_SHADE if failed else JOB_SHADE))
    else:
        span = ax.axvline(job.started_s, color="#d62728" if failed else "grey", linestyle="--", linewidth=1)
    span.set_gid(f"{'failed' if failed else 'job'}-span-{job.job}")
    if named:
        ax.text((job.started_s + end) / 2, 0.97, job.job, transform=ax.get_xaxis_transform(), rotation=90,
                ha="center", va="top", fontsize=7, bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0,
                                                         "pad": 1})  # readable over the line


# --- tables ---------------------------------------------------------------------------------------
def _pair(before: float | None, during: float | None) -> str:
    return f"{fmt(before)} / {fmt(during)}"


def _detail(job: MaintenanceRecord) -> str:
    parts = [job.detail] if job.detail else []
    if job.bytes is not None:
        parts.append(f"wrote {human_bytes(job.bytes)}")
    parts += [f"{lv.level} {fmt(lv.seconds)} s ({lv.rows:,} rows)" for lv in job.levels or []]
    if job.error:
        parts.append(f"failed: {job.error}")
    return "; ".join(parts) or "–"


def jobs_table(jobs: Sequence[MaintenanceRecord]) -> str:
    rows = [[j.backend, j.job, fmt(j.started_s), fmt(j.duration_s),
             _pair(j.before.stored_rate, j.during.stored_rate),
             _pair(j.before.visibility_lag_s, j.during.visibility_lag_s),
             _pair(j.before.event_age_p99_s, j.during.event_age_p99_s),
             _pair(j.before.queue_max, j.during.queue_max), _pair(j.before.lock_wait_s, j.during.lock_wait_s),
             _pair(j.before.query_p95_s, j.during.query_p95_s), f"{j.lost:,}", _detail(j)] for j in jobs]
    return html_table(["backend", "job", "started (s)", "duration (s)", "stored events/s", "visibility lag (s)",
                       "age p99, ours (s)", "queue max", "lock wait (s)", "query p95 (s)", "lost", "detail / error"],
                      rows, "figures as before / during: the window of the job's length just before it, then its "
                      "run; the stored rate from the database's counter, the visibility lag from probe "
                      "attributes (any subscriber kind); – where not measured")


def trials_table(trials: Sequence[MaintenanceTrial]) -> str:
    rows = [[t.backend, t.label, fmt(t.rate), fmt(t.seconds), f"{t.emitted:,}", f"{t.stored:,}", f"{t.lost:,}",
             "yes" if t.rows_match else "NO", _yes_no(t.aggregates_equal), t.error or "–"] for t in trials]
    return html_table(["backend", "trial", "offered/s", "seconds", "emitted", "stored", "lost", "rows match",
                       "aggregates equal", "error"], rows,
                      "counted after the drain; aggregates equal: the aggregate tables against the same SQL over "
                      "raw rows (– without an aggregates job)")


def _yes_no(flag: bool | None) -> str:
    return "–" if flag is None else "yes" if flag else "NO"


def _pairs(queries: Sequence[AggregateQuery]) -> list[tuple[str, str, AggregateQuery | None, AggregateQuery | None]]:
    """(backend, span, raw, aggregate) in run order of the backends and day..year order of the spans."""
    keys = list(dict.fromkeys((q.backend, q.span) for q in queries))
    keys.sort(key=lambda k: ([q.backend for q in queries].index(k[0]), _span_order(k[1])))
    return [(b, s, _source(queries, b, s, "raw"), _source(queries, b, s, "aggregate")) for b, s in keys]


def _span_order(span: str) -> int:
    return SPANS.index(span) if span in SPANS else len(SPANS)


def _source(queries: Sequence[AggregateQuery], backend: str, span: str, source: str) -> AggregateQuery | None:
    return next((q for q in queries if (q.backend, q.span, q.source) == (backend, span, source)), None)


def _speed_up(raw: AggregateQuery | None, agg: AggregateQuery | None) -> float | None:
    return raw.warm_s / agg.warm_s if raw is not None and agg is not None and agg.warm_s > 0 else None


def _equal(raw: AggregateQuery | None, agg: AggregateQuery | None) -> bool:
    return all(q.equal for q in (raw, agg) if q is not None)


def extraction_table(queries: Sequence[AggregateQuery]) -> str:
    rows = []
    for backend, span, raw, agg in _pairs(queries):
        either = raw or agg
        rows.append([backend, span, fmt(either.days if either else None),
                     _pair(raw.cold_s, raw.warm_s) if raw else "–", _pair(agg.cold_s, agg.warm_s) if agg else "–",
                     f"{fmt(x)}×" if (x := _speed_up(raw, agg)) is not None else "–",
                     "yes" if _equal(raw, agg) else "NO"])
    return html_table(["backend", "span", "days", "raw cold / warm (s)", "aggregate cold / warm (s)",
                       "speed-up, warm", "equal"], rows,
                      "one attribute's mean/min/max per hour over the span; cold: the server's page cache and "
                      "buffers dropped first (– where it cannot be); days: the span the database holds")


# --- words ----------------------------------------------------------------------------------------
def _time(seconds: float) -> str:
    """An age or a query time: ms below a second, minutes from two of them."""
    if seconds < 1:
        return f"{fmt(seconds * 1000)} ms"
    return f"{fmt(seconds)} s" if seconds < 120 else f"{fmt(seconds / 60)} min"


def _duration(seconds: float) -> str:
    return f"{fmt(seconds)} s" if seconds < 120 else f"{fmt(seconds / 60)} min"


def _age_words(job: MaintenanceRecord) -> str:
    """The age in words: the visibility lag from outside (any kind), else our event age p99."""
    name, during = job.during.lag
    before = job.before.lag[1] if job.before.lag[0] == name else None
    if during is None:
        return f"ran with {name} {NOT_MEASURED}"
    if before is None:
        return f"had {name} at {_time(during)} ({NOT_MEASURED} before)"
    if _raised(before, during):
        return f"raised {name} from {_time(before)} to {_time(during)}"
    return f"kept {name} at {_time(during)} ({_time(before)} before)"


def _effects(job: MaintenanceRecord) -> list[str]:
    """The clauses beyond the age: stored rate fell, lock waits, extraction slowed (only when so)."""
    b, d = job.before, job.during
    out = []
    if b.stored_rate is not None and d.stored_rate is not None and d.stored_rate < FELL * b.stored_rate:
        out.append(f"the stored rate fell from {fmt(b.stored_rate)} to {fmt(d.stored_rate)} events/s")
    if d.lock_wait_s:
        since = f" ({_duration(b.lock_wait_s)} in the window before)" if b.lock_wait_s else ""
        out.append(f"subscriber sessions waited on locks for {_duration(d.lock_wait_s)}{since}")
    if b.query_p95_s is not None and d.query_p95_s is not None and _raised(b.query_p95_s, d.query_p95_s):
        out.append(f"extraction p95 rose from {_time(b.query_p95_s)} to {_time(d.query_p95_s)}")
    return out


def _raised(before: float, during: float) -> bool:
    return during > RAISED * before and during - before > FLOOR_S


def disturbed(job: MaintenanceRecord) -> bool:
    """Whether the job failed or disturbed the archiving: lost events, raised the age, made the stored
    rate fall or the subscriber wait on locks (then the recommendation names it). Slower extraction
    alone is said in the job's words, not here: it is the readers' cost, not the archive's."""
    b, d = job.before, job.during
    (name, after), (name_before, before) = d.lag, b.lag
    raised = name == name_before and before is not None and after is not None and _raised(before, after)
    fell = b.stored_rate is not None and d.stored_rate is not None and d.stored_rate < FELL * b.stored_rate
    return bool(job.error or job.lost or raised or fell or d.lock_wait_s)


def job_words(job: MaintenanceRecord) -> str:
    """One sentence a facility can act on."""
    loss = f"lost {job.lost:,} events" if job.lost else "no loss"
    if job.error:
        tail = f" ({loss})" if job.lost else ""
        return f"{job.job} on {job.backend} failed: {job.error}; the trial went on{tail}."
    took = f"for {_duration(job.duration_s)}" if job.duration_s is not None else f"(duration {NOT_MEASURED})"
    effects = _effects(job)
    more = (", " + ", ".join(effects[:-1]) + (" and " if len(effects) > 1 else "") + effects[-1]) if effects else ""
    return f"{job.job} on {job.backend} {_age_words(job)} {took}{more}; {loss}."


def extraction_words(queries: Sequence[AggregateQuery]) -> list[str]:
    """Per backend, its longest span measured from both sources; "not measured" where a source is missing."""
    if not queries:
        return [f"Hourly aggregates against raw rows: {NOT_MEASURED} in this run."]
    out = []
    for backend in dict.fromkeys(q.backend for q in queries):
        pairs = [p for p in _pairs(queries) if p[0] == backend]
        both = [p for p in pairs if p[2] is not None and p[3] is not None]
        if not both:
            lacking = "raw rows" if all(p[2] is None for p in pairs) else "the aggregates"
            out.append(f"{backend}: one attribute's hourly mean/min/max from {lacking} {NOT_MEASURED}.")
            continue
        _, span, raw, agg = both[-1]
        assert raw is not None and agg is not None
        ratio = f" ({fmt(x)}×)" if (x := _speed_up(raw, agg)) is not None else ""
        cold = (f"; cold, {fmt(raw.cold_s)} s against {fmt(agg.cold_s)} s" if raw.cold_s is not None
                and agg.cold_s is not None else "")
        out.append(f"{backend}: one attribute's hourly mean/min/max over a {span} ({fmt(raw.days)} days held): "
                   f"{fmt(raw.warm_s)} s from raw rows, {fmt(agg.warm_s)} s from the aggregates{ratio}, warm{cold}; "
                   f"results {'equal' if _equal(raw, agg) else 'DIFFER'}.")
    return out


def mismatches(found: MaintenanceResults) -> list[str]:
    """Every count or comparison that did not hold, in plain words."""
    out = []
    for t in found.trials:
        if t.error:
            out.append(f"{t.backend}'s maintenance trial {t.label} failed: {t.error}.")
        if not t.rows_match:
            out.append(f"{t.backend} ({t.label}): the rows stored do not equal the events emitted "
                       f"({t.emitted:,} emitted, {t.stored:,} stored, {t.lost:,} lost).")
        if t.aggregates_equal is False:
            out.append(f"{t.backend} ({t.label}): the aggregate tables differ from the same SQL over the raw rows "
                       "after the aggregates job.")
    for backend, span, raw, agg in _pairs(found.extraction):
        if not _equal(raw, agg):
            out.append(f"{backend}: one attribute's hourly mean/min/max over a {span} differs between the "
                       "aggregate tables and the raw rows.")
    return out


def words(found: MaintenanceResults, finding: Finding) -> Finding:
    """The finding: a sentence per job, per backend's aggregate query, the mismatches as warnings."""
    order = list(_trial_labels(found))  # the trials in run order, each trial's jobs in time order
    jobs = sorted(found.jobs, key=lambda j: (order.index(j.label), j.started_s))
    finding.sentences += [job_words(j) for j in jobs] or [f"Maintenance jobs: {NOT_MEASURED} in this run."]
    finding.sentences += extraction_words(found.extraction)
    finding.warnings += mismatches(found)
    finding.recommendation = _recommendation(jobs)
    return finding


def _recommendation(jobs: Sequence[MaintenanceRecord]) -> str:
    """What to do: the jobs that disturbed archiving moved or throttled, the failed ones fixed."""
    if not jobs:
        return ""
    harmful = _names([f"{j.job} on {j.backend}" for j in jobs if not j.error and disturbed(j)])
    failed = _names([f"{j.job} on {j.backend}" for j in jobs if j.error])
    if not harmful and not failed:
        return ("Every job ran without raising the event age, lowering the stored rate or losing events: at the "
                "trials' rates they can run while archiving.")
    them, they = ("them", "they") if " and " in harmful else ("it", "it")
    out = [f"Schedule {harmful} away from the busiest archiving, or throttle {them}: {they} disturbed archiving "
           "at the trials' rates." if harmful else ""]
    out.append(f"Make {failed} work before relying on {'them' if ' and ' in failed else 'it'}." if failed else "")
    return " ".join(x for x in out if x)


def _names(names: Sequence[str]) -> str:
    names = list(dict.fromkeys(names))
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]

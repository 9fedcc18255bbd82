# SPDX-License-Identifier: Apache-2.0
"""Words after numbers: the sentences under each table and plot, generated from the figures only.

Every sentence is computed from the numbers it speaks about (which backend is best, by what ratio,
whether a difference is within the spread, whether anything was lost), so a sentence cannot
contradict its figure. Warnings follow pyperf: few samples or a wide spread make a figure noisy,
and a difference within the spread is called "not significant" instead of given a percentage.

Rules, stated once:

* **not significant**: two per-second distributions whose p1..p99 ranges overlap;
* **few samples**: fewer than ``MIN_SAMPLES`` per-second values;
* **high spread**: (p99 − p1) / median above ``HIGH_SPREAD``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hdbbench.model.measure import Distribution

MIN_SAMPLES = 10
HIGH_SPREAD = 0.20
KEEP_UP = 0.99      # a stored median at >= 99 % of the offered rate kept up
STABLE_SHARE = 0.99  # methodology: stable = >= 99 % of seconds at or above the offered rate
# What a single run can tell apart, per figure: a recommendation names one contestant only when it beats
# every other by more than this; otherwise the section says "no difference at this resolution".
AGE_RESOLUTION_S = 0.005     # event age p99: one number per trial; the devices' push timers and the 1 Hz
                             # statistics window move it by a few milliseconds from trial to trial
CPU_RESOLUTION = 0.10        # CPU per event: 1 Hz samples of 10 ms clock ticks
QUERY_RESOLUTION = 0.20      # a query's time between repeats on a shared machine (docs/default-run-time.md)
DISK_RESOLUTION = 0.02       # bytes per event: two sizes' fits agree within 0.8 %, 10 M rows within 0.3 %
SWEEP_RESOLUTION = 0.10      # a sweep point's median stored rate: one trial each, no repeats


@dataclass
class Finding:
    """What a section's figures say: sentences, warnings, and what to do."""

    sentences: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    recommendation: str = ""


@dataclass(frozen=True)
class Spread:
    """A per-second distribution as the results file stores it."""

    median: float
    p1: float
    p99: float
    count: int

    @classmethod
    def of(cls, figures: Distribution | None) -> Spread | None:
        """The spread of a recorded distribution; None when it has no finite median, p1, p99 and count."""
        if figures is None:
            return None
        values = (figures.median, figures.p1, figures.p99, figures.count)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
            return None
        return cls(float(figures.median), float(figures.p1), float(figures.p99), int(figures.count))


def fmt(value: float | None, unit: str = "") -> str:
    """Three significant figures, thousands separated; '–' when missing."""
    if value is None or not math.isfinite(value):
        return "–"
    magnitude = abs(value)
    if magnitude >= 1000:
        text = f"{value:,.0f}"
    elif magnitude >= 1 or magnitude == 0:
        text = f"{value:.3g}" if magnitude < 100 else f"{value:.0f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip() if unit else text


def overlaps(a: Spread, b: Spread) -> bool:
    return a.p1 <= b.p99 and b.p1 <= a.p99


def spread_warnings(name: str, spread: Spread) -> list[str]:
    out = []
    if spread.count < MIN_SAMPLES:
        out.append(f"{name}: only {spread.count} per-second samples (fewer than {MIN_SAMPLES}); "
                   "run longer before trusting this figure.")
    if spread.median > 0 and (spread.p99 - spread.p1) / spread.median > HIGH_SPREAD:
        out.append(f"{name}: high spread, p1..p99 = {fmt(spread.p1)}..{fmt(spread.p99)} around a median of "
                   f"{fmt(spread.median)} ({(spread.p99 - spread.p1) / spread.median:.0%} of it); "
                   "the machine may be noisy or the run too short.")
    return out


def best(values: Mapping[str, float | None], higher_is_better: bool = True) -> list[tuple[str, float]]:
    """Contestants with a figure, best first (ties by name)."""
    present = [(k, float(v)) for k, v in values.items() if v is not None and math.isfinite(v)]
    return sorted(present, key=lambda kv: ((-kv[1] if higher_is_better else kv[1]), kv[0]))


def resolved(ordered: Sequence[tuple[str, float]], absolute: float = 0.0, relative: float = 0.0) -> list[str]:
    """The contestants the measurement cannot tell from the best (`ordered` best first): within
    `absolute` (the figure's unit) or `relative` (a share of the best's figure) of it, the best first."""
    if not ordered:
        return []
    top = ordered[0][1]
    margin = max(absolute, relative * abs(top))
    return [name for name, value in ordered if abs(value - top) <= margin * (1 + 1e-9)]


def unresolved(tied: Sequence[str], resolution: str) -> str:
    """The words for contestants a recommendation must not choose between."""
    names = ", ".join(tied[:-1]) + f" and {tied[-1]}"
    return f"no difference at this resolution between {names} ({resolution})"


def leaders(ordered: Sequence[tuple[str, float]]) -> str:
    """The name of the best, or "a, b and c (tied)" when several share the best figure."""
    tied = [name for name, value in ordered if math.isclose(value, ordered[0][1], rel_tol=1e-9, abs_tol=1e-12)]
    if len(tied) == 1:
        return tied[0]
    return ", ".join(tied[:-1]) + f" and {tied[-1]} (tied)"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "∞×"


# --- insertion ---------------------------------------------------------------------------------
def throughput(spreads: Mapping[str, Spread], offered: Mapping[str, float | None],
               lost: Mapping[str, int]) -> Finding:
    finding = Finding()
    ordered = best({k: s.median for k, s in spreads.items()})
    if not ordered:
        finding.sentences.append("No backend has a stored-rate distribution.")
        return finding
    top, top_median = ordered[0]
    finding.sentences.append(f"{top} had the highest median stored rate, {fmt(top_median, 'events/s')}.")
    for other, median in ordered[1:]:
        verdict = ("not significant: the p1..p99 ranges overlap" if overlaps(spreads[top], spreads[other])
                   else "significant: the p1..p99 ranges do not overlap")
        finding.sentences.append(f"{top} / {other} = {_ratio(top_median, median)} ({fmt(median, 'events/s')}; "
                                 f"{verdict}).")
    kept = [b for b, s in spreads.items() if (o := offered.get(b)) and s.median >= KEEP_UP * o]
    if kept and len(kept) == len(spreads):
        finding.sentences.append("Every backend kept up with the offered rate, so this trial shows the offered "
                                 "load, not capacity: the sweeps and the saturation search measure capacity.")
    finding.sentences.append(_loss_sentence(lost))
    for backend, spread in spreads.items():
        finding.warnings += spread_warnings(f"{backend} stored rate", spread)
    finding.recommendation = _throughput_advice(ordered, spreads, kept, lost)
    return finding


def _throughput_advice(ordered: Sequence[tuple[str, float]], spreads: Mapping[str, Spread],
                       kept: Sequence[str], lost: Mapping[str, int]) -> str:
    losing = [b for b, n in lost.items() if n > 0]
    if losing:
        return f"Do not plan with {', '.join(losing)} at this load until the loss is explained."
    if len(kept) == len(spreads):
        return "Choose by capacity (saturation, sweeps) and by lag, not by this trial."
    top = ordered[0][0]
    if len(ordered) > 1 and not overlaps(spreads[top], spreads[ordered[1][0]]):
        return f"For throughput at this load, prefer {top}."
    return "The difference is within the spread: repeat with longer trials before choosing on throughput."


def _loss_sentence(lost: Mapping[str, int]) -> str:
    losing = {b: n for b, n in lost.items() if n > 0}
    if not losing:
        return "No event was lost: emitted equals stored for every attribute."
    return "Events were LOST: " + ", ".join(f"{b} {n:,}" for b, n in losing.items()) + "."


def lag(age_p99: Mapping[str, float | None], age_max: Mapping[str, float | None],
        pending_max: Mapping[str, float | None]) -> Finding:
    finding = Finding()
    ordered = best(age_p99, higher_is_better=False)
    if not ordered:
        finding.sentences.append("No event age at commit was recorded.")
        return finding
    top, value = ordered[0]
    finding.sentences.append(f"{top} committed events youngest: event age p99 {fmt(value, 's')}.")
    for other, v in ordered[1:]:
        finding.sentences.append(f"{other}: p99 {fmt(v, 's')}, {_ratio(v, value)} that of {top}.")
    pend = best(pending_max, higher_is_better=False)
    if pend:
        finding.sentences.append("Largest pending queue: " + ", ".join(f"{b} {fmt(v, 'events')}" for b, v in pend) + ".")
    worst_max = best(age_max)
    if worst_max:
        finding.sentences.append(f"The oldest event at commit was {fmt(worst_max[0][1], 's')} ({worst_max[0][0]}).")
    resolution = f"event age p99 within {AGE_RESOLUTION_S * 1000:g} ms"
    finding.warnings.append("Event age p99 is one number per trial, not a distribution of repeats: "
                            f"differences below {AGE_RESOLUTION_S * 1000:g} ms are within timer and sampling "
                            "resolution.")
    tied = resolved(ordered, absolute=AGE_RESOLUTION_S)
    if len(ordered) < 2:
        finding.recommendation = "Only one backend measured: compare runs to judge lag."
    elif len(tied) > 1:
        finding.recommendation = f"Where freshness matters (alarms, live plots): {unresolved(tied, resolution)}."
    else:
        finding.recommendation = f"Where freshness matters (alarms, live plots), prefer {top}."
    return finding


def batch_sweep(points: Mapping[str, Sequence[tuple[int, Spread]]], slopes: Mapping[str, float | None]) -> Finding:
    """points: backend → (batch size, stored-rate spread); slopes: events/s per doubling of the batch."""
    finding = Finding()
    ordered = best(slopes)
    if not ordered:
        finding.sentences.append("A slope needs at least two batch sizes per backend; the rates are shown as measured.")
    significant: list[str] = []
    for backend, slope in ordered:
        pts = sorted(points.get(backend, []), key=lambda p: p[0])
        within = len(pts) > 1 and overlaps(pts[0][1], pts[-1][1])
        verdict = ("not significant: smallest and largest batch overlap in p1..p99" if within
                   else "significant: smallest and largest batch do not overlap in p1..p99")
        if not within and slope > 0:
            significant.append(backend)
        finding.sentences.append(f"{backend}: {'+' if slope >= 0 else ''}{fmt(slope, 'events/s')} per doubling of "
                                 f"the batch size ({verdict}).")
    peak = best({b: max(s.median for _, s in pts) for b, pts in points.items() if pts})
    if peak:
        batch = max(points[peak[0][0]], key=lambda p: p[1].median)[0]
        finding.sentences.append(f"Highest median in the sweep: {peak[0][0]}, {fmt(peak[0][1], 'events/s')} "
                                 f"at batch size {batch}.")
    if any(len(p) < 3 for p in points.values()):
        finding.warnings.append("Fewer than three batch sizes: the fit is a line through the points, "
                                "it cannot show where the gain flattens.")
    if significant:
        finding.recommendation = (f"Larger batches raise the rate on {', '.join(significant)}; set batch_size "
                                  "towards the largest size that kept lag acceptable.")
    elif ordered:
        finding.recommendation = ("No backend gained significantly from larger batches in this sweep: keep the "
                                  "smaller batch (it lowers lag), or sweep at a higher offered rate.")
    return finding


def subscriber_sweep(points: Mapping[str, Sequence[tuple[int, float]]], slopes: Mapping[str, float | None],
                     saturation_at: Mapping[str, float | None]) -> Finding:
    finding = Finding()
    peak = best({b: max(r for _, r in pts) for b, pts in points.items() if pts})
    for backend, rate in peak:
        count = max(points[backend], key=lambda p: p[1])[0]
        slope = slopes.get(backend)
        slope_text = (f", {fmt(slope, 'events/s')} per added subscriber in the linear part" if slope is not None
                      else " (one subscriber count: no slope)")
        sat = saturation_at.get(backend)
        sat_text = f"; stops scaling at {sat:g} subscribers" if sat is not None else ""
        finding.sentences.append(f"{backend}: best {fmt(rate, 'events/s')} with {count} subscriber(s){slope_text}"
                                 f"{sat_text}.")
    if not peak:
        finding.sentences.append("No subscriber-count sweep in this run.")
        return finding
    if any(len(p) < 2 for p in points.values()):
        finding.warnings.append("Add subscriber counts (e.g. 1, 2, 4) to the sweep to see the slope and "
                                "where it saturates.")
    tied = resolved(peak, relative=SWEEP_RESOLUTION)
    finding.recommendation = (
        f"For several writers: {unresolved(tied, f'best medians within {SWEEP_RESOLUTION:.0%}')}." if len(tied) > 1
        else f"For several writers, {peak[0][0]} stored most in this sweep.")
    return finding


def saturation(last: Mapping[str, float | None], highest_offered: Mapping[str, float],
               saturated: Mapping[str, bool], ended_by: Mapping[str, Sequence[str]] | None = None,
               precision: Mapping[str, tuple[str, float | None]] | None = None) -> Finding:
    """`precision`: per backend the search's mode and resolution (hdbbench.report.data.search_precision)."""
    finding = Finding()
    ordered = best(last)
    bisected = False
    for backend, rate in ordered:
        rules = ", ".join(r.replace("_", " ") for r in (ended_by or {}).get(backend) or [])
        mode, resolution = (precision or {}).get(backend, ("step", None))
        bisected = bisected or mode == "bisect"
        within = f" {resolution:.0%}" if resolution is not None else ""
        above = "a rate up to one resolution above" if mode == "bisect" else "the next step"
        state = (f"saturated at {above} ({rules})" if saturated.get(backend) and rules
                 else f"saturated at {above}" if saturated.get(backend)
                 else f"never saturated up to the last step ({fmt(highest_offered.get(backend), 'events/s')})")
        how = f"{'bisect' if mode == 'bisect' else 'stepped'} search, resolution{within or ' unknown'}"
        finding.sentences.append(f"{backend}: last sustainable rate {fmt(rate, 'events/s')} ({how}), {state}.")
    missing = [b for b, v in last.items() if v is None]
    if missing:
        finding.sentences.append(f"{', '.join(missing)}: saturated or failed already at the first step.")
    if len(ordered) > 1 and ordered[0][1] == ordered[-1][1]:
        finding.sentences.append("Every backend reached the same last sustainable rate: the search does not "
                                 "separate them.")
    elif len(ordered) > 1:
        finding.sentences.append(f"Highest: {leaders(ordered)}, {_ratio(ordered[0][1], ordered[-1][1])} the "
                                 f"lowest ({ordered[-1][0]}).")
    unsaturated = [b for b in last if not saturated.get(b)]
    if unsaturated:
        raise_what = "max_rate" if bisected else "max_steps or start_rate"
        finding.warnings.append(f"{', '.join(unsaturated)} did not saturate: the search stopped at its end, the "
                                f"true limit is higher. Raise [measurements] saturation.{raise_what}.")
    if ordered and not saturated.get(ordered[0][0]):
        # The leader sustained the search's last step: its figure is a floor, not a limit.
        finding.recommendation = (f"{leaders(ordered)} sustained every rate offered, up to "
                                  f"{fmt(ordered[0][1], 'events/s')} per subscriber: its limit is higher and "
                                  f"was not measured; plan with that rate at most until a wider search finds it.")
    elif ordered:
        between = "rates within the resolution above it" if bisected else "rates between steps"
        finding.recommendation = (f"Plan with at most {fmt(ordered[0][1], 'events/s')} per subscriber on "
                                  f"{leaders(ordered)}, less a margin; {between} were not measured.")
        # Each limit is known to within its search's resolution: a backend that close to the leader's is
        # not shown to sustain less.
        coarsest = max((r for _, r in (precision or {}).values() if r is not None), default=None)
        tied = resolved(ordered, relative=coarsest) if coarsest else [ordered[0][0]]
        if len(tied) > 1:
            words = f"limits within the search resolution, {coarsest:.0%}"
            finding.recommendation += f" Between them: {unresolved(tied, words)}."
    return finding


def server_work_met(backend: str, steps: Sequence[tuple[bool, Sequence[str]]]) -> str | None:
    """A sentence on the saturated steps of a search (`steps`: saturated, server work in the step) that met
    the database server's own background work; None when none did."""
    failed = [work for saturated, work in steps if saturated]
    met = [work for work in failed if work]
    if not met:
        return None
    counts: dict[str, int] = {}
    for name in (name for work in met for name in work):
        counts[name] = counts.get(name, 0) + 1
    what = ", ".join(f"{name.replace('_', ' ')} in {n}" for name, n in sorted(counts.items(), key=lambda c: -c[1]))
    # The passing steps' count beside it: work that runs in nearly every step (our servers autovacuum
    # every second) is part of the limit, not what tipped a step over it.
    passed = [work for saturated, work in steps if not saturated]
    return (f"{backend}: {len(met)} of its {len(failed)} saturated steps met the database server's own background "
            f"work ({what}), and {sum(1 for work in passed if work)} of its {len(passed)} passing steps did. A "
            "facility's server does that work too; where passing steps met it as often, it is part of the limit "
            "rather than what moved it.")


MACHINE_BUSY_LIMIT = 0.90  # a step with the machine's CPUs this busy met the machine's own limit


def machine_limit_met(backend: str, steps: Sequence[tuple[float, bool, float | None]],
                      answer: float | None) -> str | None:
    """A warning when the steps that ended a search (`steps`: offered rate, saturated, the machine's busy
    share) found the machine's CPUs nearly all busy; None otherwise or when it was not recorded."""
    above = [(rate, busy) for rate, saturated, busy in steps if saturated and (answer is None or rate > answer)]
    if not above:
        return None
    bound = min(rate for rate, _ in above)
    shares = [busy for rate, busy in above if rate == bound and busy is not None]
    if not shares or max(shares) < MACHINE_BUSY_LIMIT:
        return None
    return (f"{backend}: at {fmt(bound, 'events/s')}, the rate that ended its search, the CPUs of the machine "
            f"hdbbench ran on were {max(shares):.0%} busy. Everything that runs there (the devices, the "
            "subscribers, the database servers, unless placed on other hosts) shared them, so the limit found is "
            "that machine's as much as the backend's, and it moves with whatever else runs beside it. Pin the "
            "devices away from the archiving path (--cpus) or run them on hosts of their own to measure the "
            "backend.")


MACHINE_PACE_SPREAD = 0.15  # the steps that ended a search this much slower than its fastest: a slower machine


def pace_at_limit(paces: Mapping[str, float | None], band: float, spread: float) -> str | None:
    """One sentence stating each search's pace at its limit (`paces`: backend → the devices' CPU per
    event in the steps within `band` of the answer, hdbbench.report.data.pace_at_limit); `spread`: the
    difference in it that hdbbench compare takes for another pace."""
    known = [(b, us) for b, us in paces.items() if us is not None]
    if not known:
        return None
    each = ", ".join(f"{b} {us:.2f} µs" for b, us in known)
    return (f"The machine's pace at each limit, as the devices' CPU per event in the steps within "
            f"{band - 1:.0%} of the answer: {each}. Their work per event is fixed, so a slower machine "
            f"shows more; a run whose devices spent {spread:.0%} more or less per event met another "
            "machine, in effect, and finds another limit (hdbbench compare warns).")


def rows_at_limit(rows: Mapping[str, tuple[float, float] | None], band: float) -> str | None:
    """One sentence stating how many rows each search had stored when it met its limit (`rows`:
    backend → the fewest and most before the steps within `band` of the answer)."""
    known = [(b, r) for b, r in rows.items() if r is not None]
    if not known:
        return None
    each = ", ".join(f"{b} {rows_words(lo)}" + (f" to {rows_words(hi)}" if hi > lo else "")
                     for b, (lo, hi) in known)
    return (f"Rows the search had stored before the steps within {band - 1:.0%} of the answer: {each}. "
            "Once its tables and indexes outgrow the server's memory a database's limit falls "
            "(docs/aging.md), so each limit is that of a table this size (a stepped search meets a rate "
            "after more rows than a bisect one); a facility's archive holds years of rows: measure on one "
            "with [history] (scenarios/aged.toml).")


def rows_words(rows: float) -> str:
    """A row count as people read it: 2.2 M, or 8,000 below a million."""
    return f"{rows / 1e6:.1f} M" if rows >= 1e6 else f"{rows:,.0f}"


def machine_pace_varied(backend: str, steps: Sequence[tuple[float, bool, float | None]],
                        answer: float | None) -> str | None:
    """A warning when the steps that ended a search (`steps`: offered rate, saturated, the CPU time of
    the sampler's fixed work) ran on a machine slower by MACHINE_PACE_SPREAD or more than the search's
    fastest step; None otherwise or when it was not recorded."""
    work = [w for _, _, w in steps if w is not None and w > 0]
    above = [(rate, w) for rate, saturated, w in steps if saturated and (answer is None or rate > answer)]
    if not work or not above:
        return None
    bound = min(rate for rate, _ in above)
    slowest = max((w for rate, w in above if rate == bound and w is not None), default=None)
    if slowest is None or slowest < min(work) * (1 + MACHINE_PACE_SPREAD):
        return None
    return (f"{backend}: at {fmt(bound, 'events/s')}, the rate that ended its search, the machine ran at "
            f"{min(work) / slowest:.0%} of the pace of the search's fastest step (the same fixed work took "
            f"{slowest:.2f} ms of CPU instead of {min(work):.2f}). Every process on it did less per second, so "
            "the limit found is the slower machine's. A virtual machine's cores slow down when its host is busy, "
            "without telling the guest; run the search again, and compare runs by their pace.")


def sustained(shares: Mapping[str, float | None], offered: Mapping[str, float | None]) -> Finding:
    finding = Finding()
    ordered = best(shares)
    for backend, share in ordered:
        verdict = "stable" if share >= STABLE_SHARE else "NOT stable"
        finding.sentences.append(f"{backend}: {share:.0%} of seconds at or above {fmt(offered.get(backend), 'events/s')}"
                                 f" — {verdict} (stable = ≥ {STABLE_SHARE:.0%}).")
    if not ordered:
        finding.sentences.append("No sustained-load trial in this run.")
        return finding
    stable = [b for b, s in ordered if s >= STABLE_SHARE]
    if not stable:
        finding.warnings.append("No backend was stable. With a 1 Hz sampler a second can miss events by timing "
                                "alone; a short trial makes each such second weigh a lot.")
    finding.recommendation = (f"Stable at this rate: {', '.join(stable)}." if stable
                              else "Lower the offered rate or lengthen the trial before relying on it.")
    return finding


def cpu(us_per_event: Mapping[str, float | None]) -> Finding:
    finding = Finding()
    ordered = best(us_per_event, higher_is_better=False)
    if not ordered:
        finding.sentences.append("No CPU figures were recorded.")
        return finding
    top, value = ordered[0]
    finding.sentences.append(f"{top} spent the least CPU per stored event on the archiving path (subscriber + "
                             f"database server): {fmt(value, 'µs')}.")
    for other, v in ordered[1:]:
        finding.sentences.append(f"{other}: {fmt(v, 'µs')} ({_ratio(v, value)}).")
    finding.warnings.append("CPU is sampled from /proc at 1 Hz with 10 ms clock ticks: at low rates a few "
                            "ticks decide the figure.")
    tied = resolved(ordered, relative=CPU_RESOLUTION)
    finding.recommendation = (
        f"On a busy archiving host: {unresolved(tied, f'CPU per event within {CPU_RESOLUTION:.0%}')}."
        if len(tied) > 1 else f"On a busy archiving host, {top} leaves the most CPU for other work.")
    return finding


def loss(rows: Sequence[tuple[str, int, int, int, int]],
         reasons: Mapping[str, Mapping[str, int]] | None = None,
         overload: Mapping[str, int] | None = None, kinds: Sequence[str] = ()) -> Finding:
    """rows: (trial label, emitted, stored, lost, duplicates) of every trial of the run; reasons: trial
    label → reason → events; overload: a saturation search's label → events lost in the steps it found
    saturated (offered above the limit on purpose, so a loss there says how the subscriber fails, not
    that it failed); kinds: the subscriber kinds the trials ran, named when more than one."""
    finding = Finding()
    overload = overload or {}
    emitted = sum(r[1] for r in rows)
    lost_rows = [r for r in rows if r[3] > 0 or r[4] > 0]
    of_kinds = f" of {len(kinds)} subscriber kinds ({', '.join(kinds)})" if len(kinds) > 1 else ""
    finding.sentences.append(f"{len(rows)} trials{of_kinds}, {emitted:,} events emitted in all.")
    if not lost_rows:
        finding.sentences.append("Zero events lost and zero duplicates in every trial.")
        finding.recommendation = "The no-loss claim holds for this run."
    else:
        for label, _, _, lost_n, dup in lost_rows:
            by = ", ".join(f"{n:,} {reason.replace('_', ' ')}" for reason, n in ((reasons or {}).get(label) or {}).items())
            beyond = min(overload.get(label, 0), lost_n)
            where = (" all in steps above the limit" if beyond and beyond == lost_n
                     else f" {beyond:,} of them in steps above the limit" if beyond else "")
            finding.sentences.append(f"{label}: {lost_n:,} lost{f' ({by})' if by else ''},{where}"
                                     f"{',' if where else ''} {dup:,} duplicates.")
        if all(r[4] == 0 and overload.get(r[0], 0) >= r[3] for r in lost_rows):
            finding.recommendation = ("No event was lost at a rate found sustainable: the losses are the "
                                      "saturation search's overload, the steps offered beyond the limit.")
        else:
            finding.recommendation = "A no-loss claim fails for the trials above: read their logs before using their rates."
    return finding


# --- extraction, disk, sizing --------------------------------------------------------------------
def extraction(slopes_s_per_day: Mapping[str, float | None], longest_p95: Mapping[str, float | None],
               cold_warm: Mapping[str, float | None]) -> Finding:
    """cold_warm: backend → cold p95 / warm p95 at the longest interval."""
    finding = Finding()
    ordered = best(slopes_s_per_day, higher_is_better=False)
    for backend, slope in ordered:
        inverse = f", i.e. {fmt(1 / slope, 'days of interval')} per second" if slope > 0 else ""
        finding.sentences.append(f"{backend}: p95 grows by {fmt(slope, 's')} per day of interval{inverse}.")
    if ordered:
        finding.sentences.append(f"Flattest (best figure of merit): {ordered[0][0]}.")
    p95 = best(longest_p95, higher_is_better=False)
    if p95:
        finding.sentences.append("p95 at the longest interval: " + ", ".join(f"{b} {fmt(v, 's')}" for b, v in p95) + ".")
    for backend, ratio in cold_warm.items():
        if ratio is not None:
            finding.sentences.append(f"{backend}: cold / warm p95 = {ratio:.2f}×.")
    if not ordered and not p95:
        finding.sentences.append("No query times could be read.")
    tied = resolved(ordered, relative=QUERY_RESOLUTION)
    if not ordered:
        finding.recommendation = "Measure at least two interval lengths to fit a slope."
    elif len(tied) > 1:
        finding.recommendation = (f"For long-range extraction: "
                                  f"{unresolved(tied, f'p95 slopes within {QUERY_RESOLUTION:.0%}')}.")
    else:
        finding.recommendation = f"For long-range extraction prefer {ordered[0][0]}."
    return finding


def ranking(orders: Mapping[str, Sequence[str]], primary: str) -> Finding:
    finding = Finding()
    if primary not in orders or not orders[primary]:
        finding.sentences.append("Nothing to rank.")
        return finding
    winner = orders[primary][0]
    finding.sentences.append(f"With the {primary} weights, {winner} ranks first "
                             f"({' > '.join(orders[primary])}).")
    winners = {name: order[0] for name, order in orders.items() if order}
    changed = {name: w for name, w in winners.items() if w != winner}
    if changed:
        finding.sentences.append("The winner changes with the weights: " +
                                 ", ".join(f"{name} → {w}" for name, w in changed.items()) + ".")
        finding.recommendation = ("No backend wins on every emphasis: choose the weight set that matches your "
                                  "facility's priorities.")
    else:
        finding.sentences.append(f"{winner} ranks first under every weight set shown.")
        finding.recommendation = f"{winner} is the robust choice for the measured criteria."
    finding.warnings.append("A ranking is only as good as its criteria: check the noisy-figure warnings in the "
                            "sections above before relying on small score differences.")
    return finding

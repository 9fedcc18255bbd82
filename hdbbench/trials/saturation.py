# SPDX-License-Identifier: Apache-2.0
"""The saturation search's verdicts, read from outside the subscriber: the same rules for every kind.

A search offers one rate per step of `step_s` seconds, as hdbbench.trials.search chooses them: rising by a
fixed step until a rate saturates twice (Elettra's, with a repeat), or bracketed and bisected. A step is **saturated** when any of these rules fires (each is named in the results,
so a reader sees why a step failed):

* ``stored_rate`` — over the step (after its first second) the database's own counter grew by less
  than the devices emitted, by more than `STORED_TOLERANCE` plus the counter's resolution (a counter
  that may be `r` s stale is exact to r / window: PostgreSQL's, published once a second, allows 14 %
  more over a 7-s window; MariaDB's none);
* ``visibility_lag`` — the visibility lag of the probe attributes' events grew through the step by
  more than `LAG_GROWTH_LIMIT_S` (least-squares line over the events whose source time lies in the
  step, times the step's length): a queue that keeps growing, whoever holds it;
* ``lost`` — events emitted during the step (by source time) that were never stored: the devices'
  counters against the rows, after the drain (more than `LOST_TOLERANCE` of the step's events, to
  allow for the boundary between steps, sampled once a second), or our subscriber's own loss counter;
* ``error_events`` — the subscriber stored error events with source times in the step (such as
  Tango's "Missed some events" when ZeroMQ dropped events), or its HDB++ ``AttributeNokNumber`` /
  ``AttributeFailureFreq`` rose;
* ``pending`` — supporting evidence from HDB++'s queue, where the kind publishes it: Elettra's rule
  (the step's high-water mark grew six samples in a row without falling below half its peak).

A step the devices could not offer (their schedule fell more than `SOURCE_LAG_LIMIT_S` behind)
proves nothing about the subscriber: it is marked ``source_behind`` and not counted. The search
decides to stop from what it can see at the end of each step; the recorded verdicts are computed
again after the drain, when every row of every step is visible and the loss per step is known, so a
step can only become saturated afterwards, never the reverse. A search comes back below a saturated
rate (a bisection, a stepped search's repeat), so Elettra's rule reads each step's own high-water
mark (the running maximum of the queue sampled in the step): HDB++'s AttributeMaxPendingNumber keeps
the peak a backlog left before it, which is not that step's growth and which a later step's queue
never passes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from hdbbench.model import measure
from hdbbench.model.sampling import TimeSeries
from hdbbench.results.trials import SaturationSearch, SearchStep, StepFigures
from hdbbench.subscribers import statistics as st
from hdbbench.trials import outside as db_side
from hdbbench.trials import search
from hdbbench.trials.search import SearchPlan, Verdict

STORED_TOLERANCE = 0.05
LAG_GROWTH_LIMIT_S = 0.5
LOST_TOLERANCE = 0.005
SOURCE_LAG_LIMIT_S = 1.0  # devices this far behind their schedule did not offer a step's rate
MIN_LAG_EVENTS = 10  # fewer probe events in a step: no lag verdict
RULES = ("stored_rate", "visibility_lag", "lost", "error_events", "pending")
MACHINE_PROBE = "machine"  # the sampler's name for hdbbench.model.sampling.machine_probe (hdbbench.trials.insertion)
DEVICES_PROBE = "proc_devices"  # the sampler's name for the devices' process_probe (hdbbench.trials.insertion)
# HDB++ attributes (every kind publishes them) and ours whose rise during a step means error events or loss.
ERROR_ATTRIBUTES = (st.ATTRIBUTE_NOK_NUMBER, st.ATTRIBUTE_FAILURE_FREQ)
LOSS_ATTRIBUTES = (st.LOST_EVENT_NUMBER,)

Lags = Callable[
    [float, float], Sequence[tuple[float, float]]
]  # (start, end epoch) -> [(source epoch, lag s)]


def criterion_text(counter_resolution_s: float) -> str:
    return (
        f"saturated when the database's counter stored < {1 - STORED_TOLERANCE:.0%} of what the devices emitted "
        f"over the step (less the counter's {counter_resolution_s:g}-s resolution), the visibility lag grew "
        f"> {LAG_GROWTH_LIMIT_S:g} s through the step, events of the step were lost (> {LOST_TOLERANCE:.1%}), "
        "error events were stored or counted (AttributeNokNumber, AttributeFailureFreq), or HDB++'s "
        "AttributeMaxPendingNumber grew 6 samples in a row (Elettra); steps the devices could not offer "
        "are not counted"
    )


@dataclass
class Step(StepFigures):
    """One step of a search as the judge fills it in; recorded as a SearchStep (`record`)."""

    start_s: float = 0.0   # seconds since the series' start (an older run's record may lack them)
    end_s: float = 0.0
    error_events: int | None = 0  # counted after the drain (`StepJudge.add_accounting`)
    # the most the database can have stored per second over the step, given its counter's resolution
    stored_ceiling: float | None = None

    @property
    def saturated(self) -> bool:
        return bool(self.rules)

    def record(self) -> SearchStep:
        figures = {f.name: getattr(self, f.name) for f in fields(StepFigures)}
        return SearchStep(**figures, saturated=self.saturated, errors=self.error_events)


def value_at(times: Sequence[float], values: Sequence[float], at: float) -> float | None:
    """A cumulative column's value at `at`, linear between samples (None outside the sampled span)."""
    if not times or at < times[0] or at > times[-1]:
        return None
    for i in range(1, len(times)):
        if times[i] >= at:
            t0, t1 = times[i - 1], times[i]
            return (
                values[i] if t1 == t0 else values[i - 1] + (values[i] - values[i - 1]) * (at - t0) / (t1 - t0)
            )
    return values[-1]


def lag_growth_s(lags: Sequence[tuple[float, float]], start: float, end: float) -> float | None:
    """How much the lag grew from `start` to `end` (epoch), by the least-squares line over the events."""
    points = [(s, lag) for s, lag in lags if start <= s <= end]
    if len(points) < MIN_LAG_EVENTS:
        return None
    fit = measure.fit_line([p[0] for p in points], [p[1] for p in points])
    return fit.slope * (end - start) if math.isfinite(fit.slope) else None


class StepJudge:
    """Applies the rules to the steps of one search (see the module docstring)."""

    def __init__(
        self,
        series: TimeSeries,
        counter_resolution_s: float,
        lags: Lags | None,
        t0_epoch: float,
        counter: Callable[[TimeSeries], tuple[list[float], list[float]]] | None = None,
    ) -> None:
        self.series = series
        self.counter = counter
        self.resolution_s = counter_resolution_s
        self.lags = lags
        self.t0_epoch = t0_epoch

    def stored_counter(self) -> tuple[list[float], list[float]]:
        """The database's counter (at the samples' instants: hdbbench.trials.outside.Outside.stored_counter), else
        our RowsStoredNumber (a backend without an outside reader)."""
        if self.counter is not None:
            return self.counter(self.series)
        times, counts = self.series.column(db_side.COUNTER_COLUMN)
        return (times, counts) if times else self.series.column(f"sub.{st.ROWS_STORED_NUMBER}")

    def source_behind(self, start_s: float, end_s: float) -> bool:
        """The devices fell behind their schedule during the step (MaxLag): they could not offer its rate.
        Their lag, not their emitted rate over the step, says so: a facility's mix has periods up to a
        minute (and with aligned phases every 10-s attribute fires at once), so a step's window shorter
        than its longest period does not see the rate."""
        times, lags = self.series.column("dev.max_lag_s")
        return any(lag > SOURCE_LAG_LIMIT_S for t, lag in zip(times, lags) if start_s <= t <= end_s)

    def judge(self, step: Step) -> Step:
        """Fill the step's live figures and rules (what the series and the lags seen so far show)."""
        start, end = step.start_s, step.end_s
        emitted_t, emitted = self.series.column("dev.emitted")
        stored_t, stored = self.stored_counter()
        step.source_rate = _rate(emitted_t, emitted, start, end)
        step.source_behind = self.source_behind(start, end)
        inside = [r for t, r in measure.rates_per_second(stored_t, stored) if start + 1 <= t <= end]
        step.stored_median = measure.percentile(inside, 50) if inside else None
        window = (start + 1.0, end)
        step.stored_rate = _rate(stored_t, stored, *window)
        source = _rate(emitted_t, emitted, *window)
        rules: list[str] = []
        length = window[1] - window[0]
        if step.stored_rate is not None and length > self.resolution_s:
            step.stored_ceiling = step.stored_rate * length / (length - self.resolution_s)
        if step.stored_rate is not None and source and window[1] > window[0]:
            allowance = STORED_TOLERANCE + self.resolution_s / length
            if step.stored_rate < source * (1 - allowance):
                rules.append("stored_rate")
        if self.lags is not None:
            lags = self.lags(self.t0_epoch + start, self.t0_epoch + end)
            step.visibility_lag_growth_s = lag_growth_s(lags, self.t0_epoch + window[0], self.t0_epoch + end)
            values = [lag for _, lag in lags]
            step.visibility_lag_p50_s = measure.percentile(values, 50) if values else None
            step.visibility_lag_p99_s = measure.percentile(values, 99) if values else None
            if step.visibility_lag_growth_s is not None and step.visibility_lag_growth_s > LAG_GROWTH_LIMIT_S:
                rules.append("visibility_lag")
        if self._rose(LOSS_ATTRIBUTES, start, end):
            rules.append("lost")
        if self._rose(ERROR_ATTRIBUTES, start, end):
            rules.append("error_events")
        if self._pending_grew(step):
            rules.append("pending")
        step.rules = [r for r in RULES if r in rules]
        step.server_work = self._server_work(start, end)
        step.machine_busy = self._machine_busy(*window)
        step.machine_work_ms = self._machine_work_ms(*window)
        step.device_cpu_us = self._device_cpu_us(*window)
        return step

    def _device_cpu_us(self, start_s: float, end_s: float) -> float | None:
        """The devices' CPU time per event they emitted over the window (µs): no rule, but a pace.
        Their work per event is fixed at a given rate, whatever the backend or the search, and in
        this machine's slow periods it rose by a quarter or more with every other process's, while
        `machine_work_ms` did not move (measured 2026-11-27). Comparable between runs at the same rate."""
        cpu_t, cpu = self.series.column(f"{DEVICES_PROBE}.cpu_s")
        emitted_t, emitted = self.series.column("dev.emitted")
        used, events = _rate(cpu_t, cpu, start_s, end_s), _rate(emitted_t, emitted, start_s, end_s)
        return None if used is None or not events else 1e6 * used / events

    def _machine_work_ms(self, start_s: float, end_s: float) -> float | None:
        """The median over the window of the sampler's fixed work (hdbbench.model.sampling.calibration_ms):
        no rule, but the machine's pace in the step. Every process on a core that runs slower does
        less per second, so a step on a slower machine saturates lower."""
        times, work = self.series.column(f"{MACHINE_PROBE}.work_ms")
        inside = [w for t, w in zip(times, work) if start_s <= t <= end_s]
        return measure.percentile(inside, 50) if inside else None

    def _machine_busy(self, start_s: float, end_s: float) -> float | None:
        """The share of the machine's CPUs busy over the window (hdbbench.model.sampling.machine_probe): no rule,
        but a step near 100 % met the machine's limit, which devices, subscribers and servers share."""
        times, busy = self.series.column(f"{MACHINE_PROBE}.busy_cpu_s")
        _, cpus = self.series.column(f"{MACHINE_PROBE}.cpus")
        used = _rate(times, busy, start_s, end_s)
        return None if used is None or not cpus else used / cpus[-1]

    def _server_work(self, start_s: float, end_s: float) -> list[str]:
        """The server's background work whose count rose during the step (OutsideReader.server_work):
        no rule, but it tells a reader which steps met a checkpoint or a vacuum. The counts run since
        the server started, so a step with no sample before it counts from its own first sample."""
        prefix = f"{db_side.SERVER_WORK_PROBE}."
        return [c.removeprefix(prefix) for c in self.series.columns
                if c.startswith(prefix) and self._column_rose(c, start_s, end_s, since_start=False)]

    def _pending_grew(self, step: Step) -> bool:
        """Elettra's rule, over the step's own high-water mark: the running maximum of the queue
        (AttributePendingNumber) sampled in the step. Not HDB++'s AttributeMaxPendingNumber since the
        statistics were reset: after a saturated step it keeps the peak that step left, and a search
        that comes back below it (a bisection, a stepped search's repeat) would either inherit the
        earlier growth or never see its own."""
        start, end = step.start_s, step.end_s
        times, peaks = self.series.column(f"sub.{st.ATTRIBUTE_MAX_PENDING_NUMBER}")
        if not times:
            return False
        step.max_pending = next((p for t, p in zip(reversed(times), reversed(peaks)) if t <= end), None)
        times, queue = self.series.column(f"sub.{st.ATTRIBUTE_PENDING_NUMBER}")
        own = list(itertools.accumulate((q for t, q in zip(times, queue) if start <= t <= end), max))
        if own:
            step.max_pending = own[-1]
        return measure.elettra_saturated(own)

    def _rose(self, names: Sequence[str], start_s: float, end_s: float) -> bool:
        return any(self._column_rose(f"sub.{name}", start_s, end_s, since_start=True) for name in names)

    def _column_rose(self, column: str, start_s: float, end_s: float, since_start: bool) -> bool:
        """A cumulative column rose during the step: above its last sample before the step, else above 0
        (`since_start`: a count that starts with the series) or above the step's own first sample."""
        times, values = self.series.column(column)
        before = [v for t, v in zip(times, values) if t < start_s]
        inside = [v for t, v in zip(times, values) if start_s <= t <= end_s]
        if not inside:
            return False
        return max(inside) > (before[-1] if before else 0 if since_start else inside[0])

    def add_accounting(self, steps: Sequence[Step], counts: Sequence[tuple[int, int, int]]) -> list[Step]:
        """Each step's events by source time, known after the drain: (emitted, stored, error events)
        per step. A step's loss is the part of the deficit (emitted - stored, summed from the first
        step) that stays for good from that step on: an event stamped just across a step boundary
        from the devices' counter read counts short in one step and over in the next, a lost event
        is short from its step to the end."""
        deficits, running = [], 0
        for emitted, stored, _ in counts:
            running += emitted - stored
            deficits.append(running)
        permanent = [max(0, min(deficits[k:])) for k in range(len(deficits))]
        for k, (step, (emitted, stored, errors)) in enumerate(zip(steps, counts)):
            step.emitted_events, step.stored_events, step.error_events = emitted, stored, errors
            step.lost = max(0, permanent[k] - (max(permanent[:k]) if k else 0))
            rules = set(step.rules)
            if step.lost > LOST_TOLERANCE * max(emitted, 1):
                rules.add("lost")
            if errors:
                rules.add("error_events")
            step.rules = [r for r in RULES if r in rules]
        return list(steps)

    def step_bounds(
        self, steps: Sequence[Step], load_started_epoch: float, total: int
    ) -> list[tuple[float, float, int]]:
        """Each step's source-time window and the events the devices emitted in it: the window runs from
        the load's start (the first step) or from the instant the devices' counter was read at the step's
        first sample, to the next step's, or to the end of time (events pushed as the load stopped
        belong to the last step); the count is the counter's difference between those reads, the
        trial's total for the last step. Splitting at the read instants, not the samples' nominal times,
        keeps a step's events out of its neighbour's (the probes before the devices' take milliseconds)."""
        rows = [row for row in self.series.rows if "dev.emitted" in row and "dev.read_epoch" in row]
        marks: list[tuple[float, float]] = [(load_started_epoch, 0.0)]
        for step in steps[1:]:
            row = next((r for r in rows if r["t_s"] >= step.start_s), None)
            marks.append((row["dev.read_epoch"], row["dev.emitted"]) if row else (math.inf, float(total)))
        marks.append((math.inf, float(total)))
        return [(a[0], b[0], max(0, int(round(b[1] - a[1])))) for a, b in zip(marks, marks[1:])]


def _rate(times: Sequence[float], counts: Sequence[float], start: float, end: float) -> float | None:
    """The counter's rate over [start, end], the end cut to the last sample (the sampler stops with
    the load, up to a sample period before the last step's nominal end)."""
    if times:
        end = min(end, times[-1])
    a, b = value_at(times, counts, start), value_at(times, counts, end)
    if a is None or b is None or end <= start:
        return None
    return (b - a) / (end - start)


def summary(steps: Sequence[Step], counter_resolution_s: float, plan: SearchPlan | None = None) -> SaturationSearch:
    """results.json ``saturation`` of a search, with its mode and resolution (`plan`; None: a stepped
    search of unknown step). Its answer is read from the verdicts recomputed after the drain
    (hdbbench.trials.search.answer); what ended it is the lowest rate above the answer that failed."""
    last = search.answer(verdicts(steps, plan))
    above = [s for s in steps if (last is None or s.offered_rate > last) and (s.saturated or s.source_behind)]
    bound = min((s.offered_rate for s in above), default=None)
    at_bound = [s for s in above if s.offered_rate == bound]
    saturated = [s for s in at_bound if s.saturated]
    if saturated:
        limited_by, ended_by = "subscriber", list(saturated[0].rules)
    elif at_bound:
        limited_by, ended_by = "source", ["source_behind"]  # the devices could not push more
    else:
        limited_by, ended_by = "none (last step reached)", []
    mode = plan.mode if plan is not None else "step"
    return SaturationSearch(steps=[s.record() for s in steps], last_sustainable_rate=last, limited_by=limited_by,
                            ended_by=ended_by, criterion=criterion_text(counter_resolution_s),
                            lost=sum(s.lost or 0 for s in steps), error_events=sum(s.error_events or 0 for s in steps),
                            mode=mode, resolution=plan.precision if plan is not None else None)


def verdicts(steps: Sequence[Step], plan: SearchPlan | None = None) -> list[tuple[float, Verdict]]:
    """Each step's rate and verdict, as hdbbench.trials.search reads them, in the order they ran (`plan`: a
    bisect search's steps saturated beyond doubt are `overload`, which it does not repeat, unless the
    same or a higher rate passed before: what changed then was the machine's pace, and the step is
    repeated like any saturated one)."""
    out: list[tuple[float, Verdict]] = []
    highest_pass = -math.inf
    for s in steps:
        verdict: Verdict = ("source" if s.source_behind else "pass" if not s.saturated
                            else "saturated" if s.offered_rate <= highest_pass
                            else _saturated_verdict(s, plan))
        if verdict == "pass":
            highest_pass = max(highest_pass, s.offered_rate)
        out.append((s.offered_rate, verdict))
    return out


def _saturated_verdict(step: Step, plan: SearchPlan | None) -> Verdict:
    return "overload" if plan is not None and plan.mode == "bisect" and beyond_doubt(step, plan) else "saturated"


def beyond_doubt(step: Step, plan: SearchPlan) -> bool:
    """A saturated step whose remaining seconds, or a repeat, could not turn its verdict: the
    subscriber counted events lost, or the database stored less than the step's rate by
    `search.overload_ratio` or more. Read against the most its counter allows (`stored_ceiling`): a
    counter published once a second reads a 4-s window up to a quarter low."""
    if not step.saturated:
        return False
    if "lost" in step.rules:
        return True
    return step.stored_ceiling is not None and step.stored_ceiling * search.overload_ratio(plan) <= step.offered_rate


def error_counts(errors: Mapping[str, Mapping[str, int]]) -> int:
    return sum(sum(per.values()) for per in errors.values())

# SPDX-License-Identifier: Apache-2.0
"""Measured unit costs, gathered from runs and turned into lines over the stored rate.

Every insertion trial records what a stored event cost over its steady part, and every saturation step
over its window (hdbbench.results.trials.UnitCosts: cores per process group, the database server's
write requests, bytes written and WAL/redo bytes, read from outside the subscriber). A **window** here is
one of those: a trial that kept up, or a step that did not saturate, of one backend and subscriber kind
at the batch size the plan is for (a batch sweep's other batch sizes cost another amount per event: CPU
per event falls with batching).

A quantity (cores of a group, write IOPS, bytes written per second, log bytes per second) is then
`fixed + per_event × rate`: where the windows span rates at least MIN_RATE_SPAN apart, by least squares
over them (the subscribers' fixed part per subscriber process, since a plan may run another number of
archivers than the trials did); a quantity that did not rise with the rate (a negative slope: work driven by
timers, not events) is fixed at its mean. Otherwise (close rates, or a line with a negative fixed part) one
cost per event over all of them (their total over their events: the all-in cost, which overstates a larger
rate when part of the cost is fixed). The all-in cost at each window says whether the cost per event
held constant over the rates measured (within CONSTANT_WITHIN); the plan says so where it did not.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError
from hdbbench.results.document import ResultsFormatError, read_trials
from hdbbench.results.hardware import UnitCostFit
from hdbbench.results.trials import TrialSummary

MIN_RATE_SPAN = 1.5      # highest over lowest rate for a line to be fitted rather than one cost per event
CONSTANT_WITHIN = 0.25   # all-in costs per event within ±25 % of their median: "constant over the rates measured"
KEPT_UP_SHARE = 0.9      # a trial's share of seconds at its offered rate for its costs to count
SUBSCRIBERS = "subscribers"  # the process group of the subscribers (hdbbench.trials.insertion probes)
DEFAULT_KIND = "hdbbench-es"


@dataclass(frozen=True)
class Window:
    """One measured window: a trial's steady part or a saturation step's."""

    run: str
    label: str
    rate: float            # events stored per second
    subscribers: int
    attributes: int
    batch_size: int | None
    costs: Any             # hdbbench.results.trials.UnitCosts


@dataclass(frozen=True)
class MeasuredRun:
    path: Path                      # the run directory
    trials: list[TrialSummary]
    variant: str | None             # the schema variant its trials ran on ([schema] variant)
    inventory: Path | None = None   # the inventory its devices emitted ([devices] inventory), if any


def read_runs(run_dirs: Sequence[Path]) -> list[MeasuredRun]:
    """Each run's insertion trials; ConfigError in one line for a run without any."""
    out = []
    for run in run_dirs:
        path = Path(run) / "results.json" if Path(run).is_dir() else Path(run)
        if not path.exists():
            raise ConfigError(f"{path}: no such results file (give a run directory of `hdbbench run`)")
        try:
            document, results = read_trials(path)
        except ResultsFormatError as exc:
            raise ConfigError(str(exc)) from None
        if not results.trials:
            raise ConfigError(f"{path}: holds no insertion trials (run a scenario with [measurements] first)")
        variant = document.scenario.get("schema_variant")  # as hdbbench.scenario.scenario records it
        facility = document.scenario.get("facility")
        devices = facility.get("inventory") if isinstance(facility, dict) else None
        out.append(MeasuredRun(path.parent, list(results.trials), str(variant) if variant else None,
                               Path(str(devices)) if devices else None))
    return out


def windows(runs: Sequence[MeasuredRun], backend: str, kind: str,
            batch_size: int | None = None) -> list[Window]:
    """The windows of `backend` and subscriber `kind` whose costs a plan may use (the module docstring),
    at `batch_size` (default: the batch size of the backend's throughput or saturation trial)."""
    trials = [(run.path, t) for run in runs for t in run.trials
              if t.backend == backend and (t.subscriber_kind or DEFAULT_KIND) == kind and t.same_as is None]
    if batch_size is None:
        batch_size = next((t.batch_size for _, t in trials if t.kind in ("throughput", "saturation")),
                          trials[0][1].batch_size if trials else None)
    out = []
    for run, t in trials:
        if t.batch_size != batch_size or t.kind == "growth":
            continue
        attributes = len(t.accounting.per_attribute) or 0
        if t.saturation is not None:
            for n, step in enumerate(t.saturation.steps):
                costs = getattr(step, "unit_costs", None)
                if costs is not None and not step.saturated and costs.stored_rate > 0:
                    out.append(Window(run.name, f"{t.label} step {n + 1}", costs.stored_rate, t.subscribers,
                                      costs.attributes or attributes, t.batch_size, costs))
            continue
        costs = getattr(t, "unit_costs", None)
        kept_up = t.sustained_share is None or t.sustained_share >= KEPT_UP_SHARE
        if costs is not None and kept_up and t.drained and costs.stored_rate > 0:
            out.append(Window(run.name, t.label, costs.stored_rate, t.subscribers, costs.attributes or attributes,
                              t.batch_size, costs))
    return out


def fit(windows_: Sequence[Window], value: Callable[[Window], float | None],
        per_subscriber: bool = False) -> UnitCostFit | None:
    """`value` (a quantity per second) as fixed + per_event × rate over the windows that have it; the
    fixed part per subscriber process when `per_subscriber`. None when no window has the quantity."""
    points = [(w.rate, float(v), w.subscribers) for w in windows_ if (v := value(w)) is not None and v == v]
    if not points:
        return None
    rates = [r for r, _, _ in points]
    all_in = [v / r for r, v, _ in points]
    middle = statistics.median(all_in)
    constant = all(abs(c - middle) <= CONSTANT_WITHIN * abs(middle) for c in all_in) if middle else True
    span = max(rates) / min(rates)
    fixed, per_event, how = 0.0, sum(v for _, v, _ in points) / sum(rates), ""
    if len(points) >= 2 and span >= MIN_RATE_SPAN:
        values = [v for _, v, _ in points]
        a, b = _least_squares(rates, values)
        span_words = f"{len(points)} windows at {min(rates):,.0f}–{max(rates):,.0f} events/s"
        if a >= 0 and b >= 0:
            fixed, per_event = a, b
            how = f"line over {span_words}"
        elif b < 0:
            # The quantity did not rise with the rate (timer-driven work: a WAL writer's flushes, a poller):
            # no per-event part to carry to another rate; it counts as fixed, at its mean.
            fixed, per_event = statistics.fmean(values), 0.0
            how = f"fixed: it did not rise with the rate over {span_words} (its mean)"
        else:
            how = f"one cost per event over {span_words} (the line had a negative fixed part)"
    else:
        why = "one window" if len(points) == 1 else f"rates within {span:.2f}×"
        how = f"one cost per event over {len(points)} window(s) ({why}: no line; the fixed part counts per event)"
    if per_subscriber:
        fixed /= statistics.median(s for _, _, s in points)
    return UnitCostFit(fixed=fixed, per_event=per_event, points=len(points), rates=[min(rates), max(rates)],
                       per_event_range=[min(all_in), max(all_in)], constant=constant, how=how)


def at_rate(f: UnitCostFit, rate: float, processes: int = 1) -> float:
    """The fitted quantity at `rate` events/s, with `processes` times the fixed part."""
    return f.fixed * processes + f.per_event * rate


def spread_words(f: UnitCostFit, scale: float, unit: str) -> str:
    """The all-in cost per event over the windows, in words (`scale` turns it into `unit`)."""
    low, high = (x * scale for x in f.per_event_range)
    held = "constant" if f.constant else "not constant"
    span = f"{low:,.3g} {unit}" if abs(high - low) <= 1e-12 * max(1.0, abs(high)) else \
        f"{low:,.3g}–{high:,.3g} {unit}"
    return (f"{span} per event over {f.points} window(s) at {f.rates[0]:,.0f}–{f.rates[1]:,.0f} events/s "
            f"({held} within ±{CONSTANT_WITHIN:.0%})")


def _least_squares(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxx = sum((a - mx) ** 2 for a in x)
    b = sum((a - mx) * (c - my) for a, c in zip(x, y)) / sxx
    return my - b * mx, b


def machine_of(windows_: Sequence[Window]) -> str:
    """The pace the windows were measured at (median of the sampler's fixed work), in words."""
    paces = [w.costs.machine_work_ms for w in windows_ if w.costs.machine_work_ms is not None]
    if not paces:
        return "pace not recorded"
    return (f"pace {statistics.median(paces):.2f} ms of fixed work (hdbbench.model.sampling.calibration_ms; "
            f"{min(paces):.2f}–{max(paces):.2f} over the windows)")

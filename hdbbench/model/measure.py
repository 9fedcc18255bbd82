# SPDX-License-Identifier: Apache-2.0
"""Statistics of the methodology (../shared/methodology.md), as pure functions over samples.

Throughput is a distribution: per-second rates from a cumulative counter sampled about once a second,
summarised over the steady part (after warm-up) by median, p1, p99 and mean. Sweeps are fitted:
rate against log2(batch size), rate against writers (linear part and where it saturates). The
Elettra saturation criterion and the sustained-load share are decisions over time series.
Nothing here touches a server, so every rule is unit-tested on made-up series.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Distribution:
    """Summary of per-second values (rates, ages) over the steady part of a run."""

    count: int
    median: float
    p1: float
    p99: float
    mean: float
    min: float
    max: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100] (numpy's default method)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lower = math.floor(pos)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (pos - lower)


def distribution(values: Sequence[float]) -> Distribution:
    if not values:
        nan = math.nan
        return Distribution(0, nan, nan, nan, nan, nan, nan)
    return Distribution(
        count=len(values), median=percentile(values, 50), p1=percentile(values, 1), p99=percentile(values, 99),
        mean=sum(values) / len(values), min=min(values), max=max(values),
    )


def rates_per_second(times_s: Sequence[float], counts: Sequence[float]) -> list[tuple[float, float]]:
    """(time, rate) for each interval between samples of a cumulative counter.

    A counter that goes down (a reset or restart) contributes no negative rate: that interval is skipped.
    """
    rates = []
    for (t0, c0), (t1, c1) in zip(zip(times_s, counts), zip(times_s[1:], counts[1:])):
        if t1 > t0 and c1 >= c0:
            rates.append((t1, (c1 - c0) / (t1 - t0)))
    return rates


def steady(series: Sequence[tuple[float, float]], start_s: float, end_s: float | None = None) -> list[float]:
    """Values whose timestamps fall after warm-up (and before the tail, when given)."""
    return [v for t, v in series if t >= start_s and (end_s is None or t <= end_s)]


@dataclass(frozen=True)
class LineFit:
    slope: float
    intercept: float
    r2: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> LineFit:
    """Least-squares y = slope * x + intercept, with the coefficient of determination."""
    n = len(xs)
    if n < 2 or len(ys) != n:
        return LineFit(math.nan, math.nan, math.nan)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return LineFit(math.nan, my, math.nan)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (slope * x + intercept)) ** 2 for x, y in zip(xs, ys))
    return LineFit(slope, intercept, 1.0 - ss_res / ss_tot if ss_tot else 1.0)


def fit_log2(batch_sizes: Sequence[float], rates: Sequence[float]) -> LineFit:
    """Rate against log2(batch size): the slope is events/s gained per doubling of the batch."""
    return fit_line([math.log2(b) for b in batch_sizes], rates)


@dataclass(frozen=True)
class ScalingFit:
    """Rate against the number of writers: the linear part and where it stops."""

    fit: LineFit
    linear_up_to: float          # last writer count still on the line
    saturation_at: float | None  # first writer count that fell below it, None if none did

    def to_dict(self) -> dict[str, Any]:
        return {"fit": self.fit.to_dict(), "linear_up_to": self.linear_up_to, "saturation_at": self.saturation_at}


def fit_scaling(writers: Sequence[float], rates: Sequence[float], tolerance: float = 0.10) -> ScalingFit:
    """Grow the linear part point by point while each new point stays within tolerance of the line
    through the points before it; the first point that falls short marks saturation."""
    points = sorted(zip(writers, rates))
    if len(points) < 2:
        only = points[0][0] if points else math.nan
        return ScalingFit(LineFit(math.nan, math.nan, math.nan), only, None)
    used = points[:2]
    saturation = None
    for x, y in points[2:]:
        fit = fit_line([p[0] for p in used], [p[1] for p in used])
        predicted = fit.slope * x + fit.intercept
        if predicted > 0 and y < predicted * (1 - tolerance):
            saturation = x
            break
        used.append((x, y))
    fit = fit_line([p[0] for p in used], [p[1] for p in used])
    return ScalingFit(fit, used[-1][0], saturation)


ELETTRA_RISING_SAMPLES = 6
# The shortest saturation step in which the rule can fire, at the insertion benchmark's 1 Hz sampling:
# six rises need seven samples.
MIN_SATURATION_STEP_S = ELETTRA_RISING_SAMPLES + 1.0


def elettra_saturated(max_pending: Sequence[float], rising_samples: int = ELETTRA_RISING_SAMPLES) -> bool:
    """Elettra's rule: the max-pending figure grew `rising_samples` samples in a row without ever
    falling below half of its peak so far. "In a row": a sample that does not grow starts the count
    again, so a queue that only oscillates (a batch filling while the previous one commits) is not
    saturation; a queue that outgrows its writer sets a new maximum every sample."""
    run = 0
    peak = 0.0
    previous: float | None = None
    for value in max_pending:
        peak = max(peak, value)
        if value < peak / 2 or previous is None or value <= previous:
            run = 0
        else:
            run += 1
            if run >= rising_samples:
                return True
        previous = value
    return False


def sustained_share(rates: Sequence[float], offered_rate: float, slack: float = 0.0) -> float:
    """Share of seconds whose stored rate kept up with the offered rate (stable when >= 0.99)."""
    if not rates:
        return 0.0
    kept = sum(1 for r in rates if r >= offered_rate * (1 - slack))
    return kept / len(rates)

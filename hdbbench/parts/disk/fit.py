# SPDX-License-Identifier: Apache-2.0
"""bytes = fixed + marginal x events, fitted over the sizes a case was measured at.

A table's size at small scale is dominated by what does not grow with the rows: empty pages of a
new B-tree, the first extents of an InnoDB file, a chunk's catalog pages. What a facility pays per
archived event at a billion rows is the slope, so each case is measured at several cumulative sizes
(geometric, spanning `span` x) and fitted. The fit minimises *relative* residuals (weights 1/y²):
every size counts alike, so a few pages at the smallest size cannot hide behind megabytes at the
largest. A case is `linear` when every measured size lies within LINEAR_TOLERANCE of the line; one
that does not is flagged and its marginal is not used by planning. Fewer than MIN_SIZES sizes cannot
show a curve: such a fit is kept, and its note says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

LINEAR_TOLERANCE = 0.03  # largest |measured - fitted| / measured of a usable fit
MIN_SIZES = 3
POINTS = 5  # sizes per case, geometric between events/span and events


@dataclass(frozen=True)
class SizeFit:
    fixed_bytes: float
    marginal_bytes_per_event: float
    r2: float
    max_residual: float  # largest relative residual over the sizes
    sizes: tuple[int, ...]
    linear: bool
    note: str = ""

    @property
    def span(self) -> float:
        return self.sizes[-1] / self.sizes[0] if self.sizes and self.sizes[0] else math.nan

    def at(self, events: float) -> float:
        return self.fixed_bytes + self.marginal_bytes_per_event * events

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"span": self.span}


def geometric_sizes(events: int, span: float, step: int = 1, points: int = POINTS) -> tuple[int, ...]:
    """Cumulative event counts from about events/span up to events, rounded to multiples of `step`
    (the attributes of a case: every attribute then has as many events), ascending, distinct."""
    if span <= 1 or events <= step:
        return (events,)
    low = max(step, events / span)
    ratio = (events / low) ** (1 / (points - 1))
    sizes = {max(step, int(round(low * ratio**k / step)) * step) for k in range(points - 1)}
    return tuple(sorted(s for s in sizes if s < events)) + (events,)


def weighted_line(xs: Sequence[float], ys: Sequence[float], ws: Sequence[float]) -> tuple[float, float]:
    """(intercept, slope) of the weighted least-squares line."""
    sw = sum(ws)
    mx = sum(w * x for w, x in zip(ws, xs)) / sw
    my = sum(w * y for w, y in zip(ws, ys)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs))
    if sxx == 0:
        return math.nan, math.nan
    slope = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys)) / sxx
    return my - slope * mx, slope


def relative_weights(ys: Sequence[float]) -> list[float]:
    return [1.0 / max(abs(y), 1.0) ** 2 for y in ys]


def fit_sizes(events: Sequence[int], measured: Sequence[float], weights: Sequence[float] | None = None) -> SizeFit:
    """Fit measured bytes against events; flag the fit when a size lies off the line."""
    sizes = tuple(int(e) for e in events)
    if len(sizes) < 2:
        marginal = measured[0] / sizes[0] if sizes and sizes[0] else math.nan
        return SizeFit(0.0, marginal, math.nan, math.nan, sizes, True, "one size only: bytes / events, fixed part not separated")
    ws = list(weights) if weights is not None else relative_weights(measured)
    fixed, marginal = weighted_line(sizes, measured, ws)
    fitted = [fixed + marginal * n for n in sizes]
    residuals = [abs(f - y) / abs(y) if y else math.inf for f, y in zip(fitted, measured)]
    worst = max(residuals)
    mean = sum(measured) / len(measured)
    ss_tot = sum((y - mean) ** 2 for y in measured)
    r2 = 1.0 - sum((y - f) ** 2 for y, f in zip(measured, fitted)) / ss_tot if ss_tot else 1.0
    linear = worst <= LINEAR_TOLERANCE and marginal > 0
    note = ""
    if not linear:
        at = sizes[residuals.index(worst)]
        note = (f"not a line: {100 * worst:.1f} % off at {at} events" if marginal > 0
                else "not a line: bytes do not grow with events")
    elif len(sizes) < MIN_SIZES:
        note = f"only {len(sizes)} sizes (at least {MIN_SIZES} are needed)"
    return SizeFit(fixed, marginal, r2, worst, sizes, linear, note)


def part_marginals(events: Sequence[int], parts: dict[str, Sequence[float]], weights: Sequence[float]) -> dict[str, float]:
    """Marginal of each part (data, index, ...) with the weights of the total's fit, so that the
    parts' marginals add up to the total's."""
    if len(events) < 2:
        return {k: (v[0] / events[0] if events and events[0] else math.nan) for k, v in parts.items()}
    return {k: weighted_line(events, v, weights)[1] for k, v in parts.items()}

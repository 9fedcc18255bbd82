# SPDX-License-Identifier: Apache-2.0
"""Which rate a saturation search offers next, and what it found: pure functions over verdicts.

Two modes (``[measurements] saturation.mode``):

* ``step`` — Elettra's search: from `start_rate`, +`step` per step, `max_steps` at most (repeats
  included), ending at the first rate that saturated twice or that the devices could not offer. A
  step that saturates is **repeated** (after a drain) before it ends the search: near the limit one
  8-s step's verdict turns on whether a checkpoint or a vacuum fell in it (#31: a search that ended
  at 55,140 on one such step, where the searches before and after it sustained 66,719). A repeat
  that passes lets the search rise on, and that rate is no answer. Its resolution is its step.
* ``bisect`` — bracket, then bisect: the rate doubles from `start_rate` (capped at `max_rate`) until
  a step saturates, then the geometric middle of the highest passing rate (lo) and the lowest
  failing one (hi) is offered until hi / lo <= 1 + `resolution`. A bound is then **confirmed by a
  repeat**: lo is offered again (a repeat that fails makes it the new hi, and the bisection goes
  on), then hi (after a drain; a repeat that passes leaves hi unconfirmed but still not sustainable).
  A step the devices could not offer bounds the search from above like a saturated one but is no
  verdict on the subscriber. Before the step after a saturated (or source-behind) one the load is
  stopped and the subscriber's queue drained (hdbbench.insertion), so a backlog never pollutes the
  next step; the drain is not a step. A step the rules find saturated after 5 s ends there
  (hdbbench.insertion.EARLY_VERDICT_S): its verdict is made, and more seconds far above the limit
  would only add backlog and rows that slow the steps after it. Before it ends, the trial judges every step again over the
  whole series (hdbbench.insertion): a verdict that changed can reopen the bracket.

Both modes read their answer the same way, from the verdicts as recomputed after the drain (a step can only become
saturated then, never the reverse): the highest rate every one of whose counted steps passed and
that lies below every confirmed-saturated rate (saturated at least twice), `answer`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Mode = Literal["step", "bisect"]
MODES: tuple[Mode, ...] = ("step", "bisect")
Verdict = Literal["pass", "saturated", "source"]  # source: the devices could not offer the rate


@dataclass(frozen=True)
class SearchPlan:
    """A search as a trial runs it: the mode, where it starts and when it ends."""

    mode: Mode
    start_rate: float
    step: float = 0.10          # step mode: the relative rise per step
    max_steps: int = 15         # both modes: at most this many steps (repeats included)
    resolution: float = 0.05    # bisect mode: hi / lo at the end
    max_rate: float = math.inf  # bisect mode: never offered above

    @property
    def precision(self) -> float:
        """The relative resolution of the answer: the step of a stepped search."""
        return self.step if self.mode == "step" else self.resolution

    def step_rates(self) -> list[float]:
        return [self.start_rate * (1 + self.step) ** k for k in range(self.max_steps)]

    def expected_steps(self) -> int:
        """How many steps to expect (for progress, not a limit): a step mode's full range; a bisect
        search's bracket, its halvings down to the resolution and two repeats."""
        if self.mode == "step":
            return self.max_steps
        halvings = math.ceil(math.log2(math.log(2) / math.log(1 + self.resolution)))
        doublings = 3 if math.isinf(self.max_rate) else math.ceil(math.log2(max(1.0, self.max_rate / self.start_rate)))
        return min(self.max_steps, 1 + min(3, doublings) + halvings + 2)


@dataclass(frozen=True)
class Bounds:
    lo: float | None            # the highest rate all of whose steps passed, below hi
    hi: float | None            # the lowest rate that saturated or that the devices could not offer


def _by_rate(tried: Sequence[tuple[float, Verdict]]) -> dict[float, list[Verdict]]:
    out: dict[float, list[Verdict]] = {}
    for rate, verdict in tried:
        out.setdefault(rate, []).append(verdict)
    return out


def bounds(tried: Sequence[tuple[float, Verdict]]) -> Bounds:
    """The bracket the verdicts so far give: any failure at a rate makes it unsustainable."""
    rates = _by_rate(tried)
    failing = [r for r, v in rates.items() if any(x != "pass" for x in v)]
    hi = min(failing, default=None)
    passing = [r for r, v in rates.items() if all(x == "pass" for x in v) and (hi is None or r < hi)]
    return Bounds(max(passing, default=None), hi)


def next_rate(plan: SearchPlan, tried: Sequence[tuple[float, Verdict]]) -> float | None:
    """The rate of the next step, None when the search is over (`tried`: rate and live verdict of each step)."""
    if not tried:
        return plan.start_rate
    if len(tried) >= plan.max_steps:
        return None
    if plan.mode == "step":
        rate, verdict = tried[-1]
        if verdict == "source":
            return None
        if verdict == "saturated":
            return rate if [r for r, _ in tried].count(rate) < 2 else None  # confirm it, else done
        return next((r for r in plan.step_rates() if r > rate), None)
    rates = _by_rate(tried)
    b = bounds(tried)
    if b.hi is None:  # still bracketing: double, up to max_rate
        assert b.lo is not None
        if b.lo < plan.max_rate:
            return min(2 * b.lo, plan.max_rate)
        return b.lo if len(rates[b.lo]) < 2 else None  # max_rate held: confirmed, done
    if b.lo is None:  # even the lowest rate failed: halve (max_steps ends a search that never passes)
        return b.hi / 2
    if b.hi / b.lo > 1 + plan.resolution:
        return math.sqrt(b.lo * b.hi)
    if len(rates[b.lo]) < 2:
        return b.lo  # confirm the answer
    hi_verdicts = rates[b.hi]
    if "saturated" in hi_verdicts and len(hi_verdicts) < 2:
        return b.hi  # confirm the bound (a source-behind bound says nothing about the subscriber)
    return None


def answer(steps: Sequence[tuple[float, Verdict]]) -> float | None:
    """The last sustainable rate: the highest rate every counted step of which passed (after the
    drain's recomputation) and that lies below every confirmed-saturated rate."""
    rates = _by_rate(steps)
    confirmed = [r for r, v in rates.items() if v.count("saturated") >= 2]
    ceiling = min(confirmed, default=math.inf)
    passing = [r for r, v in rates.items()
               if r < ceiling and all(x != "saturated" for x in v) and "pass" in v]
    return max(passing, default=None)

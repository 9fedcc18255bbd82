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
  a rate fails, then the geometric middle of the highest rate that passed (lo) and the lowest that
  failed (hi) is offered until hi / lo <= 1 + `resolution`. The highest rate that passed is offered
  again to confirm it as soon as a rate above it fails, not at the end: the machine's pace can change
  within a search, and a confirmation left until after the overload and the failed steps met another
  pace than the step it confirms.
  A rate fails as in the stepped search: a step that saturates is **repeated** at once, and the rate
  fails when it saturated twice in a row; a repeat that passes lets the search rise on from it (and
  that rate is no answer). A step that stored less than its rate by two resolutions or more
  (`overload_ratio`: the doubling's step at twice the limit) saturated beyond doubt and is not
  repeated, unless that rate or a higher one passed earlier in the search: then the pace changed,
  not the subscriber, and the step is repeated like any saturated one. A step the devices could
  not offer bounds the search from above like a failed rate but is no verdict on the subscriber.
  Before the step after a saturated (or source-behind) one the load is stopped and the
  subscriber's queue drained (hdbbench.trials.insertion), so a backlog never pollutes the next step; the
  drain is not a step. A step saturated beyond doubt after 3 s (the lost events, or the stored rate
  over its last 2 s) ends there (hdbbench.trials.insertion.EARLY_VERDICT_S): more seconds far above the
  limit would only add backlog and rows that slow the steps after it; a step near the limit runs
  its length, as in the stepped search. Before it ends, the trial judges every step again over the
  whole series (hdbbench.trials.insertion): a verdict that changed can reopen the bracket.

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
# source: the devices could not offer the rate; overload: a bisect step saturated beyond doubt
# (`overload_ratio`), which is not repeated
Verdict = Literal["pass", "saturated", "source", "overload"]


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
        search's bracket, its halvings down to the resolution, two confirming repeats (the answer's
        and an earlier candidate's) and two repeats of failed steps."""
        if self.mode == "step":
            return self.max_steps
        halvings = math.ceil(math.log2(math.log(2) / math.log(1 + self.resolution)))
        doublings = 3 if math.isinf(self.max_rate) else math.ceil(math.log2(max(1.0, self.max_rate / self.start_rate)))
        return min(self.max_steps, 1 + min(3, doublings) + halvings + 4)


def _by_rate(tried: Sequence[tuple[float, Verdict]]) -> dict[float, list[Verdict]]:
    out: dict[float, list[Verdict]] = {}
    for rate, verdict in tried:
        out.setdefault(rate, []).append(verdict)
    return out


def overload_ratio(plan: SearchPlan) -> float:
    """A bisect step stored less than its rate by this factor or more: saturated beyond doubt. Two of
    the search's resolutions: a rate that far above what the subscriber stored does not pass on a
    repeat, whichever checkpoint or vacuum fell in the step."""
    return (1 + plan.resolution) ** 2


def _status(verdicts: Sequence[Verdict]) -> Literal["bound", "repeat", "pass", "mixed"]:
    """What a rate's verdicts so far make it, by Elettra's rule: a rate bounds the search when it
    saturated twice in a row (or once beyond doubt, or the devices could not offer it); a rate that
    saturated once is repeated; a rate that passed on its repeat lets the search rise on, but is no
    answer (`mixed`)."""
    if "source" in verdicts or "overload" in verdicts or list(verdicts[-2:]) == ["saturated", "saturated"]:
        return "bound"
    if verdicts[-1] == "saturated":
        return "repeat"
    return "mixed" if "saturated" in verdicts else "pass"


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
        if verdict in ("saturated", "overload"):
            return rate if [r for r, _ in tried].count(rate) < 2 else None  # confirm it, else done
        return next((r for r in plan.step_rates() if r > rate), None)
    return _next_bisect_rate(plan, _by_rate(tried), last=tried[-1][0])


def _next_bisect_rate(plan: SearchPlan, rates: dict[float, list[Verdict]], last: float) -> float | None:
    """Bracket by doubling, bisect to the resolution, confirm the answer (`last`: the rate of the
    step just judged). A saturated step is repeated at once, as in the stepped search: near the
    limit one step's verdict turns on whether a checkpoint or a vacuum fell in it, and a bound taken
    from one unlucky step put the bisect searches' answers below the stepped ones in 9 of 12
    comparisons (#31). The highest rate that passed is confirmed as soon as a rate above it fails,
    before the search goes on: confirmed at the end, after the doubling's overload and the
    bisection's failed steps, it met a machine slower by a fifth or more, failed, and the search
    followed the slowdown down, to 56,569 on TimescaleDB where the stepped search answered 80,730
    minutes later (seen 2026-11-27)."""
    status = {r: _status(v) for r, v in rates.items()}
    hi = min((r for r, s in status.items() if s == "bound"), default=None)
    below = [r for r in rates if hi is None or r < hi]
    repeat = [r for r in below if status[r] == "repeat"]
    if repeat:
        return min(repeat)
    lo = max((r for r in below if status[r] in ("pass", "mixed")), default=None)
    if hi == last and lo is not None and status[lo] == "pass" and len(rates[lo]) < 2:
        return lo  # a rate above lo just failed: lo is the answer unless a higher one passes, confirm it now
    if hi is None:  # still bracketing: double, up to max_rate
        assert lo is not None
        if lo < plan.max_rate:
            return min(2 * lo, plan.max_rate)
        return lo if len(rates[lo]) < 2 else None  # max_rate held: confirmed, done
    if lo is None:  # even the lowest rate failed: halve (max_steps ends a search that never passes)
        return hi / 2
    if hi / lo > 1 + plan.resolution:
        return math.sqrt(lo * hi)
    if status[lo] == "pass":
        return lo if len(rates[lo]) < 2 else None  # confirm the answer
    # lo passed only on its repeat, so it is no answer: the answer is the highest rate that passed
    # every time, offered one resolution below lo if there is none that close (the stepped search's
    # answer is the step below such a rate), and confirmed by a repeat
    clean = max((r for r in below if status[r] == "pass"), default=None)
    if clean is None or lo / clean > 1 + plan.resolution:
        below_lo = lo / (1 + plan.resolution)
        return below_lo if below_lo not in rates else None
    return clean if len(rates[clean]) < 2 else None


def answer(steps: Sequence[tuple[float, Verdict]]) -> float | None:
    """The last sustainable rate: the highest rate every counted step of which passed (after the
    drain's recomputation) and that lies below every confirmed-saturated rate."""
    rates = {r: ["saturated" if x == "overload" else x for x in v] for r, v in _by_rate(steps).items()}
    confirmed = [r for r, v in rates.items() if v.count("saturated") >= 2]
    ceiling = min(confirmed, default=math.inf)
    passing = [r for r, v in rates.items()
               if r < ceiling and all(x != "saturated" for x in v) and "pass" in v]
    return max(passing, default=None)

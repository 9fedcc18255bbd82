# SPDX-License-Identifier: Apache-2.0
"""Progress of a run's trials that people can read: live on a terminal, plain lines elsewhere.

On a terminal a rich progress bar per trial shows the trial, the rate stored over the last samples
(the database's counter where the trial reads it), the queue (HDB++'s AttributePendingNumber) and
the visibility lag, with elapsed time and an estimate of what is left. Not on a terminal (CI logs,
a redirected run) the same figures go out as one plain line every `PLAIN_PERIOD_S`, and every
trial ends with one line of its verdicts either way (`trial_line`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from hdbbench.model.console import PLAIN_PERIOD_S
from hdbbench.results.trials import TrialSummary
from hdbbench.subscribers import statistics as st
from hdbbench.trials.outside import COUNTER_COLUMN, LAG_COLUMN

MIN_DONE_FOR_ESTIMATE = 0.05


class TrialProgress:
    """The progress callback of `hdbbench.trials.insertion.Trial` (phase, fraction done, latest sample)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                             TimeRemainingColumn(), console=console, transient=False) if self.live else None
        self._task: Any = None
        self._previous: tuple[float, float] | None = None   # (t_s, stored) of the last sample seen
        self._measuring_since: float | None = None           # when the trial's measurement began (done > 0)
        self._rate: float | None = None
        self._started = time.monotonic()
        self._printed = 0.0

    def __enter__(self) -> TrialProgress:
        if self._bar is not None:
            self._bar.__enter__()
            self._task = self._bar.add_task("starting", total=1.0)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, error, tb)

    def new_trial(self, label: str) -> None:
        self._previous, self._rate, self._measuring_since = None, None, None
        self._started = self._printed = time.monotonic()
        if self._bar is not None:
            self._bar.reset(self._task, description=label)
        else:
            self.console.print(f"trial {label}: started", soft_wrap=True)

    def __call__(self, phase: str, done: float, latest: Mapping[str, float]) -> None:
        text = f"{phase:30s} {self.figures(latest)}"
        if self._bar is not None:
            self._bar.update(self._task, description=text, completed=done)
            return
        now = time.monotonic()
        if done > 0 and self._measuring_since is None:
            self._measuring_since = now
        if now - self._printed >= PLAIN_PERIOD_S:
            self._printed = now
            elapsed = now - self._started
            # What is left, from the pace of the measurement alone (the set-up before it says nothing of
            # it), once it has gone far enough for a pace to mean something.
            measuring = now - self._measuring_since if self._measuring_since is not None else 0.0
            left = (f", about {measuring * (1 - done) / done:.0f} s left"
                    if MIN_DONE_FOR_ESTIMATE <= done < 1 and measuring > 0 else "")
            self.console.print(f"  {text}  [{elapsed:.0f} s{left}]", highlight=False, soft_wrap=True)

    def figures(self, latest: Mapping[str, float]) -> str:
        """Stored rate over the last two samples, queue and visibility lag, where the sample has them."""
        stored = latest.get(COUNTER_COLUMN, latest.get(f"sub.{st.ROWS_STORED_NUMBER}"))
        if stored is not None and "t_s" in latest:
            if self._previous is not None and latest["t_s"] > self._previous[0]:
                self._rate = (stored - self._previous[1]) / (latest["t_s"] - self._previous[0])
            self._previous = (latest["t_s"], stored)
        parts = []
        if self._rate is not None:
            parts.append(f"stored {self._rate:,.0f}/s")
        if (pending := latest.get(f"sub.{st.ATTRIBUTE_PENDING_NUMBER}")) is not None:
            parts.append(f"queue {pending:,.0f}")
        if (lag := latest.get(LAG_COLUMN)) is not None:
            parts.append(f"lag {lag:.2f} s")
        return "  ".join(parts)


def trial_line(summary: TrialSummary) -> str:
    """One line of a finished trial's verdicts: stored rate, loss by reason, and a search's outcome."""
    rate = summary.stored_rate.median
    parts = [f"median stored {rate:,.0f}/s" if math.isfinite(rate) else "no stored rate"]
    lost = summary.accounting.lost
    reasons = ", ".join(f"{n:,} {r.replace('_', ' ')}" for r, n in summary.accounting.lost_by_reason.items())
    parts.append(f"lost {lost:,}" + (f" ({reasons})" if reasons else ""))
    if (search := summary.saturation) is not None:
        last = search.last_sustainable_rate
        ended = ", ".join(search.ended_by) or search.limited_by
        parts.append(f"last sustainable {last:,.0f}/s, ended by {ended}" if last else f"saturated at once ({ended})")
    if summary.delivery_unproven:
        parts.append(f"{summary.delivery_unproven:,} attributes unproven: {summary.delivery_unproven_cause}")
    return f"trial {summary.label} ({summary.subscriber_kind}): " + "; ".join(parts)


class PhaseProgress:
    """The progress of a phase of steps (extraction's databases and queries, disk usage's cases): a
    callable `(text, done)` with `done` the fraction of the phase finished. On a terminal a rich bar
    with elapsed time and an estimate of what is left; elsewhere the same as one plain line every
    `PLAIN_PERIOD_S`, and the first line of each stage (the text before its colon: a backend and
    variant), so that a log shows where the time went."""

    def __init__(self, console: Console, title: str) -> None:
        self.console = console
        self.title = title
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                             TimeRemainingColumn(), console=console, transient=False) if console.is_terminal else None
        self._task: Any = None
        self._started = time.monotonic()
        self._printed = -math.inf
        self._stages: set[str] = set()

    def __enter__(self) -> PhaseProgress:
        self._started = time.monotonic()
        if self._bar is not None:
            self._bar.__enter__()
            self._task = self._bar.add_task(self.title, total=1.0)
        else:
            self.console.print(f"{self.title}: started", highlight=False, soft_wrap=True)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        elapsed = time.monotonic() - self._started
        if self._bar is not None:
            self._bar.__exit__(kind, error, tb)
        if kind is None:
            self.console.print(f"{self.title}: done in {elapsed:.0f} s", highlight=False, soft_wrap=True)

    def __call__(self, text: str, done: float) -> None:
        done = min(1.0, max(0.0, done))
        if self._bar is not None:
            self._bar.update(self._task, description=f"{self.title}: {text}", completed=done)
            return
        now = time.monotonic()
        stage = text.split(":")[0]
        if now - self._printed < PLAIN_PERIOD_S and stage in self._stages:
            return
        self._printed = now
        self._stages.add(stage)
        elapsed = now - self._started
        left = (f", about {elapsed * (1 - done) / done:.0f} s left" if MIN_DONE_FOR_ESTIMATE <= done < 1 else "")
        self.console.print(f"  {self.title}: {text}  [{elapsed:.0f} s, {done:.0%}{left}]", highlight=False,
                           soft_wrap=True)

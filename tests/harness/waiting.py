# SPDX-License-Identifier: Apache-2.0
"""Waiting by proof: a test waits for an observation, with a bound, never for a length of time.

`eventually` is the one way a test waits: it polls, returns the first truthy value, and on timeout
fails with what it last observed (and the description), so a failure says what was seen, not only
that time ran out. `seen` pairs a condition with what to report. `unchanged` observes that nothing
more happens over a window (quiescence has no event of its own). `prove_delivery` proves Tango's
event path to a bare client the way `hdbbench.subscribers.delivery.confirm` proves it to a subscriber.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

MAX_OBSERVED_CHARS = 3000


def eventually(predicate: Callable[[], Any], timeout_s: float, describe: str | Callable[[], str],
               interval_s: float = 0.1) -> Any:
    """Poll `predicate` until it returns something truthy; fail after `timeout_s` saying what was observed.

    `describe` is what was awaited: a string, or a function called at the failure (to report state)."""
    deadline = time.monotonic() + timeout_s
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() > deadline:
            what = describe() if callable(describe) else describe
            raise AssertionError(f"{what}: not reached within {timeout_s:g} s; last observed: {last!r}"[:MAX_OBSERVED_CHARS])
        time.sleep(interval_s)  # the poll interval, not a wait for the event


class _Seen:
    """A falsy observation: `eventually` keeps waiting and, if time runs out, reports it."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return repr(self.value)


def seen(condition: Any, observation: Any) -> Any:
    """For `eventually`: True when the condition holds, else the observation to report (falsy)."""
    return True if condition else _Seen(observation)


def unchanged(read: Callable[[], Any], window_s: float = 1.0) -> Any:
    """For `eventually`: the reading once it stayed the same over `window_s`, else the two readings (falsy).

    The one sleep of the harness that is not a poll interval: that nothing more arrives (a flood
    drained, every event delivered) has no event of its own, so it is observed over a window."""
    before = read()
    time.sleep(window_s)
    after = read()
    return after if before == after else _Seen((before, after))


def prove_delivery(burst: Callable[[list[str]], None], received: Callable[[], Mapping[str, int]],
                   names: Collection[str], timeout_s: float = 60.0, round_s: float = 2.0) -> None:
    """Prove the event path of every attribute in `names` to a client: burst one event on the ones
    not proven yet (`burst`), wait up to `round_s` for their count in `received` to grow, again until
    each one grew. ZeroMQ's subscription filter reaches the publisher after `subscribe_event` returns
    (the "slow joiner"): an event pushed before it is dropped, so an arrival is the only proof."""
    baseline = dict(received())
    waiting = set(names)
    deadline = time.monotonic() + timeout_s

    def grown() -> set[str]:
        counts = received()
        return {n for n in waiting if counts.get(n, 0) <= baseline.get(n, 0)}

    while waiting:
        if time.monotonic() > deadline:
            raise AssertionError(f"event path not proven within {timeout_s:g} s for {sorted(waiting)[:5]}")
        burst(sorted(waiting))
        try:
            eventually(lambda: seen(not grown(), None), round_s, "a round of delivery proof")
        except AssertionError:
            pass  # some bursts were dropped before the filter was in place: burst those again
        waiting = grown()

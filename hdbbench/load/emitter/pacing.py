# SPDX-License-Identifier: Apache-2.0
"""The runtime `Emitter`: schedules, rate changes, bursts, poll-mode samples and statistics of a
device's attributes, driven by a clock (the device supplies the sink that pushes).
"""

from __future__ import annotations

import heapq
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from hdbbench.load.emitter.digest import Checksum, Event, stream_key
from hdbbench.load.emitter.spec import AttrSpec, SpecError
from hdbbench.load.emitter.stream import EventStream
from hdbbench.model.valuefn import schedule_phase

# --------------------------------------------------------------------------------------------
# Runtime: schedules, bursts, statistics (driven by a clock; the device supplies the sink)

Sink = Callable[["AttrState", Event, int], None]  # (attribute, event, timestamp_us)


@dataclass
class AttrState:
    """Runtime state of one attribute inside an Emitter."""

    index: int
    spec: AttrSpec
    stream: EventStream
    rate_hz: float
    phase: float = 0.0                  # fraction of the period the schedule is offset by (0: aligned)
    next_k: int = 0
    running: bool = False
    epoch_us: int = 0
    epoch_k: int = 0
    last_ts_us: int = 0
    last_pushed_us: int = 0             # timestamp of the last push when stamping at push time
    burst_left: int = 0
    generation: int = 0                 # bumps invalidate queued schedule entries
    checksum: Checksum = field(default_factory=Checksum)
    errors: int = 0
    last_event: Event | None = None
    recent: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=64))

    def due_us(self, k: int) -> int:
        # int + float: the count converts to a double first, as the C++ engine does.
        return self.epoch_us + round((k - self.epoch_k + self.phase) * 1e6 / self.rate_hz)


@dataclass(frozen=True)
class AttrStats:
    name: str
    mode: str
    running: bool
    target_rate_hz: float
    achieved_rate_hz: float
    emitted: int
    errors: int
    checksum: str       # "count:sum16hex"
    checksum_sum: int
    lag_s: float


TIMESTAMP_MODES = ("schedule", "push")
PHASE_MODES = ("aligned", "seeded")


class Emitter:
    """Emits the events of a device's attributes at their rates, through `sink`, on a given clock.

    `step(now)` emits every push-mode event due at `now`; `sample(name, now)` serves one poll-mode
    read. All methods are thread-safe (one lock): Tango command threads steer, one thread steps.
    """

    MAX_CATCH_UP = 5000  # events of one attribute per step, so one late attribute cannot starve others

    def __init__(self, seed: int, device: str, specs: Sequence[AttrSpec], sink: Sink,
                 clock: Callable[[], float] = time.time, timestamps: str = "schedule",
                 phases: str = "aligned") -> None:
        if timestamps not in TIMESTAMP_MODES:
            raise SpecError(f"timestamps must be one of {', '.join(TIMESTAMP_MODES)}, got {timestamps!r}")
        if phases not in PHASE_MODES:
            raise SpecError(f"phases must be one of {', '.join(PHASE_MODES)}, got {phases!r}")
        # "schedule": an event carries its due time (deterministic, whatever the pusher's lateness);
        # "push": the time it is pushed, as a real device stamps a value when it reads it. Event age
        # at commit then measures the archiving path, not the simulator's lateness (reported as lag).
        self.stamp_at_push = timestamps == "push"
        names = [s.name.lower() for s in specs]
        if len(set(names)) != len(names):
            raise SpecError("duplicate attribute names (Tango names are case-insensitive)")
        self.seed, self.device, self._sink, self._clock = int(seed), device, sink, clock
        # "aligned": every attribute of a rate is due at the same instants (a stress burst each period);
        # "seeded": each is offset by its own fraction of the period, as a facility's polling phases are.
        keys = [stream_key(device, s.name) for s in specs]
        self.attrs = [AttrState(i, s, EventStream(seed, keys[i], s), s.rate_hz,
                                schedule_phase(self.seed, keys[i]) if phases == "seeded" else 0.0)
                      for i, s in enumerate(specs)]
        self._by_name = {s.spec.name.lower(): s for s in self.attrs}
        self._heap: list[tuple[int, int, int]] = []  # (due_us, index, generation)
        self._lock = threading.RLock()
        self.push_failures = 0
        self.last_push_failure = ""

    # -- lookup
    def get(self, name: str) -> AttrState:
        try:
            return self._by_name[name.lower()]
        except KeyError:
            raise KeyError(f"no generated attribute {name!r}") from None

    def _select(self, names: Iterable[str] | None, mode: str | None = "push") -> list[AttrState]:
        states = self.attrs if names is None else [self.get(n) for n in names]
        return [s for s in states if mode is None or s.spec.mode == mode]

    def _now_us(self, now: float | None) -> int:
        return int((self._clock() if now is None else now) * 1e6)

    # -- control
    def start(self, names: Iterable[str] | None = None, now: float | None = None) -> None:
        with self._lock:
            t = self._now_us(now)
            for st in self._select(names, mode=None):
                if not st.running:
                    st.running = True
                    self._rearm(st, t)

    def stop(self, names: Iterable[str] | None = None) -> None:
        with self._lock:
            for st in self._select(names, mode=None):
                st.running = False
                st.generation += 1

    def set_rate(self, rate_hz: float, names: Iterable[str] | None = None, now: float | None = None) -> None:
        if not (math.isfinite(rate_hz) and rate_hz > 0):
            raise ValueError(f"rate must be > 0, got {rate_hz}")
        with self._lock:
            t = self._now_us(now)
            for st in self._select(names):
                st.rate_hz = float(rate_hz)
                if st.running:
                    self._rearm(st, t)

    def burst(self, n: int, names: Iterable[str] | None = None) -> None:
        """Queue n extra events per attribute, emitted at the next step as fast as possible."""
        if n < 0:
            raise ValueError("burst size must be >= 0")
        with self._lock:
            for st in self._select(names):
                st.burst_left += n
                st.generation += 1  # replaces the queued schedule entry, re-pushed after the burst
                heapq.heappush(self._heap, (0, st.index, st.generation))

    def reset(self) -> None:
        """Stop everything and rewind to event 0 with zeroed statistics: the next run repeats the first."""
        with self._lock:
            for st in self.attrs:
                self.attrs[st.index] = AttrState(st.index, st.spec, st.stream, st.spec.rate_hz, st.phase,
                                                 last_ts_us=st.last_ts_us, generation=st.generation + 1)
            self._by_name = {s.spec.name.lower(): s for s in self.attrs}
            self._heap.clear()
            self.push_failures = 0

    def _rearm(self, st: AttrState, now_us: int) -> None:
        # The schedule restarts from now; the phase (in due_us) keeps each attribute's fraction of
        # the new period, so a rate change does not line every attribute up again.
        st.generation += 1
        st.epoch_k = st.next_k
        st.epoch_us = max(now_us, st.last_ts_us + 1)
        if st.spec.mode == "push":
            heapq.heappush(self._heap, (st.due_us(st.epoch_k), st.index, st.generation))

    # -- emission
    def step(self, now: float | None = None, budget: int | None = None) -> int:
        """Emit the events due at `now` (at most about `budget`); return how many were emitted.

        Events are taken and counted under the lock, then handed to the sink without it: the sink
        (Tango's push) may wait for the device monitor, which a command thread can hold while it waits
        for this lock. Call step from one thread only, so each attribute's events stay in order.
        """
        with self._lock:
            t = self._now_us(now)
            batch: list[tuple[AttrState, Event, int]] = []
            left = budget if budget is not None else 1 << 62
            while self._heap and self._heap[0][0] <= t and len(batch) < left:
                _, idx, gen = heapq.heappop(self._heap)
                st = self.attrs[idx]
                if gen != st.generation:
                    continue
                self._take_due(st, t, min(self.MAX_CATCH_UP, left - len(batch)), batch)
        for st, ev, ts_us in batch:
            if self.stamp_at_push:
                # Strictly increasing per attribute: the HDB++ primary key is (attribute, data_time).
                ts_us = st.last_ts_us = max(self._now_us(None), st.last_pushed_us + 1)
                st.last_pushed_us = ts_us
            try:
                self._sink(st, ev, ts_us)
            except Exception as exc:  # noqa: BLE001 - the pusher must survive; the failure is counted
                self.push_failures += 1
                self.last_push_failure = f"{st.spec.name} k={ev.k}: {exc}"
        return len(batch)

    def _take_due(self, st: AttrState, now_us: int, limit: int, batch: list[tuple[AttrState, Event, int]]) -> None:
        count = 0
        while st.burst_left and count < limit:
            st.burst_left -= 1
            batch.append(self._take(st, max(now_us, st.last_ts_us + 1), now_us))
            count += 1
        if st.running and not st.burst_left:
            if count:  # a burst moved time on: the regular schedule restarts after it
                st.epoch_k, st.epoch_us = st.next_k, st.last_ts_us + round(1e6 / st.rate_hz)
            while count < limit and st.due_us(st.next_k) <= now_us:
                batch.append(self._take(st, max(st.due_us(st.next_k), st.last_ts_us + 1), now_us))
                count += 1
        if st.burst_left:
            heapq.heappush(self._heap, (now_us, st.index, st.generation))
        elif st.running:
            heapq.heappush(self._heap, (st.due_us(st.next_k), st.index, st.generation))

    def _take(self, st: AttrState, ts_us: int, now_us: int) -> tuple[AttrState, Event, int]:
        ev = st.stream.event(st.next_k)
        self._account(st, ev, ts_us, now_us)
        return st, ev, ts_us

    def _account(self, st: AttrState, ev: Event, ts_us: int, now_us: int) -> None:
        st.checksum.add(st.stream.digest(ev.k))
        st.errors += ev.is_error
        st.next_k = ev.k + 1
        st.last_ts_us = ts_us
        st.last_event = ev
        if not st.recent or now_us - st.recent[-1][0] * 1e6 >= 50_000:
            st.recent.append((now_us / 1e6, st.checksum.count))

    def sample(self, name: str, now: float | None = None) -> tuple[Event, int]:
        """Serve one poll-mode read: the next event and its timestamp (the device's clock)."""
        with self._lock:
            st = self.get(name)
            t = self._now_us(now)
            ev = st.stream.event(st.next_k)
            ts = max(t, st.last_ts_us + 1)
            self._account(st, ev, ts, t)
            return ev, ts

    def next_due_s(self, now: float | None = None) -> float | None:
        """Seconds until the next scheduled event (<= 0: due now), None when nothing is scheduled."""
        with self._lock:
            while self._heap and self._heap[0][2] != self.attrs[self._heap[0][1]].generation:
                heapq.heappop(self._heap)
            if not self._heap:
                return None
            return (self._heap[0][0] - self._now_us(now)) / 1e6

    # -- statistics
    def stats(self, now: float | None = None) -> list[AttrStats]:
        with self._lock:
            t = self._now_us(now) / 1e6
            return [self._stats(st, t) for st in self.attrs]

    def _stats(self, st: AttrState, now_s: float) -> AttrStats:
        rate = 0.0
        window = [(t, c) for t, c in st.recent if now_s - t <= 5.0]
        if len(window) >= 2 and window[-1][0] > window[0][0]:
            rate = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0])
        lag = 0.0
        if st.running and st.spec.mode == "push":
            lag = max(0.0, now_s - st.due_us(st.next_k) / 1e6)
        return AttrStats(st.spec.name, st.spec.mode, st.running, st.rate_hz, rate, st.checksum.count,
                         st.errors, str(st.checksum), st.checksum.total, lag)

    def total_emitted(self) -> int:
        with self._lock:
            return sum(st.checksum.count for st in self.attrs)

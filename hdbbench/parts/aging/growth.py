# SPDX-License-Identifier: Apache-2.0
"""The growth trial: a fixed offered rate while the database grows from empty past the memory budget.

It is an insertion trial (hdbbench.trials.insertion.Trial: real devices → real subscribers → database, the
devices rewound, every event accounted for after the drain) whose load does not stop after a
duration but when the database reaches `until_memory_ratio` × the server's memory budget (or
`until_bytes` when the server has no budget, or `max_duration_s`). Every `interval_s` it reads the
database's size (`Backend.size_bytes`) and the server's storage read bytes; after the drain each
interval gets its stored rate (the database's own counter, as the other trials), the subscribers'
event age p99 over the interval (their StatisticsTimeWindow is the interval) and the queue at its end.

The knee (`knee_index`): the first interval from which the stored rate stays more than TOLERANCE
below the offered rate until the end. The rate is smoothed by a centred rolling median over WINDOW
intervals and the run of slow intervals must be at least WINDOW long, so one slow interval (a
checkpoint, a stats refresh) is not a knee. None: the backend kept up.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.backends.registry import server_of
from hdbbench.model.errors import ServerError
from hdbbench.model.records import write
from hdbbench.model.sampling import Sampler, TimeSeries, process_family
from hdbbench.parts.aging.history import Confinement, confinement_of
from hdbbench.results.aging import GrowthInterval, GrowthRecord
from hdbbench.results.trials import TrialSummary
from hdbbench.stack.servers.confine import io_counters, oom_kills
from hdbbench.subscribers import statistics as st
from hdbbench.trials import outside as db_side
from hdbbench.trials.figures import stored_column
from hdbbench.trials.insertion import Trial
from hdbbench.trials.settings import GrowthLoad

TOLERANCE = 0.05   # below the offered rate: stored < (1 - TOLERANCE) × offered
WINDOW = 3         # intervals of the rolling median, and the shortest run of slow intervals that is a knee
AGE_P99 = f"sub.{st.EVENT_AGE_AT_COMMIT_P99}"
QUEUE = f"sub.{st.ATTRIBUTE_PENDING_NUMBER}"
CSV_HEADER = ["t_s", "stored_rate", "event_age_p99_s", "queue", "read_bytes", "database_bytes"]


# --- the knee ------------------------------------------------------------------------------------
def knee_index(rates: Sequence[float | None], offered_rate: float, tolerance: float = TOLERANCE,
               window: int = WINDOW) -> int | None:
    """The first interval from which the smoothed stored rate stays below (1 - tolerance) × offered
    until the end, the slow run at least `window` intervals long; None when it kept up. An interval
    without a rate (not measured) counts as neither slow nor keeping up: it is left out of the median."""
    below = (1.0 - tolerance) * offered_rate
    half = window // 2
    slow = []
    for i in range(len(rates)):
        around = [r for r in rates[max(0, i - half):i + half + 1] if r is not None]
        slow.append(bool(around) and statistics.median(around) < below)
    knee = None
    for i in range(len(slow) - 1, -1, -1):  # the run of slow intervals that ends the trial
        if not slow[i]:
            break
        knee = i
    return knee if knee is not None and len(slow) - knee >= window else None


def knee_bytes(intervals: Sequence[GrowthInterval], offered_rate: float) -> int | None:
    """The database's size at the knee's interval (`knee_index`); None when it kept up."""
    index = knee_index([i.stored_rate for i in intervals], offered_rate)
    return intervals[index].database_bytes if index is not None else None


# --- the end of the trial --------------------------------------------------------------------------
def target_bytes(growth: GrowthLoad, memory_bytes: int | None) -> int | None:
    """The size that ends the trial: the ratio × the budget, else `until_bytes`; None: only the duration."""
    if memory_bytes:
        return int(growth.until_memory_ratio * memory_bytes)
    return growth.until_bytes


# --- the server's storage reads ----------------------------------------------------------------------
class ServerReads:
    """Cumulative bytes the server read from storage: its loop device's counter where the stack
    confines its storage (hdbbench.stack.servers.confine.storage.io_counters), else the read_bytes of
    /proc/<pid>/io summed over its process tree (reads that reached the block layer; a process that
    ended takes its count with it, so the sum can fall: an interval then reads as not measured)."""

    def __init__(self, state_dir: Path | None, server: str | None, pids: Sequence[int]) -> None:
        self.state_dir, self.server, self.pids = state_dir, server, list(pids)
        self.source = "process tree /proc/<pid>/io read_bytes"
        if self._device() is not None:
            self.source = "the server's loop device"

    def _device(self) -> int | None:
        if self.state_dir is None or self.server is None:
            return None
        try:
            counters = io_counters(self.state_dir, self.server)
        except Exception:  # noqa: BLE001 - a device that went away reads as unknown, never stops the trial
            return None
        return _read_part(counters)

    def oom_kills(self) -> int | None:
        if self.state_dir is None or self.server is None:
            return None
        return oom_kills(Path(self.state_dir).resolve(), self.server)

    def read_bytes(self) -> int | None:
        found = self._device()
        if found is not None:
            return found
        total, seen = 0, False
        for proc in process_family(self.pids):
            try:
                for line in Path(f"/proc/{proc.pid}/io").read_text().splitlines():
                    if line.startswith("read_bytes:"):
                        total += int(line.split()[1])
                        seen = True
            except (OSError, ValueError):
                continue
        return total if seen else None


def _read_part(counters: Any) -> int | None:
    """The read bytes of hdbbench.stack.servers.confine.io_counters' IoCounters (None: no device)."""
    value = getattr(counters, "read_bytes", None)
    return int(value) if value is not None else None


# --- the trial ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mark:
    """What was read at an interval's end (t_s on the trial series' clock)."""

    t_s: float
    database_bytes: int | None
    read_bytes: int | None


class GrowthTrial(Trial):
    """An insertion trial that runs until the database has grown (the module docstring). After `run`,
    `record` holds its GrowthRecord."""

    def __init__(self, *args: Any, budget: Confinement, stack_state_dir: Path | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        assert self.settings.growth is not None, "a growth trial needs its [measurements] growth settings"
        self.growth: GrowthLoad = self.settings.growth
        self.budget = budget
        self.target = target_bytes(self.growth, budget.memory_limit_bytes)
        server = _server_of(self.settings.backend)
        self.reads = ServerReads(stack_state_dir, server, self.server_pids.get(server or "", ()))
        self.marks: list[Mark] = []
        self.record: GrowthRecord | None = None
        self._backend: Any = None

    def run(self) -> tuple[TrialSummary, TimeSeries]:
        killed_before = self.reads.oom_kills()
        try:
            summary, series = super().run()
        except Exception:
            if (self.reads.oom_kills() or 0) > (killed_before or 0):
                raise ServerError(self._killed_words()) from None
            raise
        counter = series.column(db_side.STORED_EVENTS_COLUMN)
        intervals = intervals_of(series, self.marks, counter if counter[0] else stored_column(series))
        self.record = growth_record(self.settings.backend, self.settings.schema_variant, self.settings.rate,
                                    self.growth.interval_s, self.budget, intervals, summary.accounting.lost)
        return summary, series

    def _killed_words(self) -> str:
        """One line for a server the kernel killed in its memory group (the trial cannot go on)."""
        sizes = [m.database_bytes for m in self.marks if m.database_bytes is not None]
        memory = self.budget.memory_limit_bytes
        where = f" with the database at {sizes[-1] / 2**20:,.0f} MiB" if sizes else ""
        ratio = f" ({sizes[-1] / memory:.1f}× its memory)" if sizes and memory else ""
        return (f"growth trial {self.settings.label}: the {self.settings.backend} server was killed by the kernel's "
                f"OOM killer in its memory group of {(memory or 0) / 2**20:,.0f} MiB{where}{ratio} on "
                f"{self.budget.storage_class} storage (dirty pages it could not write back fast enough, "
                "or its own memory); give it a larger [stack] memory")

    def _statistics_window_s(self) -> int:
        """The event age p99 read at each interval's end is the interval's own."""
        return max(1, int(round(self.growth.interval_s)))

    def _observe(self, fleet: Any, backend: Any, outside: Any) -> Any:
        self._backend = backend  # `_measure` reads its size
        return super()._observe(fleet, backend, outside)

    def _mark(self, t_s: float) -> Mark:
        try:
            size = self._backend.size_bytes() if self._backend is not None else None
        except Exception:  # noqa: BLE001 - one unread size is one interval without it, never a lost trial
            size = None
        mark = Mark(t_s, size, self.reads.read_bytes())
        self.marks.append(mark)
        return mark

    def _grown(self, mark: Mark, elapsed_s: float) -> bool:
        if elapsed_s >= self.growth.max_duration_s:
            return True
        return self.target is not None and mark.database_bytes is not None and mark.database_bytes >= self.target

    def _done(self, elapsed_s: float) -> float:
        """The share of the trial done, for the progress line: by size when there is a target, else by time."""
        by_time = elapsed_s / self.growth.max_duration_s
        last = self.marks[-1].database_bytes if self.marks else None
        by_size = (last or 0) / self.target if self.target else 0.0
        return min(1.0, max(by_time, by_size))

    def _measure(self, fleet: Any, devices: Sequence[str]) -> tuple[TimeSeries, list[dict[str, float]], float]:
        """The load at the offered rate until the database has grown; a mark at the start and at each
        interval's end. Returns the series, the one phase and the wall-clock time of t_s = 0."""
        s, interval = self.settings, self.growth.interval_s
        sampler = Sampler(self._probes(fleet, devices), period_s=1.0)
        self._mark(0.0)  # before the load: the empty schema's size and the reads so far
        self.load.start()
        with sampler:
            if self._outside is not None:
                self._outside.t0_epoch = sampler.started_epoch
            phases = [{"rate": s.rate, "start_s": 0.0}]
            while True:
                end = (len(self.marks)) * interval
                while sampler.elapsed_s() < end:
                    self.progress(f"{s.backend} {s.label}", self._done(sampler.elapsed_s()), sampler.latest())
                    time.sleep(min(0.5, max(0.0, end - sampler.elapsed_s())))
                mark = self._mark(sampler.elapsed_s())
                if self._grown(mark, mark.t_s):
                    break
            phases[-1]["end_s"] = sampler.elapsed_s()
        self.load.stop()
        return sampler.series, phases, sampler.started_epoch


def _server_of(backend: str) -> str | None:
    return server_of(backend)


# --- the record --------------------------------------------------------------------------------------
def intervals_of(series: TimeSeries, marks: Sequence[Mark], counter: tuple[list[float], list[float]]) -> list[GrowthInterval]:
    """One interval between each two marks: the stored rate from the counter's samples at the marks
    (the last sample at or before each), the age p99 and queue sampled at its end."""
    times, stored = counter
    out = []
    first = (times[0], stored[0]) if times else None  # the start mark is read just before the first sample
    for start, end in zip(marks, marks[1:]):
        a, b = _at(times, stored, start.t_s) or first, _at(times, stored, end.t_s)
        rate = (b[1] - a[1]) / (b[0] - a[0]) if a is not None and b is not None and b[0] > a[0] else None
        age = _at(*series.column(AGE_P99), end.t_s)
        queue = _at(*series.column(QUEUE), end.t_s)
        reads = (end.read_bytes - start.read_bytes if end.read_bytes is not None and start.read_bytes is not None
                 and end.read_bytes >= start.read_bytes else None)
        out.append(GrowthInterval(t_s=round(end.t_s, 3), stored_rate=rate, event_age_p99_s=age[1] if age else None,
                                  queue=int(queue[1]) if queue else None, read_bytes=reads,
                                  database_bytes=end.database_bytes))
    return out


def _at(times: Sequence[float], values: Sequence[float], t_s: float) -> tuple[float, float] | None:
    """(time, value) of the last sample at or before t_s (the samples are in time order)."""
    found = None
    for t, v in zip(times, values):
        if t > t_s:
            break
        found = (t, v)
    return found


def growth_record(backend: str, variant: str, offered_rate: float, interval_s: float, budget: Confinement,
                  intervals: Sequence[GrowthInterval], lost: int) -> GrowthRecord:
    """The trial's record, with its knee (`knee_index`) in bytes and in multiples of the memory limit."""
    knee = knee_bytes(intervals, offered_rate)
    memory = budget.memory_limit_bytes
    sizes = [i.database_bytes for i in intervals if i.database_bytes is not None]
    return GrowthRecord(backend=backend, variant=variant, offered_rate=offered_rate, interval_s=interval_s,
                        memory_limit_bytes=memory, storage_class=budget.storage_class, intervals=list(intervals),
                        knee_bytes=knee, knee_memory_ratio=knee / memory if knee is not None and memory else None,
                        final_bytes=sizes[-1] if sizes else 0, lost=lost)


def growth_table(record: GrowthRecord) -> tuple[list[str], list[list[Any]]]:
    """The record's intervals as CSV rows (an unknown figure is an empty cell)."""
    rows = [[i.t_s, i.stored_rate, i.event_age_p99_s, i.queue, i.read_bytes, i.database_bytes]
            for i in record.intervals]
    return CSV_HEADER, [["" if v is None else v for v in row] for row in rows]


# --- the run's hooks (hdbbench.run.runner) ----------------------------------------------------------------
def make_trial(settings: Any, stack: Any, *args: Any, **kwargs: Any) -> Trial:
    """The trial of `settings`: a GrowthTrial for kind "growth", with its server's budget read from
    the stack's confinement (when the stack has one), else the scenario's `[stack] memory` (its plan entry)."""
    if settings.trial_kind != "growth":
        return Trial(settings, *args, **kwargs)
    confinement = stack.confinement() if hasattr(stack, "confinement") else None
    budget = confinement_of(confinement, _server_of(settings.backend), settings.growth.memory_bytes)
    return GrowthTrial(settings, *args, budget=budget, stack_state_dir=getattr(stack, "state_dir", None), **kwargs)


def keep_record(results: dict[str, Any], trial: Trial, write_csv: Any) -> None:
    """A growth trial's record into the results' aging part (made when absent) and its intervals as
    CSV (`write_csv(name, header, rows)`, growth/<label>.csv); nothing for another trial."""
    if not isinstance(trial, GrowthTrial) or trial.record is None:
        return

    aging = results.setdefault("aging", {"confinement": [], "history": [], "load_order": [], "growth": []})
    aging.setdefault("growth", []).append(dict(write(trial.record)))
    header, rows = growth_table(trial.record)
    write_csv(f"growth/{trial.settings.label}.csv", header, rows)

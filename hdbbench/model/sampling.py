# SPDX-License-Identifier: Apache-2.0
"""Sampling at a fixed period (>= 1 Hz) into time series.

A probe is a named callable returning a flat mapping of numbers; the sampler calls every probe once
per period on its own thread and keeps rows of ``(t_s, probe.key -> value)``. A probe that fails
records nothing for that sample and counts the failure (a database being stopped on purpose must not
stop the sampling of everything else). Process probes read CPU seconds and resident memory through
psutil, children included (a PostgreSQL server is many processes).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

Probe = Callable[[], Mapping[str, float]]


@dataclass
class TimeSeries:
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, float]] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    started_epoch: float | None = None  # wall-clock time of t_s = 0 (set when sampling starts)

    def column(self, name: str) -> tuple[list[float], list[float]]:
        """(times, values) of the samples that have this column."""
        times, values = [], []
        for row in self.rows:
            if name in row:
                times.append(row["t_s"])
                values.append(row[name])
        return times, values

    def as_table(self) -> tuple[list[str], list[list[float | str]]]:
        header = ["t_s", *self.columns]
        return header, [[row.get(col, "") for col in header] for row in self.rows]


class Sampler:
    def __init__(self, probes: Mapping[str, Probe], period_s: float = 1.0) -> None:
        if period_s > 1.0:
            raise ValueError("sampling must be at least 1 Hz")
        self.probes = dict(probes)
        self.period_s = period_s
        self.series = TimeSeries()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self.started_epoch = 0.0  # wall-clock time of t_s = 0, to place samples beside source timestamps

    def start(self) -> Sampler:
        self._t0 = time.monotonic()
        self.started_epoch = time.time()
        self.series.started_epoch = self.started_epoch
        self._thread = threading.Thread(target=self._loop, name="sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> TimeSeries:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        return self.series

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def elapsed_s(self) -> float:
        return time.monotonic() - self._t0

    def latest(self) -> dict[str, float]:
        return dict(self.series.rows[-1]) if self.series.rows else {}

    def sample_once(self) -> dict[str, float]:
        row: dict[str, float] = {"t_s": round(self.elapsed_s(), 3)}
        for name, probe in self.probes.items():
            try:
                values = probe()
            except Exception:  # a failing probe costs one sample of its own, never the sampler
                self.series.failures[name] = self.series.failures.get(name, 0) + 1
                continue
            for key, value in values.items():
                column = f"{name}.{key}"
                if column not in self.series.columns:
                    self.series.columns.append(column)
                row[column] = float(value)
        self.series.rows.append(row)
        return row

    def _loop(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            self.sample_once()
            next_at += self.period_s
            self._stop.wait(max(0.0, next_at - time.monotonic()))


def process_family(pids: Iterable[int]) -> list[psutil.Process]:
    """The processes and all their descendants, each once: the processes a process probe samples."""
    out: dict[int, psutil.Process] = {}
    for pid in pids:
        try:
            root = psutil.Process(pid)
            for proc in (root, *root.children(recursive=True)):
                out.setdefault(proc.pid, proc)
        except psutil.Error:
            continue
    return list(out.values())


CALIBRATION_ROUNDS = 50_000  # the fixed work of `calibration_ms`: about 2 ms of one core here


def calibration_ms() -> float:
    """The CPU time (this thread's, in ms) that a fixed piece of pure CPU work took: the machine's pace.
    The same work takes longer when the core runs slower: a lower clock, a hyperthread sibling busy
    with another guest, a hypervisor that takes the CPU away without reporting steal time. Waiting for
    the CPU or for Python's lock does not count, so a busy machine alone does not change it. It holds
    Python's lock for those 2 ms once a second: the harness's other threads (the visibility poller)
    may wait that long, within the visibility lag's resolution (about 12 ms)."""
    started = time.thread_time_ns()
    x = 0
    for k in range(CALIBRATION_ROUNDS):
        x = (x * 31 + k) & 0xFFFF
    return (time.thread_time_ns() - started) / 1e6


def machine_probe() -> Probe:
    """The CPU seconds this machine's CPUs spent busy (all but idle and I/O wait, cumulative), how
    many CPUs it has, and its pace (`calibration_ms`): a step's busy share says whether the machine
    itself was the limit, its pace whether the machine was as fast as in the other steps."""
    cpus = float(psutil.cpu_count() or 1)

    def probe() -> dict[str, float]:
        times = psutil.cpu_times()
        idle = times.idle + getattr(times, "iowait", 0.0)
        return {"busy_cpu_s": sum(times) - idle - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0),
                "cpus": cpus, "work_ms": calibration_ms()}

    return probe


def process_probe(pids: Sequence[int] | Callable[[], Sequence[int]]) -> Probe:
    """CPU seconds (user+system, cumulative) and resident memory of processes and their children (RSS, and
    PSS: a shared page counted once across them, as a PostgreSQL server's shared buffers are mapped by
    every one of its processes and their RSS sum counts them each time), and
    the bytes they caused to be written to storage (/proc/<pid>/io write_bytes, summed: a database
    server's data, log and temporary files all reach the block layer through its own processes).
    `write_bytes` is left out when no process's counter could be read (another account's processes
    without root): unknown, not zero. A process that ended takes its count with it, so the sum can fall."""
    cache: dict[int, psutil.Process] = {}

    def probe() -> dict[str, float]:
        cpu = rss = pss = written = 0.0
        io_read = pss_read = False
        roots = pids() if callable(pids) else pids
        seen: set[int] = set()
        for pid in roots:
            try:
                root = cache.setdefault(pid, psutil.Process(pid))
                family = [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
            for proc in family:
                if proc.pid in seen:
                    continue
                seen.add(proc.pid)
                try:
                    with proc.oneshot():
                        times = proc.cpu_times()
                        cpu += times.user + times.system + times.children_user + times.children_system
                        rss += proc.memory_info().rss
                except psutil.Error:
                    continue
                try:
                    pss += proc.memory_full_info().pss  # /proc/<pid>/smaps_rollup
                    pss_read = True
                except (psutil.Error, AttributeError):
                    pass
                try:
                    written += proc.io_counters().write_bytes
                    io_read = True
                except (psutil.Error, AttributeError):  # AccessDenied, NoSuchProcess; no /proc/<pid>/io
                    continue
        return {"cpu_s": cpu, "rss_bytes": rss, **({"pss_bytes": pss} if pss_read else {}),
                **({"write_bytes": written} if io_read else {})}

    return probe


def thread_probe(pids: Sequence[int] | Callable[[], Sequence[int]], classes: Mapping[str, str],
                 other: str = "other") -> Probe:
    """CPU seconds (user+system, cumulative) of the threads of processes, summed per class of thread name.

    `classes` maps a thread name (as the thread set it, /proc/<pid>/task/<tid>/comm) to a class; the
    threads not named there count as `other`. The subscriber names its writer thread, so its CPU can be
    told apart from Tango's event reception (the ZeroMQ and event consumer threads).
    """
    def probe() -> dict[str, float]:
        totals = {f"{c}_cpu_s": 0.0 for c in (*classes.values(), other)}
        for pid in (pids() if callable(pids) else pids):
            try:
                threads = psutil.Process(pid).threads()
            except psutil.Error:
                continue
            for thread in threads:
                try:
                    name = Path(f"/proc/{pid}/task/{thread.id}/comm").read_text().strip()
                except OSError:
                    continue  # the thread ended between the two reads
                key = f"{classes.get(name, other)}_cpu_s"
                totals[key] += thread.user_time + thread.system_time
        return totals

    return probe

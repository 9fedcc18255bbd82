# SPDX-License-Identifier: Apache-2.0
"""Figures read from outside the subscriber, the same for every subscriber kind.

A figure that compares subscribers must not depend on what one of them says about itself:

* **stored rate** — the database's own count of inserted data rows (each backend says which counter
  and how fresh it is: hdbbench.backends.abilities.outside), sampled at 1 Hz into the trial's series
  as ``db.rows_inserted``;
* **visibility lag** — a watcher polls the database every `POLL_PERIOD_S` (10 ms) for new rows of a few
  probe attributes (spread over the devices and subscribers), all of them in one statement per poll
  (OutsideReader.event_times_after: one primary-key range scan per attribute, newer than the newest
  row seen of it). The simulated devices stamp each event with its source time (the push time with
  ``timestamps = "push"``), which becomes the row's data_time. A poll's snapshot is taken after the
  poll began and before its answer arrived, so a row first seen by a poll whose answer arrived at
  wall time e was visible by e and not yet when the previous poll began (s): e − source time is the
  row's lag, never too low and too high by at most e − s. That span, p99 over the polls, is the
  resolution the figures carry (``resolution_s``): about 12 ms on an idle 2-core machine, more when
  the watcher's thread waits for a core. Same clock: devices and watcher run on this host. The
  largest lag of each second goes into the series as ``vis.lag_s``.
  Cost (20-s manual runs on the 2-core test VM, 8 probe attributes over 4 tables holding 20,000 rows
  each, one new row per attribute every 0.1 s, 98 polls/s): CPU of the database server 42 ms/s on
  TimescaleDB (utime+stime of the watcher's own server process) and 53 ms/s on MariaDB (the whole
  mariadbd, less the same load without the watch); the harness's thread about 45 ms/s. On this VM
  waking a server thread for a ``SELECT 1`` at that pace already costs 12-14 ms/s; the rest is the
  8 index probes. A 20-ms period roughly halves it and gives a 24-27 ms resolution;
* **loss** — the devices' per-attribute counters against the rows (hdbbench.trials.insertion, as before);
* **server work** — the database server's own background work that competes with the writers
  (checkpoints, autovacuums, InnoDB's flush waits: OutsideReader.server_work), cumulative counts
  sampled with the counter as ``srv.<name>``: a saturation step names those that rose in it;
* **log bytes** — the server's write-ahead log written (OutsideReader.log_bytes: PostgreSQL's WAL,
  InnoDB's redo), cumulative, sampled right after the server work as ``log.bytes`` (the readers take
  it from the same statement: one statement per sample on the connection the flush tracker polls);
  absent where the server keeps none. The unit costs (hdbbench.trials.costs) divide it by stored events.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, cast

from hdbbench.backends.abilities.outside import OutsideReader
from hdbbench.model import measure
from hdbbench.model.sampling import TimeSeries
from hdbbench.results.trials import KindFigures, OutsideSummary, SubscriberReported, VisibilityLag
from hdbbench.subscribers import statistics as st

POLL_PERIOD_S = 0.01  # half the 20 ms asked for: the resolution adds wake-up delays and a query time
PROBE_ATTRIBUTES = 8
COUNTER_COLUMN = "db.rows_inserted"
SERVER_WORK_PROBE = "srv"  # the server's background work (OutsideReader.server_work): srv.<name>
LOG_PROBE = "log"  # the server's write-ahead log written (OutsideReader.log_bytes): LOG_COLUMN
LOG_COLUMN = f"{LOG_PROBE}.bytes"
STORED_EVENTS_COLUMN = "db.stored_events"  # the counter at each sample's instant, in events (`stored_counter`)
LAG_COLUMN = "vis.lag_s"
SETTLE_TIMEOUT_S = 5.0
# How often a counter published in flushes is read, to place each flush in time: a flush seen up to one
# period late moves a per-second rate by up to period / 1 s (20 ms: 2 %, the sustained share's slack).
# One read costs about 0.5 ms (PostgreSQL: the statistics functions of the data relations only).
FLUSH_POLL_PERIOD_S = 0.02
BUSY_FLUSH_GAP = 2.5  # flushes this many resolutions apart or less: the server process was busy throughout


def probe_attributes(attributes: Sequence[str], count: int = PROBE_ATTRIBUTES) -> list[str]:
    """`count` attributes spread evenly over the list (so over the devices, and over the subscribers,
    which get the attributes dealt round-robin)."""
    if len(attributes) <= count:
        return list(attributes)
    step = len(attributes) / count
    return [attributes[int(i * step)] for i in range(count)]


class VisibilityWatch:
    """Polls the probe attributes' new rows on its own connection and thread (see the module docstring):
    one statement per poll for all of them, every `period_s`. It records when each poll began and when
    its answer arrived, so that the figures carry the resolution achieved, not the one asked for."""

    def __init__(self, reader: OutsideReader, attributes: Sequence[str], period_s: float = POLL_PERIOD_S) -> None:
        self.reader = reader
        self.attributes = list(attributes)
        self.period_s = period_s
        self.events: list[tuple[float, float]] = []   # (source time, lag s), in the order seen
        # Wall times each successful poll began and got its answer (16 bytes a poll: 6 MB an hour at 100 Hz).
        self.poll_starts = array("d")
        self.poll_ends = array("d")
        self.failures = 0
        self._newest: dict[str, datetime] = {}
        self._pending_max: float | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, since: datetime) -> VisibilityWatch:
        """Watch rows with source times after `since` (earlier rows are the values sent on subscription)."""
        self._newest = {a: since for a in self.attributes}
        self._thread = threading.Thread(target=self._loop, name="visibility", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.reader.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            began = time.monotonic()
            try:
                self.poll_once()
            except Exception:  # a failing poll costs one poll (a database restarted on purpose), never the trial
                self.failures += 1
            self._stop.wait(max(0.0, self.period_s - (time.monotonic() - began)))

    def poll_once(self) -> None:
        began = time.time()  # the statement's snapshot is taken after this instant...
        found = self.reader.event_times_after(self._newest)
        visible_at = time.time()  # ...and before this one: what it found was visible by now
        lags: list[tuple[float, float]] = []
        for attribute, times in found.items():
            self._newest[attribute] = times[-1]
            lags.extend((t.timestamp(), visible_at - t.timestamp()) for t in times)
        with self._lock:
            self.poll_starts.append(began)
            self.poll_ends.append(visible_at)
            if lags:
                self.events.extend(lags)
                worst = max(lag for _, lag in lags)
                self._pending_max = worst if self._pending_max is None else max(self._pending_max, worst)

    def resolution(self, start_epoch: float, end_epoch: float) -> float | None:
        """The p99 over the successful polls answered in [start, end] of the time from the previous
        successful poll's start to this poll's answer: a row this poll saw first became visible within
        it (see the module docstring), so that is how much its lag can be too high. None before two polls."""
        with self._lock:
            spans = [end - previous_start for previous_start, end in zip(self.poll_starts, self.poll_ends[1:])
                     if start_epoch <= end <= end_epoch]
        return measure.percentile(spans, 99) if spans else None

    def probe(self) -> dict[str, float]:
        """Sampler probe: the largest lag of the rows seen since the last sample (nothing when none)."""
        with self._lock:
            worst, self._pending_max = self._pending_max, None
            seen = len(self.events)
        return {"visible_probe_events": float(seen), **({"lag_s": worst} if worst is not None else {})}

    def lags_between(self, start_epoch: float, end_epoch: float) -> list[tuple[float, float]]:
        """(source time, lag s) of the probe events seen so far whose source time lies in [start, end]."""
        with self._lock:
            return [(source, lag) for source, lag in self.events if start_epoch <= source <= end_epoch]

    def lag_figures(self, start_epoch: float, end_epoch: float) -> VisibilityLag:
        """p50/p99/max of the lags of the probe events whose source time lies in [start, end], and the
        resolution the polls achieved over the same stretch."""
        with self._lock:
            lags = [lag for source, lag in self.events if start_epoch <= source <= end_epoch]
        return VisibilityLag(p50=measure.percentile(lags, 50) if lags else None,
                             p99=measure.percentile(lags, 99) if lags else None,
                             max=max(lags) if lags else None, count=len(lags),
                             resolution_s=self.resolution(start_epoch, end_epoch),
                             probe_attributes=len(self.attributes))


class FlushTracker:
    """A counter its server publishes in flushes (PostgreSQL's statistics: once a second while busy),
    read every `FLUSH_POLL_PERIOD_S` on its own thread, keeping the instants where it moved. Read once
    a second like the other probes it aliases (some seconds see no flush, and read as a stall); the
    flush instants, known to 20 ms, give its value at any instant instead: each flush
    holds the rows committed since the previous one, so the value rises linearly over that stretch up
    to the flush (after a pause longer than `BUSY_FLUSH_GAP` resolutions: over one resolution at the
    pause's start or end, `value_at`). A stall shorter than that gap cannot be seen in this counter
    (the visibility lag sees it)."""

    def __init__(self, reader: OutsideReader, period_s: float = FLUSH_POLL_PERIOD_S) -> None:
        self.reader = reader
        self.period_s = period_s
        self.points: list[tuple[float, int]] = []   # (epoch first seen, value), one per change
        self.failures = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.read()
        self._thread = threading.Thread(target=self._loop, name="counter-flushes", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.read()
            except Exception:  # a failing read costs one read (a database restarted on purpose)
                self.failures += 1

    def read(self) -> int:
        value = self.reader.rows_inserted()
        with self._lock:
            if not self.points or value != self.points[-1][1]:
                self.points.append((time.time(), value))
        return value

    def latest(self) -> int:
        with self._lock:
            return self.points[-1][1] if self.points else 0

    def value_at(self, epoch: float) -> float:
        with self._lock:
            points = list(self.points)
        if not points or epoch <= points[0][0]:
            return float(points[0][1]) if points else 0.0
        resolution = self.reader.resolution_s
        for k, ((e0, c0), (e1, c1)) in enumerate(zip(points, points[1:])):
            if epoch >= e1:
                continue
            # A busy server process flushes every 1-2 s (at its first idle moment after a second): the
            # rows arrived over the whole gap. A longer gap is a pause: the rows came within a
            # resolution after its start when the process then went idle (the load ended; the flush
            # waited for the idle timeout or the session's end), or before its end when work resumed.
            if e1 - e0 <= BUSY_FLUSH_GAP * resolution:
                rise = (e0, e1)
            elif k + 2 < len(points) and points[k + 2][0] - e1 <= BUSY_FLUSH_GAP * resolution:
                rise = (e1 - resolution, e1)
            else:
                rise = (e0, e0 + resolution)
            if epoch <= rise[0]:
                return float(c0)
            return c0 + (c1 - c0) * min(1.0, (epoch - rise[0]) / (rise[1] - rise[0]))
        return float(points[-1][1])


class SerialReader:
    """An outside reader whose calls take turns: the sampler's thread, the flush tracker's and a drain
    on the main thread read the counter through one connection, and not every driver's connection
    may be used from two threads at once (MariaDB Connector/Python's cursor handed a drain the row
    of the sampler's statement)."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._reader, name)
        if not callable(value):
            return value

        def in_turn(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return value(*args, **kwargs)
        return in_turn


def outside_reader(backend: Any) -> OutsideReader:
    """A new reader of the backend's outside figures (`Backend.outside_figures()`); TypeError without them."""
    figures = backend.outside_figures()
    if figures is None:
        raise TypeError(f"backend {getattr(backend, 'name', backend)} cannot be read from outside")
    reader: OutsideReader = figures.reader(backend)
    return reader


class Outside:
    """The outside figures of one trial: the counter probe, the visibility watch and their summary."""

    def __init__(self, backend: Any, attributes: Sequence[str]) -> None:
        counter = outside_reader(backend)
        self.backend = backend
        # The sampler's connection, read also by the flush tracker and by drains.
        self.counter: OutsideReader = cast(OutsideReader, SerialReader(counter))
        self.watch = VisibilityWatch(outside_reader(backend), probe_attributes(attributes))
        self.baseline: int | None = None
        self.total: int | None = None
        self.flushes = FlushTracker(self.counter) if self.resolution_s > 0 else None
        self.t0_epoch: float | None = None  # wall-clock time of the series' t_s = 0, once known
        # Stored events per row the counter counts: 1 but where a backend stores an array one row per
        # element (MariaDB), known once the trial's events are counted (`calibrate`).
        self.events_per_row = 1.0

    @property
    def resolution_s(self) -> float:
        """How stale the inserted-row counter can be (OutsideReader.resolution_s)."""
        return float(self.counter.resolution_s)

    def stored_counter(self, series: TimeSeries) -> tuple[list[float], list[float]]:
        """The counter at the series' sample times: as sampled when it is exact at every read, else its
        value at those instants from the flushes' times (`FlushTracker`)."""
        times, counts = series.column(COUNTER_COLUMN)
        if self.flushes is not None and self.t0_epoch is not None:
            counts = [self.flushes.value_at(self.t0_epoch + t) for t in times]
        return times, [c * self.events_per_row for c in counts]

    def add_stored_events(self, series: TimeSeries) -> None:
        """Write `stored_counter` into the series as STORED_EVENTS_COLUMN, for the report's plots."""
        times, counts = self.stored_counter(series)
        by_time = dict(zip(times, counts))
        for row in series.rows:
            if row["t_s"] in by_time:
                row[STORED_EVENTS_COLUMN] = by_time[row["t_s"]]
        if times and STORED_EVENTS_COLUMN not in series.columns:
            series.columns.append(STORED_EVENTS_COLUMN)

    def calibrate(self, stored_events: int) -> None:
        """Rates in events, not rows: the trial's stored events (by the devices' accounting) against the
        rows the counter counted since the start, read once the subscribers have drained (an event is
        at least one row, so the factor is at most 1)."""
        if self.baseline is None:
            return
        rows = self.counter.rows_inserted() - self.baseline
        if rows > 0 and stored_events > 0:
            self.events_per_row = min(1.0, stored_events / rows)

    @staticmethod
    def available(backend: Any) -> bool:
        return backend.outside_figures() is not None

    def probes(self) -> dict[str, Callable[[], dict[str, float]]]:
        flushes = self.flushes
        read = (lambda: float(flushes.latest())) if flushes is not None else (lambda: float(self.counter.rows_inserted()))
        # The log probe right after the server work's: the readers answer it from that statement.
        return {"db": lambda: {"rows_inserted": read()}, "vis": self.watch.probe, SERVER_WORK_PROBE: self.counter.server_work,
                LOG_PROBE: self._log_probe}

    def _log_probe(self) -> dict[str, float]:
        written = self.counter.log_bytes()
        return {"bytes": float(written)} if written is not None else {}

    def start(self, since: datetime) -> None:
        self.baseline = self.counter.baseline()
        if self.flushes is not None:
            self.flushes.start()
        self.watch.start(since)

    def finish(self) -> None:
        """After the subscribers have stopped (their sessions ended, so PostgreSQL has every count):
        the total, once two reads a moment apart agree. Before `start` (a failed trial): only closes."""
        if self.baseline is None:
            if self.flushes is not None:
                self.flushes.stop()
            self.close()
            return
        self.watch.stop()
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        previous = self.counter.rows_inserted()
        while time.monotonic() < deadline:
            time.sleep(0.5)
            current = self.counter.rows_inserted()
            if current == previous:
                break
            previous = current
        self.total = previous - (self.baseline or 0)
        if self.flushes is not None:  # its last point: the flush at the subscribers' session end
            self.flushes.stop()
            self.flushes.read()
        self.counter.close()

    def close(self) -> None:
        """Release both connections (also when the trial failed before `finish`)."""
        for reader in (self.watch.reader, self.counter):
            try:
                reader.close()
            except Exception:  # noqa: BLE001 - already closed, or its server is gone
                pass

    def figures(self, series: TimeSeries, warmup_s: float, end_s: float | None, load_started: datetime,
                load_seconds: float) -> OutsideSummary:
        """The trial's outside figures: stored rate (per-second distribution over the steady part, and
        rows over the whole trial), visibility lag over the steady part, and what the counter is."""
        times, counts = self.stored_counter(series)
        rates = measure.steady(measure.rates_per_second(times, counts), warmup_s, steady_end(end_s, self.resolution_s))
        start = load_started.timestamp() + warmup_s
        return OutsideSummary(
            counter=self.counter.counter,
            counter_resolution_s=self.resolution_s,
            events_per_row=self.events_per_row,
            stored_rate=measure.distribution(rates),
            rows_inserted=self.total,
            visibility_lag_s=self.watch.lag_figures(start, load_started.timestamp() + load_seconds),
            visibility_poll_failures=self.watch.failures,
        )


# The trial figures that come from our subscriber's own statistics (hdbbench-es publishes them; another
# kind, or ours in strict mode, does not: they then read as missing). Extra detail, never a comparison.
# The stored rate, the pending figures (HDB++'s attributes) and the verdicts are read for every kind alike.
OURS_FIELDS = ("pending_age_s", "event_age_at_commit_s", "event_age_at_reception_s", "time_in_subscriber_s",
               "subscriber_cpu_by_thread", "subscriber_reported.stored_rate")


def steady_end(load_end_s: float | None, resolution_s: float) -> float | None:
    """Where the steady part of a counter's per-second rates ends. A counter published in flushes
    (resolution > 0) is placed in the load's last second by the flush that came after the load
    stopped, when the server process went idle: that second read low (3,900 of 5,000 rows/s in
    TimescaleDB's and PostgreSQL's throughput trials), a false spread. So the steady part ends a
    resolution before the load does (with half a sample period of slack for the samples' jitter)."""
    if load_end_s is None or resolution_s <= 0:
        return load_end_s
    return load_end_s - resolution_s + 0.5


def ours_rows_stored(statistics: Sequence[dict[str, Any]]) -> float | None:
    """Our subscribers' RowsStoredNumber summed; None when none publishes it (another kind)."""
    values = [float(x[st.ROWS_STORED_NUMBER]) for x in statistics if x.get(st.ROWS_STORED_NUMBER) is not None]
    return sum(values) if values else None


def kind_figures(outside: Outside | None, series: TimeSeries, settings: Any, phases: Sequence[dict[str, float]],
                 load_started: datetime, ours_before: float | None, final: dict[str, dict[str, Any]]) -> KindFigures:
    """The parts of a trial for the comparison of subscriber kinds: the outside figures, and what our
    subscriber said of itself over the same stretch (rows stored, its per-second stored rate)."""
    end_s = phases[0].get("end_s") if phases else None
    load_s = phases[-1].get("end_s", 0.0) if phases else 0.0
    steady_end = end_s if not settings.is_search else None
    figures = None
    if outside is not None:
        figures = outside.figures(series, settings.warmup_s, steady_end, load_started, load_s)
    ours_after = ours_rows_stored(list(final.values()))
    stored = ours_after - ours_before if ours_after is not None and ours_before is not None else None
    times, counts = series.column(f"sub.{st.ROWS_STORED_NUMBER}")
    rates = measure.steady(measure.rates_per_second(times, counts), settings.warmup_s, steady_end)
    reported = SubscriberReported(fields=list(OURS_FIELDS), published=stored is not None, rows_stored=stored,
                                  stored_rate=measure.distribution(rates) if rates else None)
    return KindFigures(outside=figures, subscriber_reported=reported)

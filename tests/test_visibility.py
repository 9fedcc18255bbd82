# SPDX-License-Identifier: Apache-2.0
"""The visibility watch (hdbbench.trials.outside.VisibilityWatch) against the session's real servers.

Rows with known source times are written through the backend's bulk writer while a watch polls; the
watch must see each of them once, with a lag of at least zero (a row is committed after its source
time, and its lag is counted to the arrival of the answer that first had it), and report the
resolution its own polls achieved. Only that resolution depends on how busy the machine is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, WriteType
from hdbbench.trials import outside
from hdbbench.trials.outside import VisibilityWatch, outside_reader
from tests.harness import eventually, seen
from tests.harness.databases import fresh_backend

# Attributes in three data tables: scalars of two types and a spectrum (one row per element in MySQL).
PROBES = [AttributeInfo(f"tango://vishost:10000/vis/probe/{i}/x", tango_type, attr_format, WriteType.READ)
          for i, (tango_type, attr_format) in enumerate([(TangoType.DEV_DOUBLE, AttrFormat.SCALAR),
                                                         (TangoType.DEV_DOUBLE, AttrFormat.SCALAR),
                                                         (TangoType.DEV_LONG, AttrFormat.SCALAR),
                                                         (TangoType.DEV_DOUBLE, AttrFormat.SPECTRUM)])]
NEVER_CONFIGURED = "tango://vishost:10000/vis/probe/5/absent"
BATCHES = 6
MIN_POLLS = 200
SEEN_TIMEOUT_S = 30.0  # only a bound on the wait, never a measured figure


def _value(info: AttributeInfo, k: int) -> object:
    if info.format == AttrFormat.SPECTRUM:
        return [float(k), float(k + 1), float(k + 2)]
    return k if info.type == TangoType.DEV_LONG else float(k)


@pytest.mark.parametrize("backend", DEFAULT_BACKENDS)
def test_the_watch_sees_each_new_row_once_with_its_lag_and_resolution(endpoint_of: Callable[[str], Any],
                                                                         backend: str) -> None:
    with fresh_backend(backend, endpoint_of(backend), None) as db, db.bulk_writer() as writer:
        for info in PROBES:
            writer.register_attribute(info)
        since = datetime.now(timezone.utc)
        # Before `since`: the values sent on subscription, which the watch leaves out.
        writer.write([Event(info.name, since - timedelta(seconds=1), _value(info, 0)) for info in PROBES])
        watch = VisibilityWatch(outside_reader(db), [info.name for info in PROBES] + [NEVER_CONFIGURED])
        watch.start(since)
        written: list[float] = []  # source times (several attributes share one)
        try:
            for k in range(1, BATCHES + 1):
                # Two events per attribute and batch, stamped before they are written.
                stamp = datetime.now(timezone.utc)
                batch = [Event(info.name, stamp + timedelta(microseconds=j), _value(info, k))
                         for info in PROBES for j in range(2)]
                writer.write(batch)
                written.extend(event.data_time.timestamp() for event in batch)
                time.sleep(0.03)  # batches spread over time, as rows arrive: the spread is under test
            # Then polls that must see nothing again, enough of them that their p99 span is no
            # single outlier (about 2 s).
            eventually(lambda: seen(watch.probe()["visible_probe_events"] >= len(written)
                                    and len(watch.poll_starts) >= MIN_POLLS,
                                    (watch.probe()["visible_probe_events"], len(watch.poll_starts))),
                       SEEN_TIMEOUT_S, f"{len(written)} rows seen and {MIN_POLLS} polls", interval_s=0.05)
        finally:
            watch.stop()

    visible = [source for source, _ in watch.events]
    assert sorted(visible) == sorted(written)  # each row once, none from before `since`
    assert all(lag >= 0 for _, lag in watch.events)
    assert watch.failures == 0  # the attribute never configured is no failure: nothing of it is visible
    figures = watch.lag_figures(since.timestamp(), time.time())
    assert figures.count == len(written) and figures.probe_attributes == len(PROBES) + 1
    assert figures.p50 is not None and figures.p99 is not None and figures.max is not None
    assert figures.p50 >= 0 and figures.max >= figures.p99 >= figures.p50
    # The resolution comes from the watch's own record of its polls, not from the period asked for: the
    # span from a poll's start to the next one's answer, within which a row that poll missed became visible.
    starts, ends = list(watch.poll_starts), list(watch.poll_ends)
    assert len(starts) == len(ends) >= MIN_POLLS and all(s <= e for s, e in zip(starts, ends))
    spans = [end - start for start, end in zip(starts, ends[1:])]
    assert figures.resolution_s is not None and min(spans) <= figures.resolution_s <= max(spans)
    # What it achieves depends on the machine's load (no timed assertion here): the period asked for
    # leaves room for the 20-ms target, and benchmarks report the achieved figure with every lag.
    assert outside.POLL_PERIOD_S <= 0.02 / 2


@pytest.mark.parametrize("backend", DEFAULT_BACKENDS)
def test_the_trials_counter_answers_each_thread_its_own_statement(endpoint_of: Callable[[str], Any],
                                                                 backend: str) -> None:
    # A trial's sampler thread and a drain on the main thread read the counter through one connection
    # (hdbbench.trials.outside.Outside.counter); every read must be a count, never another statement's row.
    import threading

    with fresh_backend(backend, endpoint_of(backend), None) as db:
        trial = outside.Outside(db, [info.name for info in PROBES])
        problems: list[BaseException] = []

        def read(times: int) -> None:
            try:
                for _ in range(times):
                    assert isinstance(trial.counter.rows_inserted(), int)
                    trial.counter.baseline()
            except BaseException as exc:  # noqa: BLE001 - reported below, by the main thread
                problems.append(exc)

        try:
            threads = [threading.Thread(target=read, args=(300,)) for _ in range(3)]
            for thread in threads:
                thread.start()
            read(300)
            for thread in threads:
                thread.join()
        finally:
            trial.close()
    assert problems == []


@pytest.mark.parametrize("backend", DEFAULT_BACKENDS)
def test_the_trials_sampler_reads_the_servers_background_work(endpoint_of: Callable[[str], Any], backend: str) -> None:
    # Counts since the server started (checkpoints, autovacuums, InnoDB's flush waits), sampled with
    # the counter: a saturation step names those that rose in it (hdbbench.trials.saturation).
    with fresh_backend(backend, endpoint_of(backend), None) as db, db.bulk_writer() as writer:
        for info in PROBES:
            writer.register_attribute(info)
        trial = outside.Outside(db, [info.name for info in PROBES])
        try:
            probe = trial.probes()[outside.SERVER_WORK_PROBE]
            first = probe()
            writer.write([Event(info.name, datetime.now(timezone.utc), _value(info, 1)) for info in PROBES])
            second = probe()
        finally:
            trial.close()
    assert first and set(first) == set(second)
    assert all(isinstance(v, float) and 0 <= first[k] <= v for k, v in second.items())


@pytest.mark.parametrize("backend", ["timescaledb", "postgresql"])
def test_a_table_written_on_our_servers_is_in_its_vacuum_cycle_within_seconds(
        endpoint_of: Callable[[str], Any], backend: str) -> None:
    # hdbbench.stack.servers.postgres: autovacuum looks every second, so a trial's fresh table meets the
    # insert-triggered vacuums a facility's live table always has, from its first steps on.
    info = PROBES[0]
    with fresh_backend(backend, endpoint_of(backend), None) as db:
        with db.connect() as conn:
            naptime = conn.execute("SHOW autovacuum_naptime").fetchone()
        with db.bulk_writer() as writer:  # closed: its server process publishes its counts as it exits
            writer.register_attribute(info)
            start = datetime.now(timezone.utc) - timedelta(seconds=10)
            writer.write([Event(info.name, start + timedelta(milliseconds=k), float(k)) for k in range(5000)])
        trial = outside.Outside(db, [info.name])
        try:
            probe = trial.probes()[outside.SERVER_WORK_PROBE]
            eventually(lambda: probe()["autovacuums"] >= 1, SEEN_TIMEOUT_S, "an autovacuum of the data table")
        finally:
            trial.close()
    assert naptime == ("1s",)


def test_the_steady_part_of_a_flushed_counter_leaves_the_load_s_last_second_out() -> None:
    from hdbbench.model import measure
    from hdbbench.trials.outside import steady_end

    # Samples at 1 Hz (with jitter) of a load that ended at 20.0003 s: PostgreSQL's counter (resolution
    # 1 s) loses the interval ending at 20.0, MariaDB's exact one (0) keeps it.
    times = [0.0, 1.001, *[float(t) + (0.001 if t % 2 else 0.0) for t in range(2, 21)]]
    rates = measure.rates_per_second(times, [1000.0 * t for t in range(len(times))])
    assert [t for t, _ in rates if t <= steady_end(20.0003, 1.0)][-1] == 19.001
    assert [t for t, _ in rates if t <= steady_end(20.0003, 0.0)][-1] == 20.0
    assert steady_end(None, 1.0) is None

# SPDX-License-Identifier: Apache-2.0
"""What one stored event cost over a window of a trial: its unit costs (results.trials.UnitCosts).

Pure functions over a trial's 1 Hz series. A planner turns these into cores, IOPS and log bytes at
another rate; a saturation search records them per step, which shows whether a cost per event
holds as the rate rises. Everything is read from outside the subscriber where it can be:

* events: the trial's stored counter, the one its rates are read from (the database's own where
  the backend can be read from outside, hdbbench.trials.outside.Outside.stored_counter; else our
  subscriber's RowsStoredNumber), between the first and last sample of the window;
* CPU and memory per process group: ``proc_<group>.cpu_s`` (differences) and ``proc_<group>.pss_bytes``
  (median; ``rss_bytes`` where PSS could not be read) of hdbbench.model.sampling.process_probe:
  ``subscribers``, ``devices`` and one group per database server kind;
* the trial's own server's writes: bytes from its loop device where the stack confined its storage,
  else ``proc_<server>.write_bytes`` (its process tree's /proc/<pid>/io); write requests from
  ``io_<server>.write_ops`` (its loop device, or the device holding its data: hdbbench.trials.writes);
  its write-ahead log from ``log.bytes`` (OutsideReader.log_bytes). A counter that is missing, or
  fell (a process that ended takes its count with it), gives None, never a wrong figure;
* the machine's pace: the median of ``machine.work_ms`` (hdbbench.model.sampling.calibration_ms).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hdbbench.model import measure
from hdbbench.model.sampling import TimeSeries
from hdbbench.results.trials import ServerWrites, UnitCosts
from hdbbench.trials import outside as db_side
from hdbbench.trials import writes as io

PROCESS_PREFIX = "proc_"
MACHINE_WORK_COLUMN = "machine.work_ms"  # hdbbench.model.sampling.machine_probe, sampled as "machine"
PROCESS_TREE_WORDS = "its process tree's /proc/<pid>/io write_bytes"
LOG_WORDS = "its write-ahead log counter (PostgreSQL's WAL position, InnoDB's Innodb_os_log_written)"


def unit_costs(series: TimeSeries, counter: tuple[Sequence[float], Sequence[float]], start_s: float,
               end_s: float | None, attributes: int, server: str | None = None,
               writes_from: io.Where | None = None) -> UnitCosts | None:
    """The unit costs over [start_s, end_s] (None: to the series' end) of the series, per event of
    `counter` (times, cumulative stored events), between the counter's first and last sample in the
    window. `server` is the trial's database server kind (its writes are recorded; None: none),
    `writes_from` where its ``io_<server>`` columns were read (hdbbench.trials.writes). None when
    the window holds fewer than two samples or no stored event."""
    times, stored = counter
    window = [i for i, t in enumerate(times) if t >= start_s and (end_s is None or t <= end_s)]
    if len(window) < 2:
        return None
    t0, t1 = times[window[0]], times[window[-1]]
    events, span_s = stored[window[-1]] - stored[window[0]], t1 - t0
    if events <= 0 or span_s <= 0:
        return None
    cores: dict[str, float] = {}
    per_event: dict[str, float] = {}
    rss: dict[str, float] = {}
    pss: dict[str, float] = {}
    for column in series.columns:
        if column.startswith(PROCESS_PREFIX) and column.endswith(".cpu_s"):
            group = column.removeprefix(PROCESS_PREFIX).removesuffix(".cpu_s")
            used = increase(series, column, t0, t1)
            if used is not None:
                cores[group] = used / span_s
                per_event[group] = used / events * 1e6
        elif column.startswith(PROCESS_PREFIX) and column.endswith((".rss_bytes", ".pss_bytes")):
            values = _inside(series, column, t0, t1)
            if values:
                group, _, name = column.removeprefix(PROCESS_PREFIX).rpartition(".")
                (pss if name == "pss_bytes" else rss)[group] = measure.percentile(values, 50)
    work = _inside(series, MACHINE_WORK_COLUMN, t0, t1)
    writes = {server: server_writes(series, server, t0, t1, events, writes_from)} if server else {}
    return UnitCosts(stored_rate=events / span_s, window_s=span_s, attributes=attributes,
                     machine_work_ms=measure.percentile(work, 50) if work else None,
                     cpu_cores=cores, cpu_us_per_event=per_event, memory_bytes=rss | pss, writes=writes)


def server_writes(series: TimeSeries, server: str, t0: float, t1: float, events: float,
                  writes_from: io.Where | None) -> ServerWrites:
    """One server's writes between the samples at t0 and t1, per second and per event (see the module
    docstring for which counter gives which figure)."""
    span_s = t1 - t0
    device = f"{io.IO_PROBE_PREFIX}{server}"
    if writes_from == "loop":
        written, bytes_words = increase(series, f"{device}.write_bytes", t0, t1), io.LOOP_WORDS
    else:
        written, bytes_words = increase(series, f"{PROCESS_PREFIX}{server}.write_bytes", t0, t1), PROCESS_TREE_WORDS
    requests = increase(series, f"{device}.write_ops", t0, t1) if writes_from is not None else None
    log = increase(series, db_side.LOG_COLUMN, t0, t1)
    words = [f"bytes written: {bytes_words}" if written is not None else "bytes written: not readable here",
             f"write requests: {io.LOOP_WORDS if writes_from == 'loop' else io.DEVICE_WORDS}"
             if requests is not None else "write requests: not readable here (no block device of its data on this host)",
             f"log: {LOG_WORDS}" if log is not None else "log: none (the server keeps no log counter, or is a standby)"]
    return ServerWrites(
        write_bytes_per_s=_per(written, span_s), write_bytes_per_event=_per(written, events),
        write_iops=_per(requests, span_s), write_ios_per_event=_per(requests, events),
        log_bytes_per_s=_per(log, span_s), log_bytes_per_event=_per(log, events),
        source="; ".join(words))


def without_processes(costs: UnitCosts | None) -> UnitCosts | None:
    """The unit costs without the process groups' CPU and memory, for a trial whose devices and
    subscribers ran on other hosts (not sampled here); the server's writes and log stay (read from
    its own counters, or None where this host cannot read them)."""
    if costs is None:
        return None
    return dataclasses.replace(costs, cpu_cores={}, cpu_us_per_event={}, memory_bytes={})


def increase(series: TimeSeries, column: str, t0: float, t1: float) -> float | None:
    """How much a cumulative column rose from t0 to t1 (its values there, linear between samples when
    a probe missed one); None when it was not sampled around both instants, or fell."""
    times, values = series.column(column)
    a, b = _value_at(times, values, t0), _value_at(times, values, t1)
    if a is None or b is None or b < a:
        return None
    return b - a


def _value_at(times: Sequence[float], values: Sequence[float], at: float) -> float | None:
    if not times or at < times[0] or at > times[-1]:
        return None
    for i, t in enumerate(times):
        if t == at:
            return values[i]
        if t > at:
            t_prev = times[i - 1]
            return values[i - 1] + (values[i] - values[i - 1]) * (at - t_prev) / (t - t_prev)
    return values[-1]


def _inside(series: TimeSeries, column: str, t0: float, t1: float) -> list[float]:
    times, values = series.column(column)
    return [v for t, v in zip(times, values) if t0 <= t <= t1]


def _per(amount: float | None, by: float) -> float | None:
    return amount / by if amount is not None and by > 0 else None

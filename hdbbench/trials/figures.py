# SPDX-License-Identifier: Apache-2.0
"""The figures of one insertion trial, from its 1 Hz series and the counts read after the drain.

Pure functions over a trial's `TimeSeries`, its subscribers' final statistics and its accounting;
each returns a typed part of the trial's record (hdbbench.results.trials), which `hdbbench.trials.insertion.Trial`
puts together in one place. Rates, the sustained share and the CPU per event come from the
database's own counter where the backend can be read from outside (the same for every subscriber
kind), else from our subscriber's RowsStoredNumber.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from hdbbench.model import measure
from hdbbench.model.sampling import TimeSeries
from hdbbench.results.trials import (
    Accounting,
    AgeFigures,
    CpuShare,
    LostByReason,
    NotDrained,
    PendingAge,
    PendingEvents,
    StoredRate,
    TrialFigures,
)
from hdbbench.subscribers import statistics as st
from hdbbench.trials import outside as db_side
from hdbbench.trials.settings import TrialSettings

# The windowed durations (s) the trial reports, worst subscriber: result key -> (p50, p99, max) statistics.
AGE_FIGURES = {
    "event_age_at_commit_s": (st.EVENT_AGE_AT_COMMIT_P50, st.EVENT_AGE_AT_COMMIT_P99,
                              st.EVENT_AGE_AT_COMMIT_MAX),
    "event_age_at_reception_s": (st.EVENT_AGE_AT_RECEPTION_P50, st.EVENT_AGE_AT_RECEPTION_P99,
                                 st.EVENT_AGE_AT_RECEPTION_MAX),
    "time_in_subscriber_s": (st.TIME_IN_SUBSCRIBER_P50, st.TIME_IN_SUBSCRIBER_P99, st.TIME_IN_SUBSCRIBER_MAX),
}
# Error descriptions of Tango's event delivery dropping events (ZeroMQ's high-water mark): cppTango's
# API_MissedEvents, "Missed some events! Zmq queue has reached HWM?", as the subscriber stores it.
MISSED_EVENTS_MARKERS = ("missed some events", "missedevents")


def summarise(series: TimeSeries, s: TrialSettings, final: dict[str, dict[str, Any]], phases: list[dict[str, float]],
              outside: db_side.Outside | None) -> TrialFigures:
    """The trial's figures. Rates, the sustained share and the CPU per event come from the database's
    own counter (the same for every kind), our subscriber's RowsStoredNumber only where the backend
    cannot be read from outside; pending figures from HDB++'s attributes, which every kind publishes."""
    times, stored = outside.stored_counter(series) if outside is not None else stored_column(series)
    rates = measure.rates_per_second(times, stored)
    end_s = phases[0]["end_s"] if phases else None
    # A counter published in flushes reads its load's last second low (hdbbench.trials.outside.steady_end).
    tail = db_side.steady_end(end_s, outside.resolution_s) if outside is not None else end_s
    steady = measure.steady(rates, s.warmup_s, tail if not s.is_search else None)
    _, pending = series.column(f"sub.{st.ATTRIBUTE_PENDING_NUMBER}")
    _, max_pending = series.column(f"sub.{st.ATTRIBUTE_MAX_PENDING_NUMBER}")
    _, pending_age = series.column(f"sub.{st.PENDING_EVENT_AGE}")
    ages = {key: _age_figures(series, end_s, final, names) for key, names in AGE_FIGURES.items()}
    return TrialFigures(
        stored_rate=StoredRate(**asdict(measure.distribution(steady)), source=_counter_name(outside)),
        pending_events=PendingEvents(
            max=max(pending, default=None), p99=measure.percentile(pending, 99) if pending else None,
            high_water_mark=max(max_pending, default=None),
            source="HDB++ AttributePendingNumber, AttributeMaxPendingNumber (summed over subscribers; absent when "
                   "the kind does not publish them)"),
        pending_age_s=PendingAge(max=max(pending_age, default=math.nan), p99=measure.percentile(pending_age, 99)),
        event_age_at_commit_s=ages["event_age_at_commit_s"], event_age_at_reception_s=ages["event_age_at_reception_s"],
        time_in_subscriber_s=ages["time_in_subscriber_s"],
        cpu=_cpu_figures(series, s.warmup_s, end_s, counter=(times, stored)),
        subscriber_cpu_by_thread=_cpu_figures(series, s.warmup_s, end_s, prefix="threads_subscribers.",
                                              suffix="_cpu_s", counter=(times, stored)),
        sustained_share=measure.sustained_share(steady, s.rate, slack=0.02) if not s.is_search and steady else None,
    )


def _counter_name(outside: db_side.Outside | None) -> str:
    return "database counter" if outside is not None else f"subscriber's {st.ROWS_STORED_NUMBER}"


def loss_by_reason(accounting: Accounting, final: Mapping[str, Mapping[str, Any]],
                   errors: Mapping[str, Mapping[str, int]], drained: bool) -> Accounting:
    """The accounting with where the events the devices emitted and the database lacks were lost, as far
    as the outside figures and the kind's own attributes tell (`LostByReason`, in this order):

    * ``left_in_subscriber_queue`` — the trial did not drain: HDB++'s AttributePendingNumber at the end;
    * ``in_subscriber`` — our subscriber's own loss counter (queue or spool full), where published;
    * ``event_delivery`` — never reached the subscriber: for ours, the rest by elimination; for another
      kind, the loss of the attributes for which it stored Tango's "missed events" error (ZeroMQ's
      high-water mark dropped their events before any queue of the subscriber);
    * ``unattributed`` — the rest: lost inside the subscriber or in delivery, and the kind does not say.
    The reasons add up to ``lost``."""
    rest = accounting.lost

    def take(count: float) -> int | None:
        nonlocal rest
        share = max(0, min(rest, int(count)))
        rest -= share
        return share or None  # a reason without events is not recorded

    pending = int(sum(float(x.get(st.ATTRIBUTE_PENDING_NUMBER) or 0) for x in final.values()))
    queue = take(pending) if not drained else None
    ours = [float(x[st.LOST_EVENT_NUMBER]) for x in final.values() if x.get(st.LOST_EVENT_NUMBER) is not None]
    missed = {name for name, per in errors.items()
              if any(marker in desc.lower() for desc in per for marker in MISSED_EVENTS_MARKERS)}
    if ours:
        inside, unattributed = take(sum(ours)), None
        event_delivery = take(rest)
    else:
        inside = None
        event_delivery = take(sum(r.lost for r in accounting.per_attribute if r.attribute in missed))
        unattributed = take(rest)
    missed_rows = sum(count for name, per in errors.items() for desc, count in per.items()
                      if any(marker in desc.lower() for marker in MISSED_EVENTS_MARKERS))
    return dataclasses.replace(
        accounting,
        lost_by_reason=LostByReason(left_in_subscriber_queue=queue, in_subscriber=inside,
                                    event_delivery=event_delivery, unattributed=unattributed),
        lost_in_subscriber=(inside or 0) if ours else None,
        lost_in_event_delivery=event_delivery or 0,
        error_events=sum(sum(per.values()) for per in errors.values()),   # stored error rows (outside)
        missed_event_errors=missed_rows,
        attributes_with_missed_events=len(missed),
        error_events_reported=int(sum(float(x.get(st.ATTRIBUTE_FAILURE_FREQ) or 0) for x in final.values())),
        not_drained=None if drained else NotDrained(left_in_subscriber_queue=pending, not_stored=accounting.lost))


def _age_figures(series: TimeSeries, end_s: float | None, final: dict[str, dict[str, Any]],
                 names: tuple[str, str, str]) -> AgeFigures:
    """The subscribers' windowed figures `names` (p50, p99, max; window = StatisticsTimeWindow = the
    steady part) as sampled at the end of the steady part, worst subscriber; after the load has stopped
    the window would empty."""
    found: list[float | None] = []
    for name in names:
        times, values = series.column(f"sub.{name}")
        at_end = [v for t, v in zip(times, values) if end_s is None or t <= end_s]
        if at_end:
            found.append(at_end[-1])
        else:
            finals = [float(st[name]) for st in final.values() if st.get(name) is not None]
            found.append(max(finals) if finals else None)
    return AgeFigures(window="steady part, read at its end", p50=found[0], p99=found[1], max=found[2])


def _cpu_figures(series: TimeSeries, warmup_s: float, end_s: float | None, prefix: str = "proc_",
                 suffix: str = ".cpu_s", counter: tuple[list[float], list[float]] | None = None) -> dict[str, CpuShare]:
    """Cores used and CPU µs per stored event over the steady part, per column `prefix`<group>`suffix`
    (process groups by default). Stored events are counted by the database where it can (the same
    counter for every subscriber kind, in events: hdbbench.trials.outside.Outside.calibrate), else by our
    subscriber."""
    times, stored = counter if counter is not None else stored_column(series)
    window = [i for i, t in enumerate(times) if t >= warmup_s and (end_s is None or t <= end_s)]
    out: dict[str, CpuShare] = {}
    if len(window) < 2:
        return out
    first, last = window[0], window[-1]
    events = stored[last] - stored[first]
    span_s = times[last] - times[first]
    for column in series.columns:
        if not (column.startswith(prefix) and column.endswith(suffix)):
            continue
        t, cpu = series.column(column)
        by_time = dict(zip(t, cpu))
        if times[first] in by_time and times[last] in by_time:
            used = by_time[times[last]] - by_time[times[first]]
            group = column.removeprefix(prefix).removesuffix(suffix)
            out[group] = CpuShare(cores=used / span_s if span_s else math.nan,
                                  us_per_event=used / events * 1e6 if events else math.nan)
    return out


def stored_column(series: TimeSeries) -> tuple[list[float], list[float]]:
    """The stored-rows counter of a trial: our subscriber's RowsStoredNumber, else (another kind) the
    database's own count of inserted rows."""
    times, stored = series.column(f"sub.{st.ROWS_STORED_NUMBER}")
    return (times, stored) if times else series.column(db_side.COUNTER_COLUMN)

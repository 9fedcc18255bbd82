# SPDX-License-Identifier: Apache-2.0
"""The insertion benchmark: offered load → subscribers → backend, measured at 1 Hz.

A *trial* is one measured stretch on one backend: a fresh HDB++ database, N subscribers started
through the Tango interface, the simulated devices rewound to event 0 (same seed, so every backend
gets identical events) and started at the offered rate. The sampler reads the subscribers' Tango
attributes, the devices' emitted counters, the database's own count of inserted rows and the
visibility lag of probe attributes (hdbbench.trials.outside: the figures that are the same for every
subscriber kind) and the CPU/memory of every process once a second. After the load stops the queue is
drained and every attribute is accounted for: events emitted (device counters) against rows stored (SQL).

Only the HdbEventSubscriber interface and SQL are used, so a real hdbpp-es can be measured by the
same code (its extra statistics then read as missing).

On an aged history (`TrialSettings.history`, a run with [history]) a trial archives into the
history's database instead of a fresh one: its subscribers find the attributes in `att_conf` and
continue them, and once the trial is over the rows stamped after the history's end are removed
again (`reset_history`, with the backend's aging layout), so every trial starts from the same history.

`Trial.run` returns the trial's record, a `hdbbench.results.trials.TrialSummary`, built in one place
(`Trial._summary`) from the trial's settings and the typed parts of hdbbench.trials.figures,
hdbbench.trials.outside and hdbbench.trials.saturation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hdbbench.backends import backend_for_stack
from hdbbench.backends.base import Backend
from hdbbench.backends.registry import server_of
from hdbbench.load.offered import LoadTarget
from hdbbench.model.records import read, write
from hdbbench.model.sampling import Sampler, TimeSeries, machine_probe, process_probe, thread_probe
from hdbbench.results.aging import HistoryRecord
from hdbbench.results.trials import (
    Accounting,
    AttributeCount,
    DatabaseBytes,
    PlacementRecord,
    SaturationSearch,
    TrialSummary,
)
from hdbbench.stack.placement import PlacementControl, archiving_path_per_core
from hdbbench.stack.servers.endpoints import StackEndpoints
from hdbbench.subscribers import delivery
from hdbbench.subscribers import statistics as st
from hdbbench.subscribers.kinds import unproven_cause
from hdbbench.subscribers.launcher import SubscriberFleet, SubscriberSpec, lib_configuration
from hdbbench.trials import outside as db_side
from hdbbench.trials import saturation as sat
from hdbbench.trials.costs import unit_costs
from hdbbench.trials.figures import AGE_FIGURES, loss_by_reason, stored_column, summarise
from hdbbench.trials.search import SearchPlan, next_rate
from hdbbench.trials.settings import TrialSettings
from hdbbench.trials.writes import IO_PROBE_PREFIX, ServerWritesProbe, write_probes

# The windowed durations the trial reports, as our subscriber publishes them (hdbbench.trials.figures).
_AGE_STATISTICS = tuple(name for names in AGE_FIGURES.values() for name in names)
# Our statistics beyond HDB++'s; a real hdbpp-es (or ours in strict mode) lacks them: they read as missing.
EXTRA_STATISTICS = (st.ROWS_STORED_NUMBER, st.PENDING_EVENT_NUMBER, st.PENDING_EVENT_AGE,
                    st.LOST_EVENT_NUMBER, st.DUPLICATE_ROW_NUMBER, st.SPOOLED_EVENT_NUMBER, st.RECONNECT_NUMBER, st.DB_ERROR_NUMBER,
                    *_AGE_STATISTICS, st.MEAN_BATCH_SIZE, st.MEAN_BATCH_COMMIT_TIME)
# The subscriber's threads by name (hdbbench-es names its own): the rest is Tango's event reception
# (ZeroMQ I/O, event consumer) and CORBA request handling.
SUBSCRIBER_THREADS = {"hdb-writer": "writer"}
# Statistics where several subscribers count as their worst one (the others are summed).
WORST_OF_SUBSCRIBERS = (st.PENDING_EVENT_AGE, st.ATTRIBUTE_MAX_PENDING_NUMBER, *_AGE_STATISTICS)
# Statistics summed over the subscribers.
SUMMED_OVER_SUBSCRIBERS = (st.ROWS_STORED_NUMBER, st.PENDING_EVENT_NUMBER, st.ATTRIBUTE_PENDING_NUMBER,
                           st.LOST_EVENT_NUMBER, st.ATTRIBUTE_NOK_NUMBER, st.DB_ERROR_NUMBER, st.SPOOLED_EVENT_NUMBER,
                           st.ATTRIBUTE_FAILURE_FREQ)

SETTLE_S = 2.0  # at most, for the proof's events to be stored before the statistics restart
# A bisect search's step saturated beyond doubt by then ends there (Trial._measure): its stored rate
# over its last 2 s (the first second is the load's start), read against the most a counter published
# once a second allows, or the events it lost, already say so.
EARLY_VERDICT_S = 3.0
DRAIN_POLL_S = 0.2  # how often a drain reads the queues: its end is seen within this of the quiet
Progress = Callable[[str, float, dict[str, float]], None]  # (phase, fraction done, latest figures)


class Trial:
    """One measured stretch on one backend (see the module docstring)."""

    def __init__(self, settings: TrialSettings, endpoints: StackEndpoints, load: LoadTarget, state_dir: Path,
                 server_pids: dict[str, Sequence[int]], progress: Progress | None = None,
                 binary: Path | None = None, fleet_factory: Callable[..., SubscriberFleet] = SubscriberFleet,
                 placement: PlacementControl | None = None, stack_dir: Path | None = None) -> None:
        self.placement = placement
        # The stack's state directory: where each server's data (and, when confined, its loop device)
        # is found, for its block-layer writes (hdbbench.trials.writes); None: not read.
        self.stack_dir = stack_dir
        self._writes: dict[str, ServerWritesProbe] = {}
        self.settings = settings
        self.fleet_factory = fleet_factory  # hdbbench.scenario.hosts.HostedSubscribers: subscribers run on their hosts
        self.endpoints = endpoints
        self.load = load
        self.state_dir = state_dir
        self.server_pids = server_pids
        self.progress = progress or (lambda phase, done, figures: None)
        self.binary = binary if binary is not None else settings.kind.executable()
        self._outside: db_side.Outside | None = None
        self._ours_before: float | None = None  # our subscribers' RowsStoredNumber as the load began
        self._ended_early: dict[int, list[str]] = {}  # a bisect search's steps ended on a live verdict: its rules

    def run(self) -> tuple[TrialSummary, TimeSeries]:
        s = self.settings
        database = s.history.database if s.history is not None else f"hdbpp_{s.label}"
        backend = backend_for_stack(s.backend, self.endpoints, database=database)
        if s.history is None:
            backend.drop_schema()
            backend.create_schema(s.schema_variant)
        fleet = self.fleet_factory(self.load.tango_host, self.state_dir / s.label, binary=self.binary, attached=True,
                                   env=dict(s.kind.env))
        outside = None
        if db_side.Outside.available(backend):  # figures read from the database, the same for every kind
            outside = db_side.Outside(backend, self.load.attributes)
        self._outside = outside
        try:
            seen = self._observe(fleet, backend, outside)
        finally:
            self.load.stop()
            fleet.down()
            if outside is not None:  # after the subscribers' sessions ended: PostgreSQL then has every count
                outside.finish()
            if s.history is not None:
                reset_history(backend, s.history)
        if outside is not None:
            outside.add_stored_events(seen.series)
        return self._summary(seen, outside), seen.series

    def _observe(self, fleet: SubscriberFleet, backend: Any, outside: db_side.Outside | None) -> _Observed:
        """Subscribers up, event paths proven, the load measured, the queues drained and every event
        accounted for; the subscribers are still up when this returns (`run` stops them)."""
        s = self.settings
        devices = self._start_subscribers(fleet, backend)
        if self.placement is not None:
            self.placement.apply("subscribers", fleet.pids())
        # ZeroMQ subscriptions reach the publisher asynchronously (the "slow joiner"): events pushed
        # before the filter arrives are dropped. Each attribute's event path is proven first.
        unproven = delivery.confirm(fleet, devices, self.load)
        self.load.prepare(s.rate)
        delivery.settle(fleet, devices, SETTLE_S)
        # The initial values Tango sends on subscription carry the devices' last timestamps (minutes
        # old for a slow attribute): the windowed figures start with the load, not with them.
        for device in devices:
            fleet.reset_statistics(device)
        size_before = backend.size_bytes()
        ours_before = db_side.ours_rows_stored([fleet.statistics(d, EXTRA_STATISTICS) for d in devices])
        self._ours_before = ours_before
        load_started = datetime.now(timezone.utc)
        if outside is not None:
            outside.start(since=load_started)
        series, phases, t0_epoch = self._measure(fleet, devices)
        # While the subscribers still hold their database connections (a backend per connection).
        placement = self.placement.observe({"subscribers": fleet.pids()}) if self.placement else None
        drained = self._drain(fleet, devices)
        final = {device: fleet.statistics(device, EXTRA_STATISTICS) for device in devices}
        size_after = backend.size_bytes()
        # Rows stamped before the load started are the initial values Tango sends on subscription.
        accounting = self._account(backend.count_rows_by_attribute(since=load_started))
        if outside is not None:  # the counter's rows in events (MariaDB counts array elements)
            outside.calibrate(accounting.stored)
        errors = backend.count_error_events(since=load_started)
        accounting = loss_by_reason(accounting, final, errors, drained)
        judge = self._judge(series, t0_epoch)
        steps = self._judged_steps(judge, phases, backend, load_started, accounting) if s.search else None
        search = sat.summary(steps, judge.resolution_s, s.search) if steps is not None and s.search else None
        return _Observed(series, phases, load_started, ours_before, final, accounting, drained,
                         DatabaseBytes(size_before, size_after, size_after - size_before), len(unproven), placement,
                         search)

    def _summary(self, seen: _Observed, outside: db_side.Outside | None) -> TrialSummary:
        """The trial's record, built here only: the settings say what the trial measured, the typed
        parts what it found (hdbbench.results.trials)."""
        s = self.settings
        figures = summarise(seen.series, s, seen.final, seen.phases, outside)
        kind = db_side.kind_figures(outside, seen.series, s, seen.phases, seen.load_started, seen.ours_before,
                                    seen.final)
        per_process = math.ceil(len(self.load.attributes) / max(1, s.subscribers))
        # Over the steady part, as the stored rate (a search: its first step, as the CPU figures).
        counter = outside.stored_counter(seen.series) if outside is not None else stored_column(seen.series)
        end_s = seen.phases[0].get("end_s") if seen.phases else None
        costs = self._unit_costs(seen.series, counter, s.warmup_s,
                                 db_side.steady_end(end_s, outside.resolution_s) if outside is not None else end_s)
        placement = None
        if seen.placement is not None:
            path = archiving_path_per_core(write(figures.cpu), seen.placement, server_of(s.backend))
            placement = read(PlacementRecord, {**seen.placement, "archiving_path": path})
        return TrialSummary(
            backend=s.backend, label=s.label, kind=s.trial_kind, batch_size=s.batch_size, offered_rate=s.rate,
            subscribers=s.subscribers, lib_overrides=dict(s.lib_overrides), duration_s=s.duration_s,
            warmup_s=s.warmup_s, stored_rate=figures.stored_rate, pending_events=figures.pending_events,
            pending_age_s=figures.pending_age_s, event_age_at_commit_s=figures.event_age_at_commit_s,
            event_age_at_reception_s=figures.event_age_at_reception_s,
            time_in_subscriber_s=figures.time_in_subscriber_s, cpu=figures.cpu,
            subscriber_cpu_by_thread=figures.subscriber_cpu_by_thread, accounting=seen.accounting,
            drained=seen.drained, sampling_failures=dict(seen.series.failures), subscriber_final=seen.final,
            database_bytes=seen.database_bytes, saturation=seen.search, sustained_share=figures.sustained_share,
            device_engine=self.load.engine, placement=placement, delivery_unproven=seen.unproven,
            delivery_unproven_cause=unproven_cause(seen.unproven, per_process, s.kind.send_hwm(s.lib_overrides)),
            subscriber_kind=s.kind.name, outside=kind.outside, subscriber_reported=kind.subscriber_reported,
            unit_costs=costs)

    def _start_subscribers(self, fleet: SubscriberFleet, backend: Any) -> list[str]:
        s = self.settings
        lines = lib_configuration(s.backend, backend.database, self.endpoints, overrides=s.lib_overrides)
        window_s = str(self._statistics_window_s())
        # Attributes dealt over the subscribers and assigned by AttributeAdd, as hdbpp-cm does.
        specs = [SubscriberSpec(instance=n + 1, lib_configuration=tuple(lines), attributes=attributes,
                                properties={"StatisticsTimeWindow": [window_s]})
                 for n, attributes in enumerate(self.load.deal(s.subscribers))]
        return fleet.up(specs, progress=self.progress)

    def _statistics_window_s(self) -> int:
        """The subscribers' StatisticsTimeWindow: the steady part, over which the windowed figures are read."""
        return max(1, int(round(self.settings.duration_s - self.settings.warmup_s)))

    def _probes(self, fleet: SubscriberFleet, devices: Sequence[str]) -> dict[str, Callable[[], dict[str, float]]]:
        def subscribers() -> dict[str, float]:
            totals: dict[str, float] = {}
            for device in devices:
                stats = fleet.statistics(device, EXTRA_STATISTICS)
                for key in SUMMED_OVER_SUBSCRIBERS:
                    if stats.get(key) is not None:
                        totals[key] = totals.get(key, 0.0) + float(stats[key])
                for key in WORST_OF_SUBSCRIBERS:
                    if stats.get(key) is not None:
                        totals[key] = max(totals.get(key, 0.0), float(stats[key]))
            return totals

        probes: dict[str, Callable[[], dict[str, float]]] = {
            "sub": subscribers,
            "dev": self._device_probe,
            "proc_subscribers": process_probe(fleet.pids()),
            "threads_subscribers": thread_probe(fleet.pids(), SUBSCRIBER_THREADS, other="tango_and_other"),
            sat.DEVICES_PROBE: process_probe(self.load.device_pids),
            sat.MACHINE_PROBE: machine_probe(),
            **(self._outside.probes() if self._outside is not None else {}),
        }
        for name, pids in self.server_pids.items():
            probes[f"proc_{name}"] = process_probe(list(pids))
        self._writes = write_probes(self.stack_dir, self.server_pids)
        for name, writes in self._writes.items():
            probes[f"{IO_PROBE_PREFIX}{name}"] = writes.probe
        return probes

    def _server(self) -> str | None:
        """The name of the trial's database server in the series (its ``proc_``/``io_`` probes): the
        kind its backend runs on, or the kind that stands in for it (a Patroni cluster for postgres)."""
        kind = server_of(self.settings.backend)
        if kind is None:
            return None
        kind_of = getattr(self.endpoints, "kind_of", None)
        return kind_of(kind) if callable(kind_of) else kind

    def _unit_costs(self, series: TimeSeries, counter: tuple[list[float], list[float]], start_s: float,
                    end_s: float | None) -> Any:
        """The unit costs over a window (hdbbench.trials.costs), the trial's server's writes included."""
        server = self._server()
        writes = self._writes.get(server or "")
        return unit_costs(series, counter, start_s, end_s, len(self.load.attributes), server,
                          writes.where if writes is not None else None)

    def _device_probe(self) -> dict[str, float]:
        """The devices' emitted count, the wall-clock time it was read (a step's events are split from
        the next step's by their source times at that instant), and how far they are behind schedule."""
        emitted = self.load.emitted_total()
        return {"emitted": emitted, "read_epoch": time.time(), "max_lag_s": self.load.max_lag_s()}

    def _measure(self, fleet: SubscriberFleet, devices: Sequence[str]) -> tuple[TimeSeries, list[dict[str, float]], float]:
        """The load at the trial's rate, or a saturation search's steps at the rates it chooses in turn
        (hdbbench.trials.search: stepped, or bracketed and bisected), each judged as it ends
        (hdbbench.trials.saturation). Returns the series, the phases (rate, start_s, end_s) and the
        wall-clock time of t_s = 0."""
        s = self.settings
        plan = s.search
        total_s = s.duration_s if plan is None else s.step_s * plan.expected_steps()
        phases: list[dict[str, float]] = []
        judged: list[sat.Step] = []  # each step as judged when it ended, as the search chooses from them
        sampler = Sampler(self._probes(fleet, devices), period_s=1.0)
        self.load.start()
        with sampler:
            if self._outside is not None:
                self._outside.t0_epoch = sampler.started_epoch
            judge = self._judge(sampler.series, sampler.started_epoch)
            early = plan is not None and plan.mode == "bisect"
            rate: float | None = s.rate
            while rate is not None:
                start = sampler.elapsed_s()
                phases.append({"rate": rate, "start_s": start})
                end = start + (s.step_s if plan is not None else s.duration_s)
                while sampler.elapsed_s() < end:
                    self.progress(f"{s.backend} {s.label}", min(1.0, sampler.elapsed_s() / total_s), sampler.latest())
                    time.sleep(min(0.5, max(0.0, end - sampler.elapsed_s())))
                    # A bisect step saturated beyond doubt after EARLY_VERDICT_S ends there: more
                    # seconds far above the limit only add backlog, and rows that slow later steps.
                    # One near the limit runs its length: a transient may pass in it. So does one at
                    # a rate that passed before (the same verdicts as the search's: not beyond doubt).
                    now = sampler.elapsed_s()
                    live = judge.judge(sat.Step(rate, start, now)) if early and now - start >= EARLY_VERDICT_S else None
                    if live is not None and sat.verdicts([*judged, live], plan)[-1][1] == "overload":
                        self._ended_early[len(phases) - 1] = list(live.rules)
                        break
                phases[-1]["end_s"] = sampler.elapsed_s()
                if plan is None:
                    break
                judged.append(judge.judge(sat.Step(rate, start, phases[-1]["end_s"])))
                tried = sat.verdicts(judged, plan)
                rate = next_rate(plan, tried)
                if rate is None and plan.mode == "bisect":
                    judged, rate = self._last_verdicts(fleet, devices, judge, phases, plan)
                    if rate is not None:  # reopened: the load was stopped for the drain
                        self.load.set_rate(rate)
                        self.load.start()
                elif rate is not None:
                    self._next_step(fleet, devices, rate, drain_first=tried[-1][1] != "pass")
        self.load.stop()
        return sampler.series, phases, sampler.started_epoch

    def _last_verdicts(self, fleet: SubscriberFleet, devices: Sequence[str], judge: sat.StepJudge,
                       phases: Sequence[dict[str, float]], plan: SearchPlan
                       ) -> tuple[list[sat.Step], float | None]:
        """Before a bisect search ends: the load stopped and the queue drained, every step judged again
        once all its rows are visible (the last step's probe events, its last seconds), and the rate
        the search offers next on those verdicts. A verdict that changed reopens the search, which
        would otherwise end on a step the summary finds saturated (seen 2026-11-27: PostgreSQL's
        confirming step at 80,000 did, and its answer fell to 40,000)."""
        self.load.stop()
        self._drain(fleet, devices, phase="draining before the last verdict")
        steps = self._rejudge(judge, phases)
        return steps, next_rate(plan, sat.verdicts(steps, plan))

    def _rejudge(self, judge: sat.StepJudge, phases: Sequence[dict[str, float]]) -> list[sat.Step]:
        """Each step judged over the whole series. A step that ended early on a saturated verdict
        keeps its rules: it was not given its length to show otherwise."""
        steps = [judge.judge(sat.Step(p["rate"], p["start_s"], p["end_s"])) for p in phases]
        return [replace(step, rules=self._ended_early[k]) if not step.rules and k in self._ended_early else step
                for k, step in enumerate(steps)]

    def _next_step(self, fleet: SubscriberFleet, devices: Sequence[str], rate: float, drain_first: bool) -> None:
        """The load at the next step's rate. After a saturated step (or one the devices could not
        offer) the load stops and the queue drains first, so no backlog reaches the next step; the
        drain is not a step (its samples lie between the steps' windows)."""
        if not drain_first:
            self.load.set_rate(rate)
            return
        self.load.stop()
        self._drain(fleet, devices, phase="draining between steps")
        self.load.set_rate(rate)
        self.load.start()

    def _judge(self, series: TimeSeries, t0_epoch: float) -> sat.StepJudge:
        """The saturation rules over this trial's series and outside figures (hdbbench.trials.saturation)."""
        outside = self._outside
        if outside is None:  # a backend not readable from outside: our subscriber's own counts
            return sat.StepJudge(series, 0.0, None, t0_epoch)
        return sat.StepJudge(series, outside.resolution_s, outside.watch.lags_between, t0_epoch,
                             outside.stored_counter)

    def _judged_steps(self, judge: sat.StepJudge, phases: Sequence[dict[str, float]], backend: Any,
                      load_started: datetime, accounting: Accounting) -> list[sat.Step]:
        """The search's steps judged again after the drain, with each step's events by source time:
        emitted (the devices' counters at the steps' bounds) against stored, and error events stored."""
        steps = self._rejudge(judge, phases)
        bounds = judge.step_bounds(steps, load_started.timestamp(), accounting.emitted)
        counts = []
        for start, end, emitted in bounds:
            since = datetime.fromtimestamp(start, timezone.utc)
            until = None if math.isinf(end) else datetime.fromtimestamp(end, timezone.utc)
            stored = sum(backend.count_rows_by_attribute(since=since, until=until).values())
            counts.append((emitted, stored, sat.error_counts(backend.count_error_events(since=since, until=until))))
        judge.add_accounting(steps, counts)
        counter = judge.stored_counter()
        for step in steps:  # over the window of the step's stored rate (after its first second)
            step.unit_costs = self._unit_costs(judge.series, counter, step.start_s + 1.0, step.end_s)
        return steps

    def _drain(self, fleet: SubscriberFleet, devices: Sequence[str], timeout_s: float = 120.0,
               phase: str = "draining") -> bool:
        """Wait until every subscriber's queue is empty (HDB++'s AttributePendingNumber) and the stored
        count has stopped moving for longer than the counter can be stale: one poll for our
        subscribers' RowsStoredNumber (counted at commit, read live, and their pending count holds
        the batch being written), 1 s plus its resolution for the database's own count."""
        deadline = time.monotonic() + timeout_s
        database_quiet_s = 1.0 + (self._outside.resolution_s if self._outside is not None else 0.0)
        previous, since = None, time.monotonic()
        while time.monotonic() < deadline:
            stats = [fleet.statistics(d, EXTRA_STATISTICS) for d in devices]
            pending = sum(float(x.get(st.ATTRIBUTE_PENDING_NUMBER) or 0) for x in stats)
            stored = db_side.ours_rows_stored(stats)
            quiet_s = DRAIN_POLL_S
            if stored is None:  # a kind without our statistics: the database's own count
                stored = float(self._outside.counter.rows_inserted()) if self._outside is not None else 0.0
                quiet_s = database_quiet_s
            if self._all_stored(stored, pending):
                return True
            if stored != previous or pending:
                previous, since = stored, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                return True
            self.progress(phase, 1.0, {f"sub.{st.ATTRIBUTE_PENDING_NUMBER}": pending})
            time.sleep(DRAIN_POLL_S)
        return False

    def _all_stored(self, stored: float | None, pending: float) -> bool:
        """Every event the devices emitted since the load began is stored (our subscribers'
        RowsStoredNumber, counted at commit, has grown by as many) and no queue holds one: the drain
        is over, exactly. Otherwise (another kind, a loss, a restarted subscriber whose count began
        again) the drain waits for the stored count to stand still."""
        if pending or stored is None or self._ours_before is None:
            return False
        return stored - self._ours_before >= self.load.emitted_total()

    def _account(self, stored: dict[str, int]) -> Accounting:
        """Emitted against stored per attribute (the loss by reason is added by `loss_by_reason`)."""
        emitted = self.load.emitted_per_attribute()
        rows = [AttributeCount(attribute=name, emitted=emitted[name], stored=stored.get(name, 0),
                               lost=max(0, emitted[name] - stored.get(name, 0)),
                               extra=max(0, stored.get(name, 0) - emitted[name])) for name in sorted(emitted)]
        return Accounting(emitted=sum(r.emitted for r in rows), stored=sum(r.stored for r in rows),
                          lost=sum(r.lost for r in rows), duplicates=sum(r.extra for r in rows), per_attribute=rows)


@dataclass(frozen=True)
class _Observed:
    """What a trial saw before its subscribers stopped (`Trial._observe`)."""

    series: TimeSeries
    phases: list[dict[str, float]]
    load_started: datetime
    ours_before: float | None
    final: dict[str, dict[str, Any]]
    accounting: Accounting
    drained: bool
    database_bytes: DatabaseBytes
    unproven: int
    placement: dict[str, Any] | None
    search: SaturationSearch | None


def reset_history(backend: Backend, record: HistoryRecord) -> int:
    """Remove what a trial added after the history's end, so the next trial starts from the same
    history; the rows removed."""
    ops = backend.aging_layout()
    assert ops is not None
    return int(ops.delete_after(backend, datetime.fromisoformat(record.end)))

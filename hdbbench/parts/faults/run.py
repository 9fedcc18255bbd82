# SPDX-License-Identifier: Apache-2.0
"""The faults part of ``hdbbench run``: one trial per backend, subscriber kind and fault, under load.

A trial: a fresh HDB++ database; the fault armed (a tmpfs mounted, tables moved); the subscriber(s)
started with the faults part's spool settings; the devices rewound and emitting at ``rate``; warm-up;
the fault begins, holds ``hold_s`` and ends; after a device kill, the run waits until every attribute
of the restarted server has an event stored again (at most ``recover_timeout_s`` plus the slowest
attribute's period); then until the back-log is stored (the gap between emitted and stored stops
shrinking, at most ``recover_timeout_s``); emission stops; the queues drain; then everything is
counted (hdbbench.parts.faults.accounting). A cluster's fault (hdbbench.parts.faults.cluster) also samples the
replication lag, and counts the stored rows on a standby while no primary answers. Everything the trial started or
mounted is stopped or undone in ``finally`` (disarm always), also on failure and Ctrl-C.

``spool_full`` runs with a small in-memory queue and a database stop at the same time, so the events
overflow from memory into the spool, which is full: they are lost with reason ``spool_full``.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hdbbench.backends import backend_for_stack
from hdbbench.load.devices import load_fleet
from hdbbench.load.offered import LoadTarget
from hdbbench.model.errors import one_line
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType, WriteType
from hdbbench.model.sampling import Sampler, TimeSeries
from hdbbench.parts.faults import accounting as acc
from hdbbench.parts.faults.accounting import KillSnapshot
from hdbbench.parts.faults.cluster import ClusterFault, Failover
from hdbbench.parts.faults.emission import Emission, numbers, peak_memory_bytes
from hdbbench.parts.faults.factory import make_injector
from hdbbench.parts.faults.injectors import FaultTarget
from hdbbench.parts.faults.part import FaultsPart, FaultsPlan, FaultTrialPlan
from hdbbench.parts.faults.processes import DeviceKill, SubscriberKill
from hdbbench.parts.faults.results import NAMES_KEPT, RESULTS_KIND, TABLE_COLUMNS, TABLE_CSV, table_rows
from hdbbench.results.document import RunDirectory, RunPart, results_document
from hdbbench.results.faults import FaultsResults, FaultTrial
from hdbbench.subscribers import statistics as st
from hdbbench.subscribers.launcher import SubscriberFleet, SubscriberSpec, lib_configuration

SETTLE_S = 2.0          # ZeroMQ subscriptions reach the publisher asynchronously
PLATEAU_SAMPLES = 4     # the gap emitted − stored is steady over this many 1 Hz samples: recovered
RESUME_POLL_S = 0.5     # after a device kill: how often the rows stored since the restart are counted
STATISTICS = (st.PENDING_EVENT_NUMBER, st.ROWS_STORED_NUMBER, st.DUPLICATE_ROW_NUMBER, st.LOST_EVENT_NUMBER,
              st.SPOOLED_EVENT_NUMBER, acc.LOST_QUEUE_FULL, acc.LOST_SPOOL_FULL, acc.QUEUE_CAPACITY, acc.QUEUE_MAX,
              st.WAL_REPLAYED_NUMBER, st.DB_ERROR_NUMBER)
# Counters a killed subscriber's process had: added to those of the restarted one.

Say = Callable[[str], None]


def run_faults(plan: FaultsPlan, recorded: dict[str, Any], run: RunDirectory, endpoints: Any, load: LoadTarget,
               devices_dir: Path, state_dir: Path, environment: dict[str, Any], say: Say) -> list[FaultTrial]:
    """Every planned fault trial, in order; faults.json (`recorded`: the scenario as results files
    record it) and faults-table.csv rewritten after each."""
    out = RunPart(run, "faults")
    trials: list[FaultTrial] = []
    for planned in plan.trials:
        say(f"fault {planned.fault} on {planned.backend} ({planned.kind.name})")
        trial = FaultTrialRun(planned, plan.part, endpoints, load, devices_dir, state_dir)
        record, series = trial.run()
        trials.append(record)
        header, rows = series.as_table()
        out.write_csv(f"series-{planned.label}.csv", header, rows)
        out.write_json("results.json", results_document(
            RESULTS_KIND, recorded, environment, FaultsResults(trials=list(trials))))
        out.write_csv(TABLE_CSV, TABLE_COLUMNS, table_rows(trials))
        say(_line(record))
    return trials


def _line(t: FaultTrial) -> str:
    reasons = ", ".join(f"{k} {v:,}" for k, v in t.lost_by_reason.items()) or "none"
    recovery = f"{t.recovery_s:.1f} s" if t.recovery_s is not None else "not recovered"
    head = f"  {t.fault} {t.backend}: "
    if t.error:
        return head + f"failed: {t.error}"
    line = head + f"emitted {t.emitted:,}, stored {t.stored:,}, lost {t.lost:,} ({reasons}), recovery {recovery}"
    if t.killed_server is not None:
        last = f"the last {t.resume_max_s:.1f} s after the restart" if t.resume_max_s is not None else "not all in time"
        line += f"; {t.killed_server}: {t.never_resumed:,} of {t.killed_attributes:,} attributes never resumed, {last}"
    return line


class FaultTrialRun:
    """One fault trial (the module docstring)."""

    def __init__(self, planned: FaultTrialPlan, part: FaultsPart, endpoints: Any, load: LoadTarget,
                 devices_dir: Path, state_dir: Path) -> None:
        self.planned, self.part = planned, part
        self.fault, self.kind, self.label = planned.fault, planned.kind, planned.label
        self.endpoints, self.load, self.devices_dir, self.state_dir = endpoints, load, devices_dir, state_dir
        self.backend = backend_for_stack(planned.backend, endpoints, database=f"hdbpp_{planned.label}")
        # Absolute: the subscriber runs in its own directory and reads spool_dir from its configuration.
        self.home = (state_dir / "faults" / planned.label).resolve()
        self.fleet = SubscriberFleet(load.tango_host, self.home, binary=self.kind.executable(), attached=True,
                                     env=dict(self.kind.env))
        self.emission = Emission(load)
        self.snapshot: dict[str, Any] = {}
        self.peak_memory = 0
        self.load_started = 0.0
        self.killed_statistics: dict[str, float] = {}  # a killed subscriber's last statistics
        self.synchronous: bool | None = None  # a cluster fault's replication mode (its accounting)
        self.device_kill: DeviceKill | None = None
        self.resumed_at: dict[str, float] = {}  # after a device kill: when a row stamped after the restart was seen

    def record(self, **figures: Any) -> FaultTrial:
        p = self.part
        ours = self.kind.ours  # the spool and queue settings are our subscriber's keys: none for another kind
        return FaultTrial(backend=self.backend.name, kind=self.kind.name, fault=self.fault, label=self.label,
                          rate=p.rate, hold_s=p.hold_s, spool_mode=p.spool_mode if ours else None,
                          spool_sync_ms=p.spool_sync_ms if ours else None,
                          queue_capacity=int(p.lib_overrides(self.fault, "")["queue_capacity"]) if ours else None,
                          **figures)

    def run(self) -> tuple[FaultTrial, TimeSeries]:
        sampler: Sampler | None = None
        injector = None
        try:
            self.backend.drop_schema()
            self.backend.create_schema(self.planned.schema_variant)
            # A spool left by an earlier run would be replayed into this trial's fresh tables.
            shutil.rmtree(self.home / "spool", ignore_errors=True)
            (self.home / "spool").mkdir(parents=True, exist_ok=True)
            devices = self._subscriber_specs()
            injector = self._injector(devices)
            injector.arm()
            self.fleet.up(devices)
            self.load.prepare(self.part.rate)
            time.sleep(SETTLE_S)
            self.load_started = time.time()
            sampler = Sampler(self._probes(devices, injector), period_s=1.0).start()
            self.load.start()
            time.sleep(self.part.warmup_s)
            return self._fault(injector, devices, sampler), sampler.series
        except Exception as exc:  # noqa: BLE001 - one trial's failure is its result; the others still run
            return self.record(error=one_line(exc), marks=dict(getattr(injector, "marks", {}))), (
                sampler.series if sampler else TimeSeries())
        finally:
            self._stop_all(injector, sampler)

    def _stop_all(self, injector: Any, sampler: Sampler | None) -> None:
        """Everything the trial started, in the order that frees the mounts: load, subscribers, fault."""
        try:
            self.load.stop()
        except Exception:  # noqa: BLE001 - a killed device server may not answer; the run stops it
            pass
        try:
            self.fleet.down()
        finally:
            if sampler is not None:
                sampler.stop()
            if injector is not None:
                injector.disarm()

    def _fault(self, injector: Any, specs: Sequence[SubscriberSpec], sampler: Sampler) -> FaultTrial:
        injector.begin()
        time.sleep(self.part.hold_s)
        ended = time.time()
        injector.end()
        marks = {**injector.marks}
        if isinstance(injector, SubscriberKill):
            self.killed_statistics = numbers(injector.statistics_before)
        marks.setdefault("ended", ended)
        if isinstance(injector, SubscriberKill):
            self._wait_resubscribed(marks)
        if isinstance(injector, DeviceKill):
            self._wait_resumed(injector, marks)
        self._wait_recovered(sampler)
        self.load.stop()
        marks["load_stopped"] = time.time()
        drained = self._drain(specs)
        return self._count(specs, sampler.series, marks, drained, getattr(injector, "lag_bytes_at_begin", None))

    # --- the fault ---------------------------------------------------------------------------------
    def _injector(self, specs: Sequence[SubscriberSpec]) -> Any:
        if self.fault == "subscriber_kill":
            return SubscriberKill(self.fleet, specs[0], self._before_kill)
        if self.fault == "device_kill":
            self.device_kill = DeviceKill(self.devices_dir, self.load, self.part.rate, self.part.device,
                                          self._before_kill)
            return self.device_kill

        target = FaultTarget(state_dir=self.state_dir, backend=self.backend.name, database=self.backend.database,
                             tables=self._data_tables(), spool_dir=self.home / "spool", tmpfs_mb=self.part.tmpfs_mb)
        if self.fault == "spool_full":
            return Together(make_injector("spool_full", target), make_injector("database_stop", target))

        injector = make_injector(self.fault, target)
        if isinstance(injector, ClusterFault):
            self.synchronous = injector.cluster.synchronous
        if isinstance(injector, Failover):  # its loss is split at the crash (a cut), as a process kill's
            injector.at_crash = self._before_kill
        return injector

    def _data_tables(self) -> tuple[str, ...]:
        """The data tables the load's attributes are stored in (the backend names them)."""
        fleet = load_fleet(self.devices_dir)
        by_suffix = {t.suffix: t for t in TangoType}
        shapes = {(spec.type, spec.format, spec.write) for plan in (fleet.devices.values() if fleet else ())
                  for spec in plan.specs if spec.mode == "push"}
        return tuple(sorted({self.backend.table_for(AttributeInfo("shape", by_suffix[kind.lower()], AttrFormat[form],
                                                                  WriteType[write]))
                             for kind, form, write in shapes}))

    def _before_kill(self) -> None:
        """The devices' per-attribute counters just before a process kill (hdbbench.parts.faults.accounting)."""
        emitted = self.emission.per_attribute()
        self.snapshot = {"at": time.time(), "emitted": emitted}
        if self.device_kill is not None:
            killed = {d.lower() for d in self.device_kill.devices}
            self.snapshot["attributes"] = frozenset(a for a in emitted if a.rsplit("/", 1)[0].split("/", 3)[-1] in killed)
            self.emission.freeze(killed, emitted)
        else:
            self.snapshot["attributes"] = frozenset(emitted)

    # --- subscribers, probes, recovery, drain ------------------------------------------------------
    def _subscriber_specs(self) -> list[SubscriberSpec]:
        overrides = {**dict(self.planned.lib_overrides), **self.part.lib_overrides(self.fault, str(self.home / "spool"))}
        lines = lib_configuration(self.backend.name, self.backend.database, self.endpoints, overrides=overrides)
        return [SubscriberSpec(instance=n + 1, lib_configuration=tuple(lines), attributes=attributes)
                for n, attributes in enumerate(self.load.deal(self.planned.subscribers))]

    def _stored_total(self, fallback: Any = None) -> float:
        """Rows stored since the load began; from `fallback` (a backend) when the backend's server fails."""
        since = _utc(self.load_started)
        try:
            return float(sum(self.backend.count_rows_by_attribute(since=since).values()))
        except Exception:
            if fallback is None:
                raise
            return float(sum(fallback.count_rows_by_attribute(since=since).values()))

    def _statistics(self, specs: Sequence[SubscriberSpec]) -> dict[str, float]:
        totals: dict[str, float] = {}
        for spec in specs:
            for key, value in self.fleet.statistics(spec.device, STATISTICS).items():
                if key in STATISTICS and value is not None:
                    totals[key] = totals.get(key, 0.0) + float(value)
        return totals

    def _probes(self, specs: Sequence[SubscriberSpec], injector: Any) -> dict[str, Callable[[], dict[str, float]]]:
        def memory() -> dict[str, float]:
            self.peak_memory = max(self.peak_memory, peak_memory_bytes(self.fleet.pids()))
            return {"peak_bytes": float(self.peak_memory)}

        probes = {"clock": lambda: {"wall": time.time()},
                  "dev": lambda: {"emitted": float(self.emission.total())},
                  "db": lambda: {"stored": self._stored_total()},
                  "sub": lambda: self._statistics(specs),
                  "mem": memory}
        if isinstance(injector, ClusterFault):
            # While no primary answers, the count comes from a standby (nothing is committed then; in
            # synchronous mode it holds every commit): a failed sample would hide when rows were stored.
            standby = injector.on_any_member(self.backend)
            probes["db"] = lambda: {"stored": self._stored_total(standby)}
            probes["lag"] = injector.lag_sample  # last: a member that is down must not delay the others
        return probes

    def _wait_resubscribed(self, marks: dict[str, float]) -> None:
        """A restarted subscriber receives again once the database holds an event stamped after its
        restart (AttributeStartedNumber says it subscribed; ZeroMQ's subscription reaches the
        publisher a moment later): the devices' counters then bound the events emitted while it was down."""
        deadline = time.monotonic() + self.part.recover_timeout_s
        since = _utc(marks["restarted"])
        while time.monotonic() < deadline:
            if sum(self.backend.count_rows_by_attribute(since=since).values()) > 0:
                marks["resubscribed"] = time.time()
                self.snapshot["until_resubscribed"] = self.emission.total() - sum(self.snapshot["emitted"].values())
                return
            time.sleep(0.1)

    def _wait_resumed(self, kill: DeviceKill, marks: dict[str, float]) -> None:
        """Until every attribute of the restarted server has a row stamped after its restart, noting
        when each was first seen (its time to resume). Bounded by recover_timeout_s plus the slowest
        attribute's period: an attribute not yet due has not failed to resume."""
        attributes = self.snapshot["attributes"]
        since = _utc(marks["restarted"])
        deadline = time.monotonic() + self.part.recover_timeout_s + kill.slowest_period_s
        while True:
            stored = self.backend.count_rows_by_attribute(since=since)
            seen = time.time()
            for name in attributes:
                if name not in self.resumed_at and stored.get(name, 0) > 0:
                    self.resumed_at[name] = seen
            if len(self.resumed_at) == len(attributes):
                marks["resumed"] = seen
                return
            if time.monotonic() > deadline:
                return
            time.sleep(RESUME_POLL_S)

    def _wait_recovered(self, sampler: Sampler) -> None:
        """Until the gap between emitted and stored stops shrinking (or recover_timeout_s)."""
        deadline = time.monotonic() + self.part.recover_timeout_s
        first = len(sampler.series.rows)
        while time.monotonic() < deadline:
            time.sleep(1.0)
            gaps = [r["dev.emitted"] - r["db.stored"] for r in sampler.series.rows[first:]
                    if "dev.emitted" in r and "db.stored" in r]
            recent = gaps[-PLATEAU_SAMPLES:]
            if len(recent) == PLATEAU_SAMPLES and max(recent) - min(recent) <= self.part.rate + 50:
                return

    def _drain(self, specs: Sequence[SubscriberSpec]) -> bool:
        """Until the stored count stops moving and no subscriber holds an event (where it says)."""
        deadline = time.monotonic() + self.part.drain_timeout_s
        previous = None
        while time.monotonic() < deadline:
            try:
                stored = self._stored_total()
                pending = self._statistics(specs).get(st.PENDING_EVENT_NUMBER, 0.0)
            except Exception:  # noqa: BLE001 - a component still coming back: try again
                stored, pending = None, 1.0
            if stored is not None and stored == previous and pending == 0:
                return True
            previous = stored
            time.sleep(1.0)
        return False

    # --- counting ------------------------------------------------------------------------------------
    def _count(self, specs: Sequence[SubscriberSpec], series: TimeSeries, marks: dict[str, float],
               drained: bool, lag_at_begin: int | None) -> FaultTrial:
        emitted = self.emission.per_attribute()
        since = _utc(self.load_started)
        stored = self.backend.count_rows_by_attribute(since=since)
        final = self._statistics(specs)
        before = self.killed_statistics
        counted = {"spool_full": int(final.get(acc.LOST_SPOOL_FULL, 0) + before.get(acc.LOST_SPOOL_FULL, 0)),
                   "queue_full": int(final.get(acc.LOST_QUEUE_FULL, 0) + before.get(acc.LOST_QUEUE_FULL, 0))}
        if final.get(st.DB_ERROR_NUMBER) is not None:  # ours: the rows it rejected, dropped ones among them
            counted[acc.DROPPED] = int(final[st.DB_ERROR_NUMBER] + before.get(st.DB_ERROR_NUMBER, 0))
        snapshot = None
        if self.snapshot:
            after = self.backend.count_rows_by_attribute(since=_utc(self.snapshot["at"]))
            snapshot = KillSnapshot(self.snapshot["at"], self.snapshot["emitted"],
                                    {a: n - after.get(a, 0) for a, n in stored.items()},
                                    self.snapshot["attributes"], self.snapshot.get("until_resubscribed"))
        loss = acc.account(self.fault, emitted, stored, counted, snapshot, self.synchronous)
        times, columns = _wall_columns(series, ("db.stored", "dev.emitted"))
        duplicates = _duplicates(final, before, emitted, stored)
        began = marks.get("began", marks["ended"])
        lags = series.column("lag.bytes")[1]
        return self.record(
            **self._resumption(marks),
            write_stall_s=acc.write_stall(times, columns["db.stored"], began, marks["load_stopped"]),
            caught_up_s=acc.caught_up_s(times, columns["db.stored"], columns["dev.emitted"], began, loss.lost,
                                        self.part.rate),
            lag_bytes_at_begin=lag_at_begin, lag_bytes_max=int(max(lags)) if lags else None,
            emitted=loss.emitted, stored=loss.stored, lost=loss.lost, duplicates=duplicates,
            lost_by_reason=loss.lost_by_reason,
            recovery_s=acc.recovery_s(times, columns["db.stored"], columns["dev.emitted"], marks["ended"], loss.lost),
            peak_memory_bytes=self.peak_memory or None,
            memory_queue_max=_largest(final, before, acc.QUEUE_MAX), memory_queue_capacity=final.get(acc.QUEUE_CAPACITY),
            wal_replayed=final.get(st.WAL_REPLAYED_NUMBER),
            marks=marks, load_started=self.load_started, drained=drained)

    def _resumption(self, marks: dict[str, float]) -> dict[str, Any]:
        """A device kill's figures of FaultTrial (hdbbench.parts.faults.accounting.resumption); none otherwise."""
        if self.device_kill is None or "restarted" not in marks:
            return {}
        after = self.backend.count_rows_by_attribute(since=_utc(marks["restarted"]))
        before = self.backend.count_rows_by_attribute(since=_utc(self.load_started), until=_utc(self.snapshot["at"]))
        silent = {a for a in self.snapshot["attributes"] if self.snapshot["emitted"].get(a, 0) and not before.get(a)}
        resumed = acc.resumption(self.snapshot["attributes"], after, self.resumed_at, marks["restarted"], silent)
        return {"killed_server": self.device_kill.instance, "killed_attributes": resumed.attributes,
                "never_resumed": len(resumed.never), "never_resumed_names": list(resumed.never[:NAMES_KEPT]),
                "resume_p50_s": resumed.p50_s, "resume_max_s": resumed.max_s,
                "silent_before_kill": resumed.silent, "silent_resumed": resumed.silent_resumed}


class Together:
    """Two injectors as one fault: armed, begun, ended and disarmed together (marks of the first)."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second
        self.name = f"{first.name}+{second.name}"

    @property
    def marks(self) -> dict[str, float]:
        return {**{f"{self.second.name}.{k}": v for k, v in self.second.marks.items()}, **self.first.marks}

    def arm(self) -> None:
        self.first.arm()
        self.second.arm()

    def begin(self) -> None:
        self.first.begin()
        self.second.begin()

    def end(self) -> None:
        self.second.end()
        self.first.end()

    def disarm(self) -> None:
        try:
            self.second.disarm()
        finally:
            self.first.disarm()




def _utc(seconds: float) -> Any:
    return datetime.fromtimestamp(seconds, timezone.utc)


def _wall_columns(series: TimeSeries, names: Sequence[str]) -> tuple[list[float], dict[str, list[float]]]:
    """The samples that have every column of `names`, on the wall clock."""
    rows = [r for r in series.rows if "clock.wall" in r and all(n in r for n in names)]
    return [r["clock.wall"] for r in rows], {n: [r[n] for r in rows] for n in names}


def _largest(final: dict[str, float], before: dict[str, float], key: str) -> float | None:
    values = [d[key] for d in (final, before) if d.get(key) is not None]
    return max(values) if values else None


def _duplicates(final: dict[str, float], before: dict[str, float], emitted: dict[str, int],
                stored: dict[str, int]) -> int:
    """Our DuplicateRowNumber (both processes of a subscriber kill), else rows beyond the events emitted."""
    if st.DUPLICATE_ROW_NUMBER in final:
        return int(final[st.DUPLICATE_ROW_NUMBER] + before.get(st.DUPLICATE_ROW_NUMBER, 0))
    return sum(max(0, n - emitted.get(a, 0)) for a, n in stored.items())

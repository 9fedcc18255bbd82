# SPDX-License-Identifier: Apache-2.0
"""One maintenance trial: a subscriber archives at a fixed rate while the jobs run one after another.

The trial archives into the backend's aged history when the run built one (else a fresh database):
the devices rewound and emitting at `rate`, the subscriber(s) assigned their attributes by
AttributeAdd, an extraction reader querying one attribute's last 10 minutes after another, and a 1 Hz
sampler (hdbbench.parts.maintenance.windows says what it reads and why none of it waits on table locks).
After the warm-up, each job: `gap_s` of quiet load (its "before" window), the job in a thread of its
own until it ends (its "during" window), `settle_s` of load. A job that fails is recorded with its
one-line error and the trial goes on. Then the load stops, the queues drain, and every attribute's
rows are counted against the events its device emitted; where the aggregates job ran, the aggregate
tables are checked against the same SQL over the raw rows. Everything the trial started is stopped in
``finally``, also on failure and Ctrl-C.
"""

from __future__ import annotations

import random
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hdbbench.backends import backend_for_stack
from hdbbench.backends.abilities.aggregates import refresh_all
from hdbbench.backends.abilities.maintenance import JobContext, JobOutcome
from hdbbench.backends.registry import server_of
from hdbbench.load.offered import LoadTarget
from hdbbench.model.errors import one_line
from hdbbench.model.sampling import Sampler, TimeSeries
from hdbbench.parts.faults.emission import Emission
from hdbbench.parts.maintenance import jobs as job_registry
from hdbbench.parts.maintenance.aggregates import aggregates_equal
from hdbbench.parts.maintenance.part import MaintenancePart
from hdbbench.parts.maintenance.windows import Query, window
from hdbbench.results.maintenance import AggregateRefresh, MaintenanceRecord, MaintenanceTrial
from hdbbench.stack.servers.confine import lifted
from hdbbench.subscribers import statistics as st
from hdbbench.subscribers.launcher import SubscriberFleet, SubscriberSpec, lib_configuration
from hdbbench.trials.outside import Outside

SETTLE_S = 2.0               # ZeroMQ subscriptions reach the publisher asynchronously
STATISTICS_WINDOW_S = 2      # the subscribers' StatisticsTimeWindow: the age p99 of the last 2 s
READ_SPAN = timedelta(minutes=10)   # the reader's question: one attribute's last 10 minutes
READ_PAUSE_S = 0.2
STATISTICS = (st.ROWS_STORED_NUMBER, st.ATTRIBUTE_PENDING_NUMBER, st.EVENT_AGE_AT_COMMIT_P99, st.LOST_EVENT_NUMBER,
              st.PENDING_EVENT_NUMBER)
Say = Callable[[str], object]


@dataclass(frozen=True)
class MaintenanceTrialPlan:
    backend: str
    kind: Any                                  # hdbbench.subscribers.kinds.SubscriberKind
    label: str
    schema_variant: str
    subscribers: int
    jobs: tuple[str, ...]                      # those of the part this backend has, in order
    lib_overrides: tuple[tuple[str, str], ...] = ()
    history_database: str | None = None        # the aged history it archives onto
    history_end: str | None = None             # ISO 8601: rows after it are the trial's


@dataclass
class TrialOutcome:
    trial: MaintenanceTrial
    jobs: list[MaintenanceRecord]
    series: TimeSeries
    queries: list[Query] = field(default_factory=list)


class MaintenanceTrialRun:
    """One trial (the module docstring)."""

    def __init__(self, planned: MaintenanceTrialPlan, part: MaintenancePart, endpoints: Any, load: LoadTarget,
                 state_dir: Path, say: Say) -> None:
        self.planned, self.part, self.endpoints, self.load, self.say = planned, part, endpoints, load, say
        database = planned.history_database or f"hdbpp_{planned.label}"
        # Any: the extraction reader uses ExtractionBackend's methods too (every SQL backend has them).
        self.backend: Any = backend_for_stack(planned.backend, endpoints, database=database)
        self.state_dir = state_dir
        self.home = (state_dir / "maintenance" / planned.label).resolve()
        root = Path(part.backup_dir) if part.backup_dir else self.home / "backup"
        self.backup_root = root.resolve()
        self.fleet = SubscriberFleet(load.tango_host, self.home, binary=planned.kind.executable(), attached=True,
                                     env=dict(planned.kind.env))
        self.emission = Emission(load)
        self.queries: list[Query] = []
        self.started = 0.0
        self._reading = threading.Event()
        # The stored count and the visibility lag from outside the subscriber, for every kind.
        self.outside: Outside | None = None
        self._archiving_ended = False

    # --- the trial ---------------------------------------------------------------------------------
    def run(self) -> TrialOutcome:
        sampler: Sampler | None = None
        reader: threading.Thread | None = None
        records: list[MaintenanceRecord] = []
        try:
            if self.planned.history_database is None:
                self.backend.drop_schema()
                self.backend.create_schema(self.planned.schema_variant)
            if "aggregates" in self.planned.jobs:
                self._materialise()
            specs = self._specs()
            self.fleet.up(specs)
            self.load.prepare(self.part.rate)
            time.sleep(SETTLE_S)
            if Outside.available(self.backend):
                self.outside = Outside(self.backend, self.load.attributes)
                self.outside.start(datetime.now(timezone.utc))
            self.started = time.time()
            sampler = Sampler(self._probes(specs), period_s=1.0).start()
            self.load.start()
            if self.part.queries:
                reader = self._start_reader(sampler)
            time.sleep(self.part.warmup_s)
            for job in self.planned.jobs:
                records.append(self._job(job, sampler))
            seconds = sampler.elapsed_s()
            self.load.stop()
            self._stop_reader(reader)
            self._drain(specs)
            self._end_archiving(sampler)
            return TrialOutcome(self._count(seconds, records), records, sampler.series, self.queries)
        except Exception as exc:  # noqa: BLE001 - one trial's failure is its result; the others still run
            return TrialOutcome(self._failed(exc), records, sampler.series if sampler else TimeSeries(), self.queries)
        finally:
            self._stop_reader(reader)
            try:
                self.load.stop()
            except Exception:  # noqa: BLE001 - the devices may already be stopped
                pass
            try:
                self._end_archiving(sampler)  # a no-op after a trial that ended well
            except Exception:  # noqa: BLE001 - a failed trial's result already says why; its server may be gone
                pass

    def _end_archiving(self, sampler: Sampler | None) -> None:
        """The subscribers stopped, then the outside counter's total read (their sessions ended, so the
        server has every count) and its connections closed; once. Before the count's aggregates check:
        leaving its lifted limits may restart the server under its budget (confine.lifecycle
        .restore_budget), which would drop the counter's connection."""
        if self._archiving_ended:
            return
        self._archiving_ended = True
        self.fleet.down()
        if sampler is not None:
            sampler.stop()
        if self.outside is not None:
            self.outside.finish()

    def _materialise(self) -> None:
        """The aggregates of the history written before the trial, with the server's limits lifted as for
        the history's build: in production they were materialised as the archive grew, and the job a
        facility runs every cycle is the incremental refresh, which the trial measures. A first refresh
        of a year under the budget would measure a one-off backfill (here > 4 minutes for 6.3 M rows)."""
        self.say(f"{self.planned.backend}: the aggregates materialised over the history, the limits lifted")
        with self._lifted():
            refresh_all(self.backend)

    def _lifted(self) -> Any:
        """The server's memory limit and throttle off for work that is not measured (hdbbench.stack.servers.confine)."""
        return lifted(self.state_dir.resolve(), server_of(self.planned.backend) or "")

    def _specs(self) -> list[SubscriberSpec]:
        lines = lib_configuration(self.backend.name, self.backend.database, self.endpoints,
                                  overrides=dict(self.planned.lib_overrides))
        return [SubscriberSpec(instance=n + 1, lib_configuration=tuple(lines), attributes=attributes,
                               properties={"StatisticsTimeWindow": [str(STATISTICS_WINDOW_S)]})
                for n, attributes in enumerate(self.load.deal(self.planned.subscribers))]

    def _probes(self, specs: Sequence[SubscriberSpec]) -> dict[str, Callable[[], dict[str, float]]]:
        def statistics() -> dict[str, float]:
            totals: dict[str, float] = {}
            ages: list[float] = []
            for spec in specs:
                for key, value in self.fleet.statistics(spec.device, STATISTICS).items():
                    if key in STATISTICS and value is not None:
                        if key == st.EVENT_AGE_AT_COMMIT_P99:
                            ages.append(float(value))
                        else:
                            totals[key] = totals.get(key, 0.0) + float(value)
            if ages:
                totals[st.EVENT_AGE_AT_COMMIT_P99] = max(ages)  # the slowest subscriber's
            return totals

        def locks() -> dict[str, float]:
            found = job_registry.lock_waiters(self.backend)
            return {} if found is None else {"lock_waiters": float(found)}

        outside = self.outside.probes() if self.outside is not None else {}
        return {"clock": lambda: {"wall": time.time()}, "dev": lambda: {"emitted": float(self.emission.total())},
                "sub": statistics, "locks": locks, **outside}

    # --- one job -----------------------------------------------------------------------------------
    def _job(self, job: str, sampler: Sampler) -> MaintenanceRecord:
        before_start = sampler.elapsed_s()
        self.say(f"{self.planned.backend}: quiet {self.part.gap_s:g} s before {job}")
        time.sleep(self.part.gap_s)
        self.say(f"{self.planned.backend}: {job}")
        started = sampler.elapsed_s()
        outcome, error, seconds, wall = self._run_job(job)
        ended = started + wall if wall is not None else sampler.elapsed_s()  # the window: the whole call
        time.sleep(self.part.settle_s)
        time.sleep(STATISTICS_WINDOW_S + 1.0)  # the age of what the job held up is sampled after it
        series = sampler.series
        # The lag (what the job held up is committed after it) belongs to the job's window alone.
        before = window(series, self.queries, before_start, started, lag_s=0.0)
        counts_job = self.outside is not None and self.outside.counter.counts_maintenance_writes
        during = window(series, self.queries, started, ended, lag_s=STATISTICS_WINDOW_S,
                        counter_counts_the_job=counts_job)
        return MaintenanceRecord(
            backend=self.planned.backend, job=job, label=self.planned.label, started_s=round(started, 3),
            duration_s=round(seconds, 3) if seconds is not None else None, lost=during.lost, before=before,
            during=during, detail=outcome.detail if outcome else "failed", error=error,
            bytes=outcome.bytes if outcome else None, levels=_levels(outcome))

    def _run_job(self, job: str) -> tuple[JobOutcome | None, str | None, float | None, float | None]:
        """The job in a thread of its own (the trial goes on sampling); (outcome, error, the job's own
        seconds, the call's seconds)."""
        function = job_registry.jobs_of(self.backend)[job]
        directory = self.backup_root / f"{self.planned.label}-{job}"
        shutil.rmtree(directory, ignore_errors=True)
        context = JobContext(backup_dir=directory, endpoint=self.backend.endpoint,
                             protect_after=datetime.fromtimestamp(self.started, timezone.utc))
        result: dict[str, Any] = {}

        def work() -> None:
            began = time.perf_counter()
            try:
                directory.mkdir(parents=True, exist_ok=True)
                result["outcome"] = function(self.backend, context)
            except Exception as exc:  # noqa: BLE001 - a failed job is a figure of the trial
                result["error"] = one_line(exc)
            result["seconds"] = time.perf_counter() - began

        thread = threading.Thread(target=work, name=f"job-{job}", daemon=True)
        thread.start()
        thread.join(self.part.job_timeout_s)
        shutil.rmtree(directory, ignore_errors=True)  # a backup is measured, not kept
        if thread.is_alive():
            return None, f"still running after {self.part.job_timeout_s:g} s (left to finish on its own)", None, None
        outcome, wall = result.get("outcome"), result.get("seconds")
        seconds = outcome.seconds if outcome is not None and outcome.seconds is not None else wall
        return outcome, result.get("error"), seconds, wall

    # --- the extraction reader ---------------------------------------------------------------------
    def _start_reader(self, sampler: Sampler) -> threading.Thread:
        self._reading.set()
        thread = threading.Thread(target=self._read, args=(sampler,), name="reader", daemon=True)
        thread.start()
        return thread

    def _stop_reader(self, thread: threading.Thread | None) -> None:
        self._reading.clear()
        if thread is not None:
            thread.join(timeout=60)

    def _read(self, sampler: Sampler) -> None:
        """One attribute's last 10 minutes after another, as an engineer's plot asks, each timed."""
        wanted = set(self.load.attributes)
        catalog = [(i, info) for i, info in self.backend.attribute_catalog() if info.name in wanted]
        if not catalog:
            return
        rng = random.Random(0)
        conn = self.backend.reader()
        try:
            while self._reading.is_set():
                att_id, info = rng.choice(catalog)
                now = datetime.now(timezone.utc)
                query = self.backend.range_sql(self.backend.table_for(info), False)
                start = sampler.elapsed_s()
                began = time.perf_counter()
                self.backend.stream(conn, query, (att_id, now - READ_SPAN, now), 10_000, lambda rows: None)
                conn.commit()  # no transaction left open: it would hold locks and snapshots the jobs wait on
                self.queries.append(Query(start, time.perf_counter() - began))
                time.sleep(READ_PAUSE_S)
        except Exception:  # noqa: BLE001 - the reader is a probe: it stops, the trial goes on
            pass
        finally:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass

    # --- the end -----------------------------------------------------------------------------------
    def _drain(self, specs: Sequence[SubscriberSpec]) -> bool:
        """Until no subscriber holds an event and the rows stored stop moving."""
        deadline = time.monotonic() + self.part.drain_timeout_s
        previous = None
        while time.monotonic() < deadline:
            try:
                pending = sum(float(self.fleet.statistics(s.device, (st.PENDING_EVENT_NUMBER,))
                                    .get(st.PENDING_EVENT_NUMBER) or 0) for s in specs)
                stored = sum(self._stored().values())
            except Exception:  # noqa: BLE001 - a component still busy: try again
                pending, stored = 1.0, None
            if pending == 0 and stored is not None and stored == previous:
                return True
            previous = stored
            time.sleep(1.0)
        return False

    def _stored(self) -> dict[str, int]:
        return self.backend.count_rows_by_attribute(since=datetime.fromtimestamp(self.started, timezone.utc))

    def _count(self, seconds: float, records: Sequence[MaintenanceRecord]) -> MaintenanceTrial:
        emitted = self.emission.per_attribute()
        stored = self._stored()
        lost = sum(max(0, n - stored.get(a, 0)) for a, n in emitted.items())
        equal = None
        if any(r.job == "aggregates" and r.error is None for r in records):
            # Once more with every event committed (the job's refresh ran while events were in
            # flight): the check is of the incremental refresh, over the whole trial. A check, not a
            # figure: with the limits lifted, as the history's build.
            with self._lifted():
                refresh_all(self.backend)
                equal = aggregates_equal(self.backend)
        return MaintenanceTrial(
            backend=self.planned.backend, label=self.planned.label, rate=self.part.rate, seconds=round(seconds, 3),
            database=self.backend.database, emitted=sum(emitted.values()), stored=sum(stored.get(a, 0) for a in emitted),
            lost=lost, rows_match=all(stored.get(a, 0) == n for a, n in emitted.items()), aggregates_equal=equal)

    def _failed(self, exc: BaseException) -> MaintenanceTrial:
        return MaintenanceTrial(backend=self.planned.backend, label=self.planned.label, rate=self.part.rate,
                                seconds=0.0, database=self.backend.database, emitted=0, stored=0, lost=0,
                                rows_match=False, aggregates_equal=None, error=one_line(exc))


def _levels(outcome: JobOutcome | None) -> list[AggregateRefresh] | None:
    """The aggregate levels an `aggregates` job refreshed, as the record keeps them (None: not that job)."""
    if outcome is None or not outcome.levels:
        return None
    return [AggregateRefresh(level=r.level, seconds=r.seconds, rows=r.rows) for r in outcome.levels]

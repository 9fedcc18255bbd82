# SPDX-License-Identifier: Apache-2.0
"""Reads from a replica while the primary archives: what a facility's readers cost its archive.

``[replica_reads]`` of a scenario whose backends run on a replicated cluster (``[stack] servers =
{ postgres = "patroni" }``, docs/ha.md). Per backend: a fresh HDB++ database on the primary gets the
query set's data set (hdbbench.parts.datagen, time order, as extraction loads it), and the run waits until
a standby holds every row. Then two stretches of archiving, the same in all but the readers: the
devices emit at ``rate`` into the same database through our subscriber, warm-up, then ``duration_s``
measured, first without readers, then with ``readers`` sessions on a standby
(`replica_endpoint()` of the stack's cluster), each running the query set's queries in turn, again
and again, until the stretch ends. Per stretch: the stored rate (rows counted on the primary at 1 Hz;
the per-second rates' p1 / median / mean) and the event age as stored (hdbbench.trials.outside's visibility
lag: a watcher polls the primary for the probe attributes' new rows; p50 / p99 / max); per query of
the readers: runs, p50 / p95 / max client time (hdbbench.parts.extraction.extraction.client_run), rows, and errors (a
standby may cancel a query that conflicts with the WAL it replays).

Records: ``replica.json`` (kind "replica": ``results.trials[]`` of `ReplicaReads`, hdbbench.results.replica). Everything started
here (subscribers, load, readers) is stopped in ``finally``; the database is dropped at the end.
"""

from __future__ import annotations

import shutil
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hdbbench.backends import backend_for_stack, get_backend
from hdbbench.backends.base import extraction_of
from hdbbench.backends.registry import entry, server_of
from hdbbench.model.errors import one_line
from hdbbench.model.measure import percentile
from hdbbench.model.sampling import Sampler
from hdbbench.parts.datagen import generate
from hdbbench.parts.extraction.extraction import client_run
from hdbbench.parts.extraction.queries import attribute_ids, bind, catalog_of, load_query_set, resolve
from hdbbench.results.document import RunPart, results_document
from hdbbench.results.replica import QueryTimes, ReplicaReads, ReplicaResults
from hdbbench.stack.servers.registry import SERVER_KINDS, kind
from hdbbench.subscribers.launcher import SubscriberFleet, SubscriberSpec, lib_configuration
from hdbbench.trials.outside import VisibilityWatch, outside_reader, probe_attributes

if TYPE_CHECKING:
    from hdbbench.model.tomlfile import Table

RESULTS_KIND = "replica"
SETTLE_S = 2.0               # ZeroMQ subscriptions reach the publisher asynchronously
REPLAYED_TIMEOUT_S = 300.0   # until a standby holds the loaded data set
DEFAULT_QUERY_SET = "query_sets/default.toml"


@dataclass(frozen=True)
class ReplicaReadsPart:
    """``[replica_reads]``: what the readers run, and the archiving they run beside."""

    query_set: Path = Path(DEFAULT_QUERY_SET)
    rate: float = 500.0       # events/s archived during both stretches
    warmup_s: float = 5.0     # archiving before a stretch is measured
    duration_s: float = 30.0  # each stretch, measured
    readers: int = 1          # sessions on the standby, each running the queries in turn

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"query_set": str(self.query_set)}


def parse_replica_reads(reader: Table, query_set: Path) -> ReplicaReadsPart:
    """``[replica_reads]`` checked completely (`query_set`: its file, found by the scenario's reader)."""
    if load_query_set(query_set).data is None:
        raise reader.fail("query_set", "the query set has no [data] table: the replica's data set is made from it")
    part = ReplicaReadsPart(
        query_set=query_set,
        rate=reader.number("rate", ReplicaReadsPart.rate, positive=True, maximum=1_000_000),
        warmup_s=reader.number("warmup_s", ReplicaReadsPart.warmup_s, minimum=0.0, maximum=3600.0),
        duration_s=reader.number("duration_s", ReplicaReadsPart.duration_s, positive=True, maximum=86_400.0),
        readers=reader.integer("readers", ReplicaReadsPart.readers, minimum=1, maximum=64),
    )
    reader.finish()
    return part


@dataclass(frozen=True)
class ReplicaReadsPlan:
    """The part as a run does it: on each backend, our subscriber with the scenario's LibConfiguration."""

    part: ReplicaReadsPart
    backends: tuple[str, ...]
    lib_overrides: tuple[tuple[str, str], ...] = ()


def replica_problem(backends: Sequence[str], serving: dict[str, str]) -> str | None:
    """Why a backend has no standby to read from (None: each has), with `serving` the scenario's
    [stack] servers."""
    for backend in backends:
        role = server_of(backend) or ""
        server = kind(serving.get(role, role))
        if not server.replicas:
            stand_in = next((k.name for k in SERVER_KINDS if k.serves == role and k.replicas), None)
            hint = f"; give [stack] servers = {{ {role} = \"{stand_in}\" }}" if stand_in else ""
            return f"backend {backend} runs on the stack's {server.label}, which has no standby to read from{hint}"
    return None


def run_replica_reads(plan: ReplicaReadsPlan, recorded: dict[str, Any], run: Any, stack: Any, endpoints: Any,
                      load: Any, state_dir: Path, environment: dict[str, Any],
                      say: Callable[[str], None]) -> list[ReplicaReads]:
    """Each backend's trial (the module docstring), in order; replica.json rewritten after each."""
    part, out = plan.part, []
    for name in plan.backends:
        say(f"replica reads on {name}: {part.readers} reader(s), archiving at {part.rate:g} events/s")
        out.append(_Trial(part, name, stack, endpoints, load, state_dir, dict(plan.lib_overrides)).run())
        RunPart(run, RESULTS_KIND).write_json("results.json", results_document(
            RESULTS_KIND, recorded, environment, ReplicaResults(trials=list(out))))
        say(_line(out[-1]))
    return out


def _line(t: ReplicaReads) -> str:
    if t.error:
        return f"  {t.backend}: failed: {t.error}"
    a, b = t.without, t.with_readers
    runs = sum(q.runs for q in t.queries)
    return (f"  {t.backend}: stored rate p50 {a.get('stored_rate_p50') or 0:,.0f} → {b.get('stored_rate_p50') or 0:,.0f}"
            f" rows/s, event age p99 {_s(a.get('age_p99_s'))} → {_s(b.get('age_p99_s'))}; {runs:,} queries on the standby")


def _s(value: float | None) -> str:
    return "–" if value is None else f"{value * 1000:.0f} ms"


class _Trial:
    def __init__(self, part: ReplicaReadsPart, name: str, stack: Any, endpoints: Any, load: Any, state_dir: Path,
                 lib_overrides: dict[str, str]) -> None:
        self.part, self.name, self.load, self.lib_overrides = part, name, load, lib_overrides
        self.endpoints = endpoints
        self.primary: Any = backend_for_stack(name, endpoints, "hdbpp_replica_reads")  # with outside_figures()
        cluster = stack.server(endpoints.kind_of(entry(name).server))
        replica = cluster.replica_endpoint() if cluster is not None else None
        self.standby = get_backend(name, replica, self.primary.database) if replica is not None else None
        self.home = (state_dir / "replica_reads" / name).resolve()

    def run(self) -> ReplicaReads:
        p = self.part
        record = ReplicaReads(backend=self.name, rate=p.rate, duration_s=p.duration_s, readers=p.readers,
                              query_set=str(p.query_set))
        try:
            if self.standby is None:
                raise RuntimeError("the stack's cluster has no standby running")
            qs = load_query_set(p.query_set)
            assert qs.data is not None
            self.primary.drop_schema()
            self.primary.create_schema(None)
            loaded = generate(extraction_of(self.primary), qs.data, "time")
            self._wait_replayed()
            on_standby = extraction_of(self.standby)
            queries = resolve(qs, catalog_of(extraction_of(self.primary)))
            ids = attribute_ids(on_standby)
            bound = [bind(on_standby, q, ids) for q in queries]
            without, _ = self._stretch(lambda stop: [])
            with_readers, reads = self._stretch(lambda stop: self._readers(on_standby, bound, qs.fetch_rows, stop))
            return replace(record, loaded_rows=loaded.events, without=without, with_readers=with_readers,
                           queries=_query_times(reads))
        except Exception as exc:  # noqa: BLE001 - the trial's failure is its result
            return replace(record, error=one_line(exc))
        finally:
            try:
                self.primary.drop_schema()
            except Exception:  # noqa: BLE001 - the run's stack goes down anyway
                pass

    def _wait_replayed(self) -> None:
        """Until the standby holds as many rows of the data set as the primary."""
        assert self.standby is not None
        epoch = datetime(1970, 1, 2, tzinfo=timezone.utc)
        want = self.primary.count_rows_by_attribute(since=epoch)
        deadline = time.monotonic() + REPLAYED_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if self.standby.count_rows_by_attribute(since=epoch) == want:
                    return
            except Exception:  # noqa: BLE001 - the standby may not have replayed the schema yet
                pass
            time.sleep(1.0)
        raise RuntimeError(f"the standby did not hold the data set within {REPLAYED_TIMEOUT_S:.0f} s")

    def _stretch(self, readers: Callable[[threading.Event], list[tuple[threading.Thread, list[Any]]]]
                 ) -> tuple[dict[str, float | None], list[Any]]:
        """One stretch of archiving with the readers `readers` starts; its figures and the reads."""
        p = self.part
        shutil.rmtree(self.home, ignore_errors=True)
        overrides = {**self.lib_overrides, "spool_dir": str(self.home / "spool")}
        lines = lib_configuration(self.name, self.primary.database, self.endpoints, overrides=overrides)
        specs = [SubscriberSpec(instance=1, lib_configuration=tuple(lines), attributes=self.load.deal(1)[0])]
        fleet = SubscriberFleet(self.load.tango_host, self.home, attached=True)
        stop = threading.Event()
        sampler = watch = None
        threads: list[tuple[threading.Thread, list[Any]]] = []
        try:
            fleet.up(specs)
            self.load.prepare(p.rate)
            time.sleep(SETTLE_S)
            started = time.time()
            since = datetime.fromtimestamp(started, timezone.utc)
            watch = VisibilityWatch(outside_reader(self.primary), probe_attributes(self.load.attributes)).start(since)
            sampler = Sampler({"clock": lambda: {"wall": time.time()}, "db": lambda: {
                "stored": float(sum(self.primary.count_rows_by_attribute(since=since).values()))}}).start()
            self.load.start()
            time.sleep(p.warmup_s)
            threads = readers(stop)
            t0 = time.time()
            time.sleep(p.duration_s)
            t1 = time.time()
            stop.set()
            figures = _rates(sampler.series.rows, t0, t1)
            lag = watch.lag_figures(t0, t1)
            figures.update(age_p50_s=lag.p50, age_p99_s=lag.p99, age_max_s=lag.max, age_resolution_s=lag.resolution_s)
            return figures, [read for _, reads in threads for read in reads]
        finally:
            stop.set()
            for thread, _ in threads:
                thread.join(timeout=600)  # a query in flight finishes; nothing is left reading
            try:
                self.load.stop()
            finally:
                fleet.down()
                if sampler is not None:
                    sampler.stop()
                if watch is not None:
                    watch.stop()

    def _readers(self, backend: Any, bound: Sequence[Any], fetch_rows: int,
                 stop: threading.Event) -> list[tuple[threading.Thread, list[Any]]]:
        started = []
        for n in range(self.part.readers):
            reads: list[Any] = []
            thread = threading.Thread(target=_read, args=(backend, bound, fetch_rows, stop, reads),
                                      name=f"replica-reader-{n}", daemon=True)
            thread.start()
            started.append((thread, reads))
        return started


def _read(backend: Any, bound: Sequence[Any], fetch_rows: int, stop: threading.Event, reads: list[Any]) -> None:
    """The queries in turn on one session of the standby until `stop`: (name, seconds, rows, error)."""
    conn = None
    while not stop.is_set():
        for bq in bound:
            if stop.is_set():
                break
            name = query_name(bq.query)
            try:
                conn = conn or backend.reader()
                seconds, rows = client_run(backend, conn, bq, fetch_rows)
                reads.append((name, seconds, rows, None))
            except Exception as exc:  # noqa: BLE001 - a cancelled query (replay conflict) is a figure
                reads.append((name, None, 0, one_line(exc)))
                _close(conn)
                conn = None
    _close(conn)


def query_name(query: Any) -> str:
    """A query's group, with its interval but for a range query's (times depend on the interval; a
    range query's is set by the rows it asks for)."""
    if query.kind == "range":
        return str(query.group)
    seconds = float(query.interval_s)
    unit = next(((n, u) for n, u in ((604800, "w"), (86400, "d"), (3600, "h"), (60, "min")) if seconds % n == 0),
                (1, "s"))
    return f"{query.group} {seconds / unit[0]:g}{unit[1]}"


def _close(conn: Any) -> None:
    try:
        if conn is not None:
            conn.close()
    except Exception:  # noqa: BLE001 - a session the server ended
        pass


def _rates(rows: Sequence[dict[str, float]], t0: float, t1: float) -> dict[str, float | None]:
    """Stored rows per second between consecutive samples in [t0, t1]: p1, median, mean."""
    points = [(r["clock.wall"], r["db.stored"]) for r in rows if "clock.wall" in r and "db.stored" in r
              and t0 <= r["clock.wall"] <= t1]
    rates = sorted((c1 - c0) / (w1 - w0) for (w0, c0), (w1, c1) in zip(points, points[1:]) if w1 > w0)
    if not rates:
        return {"stored_rate_p1": None, "stored_rate_p50": None, "stored_rate_mean": None}
    return {"stored_rate_p1": rates[int(0.01 * (len(rates) - 1))], "stored_rate_p50": statistics.median(rates),
            "stored_rate_mean": (points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0])}


def _query_times(reads: Sequence[tuple[str, float | None, int, str | None]]) -> list[QueryTimes]:
    out = []
    for name in dict.fromkeys(r[0] for r in reads):
        ok = [r for r in reads if r[0] == name and r[3] is None]
        times = [r[1] for r in ok if r[1] is not None]
        errors = [r[3] for r in reads if r[0] == name and r[3] is not None]
        out.append(QueryTimes(name=name, runs=len(ok), errors=len(errors), rows=ok[-1][2] if ok else 0,
                              p50_s=percentile(times, 50) if times else None,
                              p95_s=percentile(times, 95) if times else None,
                              max_s=max(times) if times else None, first_error=errors[0] if errors else None))
    return out

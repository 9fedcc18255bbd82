# SPDX-License-Identifier: Apache-2.0
"""The extraction benchmark: a query set on every backend, cold and warm, unclustered and clustered.

For each index variant (pk, pk+2) and backend, a fresh database gets the query set's data set
(datagen, in the chosen load order). Every database is loaded and validated first, each backend's
in a process of its own, side by side (hdbbench.parts.extraction.loads: untimed work); then the queries
are timed one database at a time, with nothing beside them. Every database must resolve the set's
queries alike, so every backend runs exactly the same queries. Each database is measured as
loaded ("unclustered"), then after `Backend.cluster()` ("clustered"; its time and the size change
are recorded), and dropped. A backend whose tables have one layout (InnoDB keeps primary-key order
as it loads: `separate_clustering` false) is measured once, and the records stand for both states.

Per query and state:
- cold (groups with `cold = true`): the server is restarted through the stack and, when
  /proc/sys/vm/drop_caches is writable, the OS page cache is dropped; then the client run. Without
  a private stack the query's first run is recorded as "first" instead, and the mode says so.
- first: the first run of a query that is not run cold (random sets: a random range is not cached).
- warm: the same query repeated at once.
Client time runs from sending the query to the last row fetched, through a server-side cursor
(PostgreSQL) or an unbuffered one (MariaDB), so big results never sit in memory. Server time and
pages come from a separate execution under EXPLAIN (ANALYZE, BUFFERS) / ANALYZE FORMAT=JSON: after
the warm run (warm), and, with `cold_explain`, after a second restart (cold).

Validation: before measuring, every query's result is fetched once more and summarised (values,
sum of time stamps in µs weighted by values per row, sum of values); every backend and variant must
agree with the first one, within float tolerance, or the run fails with a `ValidationError` naming
the query and the two backends (hdbbench.parts.extraction.checksums).

Results: a run directory with `results.json` (kind "extraction": loads, clustering, validation,
p50/p95/max per group, interval length and temperature, p95-against-interval fits) and
`queries.csv` (every measured run).
"""

from __future__ import annotations

import math
import os
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.backends import DEFAULT_BACKENDS, SchemaVariant, backend_for_stack, endpoint_for, server_of
from hdbbench.backends.base import ExtractionBackend, extraction_of
from hdbbench.backends.registry import backend_class, cold_notes, server_kind
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.model.measure import fit_line, percentile
from hdbbench.parts.datagen import ORDERS
from hdbbench.parts.extraction.checksums import ValidationError, Validator
from hdbbench.parts.extraction.loads import Loaded, database_name, load_all, table_sizes
from hdbbench.parts.extraction.queries import (
    BoundQuery,
    Query,
    QuerySet,
    attribute_ids,
    bind,
    catalog_of,
    resolve,
)
from hdbbench.results.document import RunDirectory, RunPart, environment_facts, results_document
from hdbbench.results.extraction import (
    Clustering,
    DataLoad,
    ExtractionResults,
    IntervalFit,
    QuerySummary,
    TimeStats,
    Validation,
)

DROP_CACHES = Path("/proc/sys/vm/drop_caches")
CSV_COLUMNS = ("backend", "variant", "state", "query", "group", "kind", "att_name", "interval_s", "temperature",
               "client_s", "rows", "server_ms", "planning_ms", "pages_read", "pages_hit", "server_source", "cold_mode")


# ------------------------------------------------------------------------------------- cold runs


class ColdStarter:
    """Restarts a backend's server through the stack and drops the OS page cache when allowed."""

    def __init__(self, stack: Any | None, drop_caches: bool = True) -> None:
        self.stack = stack
        self.drop_caches = drop_caches
        self.dropped: bool | None = None  # learnt at the first restart

    @property
    def enabled(self) -> bool:
        return self.stack is not None

    def mode(self) -> str:
        if self.stack is None:
            return "not restarted (no private stack): cold runs are recorded as first runs"
        pool = "".join(f"; {note}" for note in cold_notes())
        if self.dropped:
            return "server restarted, OS page cache dropped" + pool
        why = "disabled" if not self.drop_caches else f"{DROP_CACHES} not writable"
        return f"server restarted, OS cache not dropped ({why})" + pool

    def restart(self, backend: ExtractionBackend) -> str:
        name = server_of(backend.name)
        if name is None or not server_kind(backend.name).process:
            raise ServerError(f"cold runs restart the server of backend {backend.name}, and it has no process")
        server = self.stack.server(name) if self.stack is not None else None
        if server is None:
            raise ServerError(f"cold runs restart the {name} server, and the stack does not own one (external server?)")
        before = server.meta().get("port")
        cold = backend_class(backend.name).cold_restart()  # what its server keeps warm across a restart
        if cold is not None:
            cold.before_cold_stop(backend)
        server.down()
        if cold is not None:
            cold.after_cold_stop(backend, server.data_dir)
        self._drop()
        endpoint = server.up()
        if before and endpoint.port != before:
            raise ServerError(f"{name} came back on port {endpoint.port} instead of {before}; cold runs need the same port")
        return self.mode()

    def _drop(self) -> None:
        if not self.drop_caches or self.dropped is False:
            return
        os.sync()
        try:
            with open(DROP_CACHES, "w") as out:
                out.write("3\n")
            self.dropped = True
        except OSError:
            self.dropped = False


# --------------------------------------------------------------------------------- measurement


def client_run(backend: ExtractionBackend, conn: Any, bq: BoundQuery, fetch_rows: int) -> tuple[float, int]:
    """Seconds from sending the query to the last row fetched, and the rows fetched."""
    started = time.perf_counter()
    rows = backend.stream(conn, bq.sql, bq.params, fetch_rows, _discard)
    return time.perf_counter() - started, rows


def _discard(block: list[Any]) -> None:
    return None


@dataclass
class Context:
    """Where a measurement belongs, and the session its queries run in (one, as an application's)."""

    backend: ExtractionBackend
    variant: str
    state: str
    starter: ColdStarter
    fetch_rows: int
    cold_explain: bool
    conn: Any = None

    def session(self) -> Any:
        if self.conn is None:
            self.conn = self.backend.reader()
        return self.conn

    def restart(self) -> str:
        self.close()
        return self.starter.restart(self.backend)

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # the server went away under it: nothing to close
                pass
            self.conn = None


def measure_query(ctx: Context, bq: BoundQuery) -> list[dict[str, Any]]:
    """The first (or cold) and warm runs of one query, with server figures where measured."""
    q = bq.query
    cold = q.cold and ctx.starter.enabled
    mode = ctx.restart() if cold else "no restart"
    conn = ctx.session()
    first_s, first_rows = client_run(ctx.backend, conn, bq, ctx.fetch_rows)
    warm_s, warm_rows = client_run(ctx.backend, conn, bq, ctx.fetch_rows)
    warm_server = ctx.backend.explain(conn, bq.sql, bq.params)
    first_server: dict[str, Any] = {}
    if cold and ctx.cold_explain:
        ctx.restart()
        first_server = ctx.backend.explain(ctx.session(), bq.sql, bq.params)
    first = _record(ctx, q, "cold" if cold else "first", first_s, first_rows, first_server, mode)
    warm = _record(ctx, q, "warm", warm_s, warm_rows, warm_server, "repeated at once")
    return [first, warm]


def _record(ctx: Context, q: Query, temperature: str, client_s: float, rows: int, server: dict[str, Any],
            mode: str) -> dict[str, Any]:
    return {
        "backend": ctx.backend.name, "variant": ctx.variant, "state": ctx.state, "query": q.id, "group": q.group,
        "kind": q.kind, "att_name": q.att_name, "interval_s": q.interval_s, "temperature": temperature,
        "client_s": client_s, "rows": rows, "server_ms": server.get("server_ms"), "planning_ms": server.get("planning_ms"),
        "pages_read": server.get("pages_read"), "pages_hit": server.get("pages_hit"),
        "server_source": server.get("server_source"), "cold_mode": mode,
    }


# ------------------------------------------------------------------------------------ summaries


def _stats(values: list[float]) -> TimeStats:
    return TimeStats(len(values), percentile(values, 50), percentile(values, 95), max(values) if values else math.nan)


def summarise(records: list[dict[str, Any]]) -> list[QuerySummary]:
    """p50/p95/max of client and server time per backend, variant, state, group, interval and temperature."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[(r["backend"], r["variant"], r["state"], r["group"], r["interval_s"], r["temperature"])].append(r)
    out = []
    for (backend, variant, state, group, interval, temp), rs in groups.items():
        server = [float(r["server_ms"]) / 1000 for r in rs if r["server_ms"] is not None]
        reads = [int(r["pages_read"]) for r in rs if r["pages_read"] is not None]
        out.append(QuerySummary(
            backend, variant, state, group, interval, temp, _stats([r["client_s"] for r in rs]), _stats(server),
            sum(r["rows"] for r in rs) / len(rs), sum(reads) / len(reads) if reads else None))
    return out


def fits(summary: list[QuerySummary]) -> list[IntervalFit]:
    """p95 client time against interval length, per backend, variant, state, group and temperature."""
    series: dict[tuple[str, str, str, str, str], list[tuple[float, float]]] = defaultdict(list)
    for s in summary:
        series[(s.backend, s.variant, s.state, s.group, s.temperature)].append((s.interval_s, s.client_s.p95))
    out = []
    for (backend, variant, state, group, temp), points in series.items():
        if len({x for x, _ in points}) < 2:
            continue
        fit = fit_line([x for x, _ in points], [y for _, y in points])
        out.append(IntervalFit(backend=backend, variant=variant, state=state, group=group, temperature=temp,
                               points=len(points), slope_s_per_s=fit.slope, intercept_s=fit.intercept, r2=fit.r2,
                               inverse_slope=1 / fit.slope if fit.slope and math.isfinite(fit.slope) else None))
    return out


# ------------------------------------------------------------------------------------------ run


@dataclass(frozen=True)
class ExtractionOptions:
    backends: tuple[str, ...] = DEFAULT_BACKENDS
    variants: tuple[str, ...] = ("pk", "pk+2")  # "default" = each backend's published one
    order: str | None = None         # load order; None = the data set's
    cluster: bool = True
    drop_caches: bool = True
    database_prefix: str = "hdbx"
    keep: bool = False               # keep the databases afterwards
    validate: bool = True
    # Aged histories (hdbbench.parts.aging.history) to query instead of generated data sets: backend ->
    # database. Each backend's queries are resolved against its own history (histories built at
    # different times hold the same events at other times), not validated across backends, and
    # the history is neither clustered nor dropped.
    histories: tuple[tuple[str, str], ...] = ()

    def check(self) -> None:
        if not self.backends:
            raise ConfigError("name at least one backend")
        for v in self.variants:
            if v != "default" and SchemaVariant.parse(v).indexes is None:
                raise ConfigError(f"variant {v!r}: give the index set (pk or pk+2), or 'default' for each backend's own")
        if self.order is not None and self.order not in ORDERS:
            raise ConfigError(f"unknown load order {self.order!r} (known: {', '.join(ORDERS)})")


@dataclass
class _Progress:
    """One database's share [base, base + span) of the extraction's progress: `done` is its own fraction."""

    callback: Callable[[str, float], None] | None = None
    base: float = 0.0
    span: float = 1.0

    def __call__(self, text: str, done: float) -> None:
        if self.callback is not None:
            self.callback(text, self.base + self.span * done)


# Where the steps end, for the progress estimate only: the loads and validation side by side, about a
# third of the phase (the default run: 40 of 110 s); then each database's queries (about 10 s), CLUSTER
# (2 s) and the queries clustered (7 s), as a share of its time.
LOADS, CLUSTERING, CLUSTERED = 0.35, 0.55, 0.65


@dataclass
class _State:
    records: list[dict[str, Any]] = field(default_factory=list)
    loads: list[DataLoad] = field(default_factory=list)
    clustering: list[Clustering] = field(default_factory=list)
    queries: list[Query] | None = None
    validator: Validator = field(default_factory=Validator)


def run_extraction(qs: QuerySet, endpoints: Any, options: ExtractionOptions, runs_root: Path,
                   stack: Any | None = None, progress: Callable[[str, float], None] | None = None,
                   into: RunPart | None = None) -> Path:
    """Measure the query set on every backend and variant; return the run directory. `progress` gets
    what is being done and the fraction of the whole done (hdbbench.trials.progress.PhaseProgress).

    Alone it writes a run directory of its own under `runs_root`; `into` a part of another run
    (``hdbbench run``) it writes ``extraction.json`` and ``extraction-*.csv`` there."""
    options.check()
    if qs.data is None:
        raise ConfigError(f"{qs.source}: the query set has no [data] table; extraction generates its data set from it")
    run = into or RunDirectory.create(runs_root, f"extract-{qs.name}")
    state = _State()
    starter = ColdStarter(stack, options.drop_caches)
    histories = dict(options.histories)
    databases = [(variant, name) for variant in options.variants for name in options.backends]
    fresh = [(variant, name) for variant, name in databases if name not in histories]
    try:
        try:
            share = LOADS if fresh else 0.0
            loaded = load_all(qs, endpoints, fresh, options, _Progress(progress, 0.0, share)) if fresh else {}
            queries = _check_loaded(fresh, loaded, state, options.validate)
            for k, (variant, name) in enumerate(databases):
                each = (1 - share) / len(databases)
                say = _Progress(progress, share + each * k, each)
                if name in histories:
                    _on_history(qs, endpoints, options, name, histories[name], variant, starter, state, say)
                else:
                    _one_database(qs, endpoints, options, name, variant, queries, starter, state, say)
        finally:
            if not options.keep:  # a load side by side failed, or a query: every database made goes
                for variant, name in fresh:
                    if endpoint_for(name, endpoints) is not None:
                        _database(endpoints, options, name, variant).drop_schema()
        _write_results(run, qs, options, starter, state, stack)
        run.set_status("completed")
    except KeyboardInterrupt:
        run.set_status("interrupted")
        raise
    except BaseException as exc:
        run.set_status("failed", f"{type(exc).__name__}: {exc}")
        raise
    return run.path


def _database(endpoints: Any, options: ExtractionOptions, name: str, variant: str) -> Any:
    return backend_for_stack(name, endpoints, database_name(options.database_prefix, name, variant))


def _check_loaded(fresh: list[tuple[str, str]], loaded: dict[tuple[str, str], Loaded], state: _State,
                  validate: bool) -> list[Query]:
    """The loads in the databases' order; every database resolved the same queries as the first, and
    (validated) gave the same results, before any query is timed. Returns those queries."""
    first = ""
    for variant, name in fresh:
        item = loaded[(variant, name)]
        state.loads.append(item.load)
        if state.queries is None:
            state.queries, first = item.queries, f"{name}/{variant}"
        elif item.queries != state.queries:
            raise ValidationError(f"{name}/{variant}: the query set resolved to other queries than on "
                                  f"{first} (their catalogues differ): the backends did not store the same data")
        if validate:
            for query_id, figures in item.checksums:
                state.validator.check(f"{name}/{variant}", query_id, figures)
    return state.queries or []


def _one_database(qs: QuerySet, endpoints: Any, options: ExtractionOptions, name: str, variant: str,
                  queries: list[Query], starter: ColdStarter, state: _State, say: _Progress) -> None:
    """The timed queries on one loaded database, as loaded and after CLUSTER; then it is dropped."""
    database = _database(endpoints, options, name, variant)
    backend = extraction_of(database)
    try:
        tables = sorted({backend.table_for(a.info) for a in qs.data.attributes()}) if qs.data else []
        ids = attribute_ids(backend)
        bound = [bind(backend, q, ids) for q in queries]
        ctx = Context(backend, variant, "unclustered", starter, qs.fetch_rows, qs.cold_explain)
        # A backend whose tables keep primary-key order as they load (InnoDB) has one layout: the data
        # as loaded is the clustered one, measured once and recorded for both states, as disk usage
        # measures it once.
        second_pass = options.cluster and database.separate_clustering
        passes = [(0.0, 1.0)] if not second_pass else [(0.0, CLUSTERING), (CLUSTERED, 1.0)]
        try:
            first = len(state.records)
            _measure_all(ctx, bound, state, say, *passes[0])
            if options.cluster:
                ctx.close()
                say(f"{name} {variant}: CLUSTER", CLUSTERING)
                state.clustering.append(_cluster(backend, variant, tables))
                ctx.state = "clustered"
                if second_pass:
                    _measure_all(ctx, bound, state, say, *passes[1])
                else:
                    state.records.extend(r | {"state": "clustered"} for r in state.records[first:])
        finally:
            ctx.close()
    finally:
        if not options.keep:
            database.drop_schema()


def _on_history(qs: QuerySet, endpoints: Any, options: ExtractionOptions, name: str, database: str, variant: str,
                starter: ColdStarter, state: _State, say: _Progress) -> None:
    """The query set on `name`'s aged history (ExtractionOptions.histories), as it stands."""
    backend = extraction_of(backend_for_stack(name, endpoints, database))
    queries = resolve(qs, catalog_of(backend))
    state.queries = [*(state.queries or []), *queries]
    ids = attribute_ids(backend)
    ctx = Context(backend, variant, "aged", starter, qs.fetch_rows, qs.cold_explain)
    try:
        _measure_all(ctx, [bind(backend, q, ids) for q in queries], state, say, 0.0, 1.0)
    finally:
        ctx.close()


def _measure_all(ctx: Context, bound: list[BoundQuery], state: _State, say: _Progress, start: float,
                 end: float) -> None:
    for k, bq in enumerate(bound):
        say(f"{ctx.backend.name} {ctx.variant} {ctx.state}: {bq.query.id} ({k + 1}/{len(bound)})",
            start + (end - start) * k / len(bound))
        state.records.extend(measure_query(ctx, bq))


def _cluster(backend: ExtractionBackend, variant: str, tables: list[str]) -> Clustering:
    backend.refresh_statistics()
    before = backend.size_bytes()
    tables_before = table_sizes(backend, tables)
    started = time.perf_counter()
    actions = backend.cluster()
    seconds = time.perf_counter() - started
    backend.refresh_statistics()
    after = backend.size_bytes()
    return Clustering(backend=backend.name, variant=variant, seconds=seconds, size_before=before, size_after=after,
                      size_change=after - before, table_sizes_before=tables_before,
                      table_sizes_after=table_sizes(backend, tables), actions=len(actions),
                      note=actions[0] if len(actions) == 1 else None)


def _write_results(run: RunDirectory | RunPart, qs: QuerySet, options: ExtractionOptions, starter: ColdStarter,
                   state: _State, stack: Any | None) -> None:
    summary = summarise(state.records)
    settings = stack.settings_in_force() if stack is not None else {}
    env = environment_facts(settings=settings) | {"cold_mode": starter.mode()}
    scenario = {"query_set": qs.to_dict(), "options": options.__dict__ | {"order": options.order or (qs.data.order if qs.data else None)}}
    results = ExtractionResults(
        cold_mode=starter.mode(), os_cache_dropped=bool(starter.dropped), loads=state.loads,
        clustering=state.clustering,
        validation=Validation(status="ok" if options.validate else "skipped", queries=len(state.validator.reference),
                              checksums=state.validator.records()),
        summary=summary, fits=fits(summary), queries=[q.record() for q in state.queries or []])
    run.write_json("results.json", results_document("extraction", scenario, env, results))
    run.write_csv("queries.csv", CSV_COLUMNS, ([r[c] for c in CSV_COLUMNS] for r in state.records))

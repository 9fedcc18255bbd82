# SPDX-License-Identifier: Apache-2.0
"""Extraction: data generation, dumps and loads, query sets, validation and the cold/warm,
clustered/unclustered benchmark, on real servers with a few thousand rows.

Generation, dumps and validation use the session stack. The extraction run restarts servers for
its cold runs, so it starts a private stack of its own (postgres + mariadb) and stops it again.
"""

from __future__ import annotations

import csv
import json
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hdbbench.backends import Backend, get_backend
from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, TangoType
from hdbbench.parts.datagen import events_for, generate, load_data_set
from hdbbench.parts.extraction.checksums import ValidationError, Validator, checksum
from hdbbench.parts.extraction.dumps import dump, load
from hdbbench.parts.extraction.extraction import ExtractionOptions, run_extraction
from hdbbench.parts.extraction.queries import (
    AttributeSpan,
    Catalog,
    attribute_ids,
    bind,
    catalog_of,
    load_query_set,
    parse_query_set,
    resolve,
)
from hdbbench.results.document import load_results
from hdbbench.stack.servers.endpoints import StackEndpoints
from hdbbench.stack.stack import Stack
from tests.harness import REPO
from tests.harness.databases import unique_db_name
from tests.harness.servers import database_servers, private_stack

SMALL = REPO / "query_sets" / "small.toml"
ORDERS = ("pk", "time")


# ------------------------------------------------------------------------------ query-set checks


def test_shipped_query_sets_parse_and_random_sets_are_large_enough() -> None:
    for name in ("elettra", "random", "small"):
        qs = load_query_set(REPO / "query_sets" / f"{name}.toml")
        assert qs.data is not None and qs.groups
    random_set = load_query_set(REPO / "query_sets" / "random.toml")
    assert all(g.count >= 100 for g in random_set.groups if g.kind == "random")
    elettra = load_query_set(REPO / "query_sets" / "elettra.toml")
    assert sorted(g.rows for g in elettra.groups if g.kind == "range") == [1_000_000, 10_000_000]


def _query_set(**query: Any) -> dict[str, Any]:
    return {"name": "t", "seed": 1, "query": [{"name": "q", "kind": "random", **query}]}


def test_query_set_refuses_unknown_type_key_and_attribute() -> None:
    with pytest.raises(ConfigError, match=r"bad\.toml: \[\[query\]\] #1 \('q'\) type: 'devfoo' is not a Tango type"):
        parse_query_set(_query_set(type="devfoo"), "bad.toml")
    with pytest.raises(ConfigError, match=r"\[\[query\]\] #1 \('q'\) colour: unknown key"):
        parse_query_set(_query_set(colour="red"), "bad.toml")
    t0, t1 = datetime(2024, 1, 1, tzinfo=timezone.utc), datetime(2024, 1, 2, tzinfo=timezone.utc)
    catalog = Catalog((AttributeSpan("tango://h:1/a/b/c/d", TangoType.DEV_DOUBLE, AttrFormat.SCALAR, 100, t0, t1),))
    unknown = parse_query_set(_query_set(type="devdouble", attribute="tango://h:1/no/such/attr"), "bad.toml")
    with pytest.raises(ConfigError, match=r"bad\.toml: query 'q': attribute 'tango://h:1/no/such/attr' is not a scalar devdouble"):
        resolve(unknown, catalog)
    no_type = parse_query_set(_query_set(type="devlong"), "bad.toml")
    with pytest.raises(ConfigError, match="has no scalar devlong attribute"):
        resolve(no_type, catalog)
    too_many = parse_query_set({"query": [{"name": "r", "kind": "range", "rows": 1000}]}, "bad.toml")
    with pytest.raises(ConfigError, match="wants about 1000 rows but .* holds 100 events"):
        resolve(too_many, catalog)


def test_same_seed_same_queries() -> None:
    qs = load_query_set(SMALL)
    t0, t1 = datetime(2024, 1, 1, tzinfo=timezone.utc), datetime(2024, 1, 3, tzinfo=timezone.utc)
    spans = tuple(AttributeSpan(f"tango://h:1/a/b/c/{k}", TangoType(t), AttrFormat(f), 2000, t0, t1)
                  for k, (t, f) in enumerate([(5, 0), (5, 0), (3, 0), (5, 1)]))
    first, second = resolve(qs, Catalog(spans)), resolve(qs, Catalog(spans))
    assert first == second and len({q.id for q in first}) == len(first)


def test_checksum_reads_every_driver_s_time_stamps_alike_and_weights_arrays() -> None:
    # psycopg gives time-zone aware stamps (in the session's zone), MariaDB naive UTC ones; an array
    # row's stamp counts once per element. A block far larger than a fetch must not overflow.
    from datetime import timedelta

    from hdbbench.parts.extraction.checksums import Checksum

    start = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
    stamps = [start + timedelta(seconds=30 * i, microseconds=i) for i in range(200_000)]
    east = timezone(timedelta(hours=2))
    aware, naive, shifted = Checksum(), Checksum(), Checksum()
    aware.add([(t, 1.5) for t in stamps])
    naive.add([(t.replace(tzinfo=None), 1.5) for t in stamps])
    shifted.add([(t.astimezone(east), 1.5) for t in stamps])
    epoch_us = sum(int((t - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()) * 10**6 + t.microsecond
                   for t in stamps)
    assert aware.time_us_sum == naive.time_us_sum == shifted.time_us_sum == epoch_us
    arrays = Checksum()
    arrays.add([(start, [1.0, None, 2.0]), (start, None)])
    assert (arrays.rows, arrays.items, arrays.nulls, arrays.value_sum) == (2, 4, 2, 3.0)
    assert arrays.time_us_sum == 4 * int(start.timestamp()) * 10**6  # 3 elements, then 1


def test_cli_refuses_a_bad_query_set_before_starting(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[query]]\nname = "q"\ntype = "devfoo"\n')
    out = subprocess.run([str(REPO / ".venv/bin/hdbbench"), "extract", str(bad), "--state-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "'devfoo' is not a Tango type" in out.stderr


# ------------------------------------------------------------------- generation on the session stack


@pytest.fixture(scope="module")
def generated(endpoint_of: Callable[[str], Any]) -> Iterator[dict[tuple[str, str], Backend]]:
    """The small data set on every backend, in both load orders."""
    inv = load_query_set(SMALL).data
    assert inv is not None
    made: dict[tuple[str, str], Backend] = {}
    try:
        for name in DEFAULT_BACKENDS:
            for order in ORDERS:
                backend = get_backend(name, endpoint_of(name), unique_db_name(name))
                backend.create_schema(None)
                made[(name, order)] = backend
                result = generate(backend, inv, order)
                assert result.events == inv.expected_rows() and result.order == order
        yield made
    finally:
        for backend in made.values():
            backend.drop_schema()


def _checksums(backend: Any, queries: list[Any]) -> dict[str, Any]:
    ids = attribute_ids(backend)
    conn = backend.reader()
    try:
        return {q.id: checksum(backend, conn, bind(backend, q, ids), 1000) for q in queries}
    finally:
        conn.close()


def test_generated_data_is_the_inventory_on_every_backend_and_order(generated: dict[tuple[str, str], Backend]) -> None:
    qs = load_query_set(SMALL)
    inv = qs.data
    assert inv is not None
    expected = {a.info.name: a.events for a in inv.attributes()}
    queries = resolve(qs, catalog_of(generated[("timescaledb", "time")]))
    assert {q.kind for q in queries} == {"range", "random", "aggregate", "array"}
    validator = Validator()
    for (name, order), backend in generated.items():
        assert backend.count_rows_by_attribute() == expected, (name, order)
        for qid, result in _checksums(backend, queries).items():
            validator.check(f"{name}/{order}", qid, result)
    att = inv.attributes()[3]  # the read/write devdouble with INVALID events
    want = events_for(att, inv.seed, inv.start_us, np.arange(att.events))
    for key in (("postgresql", "pk"), ("mysql", "time")):
        got = generated[key].fetch_events(att.info.name)
        assert [(e.data_time, e.value_r, e.value_w, e.quality) for e in got] == \
               [(e.data_time, e.value_r, e.value_w, e.quality) for e in want], key


def test_validation_fails_loudly_on_an_altered_row(generated: dict[tuple[str, str], Backend]) -> None:
    qs = load_query_set(SMALL)
    reference = generated[("timescaledb", "pk")]
    queries = [q for q in resolve(qs, catalog_of(reference)) if q.group == "range_1k"]
    altered = generated[("mysql", "pk")]
    conn = altered.connect(altered.database)  # type: ignore[call-arg]
    try:
        att_id = attribute_ids(altered)[queries[0].att_name][0]
        conn.cursor().execute("UPDATE att_scalar_devdouble_ro SET value_r = value_r + 0.5 WHERE att_conf_id = ? "
                              "AND data_time >= ? ORDER BY data_time LIMIT 1",
                              (att_id, queries[0].start.replace(tzinfo=None)))
        conn.commit()
    finally:
        conn.close()
    validator = Validator()
    for q, result in _checksums(reference, queries).items():
        validator.check("timescaledb/pk", q, result)
    with pytest.raises(ValidationError) as caught:
        for q, result in _checksums(altered, queries).items():
            validator.check("mysql/pk", q, result)
    message = str(caught.value)
    assert "\n" not in message and "range_1k" in message and "timescaledb/pk" in message and "mysql/pk" in message


def test_dump_by_pk_and_by_time_then_load_into_every_backend(
        generated: dict[tuple[str, str], Backend], endpoint_of: Callable[[str], Any], tmp_path: Path) -> None:
    source = generated[("timescaledb", "time")]
    qs = load_query_set(SMALL)
    scalar_queries = [q for q in resolve(qs, catalog_of(source)) if q.tango_type == TangoType.DEV_DOUBLE and q.kind != "array"]
    want = _checksums(source, scalar_queries)
    for order in ORDERS:
        result = dump(source, "devdouble", order, tmp_path / f"devdouble-{order}.csv")
        rows = list(csv.reader(open(result.path)))
        assert result.rows == len(rows) > 0 and json.loads((tmp_path / f"devdouble-{order}.json").read_text())["order"] == order
        keys = [(int(r[0]), r[1]) if order == "pk" else (r[1], int(r[0])) for r in rows]
        assert keys == sorted(keys)
        for name in (b for b in DEFAULT_BACKENDS if b != source.name):  # into every other backend
            target = get_backend(name, endpoint_of(name), unique_db_name(name))
            target.create_schema(None)
            try:
                loaded = load(target, result.path)
                assert loaded.rows == result.rows and loaded.order == order
                assert loaded.seconds > 0 and loaded.size_after > loaded.size_before
                assert _checksums(target, scalar_queries) == want, (name, order)
            finally:
                target.drop_schema()


# ------------------------------------------------------------- the benchmark, on a private stack


@pytest.fixture()
def own_stack() -> Iterator[Stack]:
    """Database servers of the test's own: the benchmark restarts them for its cold runs."""
    with private_stack(components=database_servers(), private=False) as stack:
        yield stack


def test_extraction_cold_warm_clustered_unclustered_results(own_stack: Stack, tmp_path: Path) -> None:
    document = _small_document()
    qs = parse_query_set(document, str(SMALL))
    endpoints = own_stack.up()
    options = ExtractionOptions(backends=DEFAULT_BACKENDS, variants=("pk", "pk+2"), order="time")
    run_dir = run_extraction(qs, endpoints, options, tmp_path / "runs", own_stack)
    doc = load_results(run_dir / "results.json")
    assert doc["kind"] == "extraction" and json.loads((run_dir / "status.json").read_text())["state"] == "completed"
    res = doc["results"]
    assert res["cold_mode"].startswith("server restarted") and "cold_mode" in doc["environment"]
    assert res["validation"]["status"] == "ok" and res["validation"]["queries"] == len(res["queries"])
    combos = {(b, v) for b in DEFAULT_BACKENDS for v in ("pk", "pk+2")}
    assert {(x["backend"], x["variant"]) for x in res["loads"]} == combos
    assert all(x["seconds"] > 0 and x["size_bytes"] > 0 and x["table_sizes"] for x in res["loads"])
    assert {(x["backend"], x["variant"]) for x in res["clustering"]} == combos
    assert all({"seconds", "size_before", "size_after", "size_change"} <= set(x) for x in res["clustering"])
    summary = res["summary"]
    seen = {(s["backend"], s["variant"], s["state"], s["temperature"]) for s in summary}
    for b, v in combos:
        for state in ("unclustered", "clustered"):
            assert {(b, v, state, t) for t in ("cold", "first", "warm")} <= seen
    for s in summary:
        assert {"p50", "p95", "max"} <= set(s["client_s"]) and s["client_s"]["count"] > 0
        if s["temperature"] == "warm":
            assert s["server_s"]["count"] > 0 and s["pages_read_mean"] is not None
    cold_pg = [s for s in summary if s["temperature"] == "cold" and s["backend"] == "postgresql"]
    assert cold_pg and all(s["server_s"]["count"] == 1 for s in cold_pg)
    fits = [f for f in res["fits"] if f["group"] == "random"]
    assert {(f["backend"], f["variant"], f["state"]) for f in fits} == {(b, v, s) for b, v in combos
                                                                       for s in ("unclustered", "clustered")}
    assert all("slope_s_per_s" in f and "inverse_slope" in f for f in fits)
    with open(run_dir / "queries.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(res["queries"]) * 2 * len(combos)
    assert {r["temperature"] for r in rows} == {"cold", "first", "warm"}
    assert all(r["client_s"] and r["rows"] for r in rows)
    # InnoDB has one layout: MariaDB is measured once, the records stand for both states; the
    # PostgreSQL servers' tables are measured again after CLUSTER.
    def times(backend: str, state: str) -> list[str]:
        return [r["client_s"] for r in rows if r["backend"] == backend and r["state"] == state]
    assert times("mysql", "clustered") == times("mysql", "unclustered")
    assert times("postgresql", "clustered") != times("postgresql", "unclustered")


def test_databases_load_side_by_side_and_a_failure_drops_every_database(
        stack_endpoints: StackEndpoints, tmp_path: Path) -> None:
    """The databases are made one at a time, then each backend's load in a process of its own. A
    failure while making them (no MariaDB server) or in the processes (a query of a type the data set
    lacks, found once the data is loaded) leaves no database of the run behind."""
    prefix = f"hdbxt{uuid.uuid4().hex[:6]}"
    options = ExtractionOptions(backends=DEFAULT_BACKENDS, variants=("pk", "pk+2"), order="time",
                                database_prefix=prefix, cluster=False)
    qs = parse_query_set(_small_document(), str(SMALL))
    without_mariadb = StackEndpoints({k: v for k, v in stack_endpoints.items() if k != "mariadb"})
    with pytest.raises(ConfigError, match="backend mysql needs a MariaDB server"):
        run_extraction(qs, without_mariadb, options, tmp_path / "runs")
    _assert_no_database(stack_endpoints, prefix)
    lacking = _small_document()
    lacking["query"].append({"name": "shorts", "kind": "random", "type": "devushort", "intervals": ["1h"], "count": 1})
    with pytest.raises(ConfigError, match="has no scalar devushort attribute"):
        run_extraction(parse_query_set(lacking, str(SMALL)), stack_endpoints, options, tmp_path / "runs")
    _assert_no_database(stack_endpoints, prefix)
    two = replace(options, backends=("postgresql", "mysql"))
    res = load_results(run_extraction(qs, stack_endpoints, two, tmp_path / "runs") / "results.json")["results"]
    assert [(x["backend"], x["variant"]) for x in res["loads"]] == [
        ("postgresql", "pk"), ("mysql", "pk"), ("postgresql", "pk+2"), ("mysql", "pk+2")]
    assert res["validation"]["status"] == "ok" and res["validation"]["queries"] == len(res["queries"])
    _assert_no_database(stack_endpoints, prefix)


def _assert_no_database(endpoints: StackEndpoints, prefix: str) -> None:
    with endpoints["postgres"].connect(autocommit=True) as conn:
        left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{prefix}%",)).fetchall()
    conn = endpoints["mariadb"].connect()
    try:
        cur = conn.cursor()
        cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE %s",
                    (f"{prefix}%",))
        left += cur.fetchall()
    finally:
        conn.close()
    assert left == []


def _small_document() -> dict[str, Any]:
    """small.toml with fewer queries per group (the run restarts servers; keep it short)."""
    import tomllib

    document = tomllib.loads(SMALL.read_text())
    for group in document["query"]:
        if group.get("kind") != "range":
            group["count"] = 2
    document["cold_explain"] = True
    return document


def test_inventory_file_and_query_set_data_table_agree(tmp_path: Path) -> None:
    inv = load_data_set(SMALL)
    assert inv.expected_rows() == load_query_set(SMALL).data.expected_rows() > 1000  # type: ignore[union-attr]

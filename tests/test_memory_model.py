# SPDX-License-Identifier: Apache-2.0
"""The memory model of the hot set (hdbbench.backends.abilities.memory): how it behaves, and one
check of its leaf geometry against a live PostgreSQL index (docs/aging.md, "The memory model")."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest

from hdbbench.backends.abilities.memory import leaves
from hdbbench.backends.model import SchemaVariant
from hdbbench.backends.registry import backend_class
from hdbbench.model.hdbtypes import AttributeInfo, AttrFormat, TangoType, WriteType
from tests.harness.databases import fresh_backend, sql

MIB = 2**20
PK, PK2 = SchemaVariant.parse("pk"), SchemaVariant.parse("pk+2")
DOUBLE = (TangoType.DEV_DOUBLE, AttrFormat.SCALAR)


def doubles(n: int) -> dict[tuple[TangoType, AttrFormat], int]:
    return {DOUBLE: n}


def model(name: str) -> Any:
    found = backend_class(name).memory_model()
    assert found is not None, f"{name} declares no memory model"
    return found


@pytest.mark.parametrize("name", ["postgresql", "timescaledb", "mysql"])
def test_hot_set_grows_with_attributes_and_indexes(name: str) -> None:
    m = model(name)
    assert m.hot_set(doubles(4000), PK2).bytes > m.hot_set(doubles(1000), PK2).bytes
    assert m.hot_set(doubles(1000), PK2).bytes > m.hot_set(doubles(1000), PK).bytes
    # two types are two tables, each with its own leaves per attribute
    mixed = {DOUBLE: 1000, (TangoType.DEV_LONG, AttrFormat.SCALAR): 1000}
    assert m.hot_set(mixed, PK2).bytes > 1.5 * m.hot_set(doubles(1000), PK2).bytes


@pytest.mark.parametrize("name", ["postgresql", "mysql"])
def test_hot_set_saturates_as_the_database_grows(name: str) -> None:
    m = model(name)
    young, grown, old = (m.hot_set(doubles(3000), PK2, size) for size in (2 * MIB, 1e9, 1e11))
    saturated = m.hot_set(doubles(3000), PK2)
    assert young.bytes < grown.bytes <= old.bytes

    def leaf_bytes(hot: Any) -> float:
        return sum(p.bytes for p in hot.parts if "leaf" in p.what)

    # past saturation the leaves stay one per attribute and index; only internal pages grow, at most
    # by one page per attribute and level (each attribute's path has its own once they outnumber it)
    assert leaf_bytes(grown) == leaf_bytes(old) == leaf_bytes(saturated)
    assert old.bytes < 2.1 * grown.bytes
    assert abs(grown.bytes - saturated.bytes) < 0.2 * saturated.bytes


def test_knee_none_when_the_cache_holds_the_saturated_hot_set() -> None:
    m = model("postgresql")
    saturated = m.hot_set(doubles(200), PK2).bytes
    assert m.knee_bytes(doubles(200), PK2, saturated * 4) is None
    # a cache smaller than the saturated hot set has a knee, at a database larger than that cache
    knee = m.knee_bytes(doubles(6000), PK2, 90 * MIB)
    assert knee is not None and knee > 90 * MIB
    assert m.knee_bytes(doubles(6000), PK2, 60 * MIB) < knee
    # a measured growth per event moves the knee's size, not whether there is one
    assert m.knee_bytes(doubles(6000), PK2, 90 * MIB, bytes_per_event=300.0) > knee


def test_page_sizes_and_caches_are_each_backends_own() -> None:
    pg, ts, my = model("postgresql"), model("timescaledb"), model("mysql")
    assert (pg.page_bytes, ts.page_bytes, my.page_bytes) == (8192, 8192, 16384)
    assert any("chunk" in p.what for p in ts.hot_set(doubles(10), PK2).parts)
    # InnoDB's primary key holds the rows: no heap insertion point; PostgreSQL has one per table
    assert not any("heap" in p.what for p in my.hot_set(doubles(10), PK).parts)
    assert any("heap" in p.what for p in pg.hot_set(doubles(10), PK).parts)
    # MariaDB's cache is its buffer pool (half the budget less 128 MiB), PostgreSQL's the budget less its own
    assert my.cache_bytes(256 * MIB) == 64 * MIB
    assert 64 * MIB < pg.cache_bytes(128 * MIB) < 128 * MIB


@pytest.mark.parametrize("name", ["clickhouse", "influxdb", "null"])
def test_engines_without_the_geometry_say_so(name: str) -> None:
    assert backend_class(name).memory_model() is None


# --- against a live index ----------------------------------------------------------------------
ATTRIBUTES, ROWS = 300, 600  # 180,000 rows, inserted as a stream inserts them: a round of every attribute


def test_leaves_per_attribute_agree_with_a_live_postgresql_index(endpoint_of: Callable[[str], Any]) -> None:
    """pk+2 on PostgreSQL, 300 attributes × 600 rows in stream order (each attribute past its own
    leaf in every index): the leaves the model gives each index against the live index's pages
    (pg_relation_size over the block size, less the metapage; the internal pages are a few here)."""
    m = model("postgresql")
    with fresh_backend("postgresql", endpoint_of("postgresql"), "pk+2") as backend:
        t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
        with backend.bulk_writer() as writer:
            ids = [writer.register_attribute(AttributeInfo(f"tango://h:10000/mm/test/d/a{i}", TangoType.DEV_DOUBLE,
                                                           AttrFormat.SCALAR, WriteType.READ), t0)
                   for i in range(ATTRIBUTES)]
        with backend.connect() as conn:
            conn.execute("INSERT INTO att_scalar_devdouble (att_conf_id, data_time, value_r, quality) "
                         "SELECT a, %s::timestamptz + s * interval '1 second', s * 0.5, 0 "
                         "FROM generate_series(1, %s) s, unnest(%s::int[]) a ORDER BY s, a", (t0, ROWS, ids))
        live = dict(sql(backend, "SELECT c.relname, pg_relation_size(c.oid) / current_setting('block_size')::int "
                                 "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                                 "WHERE i.indrelid = 'att_scalar_devdouble'::regclass"))
        shapes = m.tables(doubles(ATTRIBUTES), PK2)[0].indexes
        for shape in shapes:
            modelled, _ = leaves(shape, ATTRIBUTES, ROWS)
            pages = live[shape.name] - 1  # the metapage; internal pages are a page or two here
            assert abs(pages - modelled) <= 0.3 * pages, (
                f"{shape.name}: {pages} pages live, {modelled:.0f} leaves modelled "
                f"({pages / ATTRIBUTES:.2f} and {modelled / ATTRIBUTES:.2f} per attribute)")

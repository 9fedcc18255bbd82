# SPDX-License-Identifier: Apache-2.0
"""Elettra's load-order table with its data shape: the same rows loaded in primary-key order and in
time order into `att_scalar_devdouble` when it already holds a history.

The table's history is `attributes` scalar DevDouble attributes (≥ 2,000 in Elettra's shape), built
as any history (hdbbench.parts.aging.history: time order, the facility layout, reused by later runs), of
at least 5× the server's memory budget when one is set (the build stops once the database is that big; at
most `ROW_BYTES_FLOOR` bytes a row's worth of rows), else of the [history] rows, else twice the
largest load. Each load then
continues the same attributes after the history's end: `rows` rows, every attribute advancing
together (`time`, as archiving writes) or attribute after attribute (`pk`, a dump reloaded in key
order): the same rows either way, in loads of the same size. Every load starts from the
same history, cold: on PostgreSQL a copy made with `CREATE DATABASE ... TEMPLATE`, on MariaDB (no
templates) the same seeded history built again under another name. CLUSTER of the table after the
load is timed where the backend has it (PostgreSQL, TimescaleDB; None on MariaDB).

Elettra's own figures are not load times but the time to read one attribute's rows back from tables
loaded in each order (first after a restart with the caches dropped, then again): time order scatters
an attribute's rows over the heap of PostgreSQL and TimescaleDB, while InnoDB keeps rows in primary-key
order whatever the load's. After each load (before CLUSTER) one attribute's loaded rows are read back
the same way (`read_back`): once with the server's page cache dropped (where its memory group allows;
else not recorded), once warm. Our loads are smaller than Elettra's tables, so the seconds are smaller;
the ratio between the orders is what compares.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from hdbbench.backends.base import extraction_of
from hdbbench.backends.registry import backend_for_stack
from hdbbench.model.columnar import ColumnBatch
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType, WriteType
from hdbbench.parts.aging.history import (
    Confinement,
    HistorySize,
    MixAttribute,
    Say,
    build_history,
    building,
    cold_start,
)
from hdbbench.parts.disk.columns import COLUMN_ROWS, column_values
from hdbbench.results.aging import HistoryRecord, LoadOrderRecord

ORDERS = ("pk", "time")
ROW_BYTES_FLOOR = 48          # bytes a devdouble row takes at least (heap or leaf + key), to size ≥ 5× memory
MEMORY_MULTIPLE = 5
BATCH_ROWS = COLUMN_ROWS       # rows per load (one transaction), the same in both orders
PERIOD_S = 10.0               # each attribute's archiving period when the history's span is not given
TABLE = AttributeInfo("", TangoType.DEV_DOUBLE, AttrFormat.SCALAR, WriteType.READ)


@dataclass(frozen=True)
class LoadOrderSpec:
    rows: tuple[int, ...]
    attributes: int
    repeat: int = 1


def history_rows(spec: LoadOrderSpec, budget: int | None, asked_rows: int | None) -> int:
    """Rows of the table's history (the module docstring)."""
    if budget:
        return max(math.ceil(MEMORY_MULTIPLE * budget / ROW_BYTES_FLOOR), max(spec.rows))
    return asked_rows or 2 * max(spec.rows)


def load_mix(attributes: int, rows: int, days: float | None) -> list[MixAttribute]:
    """`attributes` scalar DevDouble attributes whose rate gives `rows` rows over `days` (or PERIOD_S)."""
    rate = rows / (attributes * days * 86400.0) if days else 1.0 / PERIOD_S
    return [MixAttribute(AttributeInfo(f"tango://hdbbench-load-order:10000/elettra/shape/a{i:05d}", TangoType.DEV_DOUBLE,
                                       AttrFormat.SCALAR, WriteType.READ), rate) for i in range(attributes)]


def run_load_order(endpoints: Any, backend_name: str, variants: Sequence[str], spec: LoadOrderSpec, seed: int, *,
                   budget: int | None = None, asked_rows: int | None = None, days: float | None = None,
                   confinement: Confinement | None = None, state_dir: Path | None = None,
                   say: Say | None = None) -> tuple[list[HistoryRecord], list[LoadOrderRecord]]:
    """Every (variant, rows, repetition, order) load on one backend; the histories built and one record per load."""
    say = say or (lambda text, done: None)
    confinement = confinement or Confinement()
    rows = history_rows(spec, budget, asked_rows)
    mix = load_mix(spec.attributes, rows, days)
    # With a budget `rows` is the most it may take: the build stops once the database is 5× the budget.
    size = HistorySize(rows=rows, min_bytes=MEMORY_MULTIPLE * budget if budget else None)
    histories, records = [], []
    for variant in variants:
        base = build_history(endpoints, backend_name, variant, mix, size, seed, state_dir=state_dir,
                             confinement=confinement, say=say)
        histories.append(base)
        for load_rows in spec.rows:
            for repeat in range(spec.repeat):
                for order in ORDERS:
                    say(f"{backend_name} {variant}: loading {load_rows:,} rows in {order} order", 0.0)
                    records.append(_one_load(endpoints, base, mix, size, seed, variant, order, load_rows, repeat,
                                             confinement, state_dir, say))
    return histories, records


def _one_load(endpoints: Any, base: HistoryRecord, mix: Sequence[MixAttribute], size: HistorySize, seed: int,
              variant: str, order: str, rows: int, repeat: int, confinement: Confinement, state_dir: Path | None,
              say: Say) -> LoadOrderRecord:
    """One load into a fresh copy of the history; the copy is dropped afterwards, also on failure and Ctrl-C."""
    copy = backend_for_stack(base.backend, endpoints, database=f"{base.database}_copy")
    ops = copy.aging_layout()
    assert ops is not None
    try:
        _make_copy(endpoints, copy, base, mix, size, seed, variant, confinement, state_dir, say)
        history_bytes = copy.size_bytes()
        cold_start(state_dir, base.backend)
        after = datetime.fromisoformat(base.end)
        seconds = load_rows(copy, mix, seed, after, rows, order)
        query = read_back(copy, mix, after, rows, state_dir)
        cluster_s = ops.cluster_table(copy, copy.table_for(TABLE))
    finally:
        ops.drop_copy(copy)
    return LoadOrderRecord(backend=base.backend, variant=base.variant, order=order, rows=rows, attributes=len(mix),  # type: ignore[arg-type]
                           seconds=seconds, rows_per_s=rows / seconds if seconds > 0 else 0.0,
                           history_bytes=history_bytes, cluster_seconds=cluster_s,
                           memory_limit_bytes=confinement.memory_limit_bytes, storage_class=confinement.storage_class,
                           repeat=repeat, query_rows=query.rows, query_cold_s=query.cold_s,
                           query_warm_s=query.warm_s)


def _make_copy(endpoints: Any, copy: Any, base: HistoryRecord, mix: Sequence[MixAttribute], size: HistorySize,
               seed: int, variant: str, confinement: Confinement, state_dir: Path | None, say: Say) -> None:
    """The history in `copy`'s database: a template copy, or (no templates) built again alike."""
    source = backend_for_stack(base.backend, endpoints, database=base.database)
    ops = source.aging_layout()
    assert ops is not None
    if ops.clones:  # a database template (PostgreSQL); MariaDB has none
        with building(source, state_dir):  # the copy is made unconfined, as the history was
            ops.clone(source, copy.database)
        return
    copy.drop_schema()  # a copy an interrupted run left, loaded rows and all
    build_history(endpoints, base.backend, variant, mix, size, seed, state_dir=state_dir, confinement=confinement,
                  say=say, copy_of=base, database=copy.database)


@dataclass(frozen=True)
class ReadBack:
    rows: int
    cold_s: float | None   # None: the server's page cache could not be dropped (no memory group)
    warm_s: float


def read_back(backend: Any, mix: Sequence[MixAttribute], after: datetime, rows: int,
              state_dir: Path | None) -> ReadBack:
    """One attribute's loaded rows (the middle attribute's: `rows` / attributes of them) read as an
    extraction client does, cold then warm; the same query whatever the load's order."""
    by_name = {info.name: att_id for att_id, info in backend.attribute_catalog()}
    att_id = by_name[mix[len(mix) // 2].info.name]
    period_us = int(round(1_000_000 / mix[0].rate_hz))
    until = after + timedelta(microseconds=period_us * (rows // len(mix) + 2))
    reader = extraction_of(backend)
    sql = reader.range_sql(backend.table_for(TABLE), False)
    cold = cold_start(state_dir, backend.name)
    first, count = _timed_read(reader, sql, (att_id, after, until))
    again, _ = _timed_read(reader, sql, (att_id, after, until))
    return ReadBack(rows=count, cold_s=first if cold else None, warm_s=again)


def _timed_read(reader: Any, sql: str, params: tuple[Any, ...]) -> tuple[float, int]:
    conn = reader.reader()
    try:
        started = time.perf_counter()
        count = reader.stream(conn, sql, params, 10_000, lambda block: None)
        return time.perf_counter() - started, count
    finally:
        conn.close()


def load_rows(backend: Any, mix: Sequence[MixAttribute], seed: int, after: datetime, rows: int, order: str) -> float:
    """`rows` rows continuing the mix's attributes after `after`, in `order`, in loads of BATCH_ROWS
    rows whatever the order (so the two orders differ in nothing else); the seconds the loads took."""
    by_name = {info.name: att_id for att_id, info in backend.attribute_catalog()}
    ids = np.array([by_name[a.info.name] for a in mix], dtype=np.int64)
    period_us = int(round(1_000_000 / mix[0].rate_hz))
    t0_us = int((after + timedelta(microseconds=period_us)).timestamp() * 1_000_000)
    k, a = np.divmod(np.arange(rows, dtype=np.int64), len(ids))  # time order: every attribute at each instant
    if order == "pk":
        by_key = np.lexsort((k, a))  # attribute after attribute, in time within each
        k, a = k[by_key], a[by_key]
    loader = backend.column_loader()
    busy = 0.0
    try:
        for lo in range(0, rows, BATCH_ROWS):
            batch = _batch(ids, seed, t0_us, period_us, a[lo:lo + BATCH_ROWS], k[lo:lo + BATCH_ROWS])
            started = time.perf_counter()
            loader.load(batch)
            busy += time.perf_counter() - started
    finally:
        loader.close()
    return busy


def _batch(ids: np.ndarray, seed: int, t0_us: int, period_us: int, a: np.ndarray, k: np.ndarray) -> ColumnBatch:
    values = column_values(TangoType.DEV_DOUBLE, seed, a, k)
    n = len(k)
    return ColumnBatch(TangoType.DEV_DOUBLE, ids[a], t0_us + k * period_us, values, values, np.ones(n, dtype=bool),
                       np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int16))

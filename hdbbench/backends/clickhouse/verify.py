# SPDX-License-Identifier: Apache-2.0
"""The live catalog (`system.tables`, `system.columns`) read back as `TableDef`s, and the checks
beyond the tables: each table's engine and partition key, the lookup tables' rows."""

from __future__ import annotations

from hdbbench.backends.clickhouse.client import Session
from hdbbench.backends.clickhouse.tables import lookup_rows, quote_ident, quote_string
from hdbbench.backends.model import ColumnDef, TableDef


def read_catalog(session: Session, database: str) -> tuple[dict[str, TableDef], dict[str, tuple[str, str]]]:
    """Tables as TableDefs (the sort key as primary key), and each table's (engine, partition key)."""
    where = f"database = {quote_string(database)}"
    columns: dict[str, list[ColumnDef]] = {}
    for table, name, type_ in session.all(f"SELECT table, name, type FROM system.columns WHERE {where}"):
        columns.setdefault(str(table), []).append(ColumnDef(str(name), str(type_), str(type_).startswith("Nullable(")))
    live, engines = {}, {}
    for name, engine, partition_key, sorting_key in session.all(
            f"SELECT name, engine, partition_key, sorting_key FROM system.tables WHERE {where}"):
        key = tuple(k.strip() for k in str(sorting_key).split(",") if k.strip())
        live[str(name)] = TableDef(str(name), tuple(columns.get(str(name), ())), key)
        engines[str(name)] = (str(engine), str(partition_key))
    return live, engines


def verify_engines(expected: list[TableDef], engines: dict[str, tuple[str, str]]) -> list[str]:
    diffs = []
    for table in expected:
        if table.name not in engines:
            continue
        engine, partition = engines[table.name]
        want_engine = table.options.get("engine", "MergeTree")
        if engine != want_engine:
            diffs.append(f"{table.name}: engine {engine}, expected {want_engine}")
        want_partition = table.options.get("partition_by", "")
        if _spaceless(partition) != _spaceless(want_partition):
            diffs.append(f"{table.name}: partition key {partition or 'none'}, expected {want_partition or 'none'}")
    return diffs


def verify_lookup_rows(session: Session) -> list[str]:
    diffs = []
    for table, rows in lookup_rows().items():
        live = sorted((int(n), str(s)) for n, s in session.all(f"SELECT * FROM {quote_ident(table)}"))
        if live != sorted(rows):
            diffs.append(f"{table}: rows differ from Tango's numbers and names")
    return diffs


def _spaceless(text: str) -> str:
    return "".join(text.split())

# SPDX-License-Identifier: Apache-2.0
"""The schema model every backend shares: schema variants, table definitions, their comparison, sizes.

The expected schema is a list of `TableDef` values: a backend renders its DDL from them and its
verify compares the live catalog with them, so the two cannot drift apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hdbbench.model.errors import ConfigError

INDEX_VARIANTS = ("pk", "pk+2")


@dataclass(frozen=True)
class SchemaVariant:
    """How a schema is built; parsed from strings like `pk`, `pk+2`, `pk+2,partitioned,interval=7d`.

    indexes: `pk` = primary key only; `pk+2` = HDB++'s two extra indexes on every data table.
      None means the backend's published default (pk+2 on PostgreSQL/TimescaleDB, pk on MySQL).
    partitioned: PostgreSQL native range partitions on data_time / MySQL PARTITION BY RANGE COLUMNS.
      TimescaleDB hypertables are always chunked, so it does not apply there.
    interval_days: TimescaleDB chunk interval or partition width; None = the HDB++ defaults
      (TimescaleDB/PostgreSQL 28 days, 14 for att_scalar_devdouble; MySQL yearly, bimonthly for
      the devdouble scalar tables).
    foreign_keys: False (`nofk`) drops the foreign keys of the PostgreSQL/TimescaleDB data tables
      (att_conf_id, att_error_desc_id), whose check costs the database a query per inserted row.
      The MySQL HDB++ data tables have none.
    """

    indexes: str | None = None
    partitioned: bool = False
    interval_days: int | None = None
    foreign_keys: bool = True

    @classmethod
    def parse(cls, text: str | None) -> SchemaVariant:
        indexes: str | None = None
        partitioned = False
        interval_days: int | None = None
        foreign_keys = True
        for part in (p.strip() for p in (text or "").split(",")):
            if not part or part == "default":
                continue
            if part in INDEX_VARIANTS:
                indexes = part
            elif part == "partitioned":
                partitioned = True
            elif part == "nofk":
                foreign_keys = False
            elif part.startswith(("interval=", "chunk=")):
                interval_days = _parse_days(part.partition("=")[2], part)
            else:
                raise ConfigError(
                    f"unknown schema variant part {part!r} (known: pk, pk+2, partitioned, interval=<N>d, nofk)"
                )
        return cls(indexes, partitioned, interval_days, foreign_keys)

    def with_default_indexes(self, indexes: str) -> SchemaVariant:
        return self if self.indexes else dataclasses.replace(self, indexes=indexes)

    def __str__(self) -> str:
        parts = [self.indexes or "default"]
        if self.partitioned:
            parts.append("partitioned")
        if self.interval_days:
            parts.append(f"interval={self.interval_days}d")
        if not self.foreign_keys:
            parts.append("nofk")
        return ",".join(parts)


def _parse_days(text: str, part: str) -> int:
    digits = text[:-1] if text.endswith("d") else text
    if not digits.isdigit() or int(digits) <= 0:
        raise ConfigError(f"bad interval in schema variant {part!r}: give a positive number of days, e.g. 7d")
    return int(digits)


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: str  # the catalog spelling (format_type on PostgreSQL, COLUMN_TYPE on MariaDB)
    nullable: bool = True
    default: str | None = None  # DDL text; not compared by verify (catalogs rewrite it)
    ddl: str | None = field(default=None, compare=False)  # DDL spelling when not the catalog's (serial, JSON)


@dataclass(frozen=True)
class IndexDef:
    name: str
    columns: str  # e.g. "att_conf_id, data_time DESC"
    unique: bool = False


@dataclass(frozen=True)
class ForeignKeyDef:
    columns: str
    ref_table: str
    ref_columns: str


@dataclass(frozen=True)
class TableDef:
    """One table of the expected schema."""

    name: str
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[str, ...] = ()
    indexes: tuple[IndexDef, ...] = ()
    foreign_keys: tuple[ForeignKeyDef, ...] = ()
    comment: str = ""
    # Backend-specific extras, e.g. {"hypertable": ("data_time", 28)} or {"partition_days": 28}.
    options: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def column(self, name: str) -> ColumnDef:
        return next(c for c in self.columns if c.name == name)


def compare_tables(expected: Sequence[TableDef], live: dict[str, TableDef]) -> list[str]:
    """Every difference between expected tables and the tables read from a live catalog."""
    diffs: list[str] = []
    want = {t.name: t for t in expected}
    for name in sorted(set(live) - set(want)):
        diffs.append(f"unexpected table {name}")
    for name, exp in want.items():
        got = live.get(name)
        if got is None:
            diffs.append(f"missing table {name}")
            continue
        diffs.extend(_compare_columns(exp, got))
        if exp.primary_key != got.primary_key:
            diffs.append(f"{name}: primary key ({', '.join(got.primary_key)}), expected ({', '.join(exp.primary_key)})")
        diffs.extend(_compare_named(name, "index", {i.name: i for i in exp.indexes}, {i.name: i for i in got.indexes}))
        exp_fk, got_fk = set(exp.foreign_keys), set(got.foreign_keys)
        for fk in sorted(exp_fk - got_fk, key=str):
            diffs.append(f"{name}: missing foreign key ({fk.columns}) -> {fk.ref_table}({fk.ref_columns})")
        for fk in sorted(got_fk - exp_fk, key=str):
            diffs.append(f"{name}: unexpected foreign key ({fk.columns}) -> {fk.ref_table}({fk.ref_columns})")
    return diffs


def _compare_columns(exp: TableDef, got: TableDef) -> list[str]:
    diffs = []
    exp_cols = [c.name for c in exp.columns]
    got_cols = [c.name for c in got.columns]
    for col in exp.columns:
        if col.name not in got_cols:
            diffs.append(f"{exp.name}: missing column {col.name} {col.type}")
            continue
        live = got.column(col.name)
        if live.type != col.type:
            diffs.append(f"{exp.name}.{col.name}: type {live.type}, expected {col.type}")
        if live.nullable != col.nullable:
            want = "NULL" if col.nullable else "NOT NULL"
            diffs.append(f"{exp.name}.{col.name}: nullability differs, expected {want}")
    for name in got_cols:
        if name not in exp_cols:
            diffs.append(f"{exp.name}: unexpected column {name} {got.column(name).type}")
    if not diffs and exp_cols != got_cols:
        diffs.append(f"{exp.name}: column order ({', '.join(got_cols)}), expected ({', '.join(exp_cols)})")
    return diffs


def _compare_named(table: str, kind: str, exp: dict[str, IndexDef], got: dict[str, IndexDef]) -> list[str]:
    diffs = []
    for name in sorted(exp.keys() - got.keys()):
        diffs.append(f"{table}: missing {kind} {name} ({exp[name].columns})")
    for name in sorted(got.keys() - exp.keys()):
        diffs.append(f"{table}: unexpected {kind} {name} ({got[name].columns})")
    for name in sorted(exp.keys() & got.keys()):
        if exp[name] != got[name]:
            diffs.append(f"{table}: {kind} {name} is ({got[name].columns}), expected ({exp[name].columns})")
    return diffs


@dataclass(frozen=True)
class TableSize:
    """Bytes one data table occupies, as its server reports them, split into parts that add up.

    data_bytes: heap / clustered index (InnoDB: its leaf pages in use, off-page columns included);
    index_bytes: secondary indexes (InnoDB: leaf pages in use) and the PostgreSQL primary key;
    toast_bytes: TOAST heap + TOAST index (PostgreSQL/TimescaleDB; 0 where the engine keeps overflow
      pages inside the data figure);
    free_bytes: file space of the table in no page in use (InnoDB slack: reserved extents, free pages,
      internal B-tree pages; 0 elsewhere);
    total_bytes: the server's own total (pg_total_relation_size, hypertable_detailed_size, the
      tablespace FILE_SIZE); equals the sum of the parts.
    allocated_bytes: file-system blocks when they differ from total_bytes (sparse InnoDB files with
      PAGE_COMPRESSED), else None. parts: chunks / partitions / tablespaces the table spans.
    """

    table: str
    data_bytes: int
    index_bytes: int
    toast_bytes: int
    free_bytes: int
    total_bytes: int
    allocated_bytes: int | None = None
    engine: str = ""
    parts: int = 1

    @property
    def disk_bytes(self) -> int:
        """What the table costs on disk: allocated blocks when known, else the total."""
        return self.total_bytes if self.allocated_bytes is None else self.allocated_bytes

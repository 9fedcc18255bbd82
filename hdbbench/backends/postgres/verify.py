# SPDX-License-Identifier: Apache-2.0
"""Reading the live PostgreSQL catalog back as `TableDef`s, and the checks the table model alone
does not cover: domains, triggers, lookup rows, roles, hypertables and partitioning.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import timedelta
from typing import Any

import psycopg

from hdbbench.backends.model import ColumnDef, ForeignKeyDef, IndexDef, TableDef
from hdbbench.backends.postgres.ddl import ENUM_TRIGGER_TABLES
from hdbbench.backends.postgres.tables import DOMAINS, ROLES
from hdbbench.model.hdbtypes import HISTORY_EVENTS, AttrFormat, TangoType, WriteType

_INDEX_COLS = re.compile(r"USING \w+ \((.*)\)$")
_CON_COLS = re.compile(r"^(?:PRIMARY KEY|FOREIGN KEY) \(([^)]*)\)(?: REFERENCES (\S+?)\(([^)]*)\))?")


def read_catalog(conn: psycopg.Connection[Any]) -> dict[str, TableDef]:
    """The tables of schema `public` (partitions excluded) as TableDefs."""
    rels = conn.execute(
        "SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition"
    ).fetchall()
    oids = {oid: name for oid, name in rels}
    cols: dict[int, list[ColumnDef]] = defaultdict(list)
    for oid, name, typ, notnull in conn.execute(
        "SELECT attrelid, attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
        "WHERE attrelid = ANY(%s) AND attnum > 0 AND NOT attisdropped ORDER BY attrelid, attnum",
        (list(oids),),
    ):
        cols[oid].append(ColumnDef(name, typ, not notnull))
    pks: dict[int, tuple[str, ...]] = {}
    fks: dict[int, list[ForeignKeyDef]] = defaultdict(list)
    for oid, contype, condef in conn.execute(
        "SELECT conrelid, contype, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = ANY(%s) AND contype IN ('p', 'f')",
        (list(oids),),
    ):
        m = _CON_COLS.match(condef)
        if not m:
            continue
        if contype == "p":
            pks[oid] = tuple(c.strip() for c in m.group(1).split(","))
        else:
            fks[oid].append(ForeignKeyDef(m.group(1), m.group(2), m.group(3)))
    idx: dict[int, list[IndexDef]] = defaultdict(list)
    for oid, name, indexdef, unique in conn.execute(
        "SELECT i.indrelid, c.relname, pg_get_indexdef(i.indexrelid), i.indisunique FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = ANY(%s) AND NOT i.indisprimary",
        (list(oids),),
    ):
        m = _INDEX_COLS.search(indexdef)
        idx[oid].append(IndexDef(name, m.group(1) if m else indexdef, unique))
    return {
        name: TableDef(name, tuple(cols[oid]), pks.get(oid, ()), tuple(idx[oid]), tuple(fks[oid]))
        for oid, name in oids.items()
    }


def _verify_domains(conn: psycopg.Connection[Any]) -> list[str]:
    live = dict(
        conn.execute(
            "SELECT t.typname, format_type(t.typbasetype, t.typtypmod) FROM pg_type t "
            "JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public' AND t.typtype = 'd'"
        ).fetchall()
    )
    diffs = []
    for name, (base, _top) in DOMAINS.items():
        if name not in live:
            diffs.append(f"missing domain {name}")
        elif live[name] != base:
            diffs.append(f"domain {name} is {live[name]}, expected {base}")
    diffs += [f"unexpected domain {name}" for name in sorted(set(live) - set(DOMAINS))]
    return diffs


def _verify_triggers(conn: psycopg.Connection[Any]) -> list[str]:
    live = {
        (t, n)
        for t, n in conn.execute(
            "SELECT c.relname, g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT g.tgisinternal "
            "AND g.tgname = 'enum_label_trigger'"
        )
    }
    return [f"{t}: missing trigger enum_label_trigger" for t in ENUM_TRIGGER_TABLES if (t, "enum_label_trigger") not in live]


def _verify_lookup_rows(conn: psycopg.Connection[Any]) -> list[str]:
    checks = [
        ("att_conf_type", "SELECT type, type_num FROM att_conf_type", {(t.name, t.value) for t in TangoType}),
        ("att_conf_format", "SELECT format, format_num FROM att_conf_format", {(f.name, f.value) for f in AttrFormat}),
        ("att_conf_write", "SELECT write, write_num FROM att_conf_write", {(w.name, w.value) for w in WriteType}),
        ("att_history_event", "SELECT event, 0 FROM att_history_event", {(e, 0) for e in HISTORY_EVENTS}),
    ]
    diffs = []
    for table, query, want in checks:
        try:
            got = set(conn.execute(query).fetchall())
        except psycopg.Error:
            conn.rollback()
            continue  # the missing table is already reported
        if got != want:
            diffs.append(f"{table}: rows differ (missing {sorted(want - got)}, unexpected {sorted(got - want)})")
    return diffs


def _verify_roles(conn: psycopg.Connection[Any]) -> list[str]:
    live = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", (list(ROLES),))}
    return [f"missing role {r}" for r in ROLES if r not in live]


def verify_hypertables(conn: psycopg.Connection[Any], expected: list[TableDef]) -> list[str]:
    live = {
        name: (col, interval)
        for name, col, interval in conn.execute(
            "SELECT hypertable_name, column_name, time_interval FROM timescaledb_information.dimensions "
            "WHERE hypertable_schema = 'public'"
        )
    }
    diffs = []
    for t in expected:
        if "hypertable" not in t.options:
            continue
        col, days = t.options["hypertable"]
        got = live.pop(t.name, None)
        if got is None:
            diffs.append(f"{t.name}: not a hypertable")
        elif got != (col, timedelta(days=days)):
            diffs.append(f"{t.name}: hypertable on {got[0]} every {got[1]}, expected {col} every {days} days")
    diffs += [f"unexpected hypertable {name}" for name in sorted(live)]
    return diffs


def verify_partitioning(conn: psycopg.Connection[Any], expected: list[TableDef]) -> list[str]:
    live = dict(
        conn.execute(
            "SELECT c.relname, pg_get_partkeydef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'p'"
        ).fetchall()
    )
    diffs = []
    for t in expected:
        got = live.pop(t.name, None)
        if "partition_days" in t.options and got != "RANGE (data_time)":
            diffs.append(f"{t.name}: not range-partitioned on data_time")
    diffs += [f"{name}: unexpectedly partitioned ({key})" for name, key in sorted(live.items())]
    return diffs


def verify_common(conn: psycopg.Connection[Any]) -> list[str]:
    """What every PostgreSQL flavour of the layout has besides its tables."""
    return _verify_domains(conn) + _verify_triggers(conn) + _verify_lookup_rows(conn) + _verify_roles(conn)

# SPDX-License-Identifier: Apache-2.0
"""Reading the live MariaDB catalog back as `TableDef`s, and the checks beyond the tables:
engines, partitions, lookup rows and users.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hdbbench.backends.model import ColumnDef, IndexDef, TableDef
from hdbbench.backends.mysql.tables import (
    HISTORY_EVENTS_MYSQL,
    RO_USER,
    RW_USER,
    TYPE_ORDER,
    data_type_name,
    quote_ident,
)
from hdbbench.model.hdbtypes import AttrFormat, WriteType


def read_catalog(cur: Any, database: str) -> tuple[dict[str, TableDef], dict[str, str], dict[str, list[tuple[str, str, str]]]]:
    cur.execute("SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", (database,))
    engines = dict(cur.fetchall())
    cols: dict[str, list[ColumnDef]] = defaultdict(list)
    cur.execute(
        "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS "
        "WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION",
        (database,),
    )
    for table, col, typ, nullable in cur.fetchall():
        cols[table].append(ColumnDef(col, typ, nullable == "YES"))
    index_cols: dict[tuple[str, str], list[str]] = defaultdict(list)
    unique: dict[tuple[str, str], bool] = {}
    cur.execute(
        "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME, COLLATION FROM information_schema.STATISTICS "
        "WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
        (database,),
    )
    for table, index, non_unique, col, collation in cur.fetchall():
        index_cols[(table, index)].append(col + (" DESC" if collation == "D" else ""))
        unique[(table, index)] = not non_unique
    pks: dict[str, tuple[str, ...]] = {}
    idx: dict[str, list[IndexDef]] = defaultdict(list)
    for (table, index), columns in index_cols.items():
        if index == "PRIMARY":
            pks[table] = tuple(columns)
        else:
            idx[table].append(IndexDef(index, ", ".join(columns), unique[(table, index)]))
    partitions: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    cur.execute(
        "SELECT TABLE_NAME, PARTITION_NAME, PARTITION_METHOD, PARTITION_EXPRESSION FROM information_schema.PARTITIONS "
        "WHERE TABLE_SCHEMA = ? AND PARTITION_NAME IS NOT NULL ORDER BY TABLE_NAME, PARTITION_ORDINAL_POSITION",
        (database,),
    )
    for table, part, method, expr in cur.fetchall():
        partitions[table].append((part, method, expr))
    live = {t: TableDef(t, tuple(cols[t]), pks.get(t, ()), tuple(idx[t])) for t in engines}
    return live, engines, partitions


def verify_partitions(expected: list[TableDef], live: dict[str, list[tuple[str, str, str]]]) -> list[str]:
    diffs = []
    for t in expected:
        got = live.pop(t.name, [])
        if "partitions" not in t.options:
            if got:
                diffs.append(f"{t.name}: unexpectedly partitioned")
            continue
        if not got or {(m, e.strip("`")) for _p, m, e in got} != {("RANGE COLUMNS", "data_time")}:
            diffs.append(f"{t.name}: not partitioned BY RANGE COLUMNS(data_time)")
        elif got[-1][0] != "future":
            diffs.append(f"{t.name}: no catch-all 'future' partition")
    diffs += [f"{name}: unexpectedly partitioned" for name in sorted(live)]
    return diffs


def verify_rows_and_users(cur: Any, database: str) -> list[str]:
    diffs = []
    db = quote_ident(database)
    want_kinds = {
        (data_type_name(t, fmt, w), int(t))
        for t in TYPE_ORDER
        for fmt in (AttrFormat.SCALAR, AttrFormat.SPECTRUM)
        for w in (WriteType.READ, WriteType.READ_WRITE)
    }
    for table, query, want in (
        ("att_conf_data_type", f"SELECT data_type, tango_data_type FROM {db}.att_conf_data_type", want_kinds),
        ("att_history_event", f"SELECT event, 0 FROM {db}.att_history_event", {(e, 0) for e in HISTORY_EVENTS_MYSQL}),
    ):
        try:
            cur.execute(query)
        except Exception:  # noqa: BLE001 - a missing table is already reported
            continue
        got = set(cur.fetchall())
        if got != want:
            diffs.append(f"{table}: rows differ (missing {sorted(want - got)}, unexpected {sorted(got - want)})")
    for user, privilege in ((RW_USER, "Insert_priv"), (RO_USER, "Select_priv")):
        cur.execute(f"SELECT {privilege} FROM mysql.db WHERE User = ? AND Host = '%' AND Db = ?", (user, database))
        row = cur.fetchone()
        if row is None or row[0] != "Y":
            diffs.append(f"user {user}@% lacks {privilege.split('_')[0].upper()} on {database}")
    return diffs

# SPDX-License-Identifier: Apache-2.0
"""Storage facts of PostgreSQL/TimescaleDB tables: sizes split into heap / index / TOAST, the
documented per-row minimum, write-ahead log position and the server settings that change sizes.
"""

from __future__ import annotations

import math
from typing import Any

import psycopg

from hdbbench.backends.model import TableDef, TableSize
from hdbbench.backends.postgres.tables import quote_ident


def hypertable_size(conn: psycopg.Connection[Any], table: str) -> TableSize:
    """A hypertable: hypertable_detailed_size over every chunk."""
    row = conn.execute(
        "SELECT table_bytes, index_bytes, toast_bytes, total_bytes FROM hypertable_detailed_size(%s)",
        (f"public.{quote_ident(table)}",),
    ).fetchone()
    chunks = conn.execute("SELECT count(*) FROM show_chunks(%s)", (f"public.{quote_ident(table)}",)).fetchone()
    heap, index, toast, total = (int(v or 0) for v in row) if row else (0, 0, 0, 0)
    return TableSize(table, heap, index, toast, 0, total, engine="timescaledb", parts=int(chunks[0]) if chunks else 0)


# The plain table, or the leaf partitions of a natively partitioned one (its name twice as parameters).
_LEAVES = ("c.relkind = 'r' AND (c.oid = %s::regclass OR c.oid IN "
           "(SELECT relid FROM pg_partition_tree(%s::regclass) WHERE isleaf))")


def plain_table_size(conn: psycopg.Connection[Any], table: str) -> TableSize:
    """A plain or natively partitioned table: sums over its leaf relations."""
    row = conn.execute(
        "SELECT count(*), coalesce(sum(pg_table_size(c.oid)), 0), coalesce(sum(pg_indexes_size(c.oid)), 0), "
        "coalesce(sum(CASE WHEN c.reltoastrelid = 0 THEN 0 ELSE pg_total_relation_size(c.reltoastrelid) END), 0), "
        "coalesce(sum(pg_total_relation_size(c.oid)), 0) "
        "FROM pg_class c WHERE " + _LEAVES, (f"public.{quote_ident(table)}",) * 2,
    ).fetchone()
    parts, table_bytes, index, toast, total = (int(v) for v in row) if row else (0, 0, 0, 0, 0)
    return TableSize(table, table_bytes - toast, index, toast, 0, total, engine="postgresql", parts=parts)


def hold_autovacuum(conn: psycopg.Connection[Any], table: str) -> None:
    """No autovacuum of `table` and its leaves (TimescaleDB gives a hypertable's setting to every chunk
    it creates; the TOAST table follows its table). The disk measurement sizes what the rows take: an
    autovacuum landing between two of its points (one a second on our servers) would add its free-space
    and visibility maps, 32 KiB a relation, to one point and not the others."""
    leaves = conn.execute("SELECT c.oid::regclass::text FROM pg_class c WHERE " + _LEAVES,
                          (f"public.{quote_ident(table)}",) * 2).fetchall()
    for (leaf,) in leaves:
        conn.execute(f"ALTER TABLE {leaf} SET (autovacuum_enabled = false)")


def documented_row_minimum(conn: psycopg.Connection[Any], table: TableDef, att_prefix: str) -> tuple[int, float] | None:
    """4-byte item pointer + MAXALIGN(23-byte tuple header + null bitmap) + the stored column bytes
    (pg_column_size, alignment padding excluded), averaged over the rows of attributes `att_prefix...`."""
    cols = " + ".join(f"coalesce(pg_column_size(d.{quote_ident(c.name)}), 0)" for c in table.columns)
    header = 8 * math.ceil((23 + math.ceil(len(table.columns) / 8)) / 8)
    query = (f"SELECT count(*), coalesce(avg({cols}), 0) FROM {quote_ident(table.name)} d WHERE d.att_conf_id IN "
             "(SELECT att_conf_id FROM att_conf WHERE att_name LIKE %s)")
    rows, avg = conn.execute(query, (att_prefix + "%",)).fetchone()  # type: ignore[misc]
    return (int(rows), 4 + header + float(avg)) if rows else None


def wal_position(conn: psycopg.Connection[Any]) -> dict[str, int | None]:
    row = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").fetchone()
    return {"wal": int(row[0]) if row else None}


SIZE_SETTINGS = ("block_size", "full_page_writes", "wal_compression", "wal_level", "default_toast_compression")


def server_facts(endpoint: Any) -> dict[str, Any]:
    """Server version, the TimescaleDB version available and the settings that change sizes."""
    with endpoint.connect(autocommit=True) as conn:
        return {
            "version": conn.execute("SELECT version()").fetchone()[0],
            "timescaledb": (conn.execute("SELECT default_version FROM pg_available_extensions "
                                         "WHERE name = 'timescaledb'").fetchone() or [None])[0],
            **{k: conn.execute(f"SHOW {k}").fetchone()[0] for k in SIZE_SETTINGS},
        }

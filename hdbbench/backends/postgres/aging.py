# SPDX-License-Identifier: Apache-2.0
"""What an aged history (hdbbench.parts.aging) needs of the PostgreSQL layout, TimescaleDB's too.

A history lives in a database of its own, marked by a one-row table `hdbbench_history` (its key and
its record) so that a later run on the same stack finds it. Plain PostgreSQL keeps plain tables (the
HDB++ PostgreSQL layout has no partitions and no reorder job); TimescaleDB's hypertables chunk by
themselves at the official intervals, and the official reorder job (`add_reorder_policy`) is played
once: every chunk but the newest of each data table reordered on the primary key. A copy for a
measurement that must start again from the same history is `CREATE DATABASE ... TEMPLATE`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from hdbbench.backends.postgres.tables import data_table_name
from hdbbench.model.hdbtypes import AttrFormat, TangoType

MARKER = "hdbbench_history"


def _data_tables() -> list[str]:
    return [data_table_name(t, f) for t in TangoType for f in (AttrFormat.SCALAR, AttrFormat.SPECTRUM)]


def _cluster_leaf(conn: Any, leaf: tuple[str, str]) -> None:
    """CLUSTER one chunk or plain table on its primary key."""
    pk = conn.execute("SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                      "WHERE i.indrelid = %s::regclass AND i.indisprimary", (f'"{leaf[0]}"."{leaf[1]}"',)).fetchone()
    if pk is not None:
        conn.execute(sql.SQL("CLUSTER {}.{} USING {}").format(
            sql.Identifier(leaf[0]), sql.Identifier(leaf[1]), sql.Identifier(pk[0])))


class PgAgingLayout:
    """The aging layout of the PostgreSQL family (hdbbench.backends.abilities.aging.AgingLayout)."""

    clones = True  # CREATE DATABASE ... TEMPLATE

    def exists(self, backend: Any) -> bool:
        with backend._admin() as admin:
            return admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (backend.database,)).fetchone() is not None

    def read_marker(self, backend: Any) -> tuple[str, str] | None:
        """(key, record as JSON) of a finished history, or None (no marker: an interrupted build)."""
        with backend.connect() as conn:
            if conn.execute("SELECT to_regclass(%s)", (f"public.{MARKER}",)).fetchone()[0] is None:
                return None
            row = conn.execute(sql.SQL("SELECT key, record FROM {}").format(sql.Identifier(MARKER))).fetchone()
            return (row[0], row[1]) if row else None

    def write_marker(self, backend: Any, key: str, record: str) -> None:
        with backend.connect() as conn:
            conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} (key text NOT NULL, record text NOT NULL)")
                         .format(sql.Identifier(MARKER)))
            conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(MARKER)))
            conn.execute(sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(sql.Identifier(MARKER)), (key, record))

    @contextmanager
    def building(self, backend: Any) -> Iterator[None]:
        """While a history is built (the server's memory limit lifted, hdbbench.parts.aging.history): then a
        CHECKPOINT, so that what shared_buffers hold dirty is written before the throttle is set again
        (PostgreSQL reads through the page cache, which the lifted limit lets grow: nothing to widen)."""
        yield
        with backend.connect(autocommit=True) as conn:
            conn.execute("CHECKPOINT")

    def shape_layout(self, backend: Any, start: datetime, end: datetime) -> None:
        """Nothing to add: hypertables make their chunks as rows arrive; plain tables have none."""

    def fast_loader(self, backend: Any) -> Any:
        """The column loader with the foreign-key triggers off for its session (`session_replication_role
        = replica`): the rows reference att_conf rows registered just before, and checking each costs a
        third of the build; the tables and indexes come out the same. Without the privilege (a server
        the stack does not own), the ordinary loader."""
        loader = backend.column_loader()
        try:
            loader.conn.execute("SET session_replication_role = replica")
            loader.conn.commit()
        except psycopg.errors.InsufficientPrivilege:
            loader.conn.rollback()
        return loader

    def reorder_older(self, backend: Any) -> bool:
        """TimescaleDB: every chunk but the newest of each data table put in primary-key order, as the
        official reorder policy leaves them; plain PostgreSQL has no such job (False: nothing done).
        `reorder_chunk` is under the Timescale licence, which Debian's Apache-only build lacks: the chunk is
        CLUSTERed on its primary key instead, the same physical order (reorder_chunk is a CLUSTER that
        holds a lighter lock while it runs)."""
        if not backend.timescale:
            return False
        with backend.connect(autocommit=True) as conn:
            for table in _data_tables():
                ordered = conn.execute(
                    "SELECT chunk_schema, chunk_name FROM timescaledb_information.chunks "
                    "WHERE hypertable_name = %s ORDER BY range_end", (table,)).fetchall()
                for leaf in ordered[:-1]:
                    _cluster_leaf(conn, (leaf[0], leaf[1]))
        return True

    def delete_after(self, backend: Any, end: datetime) -> int:
        """Remove the rows stamped after `end` (a trial's), then VACUUM ANALYZE the tables that had some, so
        the next trial meets the same tables and statistics."""
        removed = 0
        with backend.connect(autocommit=True) as conn:
            for table in _data_tables():
                cur = conn.execute(sql.SQL("DELETE FROM {} WHERE data_time > %s").format(sql.Identifier(table)), (end,))
                if cur.rowcount:
                    removed += cur.rowcount
                    conn.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(table)))
        return removed

    def clone(self, backend: Any, target: str) -> None:
        """`target` made a copy of the history's database (replaced if it exists). A template must have no
        other session: TimescaleDB's per-database job scheduler may hold one, and is ended first (it
        starts again by itself)."""
        with backend._admin() as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(target)))
            for attempt in range(5):
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                              "AND pid <> pg_backend_pid()", (backend.database,))
                try:
                    admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(target),
                                                                                    sql.Identifier(backend.database)))
                    return
                except psycopg.errors.ObjectInUse:
                    if attempt == 4:
                        raise

    def drop_copy(self, backend: Any) -> None:
        """Drop a copy made by `clone` (the roles stay: the history's database still uses them)."""
        with backend._admin() as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(backend.database)))

    def checksum(self, backend: Any, table: str, after: datetime) -> tuple[int, int]:
        """(rows, a sum over their keys and values) of `table` stamped after `after`: two loads of the
        same rows give the same pair whatever their order."""
        with backend.connect() as conn:
            row = conn.execute(sql.SQL(
                "SELECT count(*), coalesce(sum(att_conf_id * 1000003 + (extract(epoch FROM data_time) * 1000000)::bigint "
                "+ coalesce((value_r * 1000)::bigint, 0)), 0) FROM {} WHERE data_time > %s").format(
                sql.Identifier(table)), (after,)).fetchone()
        return int(row[0]), int(row[1])

    def cluster_table(self, backend: Any, table: str) -> float | None:
        """Seconds to CLUSTER every chunk (or the plain table) of `table` on its primary key."""
        started = time.perf_counter()
        with backend.connect(autocommit=True) as conn:
            for leaf in backend._leaf_relations(conn, table):
                if not (backend.timescale and leaf[0] == "public"):  # a hypertable's root holds no rows
                    _cluster_leaf(conn, leaf)
        return time.perf_counter() - started

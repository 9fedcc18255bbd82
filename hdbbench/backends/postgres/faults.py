# SPDX-License-Identifier: Apache-2.0
"""What the fault injectors need from PostgreSQL and TimescaleDB (hdbbench.backends.abilities.faults.TableFaults).

- Table lock: `LOCK TABLE ... IN ACCESS EXCLUSIVE MODE` in an open transaction of an admin session.
  The lock recurses to the children of a table (TimescaleDB chunks, partitions), and an INSERT takes
  ROW EXCLUSIVE on the table it names first, so inserts into a hypertable wait at the hypertable.
  The stack sets neither `lock_timeout` nor `statement_timeout` (both 0 = wait for ever), so they wait.
- Tables on another filesystem: a tablespace `hdbbench_fault` at the directory, and every relation of
  a data table moved there: the table, its chunks/partitions and all their indexes. `ALTER TABLE` on a
  hypertable moves its chunks and attaches the tablespace (new chunks go there; their indexes follow
  the chunk); on a partitioned table it sets the place of partitions created later. The way back moves
  every relation the tablespace holds in this database, detaches it from hypertables and drops it.
- Disk full: SQLSTATE 53100 ("could not extend file ...: No space left on device").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from hdbbench.model.errors import HdbbenchError

TABLESPACE = "hdbbench_fault"
DISK_FULL = "53100"
_LOCK_WAIT_SETTINGS = ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")
_TAKE_LOCK_WITHIN = "60s"  # the admin session waits this long for running inserts to commit

# The table and every relation below it (chunks, partitions), the table itself first.
_TREE_SQL = """
WITH RECURSIVE tree(relid, depth) AS (
    SELECT %s::regclass::oid, 0
    UNION ALL
    SELECT i.inhrelid, tree.depth + 1 FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
)
SELECT relid::regclass::text, depth FROM tree ORDER BY depth, relid
"""
_INDEXES_SQL = "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass ORDER BY 1"
# Everything the tablespace holds in this database but TOAST (it moves with its table); tables first.
_IN_TABLESPACE_SQL = """
SELECT c.oid::regclass::text, c.relkind IN ('i', 'I') AS is_index
FROM pg_class c JOIN pg_tablespace t ON t.oid = c.reltablespace
WHERE t.spcname = %s AND c.relkind IN ('r', 'p', 'm', 'i', 'I') AND c.relnamespace <> 'pg_toast'::regnamespace
ORDER BY is_index, c.oid
"""


class PgHeldLock:
    """An ACCESS EXCLUSIVE lock held in the open transaction of its own session."""

    def __init__(self, conn: psycopg.Connection[Any], observer: Callable[[], psycopg.Connection[Any]]) -> None:
        self._conn: psycopg.Connection[Any] | None = conn
        self._pid = conn.info.backend_pid
        self._observer = observer

    def waiters(self) -> int:
        with self._observer() as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                               (self._pid,)).fetchone()
        return int(row[0]) if row else 0

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.rollback()
        except psycopg.Error:
            pass  # the session is gone (the server stopped): so is its lock
        finally:
            conn.close()


class PgTableFaults:
    """The table faults of plain PostgreSQL (TimescaleDB's: `TimescaleTableFaults`); `backend` is a
    PostgresBackend."""

    def hold_table_lock(self, backend: Any, tables: Sequence[str]) -> PgHeldLock:
        conn = backend.connect()
        try:
            conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(_TAKE_LOCK_WITHIN)))
            conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(
                sql.SQL(", ").join(sql.Identifier(t) for t in tables)))
        except psycopg.Error as exc:
            conn.close()
            raise HdbbenchError(f"cannot lock {', '.join(tables)} in {backend.database}: {_first_line(exc)}") from None
        return PgHeldLock(conn, lambda: backend.connect(autocommit=True))

    def lock_wait_limits(self, backend: Any) -> dict[str, str]:
        with backend.connect(autocommit=True) as conn:
            rows = conn.execute("SELECT name, current_setting(name) FROM unnest(%s::text[]) AS name",
                                (list(_LOCK_WAIT_SETTINGS),)).fetchall()
        return {str(name): str(value) for name, value in rows}

    def move_tables(self, backend: Any, tables: Sequence[str], directory: Path) -> None:
        self._create_tablespace(backend, directory)
        target = sql.Identifier(TABLESPACE)
        try:
            with backend.connect(autocommit=True) as conn:
                for table in tables:
                    for relation, _depth in conn.execute(_TREE_SQL, (table,)).fetchall():
                        conn.execute(sql.SQL("ALTER TABLE {} SET TABLESPACE {}").format(sql.SQL(relation), target))
                        for (index,) in conn.execute(_INDEXES_SQL, (relation,)).fetchall():
                            conn.execute(sql.SQL("ALTER INDEX {} SET TABLESPACE {}").format(sql.SQL(index), target))
        except psycopg.Error as exc:
            raise HdbbenchError(f"moving {', '.join(tables)} of {backend.database} to {directory} failed: "
                                f"{_first_line(exc)}") from None

    def restore_tables(self, backend: Any, tables: Sequence[str]) -> None:
        with backend._admin() as admin:
            if admin.execute("SELECT 1 FROM pg_tablespace WHERE spcname = %s", (TABLESPACE,)).fetchone() is None:
                return
        default = sql.Identifier("pg_default")
        try:
            with backend.connect(autocommit=True) as conn:
                for table in tables:  # a hypertable takes its chunks along
                    if _exists(conn, table):
                        conn.execute(sql.SQL("ALTER TABLE {} SET TABLESPACE {}").format(sql.Identifier(table), default))
                for relation, is_index in conn.execute(_IN_TABLESPACE_SQL, (TABLESPACE,)).fetchall():
                    kind = "INDEX" if is_index else "TABLE"
                    conn.execute(sql.SQL(f"ALTER {kind} {{}} SET TABLESPACE {{}}").format(sql.SQL(relation), default))
                self._forget_tablespace(conn, [t for t in tables if _exists(conn, t)])
            with backend._admin() as admin:
                admin.execute(sql.SQL("DROP TABLESPACE {}").format(sql.Identifier(TABLESPACE)))
                # Crash recovery replays a CREATE TABLESPACE after the last checkpoint, and fails once
                # its directory (the unmounted tmpfs) is gone: start recovery after the drop instead.
                admin.execute("CHECKPOINT")
        except psycopg.Error as exc:
            raise HdbbenchError(f"moving {', '.join(tables)} of {backend.database} back from tablespace {TABLESPACE} "
                                f"failed: {_first_line(exc)}") from None

    def is_disk_full(self, error: BaseException) -> bool:
        return getattr(error, "sqlstate", None) == DISK_FULL

    def _create_tablespace(self, backend: Any, directory: Path) -> None:
        with backend._admin() as admin:
            row = admin.execute("SELECT pg_tablespace_location(oid) FROM pg_tablespace WHERE spcname = %s",
                                (TABLESPACE,)).fetchone()
            if row is not None:
                if Path(row[0]) != Path(directory):
                    raise HdbbenchError(f"tablespace {TABLESPACE} already exists at {row[0]} (a run that did not "
                                        f"clean up?); drop it before placing tables in {directory}")
                return
            try:
                admin.execute(sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(
                    sql.Identifier(TABLESPACE), sql.Literal(str(directory))))
            except psycopg.Error as exc:
                raise HdbbenchError(f"cannot create tablespace {TABLESPACE} in {directory}: {_first_line(exc)}") from None

    def _forget_tablespace(self, conn: psycopg.Connection[Any], tables: Sequence[str]) -> None:
        """Drop what still points at the tablespace besides relations (nothing in plain PostgreSQL)."""


class TimescaleTableFaults(PgTableFaults):
    """TimescaleDB keeps the tablespaces attached to a hypertable in its catalog (where new chunks go)."""

    def _forget_tablespace(self, conn: psycopg.Connection[Any], tables: Sequence[str]) -> None:
        for table in tables:
            if conn.execute("SELECT 1 FROM timescaledb_information.hypertables WHERE hypertable_name = %s",
                            (table,)).fetchone():
                # Moving a hypertable back attached pg_default; with none attached it is as created.
                conn.execute("SELECT detach_tablespaces(%s::regclass)", (table,))


def _exists(conn: psycopg.Connection[Any], table: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone() == (True,)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__

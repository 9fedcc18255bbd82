# SPDX-License-Identifier: Apache-2.0
"""What the fault injectors need from MariaDB (hdbbench.backends.abilities.faults.TableFaults).

- Table lock: `LOCK TABLES ... WRITE` in an admin session. Other sessions' inserts wait for the
  table's metadata lock ("Waiting for table metadata lock"), bounded by `lock_wait_timeout`, which
  the stack leaves at MariaDB's default of 86400 s; `innodb_lock_wait_timeout` (50 s) bounds row
  locks only, which a table lock does not involve.
- Tables on another filesystem: InnoDB file-per-table with `DATA DIRECTORY`. MariaDB ignores
  DATA DIRECTORY in ALTER TABLE (warning 1618), so a table is recreated there: its own CREATE
  statement under a new name with DATA DIRECTORY added (per partition for a partitioned table), the
  rows copied, the two names swapped in one RENAME and the old table dropped. The way back is the
  same without DATA DIRECTORY. The data tables have no foreign keys and their grants are on the
  database, so nothing else refers to the table that is replaced. Rows written meanwhile are carried
  over after the swap (see `_replace_table`); arm and disarm are still best run while no load writes.
  The redo log and the system tablespace stay in the data directory.
- Disk full: 1114 ("The table ... is full", a tablespace that cannot grow) and 1021 (disk full).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hdbbench.backends.mysql.tables import quote_ident
from hdbbench.model.errors import HdbbenchError

DISK_FULL_ERRORS = (1114, 1021)  # ER_RECORD_FILE_FULL, ER_DISK_FULL
_LOCK_WAIT_SETTINGS = ("lock_wait_timeout", "innodb_lock_wait_timeout")
_TAKE_LOCK_WITHIN_S = 60  # the admin session waits this long for running inserts to commit
_COPY_SUFFIX = "__hdbbench_copy"
_OLD_SUFFIX = "__hdbbench_old"
_DATA_DIRECTORY = re.compile(r"\s*DATA DIRECTORY\s*=?\s*'[^']*'", re.IGNORECASE)
_PARTITION_CLAUSE = re.compile(r"\n\s*(/\*!\d+\s*)?PARTITION BY", re.IGNORECASE)
_CREATE_NAME = re.compile(r"^CREATE TABLE `(?:[^`]|``)+`")


class MySQLHeldLock:
    """LOCK TABLES ... WRITE held by its own session."""

    def __init__(self, conn: Any, database: str, observer: Callable[[], Any]) -> None:
        self._conn: Any | None = conn
        self._id = conn.connection_id
        self._database = database
        self._observer = observer

    def waiters(self) -> int:
        conn = self._observer()
        try:
            cur = conn.cursor()
            cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                        "WHERE ID <> ? AND DB = ? AND STATE LIKE 'Waiting for table%lock'", (self._id, self._database))
            row = cur.fetchone()
            return int(row[0]) if row else 0
        finally:
            conn.close()

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        try:
            conn.cursor().execute("UNLOCK TABLES")
        except mariadb.Error:
            pass  # the session is gone (the server stopped): so is its lock
        finally:
            conn.close()


class MySQLTableFaults:
    """The table faults of MariaDB; `backend` is a MySQLBackend."""

    def hold_table_lock(self, backend: Any, tables: Sequence[str]) -> MySQLHeldLock:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        conn = backend.connect(backend.database)
        try:
            cur = conn.cursor()
            cur.execute(f"SET SESSION lock_wait_timeout = {_TAKE_LOCK_WITHIN_S}")
            cur.execute("LOCK TABLES " + ", ".join(f"{quote_ident(t)} WRITE" for t in tables))
        except mariadb.Error as exc:
            conn.close()
            raise HdbbenchError(f"cannot lock {', '.join(tables)} in {backend.database}: {exc}") from None
        return MySQLHeldLock(conn, backend.database, lambda: backend.connect(backend.database))

    def lock_wait_limits(self, backend: Any) -> dict[str, str]:
        def read(cur: Any) -> dict[str, str]:
            cur.execute("SELECT " + ", ".join(f"@@GLOBAL.{name}" for name in _LOCK_WAIT_SETTINGS))
            return {name: str(value) for name, value in zip(_LOCK_WAIT_SETTINGS, cur.fetchone())}
        return backend._with_cursor(read)  # type: ignore[no-any-return]

    def move_tables(self, backend: Any, tables: Sequence[str], directory: Path) -> None:
        place = str(directory)
        if "'" in place or "\\" in place:
            raise HdbbenchError(f"cannot place tables in {place}: quotes and backslashes are not allowed in the path")
        self._rebuild_each(backend, tables,
                           lambda ddl: None if _DATA_DIRECTORY.search(ddl) else with_data_directory(ddl, place),
                           f"moving to {place}")

    def restore_tables(self, backend: Any, tables: Sequence[str]) -> None:
        self._rebuild_each(backend, tables,
                           lambda ddl: without_data_directory(ddl) if _DATA_DIRECTORY.search(ddl) else None,
                           "moving back to the data directory")

    def is_disk_full(self, error: BaseException) -> bool:
        return getattr(error, "errno", None) in DISK_FULL_ERRORS

    def _rebuild_each(self, backend: Any, tables: Sequence[str], new_ddl: Callable[[str], str | None],
                      what: str) -> None:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        def rebuild(cur: Any) -> None:
            for table in tables:
                _drop_leftovers(cur, table)  # of a rebuild a crash interrupted
                cur.execute(f"SHOW CREATE TABLE {quote_ident(table)}")
                ddl = new_ddl(str(cur.fetchone()[1]))
                if ddl is not None:
                    _replace_table(cur, table, ddl)

        try:
            backend._with_cursor(rebuild)
        except mariadb.Error as exc:
            raise HdbbenchError(f"{what}: rebuilding {', '.join(tables)} of {backend.database} failed: {exc}") from None


def _replace_table(cur: Any, table: str, ddl: str) -> None:
    """Create `ddl` under a temporary name, copy the rows, swap the names, drop the old table.

    Rows another session commits into the old table while the copy runs are carried over after the
    swap: RENAME waits for the transactions using the old table, and from then on the name is the
    new table's, so the second copy (duplicates of the first one skipped) misses nothing."""
    copy, old = quote_ident(table + _COPY_SUFFIX), quote_ident(table + _OLD_SUFFIX)
    name = quote_ident(table)
    cur.execute(_CREATE_NAME.sub(f"CREATE TABLE {copy}", ddl, count=1))
    cur.execute(f"INSERT INTO {copy} SELECT * FROM {name}")
    cur.connection.commit()
    cur.execute(f"RENAME TABLE {name} TO {old}, {copy} TO {name}")
    cur.execute(f"INSERT IGNORE INTO {name} SELECT * FROM {old}")
    cur.connection.commit()
    cur.execute(f"DROP TABLE {old}")


def _drop_leftovers(cur: Any, table: str) -> None:
    """Undo what an interrupted `_replace_table` left: a copy not swapped in yet is dropped; an old
    table already swapped out hands over the rows the new one lacks first."""
    cur.execute(f"DROP TABLE IF EXISTS {quote_ident(table + _COPY_SUFFIX)}")
    old = table + _OLD_SUFFIX
    cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                (old,))
    if cur.fetchone()[0]:
        cur.execute(f"INSERT IGNORE INTO {quote_ident(table)} SELECT * FROM {quote_ident(old)}")
        cur.connection.commit()
        cur.execute(f"DROP TABLE {quote_ident(old)}")


def with_data_directory(ddl: str, directory: str) -> str:
    """A CREATE TABLE statement (as SHOW CREATE TABLE prints it) that stores the table in `directory`:
    every partition's files there, or the table's when it is not partitioned."""
    clause = f"DATA DIRECTORY = '{directory}'"
    match = _PARTITION_CLAUSE.search(ddl)
    if match is None:
        return f"{ddl.rstrip()} {clause}"
    head, partitions = ddl[:match.start()], ddl[match.start():]
    placed, count = re.subn(r"(\s)ENGINE\s*=", rf"\1{clause} ENGINE =", partitions)
    if count == 0:
        raise HdbbenchError("cannot place the partitions: no ENGINE clause in the partition definitions")
    return head + placed


def without_data_directory(ddl: str) -> str:
    return _DATA_DIRECTORY.sub("", ddl)

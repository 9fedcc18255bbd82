# SPDX-License-Identifier: Apache-2.0
"""What an aged history (hdbbench.parts.aging) needs of the MariaDB layout.

A history lives in a database of its own, marked by a one-row table `hdbbench_history` (its key and
its record). Its data tables are range-partitioned by month on data_time over the whole history,
as the HDB++ MySQL project's partition script leaves them (one partition per month, created ahead),
with a `p000` below and the catch-all `future` above. InnoDB keeps every partition in primary-key
order by itself, so there is no reorder job to play. MariaDB has no database templates: a
measurement that must start again from the same history builds it again (hdbbench.parts.aging.load_order).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timezone
from typing import Any

from hdbbench.backends.mysql.tables import quote_ident
from hdbbench.model.errors import ServerError

MARKER = "hdbbench_history"


def _naive(at: datetime) -> datetime:
    """The server session's time zone is UTC: DATETIME(6) values go naive."""
    return at.astimezone(timezone.utc).replace(tzinfo=None)


def _run(backend: Any, work: Any, database: bool = True) -> Any:
    conn = backend.connect(backend.database if database else None)
    try:
        cur = conn.cursor()
        out = work(cur)
        conn.commit()
        return out
    finally:
        conn.close()


def _data_tables(cur: Any, database: str) -> list[str]:
    cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND "
                "(TABLE_NAME LIKE 'att\\_scalar\\_%' OR TABLE_NAME LIKE 'att\\_array\\_%') ORDER BY 1", (database,))
    return [r[0] for r in cur.fetchall()]


BUILD_POOL_BYTES = 512 << 20  # the buffer pool while a history is built (the memory limit is lifted then)
RESIZE_TIMEOUT_S = 600.0


def _pool_bytes(backend: Any) -> int:
    def work(cur: Any) -> int:
        cur.execute("SELECT @@GLOBAL.innodb_buffer_pool_size")
        return int(cur.fetchone()[0])
    return _run(backend, work, database=False)  # type: ignore[no-any-return]


def _resize_pool(backend: Any, size: int) -> None:
    """SET GLOBAL innodb_buffer_pool_size and wait until the background resize says it completed."""
    def work(cur: Any) -> None:
        cur.execute(f"SET GLOBAL innodb_buffer_pool_size = {int(size)}")
        deadline = time.monotonic() + RESIZE_TIMEOUT_S
        while True:
            cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_resize_status'")
            row = cur.fetchone()
            text = str(row[1]) if row else ""
            if text == "" or text.startswith("Completed"):
                return
            if time.monotonic() > deadline:
                raise ServerError(f"MariaDB: resizing the buffer pool to {size >> 20} MiB did not complete in "
                                  f"{RESIZE_TIMEOUT_S:.0f} s ({text})")
            time.sleep(0.2)
    _run(backend, work, database=False)


def month_bounds(start: datetime, end: datetime) -> list[date]:
    """First days of the months from `start`'s to two months past `end`'s: the upper bounds of the
    monthly partitions that hold the history and the month after it (then `future`)."""
    year, month = start.year, start.month
    stop = (end.year, end.month + 2) if end.month <= 10 else (end.year + 1, end.month - 10)
    out = []
    while (year, month) <= stop:
        out.append(date(year, month, 1))
        year, month = (year, month + 1) if month < 12 else (year + 1, 1)
    return out


class MySQLAgingLayout:
    """The aging layout of MariaDB (hdbbench.backends.abilities.aging.AgingLayout)."""

    clones = False  # MariaDB has no database templates: a copy is built again

    def exists(self, backend: Any) -> bool:
        def work(cur: Any) -> bool:
            cur.execute("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", (backend.database,))
            return cur.fetchone() is not None
        return bool(_run(backend, work, database=False))

    def read_marker(self, backend: Any) -> tuple[str, str] | None:
        """(key, record as JSON) of a finished history, or None (no marker: an interrupted build)."""
        def work(cur: Any) -> tuple[str, str] | None:
            cur.execute("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                        (backend.database, MARKER))
            if cur.fetchone() is None:
                return None
            cur.execute(f"SELECT `key`, record FROM {MARKER}")
            row = cur.fetchone()
            return (row[0], row[1]) if row else None
        return _run(backend, work)  # type: ignore[no-any-return]

    def write_marker(self, backend: Any, key: str, record: str) -> None:
        def work(cur: Any) -> None:
            cur.execute(f"CREATE TABLE IF NOT EXISTS {MARKER} (`key` varchar(64) NOT NULL, record longtext NOT NULL)")
            cur.execute(f"DELETE FROM {MARKER}")
            cur.execute(f"INSERT INTO {MARKER} VALUES (?, ?)", (key, record))
        _run(backend, work)

    @contextmanager
    def building(self, backend: Any) -> Iterator[None]:
        """While a history is built (the server's memory limit lifted, hdbbench.parts.aging.history): the buffer
        pool widened to BUILD_POOL_BYTES, then back to what the server had. InnoDB reads its data with
        O_DIRECT, so with a budget's small pool every time-ordered row of thousands of attributes would be
        a read from the throttled storage; the shrink writes back and withdraws the extra pages, and returns
        their memory, before the budget is set again. Not all of it: the server keeps more memory after a
        build (measured with 8,000 attributes: 209 MiB resident after 8 M rows with a 512 MiB build pool;
        260 MiB after 7.6 M rows with 2 GiB, above a 256 MiB budget), so the build pool is kept small; the
        budget's limit is then set again, or the run stops in one line saying what holds the memory."""
        before = _pool_bytes(backend)
        if before >= BUILD_POOL_BYTES:
            yield
            return
        _resize_pool(backend, BUILD_POOL_BYTES)
        try:
            yield
        finally:
            _resize_pool(backend, before)

    def shape_layout(self, backend: Any, start: datetime, end: datetime) -> None:
        """Every data table range-partitioned by month over the history (the tables are still empty)."""
        bounds = month_bounds(start, end)
        parts = [f"PARTITION p000 VALUES LESS THAN ('{bounds[0]}')"]
        parts += [f"PARTITION p{lo:%Y%m} VALUES LESS THAN ('{hi}')" for lo, hi in zip(bounds, bounds[1:])]
        parts.append("PARTITION future VALUES LESS THAN MAXVALUE")
        clause = "PARTITION BY RANGE COLUMNS(data_time) (" + ", ".join(parts) + ")"

        def work(cur: Any) -> None:
            for table in _data_tables(cur, backend.database):
                cur.execute(f"ALTER TABLE {quote_ident(table)} {clause}")
        _run(backend, work)

    def partition_rows(self, backend: Any, table: str) -> dict[str, int]:
        """Rows per partition of `table`, counted (not the statistics' estimate)."""
        def work(cur: Any) -> dict[str, int]:
            cur.execute("SELECT PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = ? AND "
                        "TABLE_NAME = ? ORDER BY PARTITION_ORDINAL_POSITION", (backend.database, table))
            names = [r[0] for r in cur.fetchall()]
            out = {}
            for name in names:
                cur.execute(f"SELECT COUNT(*) FROM {quote_ident(table)} PARTITION ({quote_ident(name)})")
                out[name] = int(cur.fetchone()[0])
            return out
        return _run(backend, work)  # type: ignore[no-any-return]

    def fast_loader(self, backend: Any) -> Any:
        """The ordinary column loader (LOAD DATA): it has no checks a build could skip."""
        return backend.column_loader()

    def clone(self, backend: Any, target: str) -> None:
        raise ServerError("MariaDB has no database templates: a history's copy is built again (clones is False)")

    def reorder_older(self, backend: Any) -> bool:
        """InnoDB keeps rows in primary-key order by itself: every partition is clustered already."""
        return True

    def delete_after(self, backend: Any, end: datetime) -> int:
        """Remove the rows stamped after `end` (a trial's) and refresh the statistics of those tables."""
        def work(cur: Any) -> int:
            removed = 0
            for table in _data_tables(cur, backend.database):
                cur.execute(f"DELETE FROM {quote_ident(table)} WHERE data_time > ?", (_naive(end),))
                if cur.rowcount:
                    removed += cur.rowcount
                    cur.execute(f"ANALYZE TABLE {quote_ident(table)}")
                    cur.fetchall()
            return removed
        return _run(backend, work)  # type: ignore[no-any-return]

    def drop_copy(self, backend: Any) -> None:
        backend.drop_schema()

    def checksum(self, backend: Any, table: str, after: datetime) -> tuple[int, int]:
        """(rows, a sum over their keys and values) of `table` stamped after `after` (see the PostgreSQL one)."""
        def work(cur: Any) -> tuple[int, int]:
            cur.execute(f"SELECT COUNT(*), COALESCE(SUM(att_conf_id * 1000003 + "
                        f"CAST(UNIX_TIMESTAMP(data_time) * 1000000 AS SIGNED) + COALESCE(CAST(value_r * 1000 AS SIGNED), 0)), 0) "
                        f"FROM {quote_ident(table)} WHERE data_time > ?", (_naive(after),))
            row = cur.fetchone()
            return int(row[0]), int(row[1])
        return _run(backend, work)  # type: ignore[no-any-return]

    def cluster_table(self, backend: Any, table: str) -> float | None:
        """No CLUSTER in InnoDB: the table is its primary-key index."""
        return None

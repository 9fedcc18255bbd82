# SPDX-License-Identifier: Apache-2.0
"""What a subscriber stored, read from outside it (PostgreSQL and TimescaleDB).

Inserted rows: the sum of ``n_tup_ins`` (pg_stat_user_tables) over the data tables and every
relation that inherits from them — TimescaleDB's chunks and native partitions, which are where the
rows land. Resolution: PostgreSQL 15 keeps these counters in shared memory, and a server backend
adds its pending counts at most once a second while it works (PGSTAT_MIN_INTERVAL), after up to
10 s of idleness (PGSTAT_IDLE_INTERVAL) and when its session ends; a transaction that rolled back
counts too. So per-second rates from this counter are exact to about a second, and a total read
after the subscriber disconnected is complete. Rows become visible at commit; the probe reads them
with its own autocommit connection, so every statement sees the latest commits and fresh statistics.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from psycopg import sql

COUNTER = ("pg_stat_user_tables.n_tup_ins of the data tables and their chunks/partitions; flushed by the "
           "writing server process at most once per second while busy, at its session's end, "
           "or after 10 s idle")

_INSERTED = """
WITH RECURSIVE data(oid) AS (
    SELECT c.oid FROM pg_class c
     WHERE c.relkind IN ('r', 'p') AND (c.relname LIKE 'att\\_scalar\\_%' OR c.relname LIKE 'att\\_array\\_%')
    UNION
    SELECT i.inhrelid FROM pg_inherits i JOIN data d ON i.inhparent = d.oid
)
SELECT COALESCE(sum(s.n_tup_ins), 0) FROM pg_stat_user_tables s JOIN data d ON s.relid = d.oid
"""


class PgOutsideReader:
    counter = COUNTER
    resolution_s = 1.0  # PGSTAT_MIN_INTERVAL: a busy server process publishes its counts once a second

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._where: dict[str, tuple[int, str]] = {}  # attribute -> (att_conf_id, data table)

    def rows_inserted(self) -> int:
        row = self.conn.execute(_INSERTED).fetchone()
        return int(row[0]) if row else 0

    def baseline(self) -> int:
        """The counter, or the rows the data tables hold when more: a trial's database is created for it
        and never deleted from, so its rows are the rows inserted, exact also while the writing server
        process has not yet published its counts (the values Tango sends on subscription, stored just
        before a trial's load starts)."""
        return max(self.rows_inserted(), self._rows_present())

    def _rows_present(self) -> int:
        tables = [name for (name,) in self.conn.execute(
            "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p') AND relnamespace = current_schema()::regnamespace"
            " AND (relname LIKE 'att\\_scalar\\_%' OR relname LIKE 'att\\_array\\_%')"
            " AND oid NOT IN (SELECT inhrelid FROM pg_inherits)").fetchall()]  # a parent counts its partitions
        if not tables:
            return 0
        query = sql.SQL(" + ").join(sql.SQL("(SELECT count(*) FROM {})").format(sql.Identifier(t)) for t in tables)
        row = self.conn.execute(sql.SQL("SELECT ") + query).fetchone()
        return int(row[0]) if row else 0

    def event_times_after(self, attribute: str, after: datetime) -> list[datetime]:
        where = self._locate(attribute)
        if where is None:
            return []  # not configured yet: nothing of it can be visible
        att_id, table = where
        query = sql.SQL("SELECT data_time FROM {} WHERE att_conf_id = %s AND data_time > %s ORDER BY data_time"
                        ).format(sql.Identifier(table))
        return [t if t.tzinfo else t.replace(tzinfo=timezone.utc)
                for (t,) in self.conn.execute(query, (att_id, after)).fetchall()]

    def _locate(self, attribute: str) -> tuple[int, str] | None:
        if attribute not in self._where:
            row = self.conn.execute("SELECT att_conf_id, table_name FROM att_conf WHERE att_name = %s",
                                    (attribute,)).fetchone()
            if row is None:
                return None
            self._where[attribute] = (int(row[0]), str(row[1]))
        return self._where[attribute]

    def close(self) -> None:
        self.conn.close()

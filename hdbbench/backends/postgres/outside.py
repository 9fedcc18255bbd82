# SPDX-License-Identifier: Apache-2.0
"""What a subscriber stored, read from outside it (PostgreSQL and TimescaleDB).

Inserted rows: the sum of ``n_tup_ins`` (pg_stat_user_tables) over the data tables and every
relation that inherits from them — TimescaleDB's chunks and native partitions, which are where the
rows land; a relation dropped meanwhile (retention) keeps the count it had, so the sum only grows. Resolution: PostgreSQL 15 keeps these counters in shared memory, and a server backend
adds its pending counts at most once a second while it works (PGSTAT_MIN_INTERVAL), after up to
10 s of idleness (PGSTAT_IDLE_INTERVAL) and when its session ends; a transaction that rolled back
counts too. So per-second rates from this counter are exact to about a second, and a total read
after the subscriber disconnected is complete. Rows become visible at commit; the probe reads them
with its own autocommit connection, so every statement sees the latest commits and fresh statistics.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from psycopg import sql

COUNTER = ("pg_stat_user_tables.n_tup_ins of the data tables and their chunks/partitions; flushed by the "
           "writing server process at most once per second while busy, at its session's end, "
           "or after 10 s idle")

# The data tables and every relation that inherits from them (TimescaleDB's chunks, native partitions).
_DATA_RELATIONS = """
WITH RECURSIVE data(oid) AS (
    SELECT c.oid FROM pg_class c
     WHERE c.relkind IN ('r', 'p') AND (c.relname LIKE 'att\\_scalar\\_%' OR c.relname LIKE 'att\\_array\\_%')
    UNION
    SELECT i.inhrelid FROM pg_inherits i JOIN data d ON i.inhparent = d.oid
)
SELECT array_agg(oid) FROM data
"""
# n_tup_ins of those relations straight from the statistics functions (pg_stat_user_tables is a view
# over every table of the database): cheap enough to read a few dozen times a second.
_INSERTED = "SELECT o, pg_stat_get_tuples_inserted(o) FROM unnest(%s::oid[]) AS o"
# The server's background work that competes with the writers (base.OutsideReader.server_work):
# checkpoints started (counted as each starts; full-page images follow it) and autovacuum or
# autoanalyze runs of the data relations finished. Not buffers_backend: PostgreSQL 15 publishes it
# only when the checkpointer wakes, in lumps at checkpoints, so no step could be told by it.
# PostgreSQL 17 moved the checkpoint counts to pg_stat_checkpointer.
# One statement per sample: the sampler shares this connection with the flush tracker's fast polls.
# It also reads the WAL position (`log_bytes` takes it from there), as _WAL_BYTES does.
_SERVER_WORK = ("SELECT ({checkpoints}), COALESCE(sum(pg_stat_get_autovacuum_count(o)"
                " + pg_stat_get_autoanalyze_count(o)), 0), ({wal}) FROM unnest(%s::oid[]) AS o")
# The WAL written since the cluster began: its insert position as bytes. A standby writes no WAL of its
# own and pg_current_wal_lsn() raises there ("recovery is in progress"): NULL instead, so that the
# statement it shares still answers (CASE evaluates the volatile function only on a primary).
_WAL_BYTES = ("SELECT CASE WHEN pg_is_in_recovery() THEN NULL"
              " ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') END")
_CHECKPOINTS_15 = "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
_CHECKPOINTS_17 = "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
# How recent `server_work`'s read of the WAL position must be for `log_bytes` to answer with it.
SEEN_FRESH_S = 0.5
RELATIONS_REFRESH_S = 1.0  # a chunk or partition created meanwhile counts from the next refresh on
# An attribute not configured yet (its subscriber has not added it) is looked up again after this long.
UNCONFIGURED_LOOKUP_S = 1.0


class PgOutsideReader:
    counter = COUNTER
    resolution_s = 1.0  # PGSTAT_MIN_INTERVAL: a busy server process publishes its counts once a second
    counts_maintenance_writes = False  # inserts into the data relations only

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._where: dict[str, tuple[int, str]] = {}  # attribute -> (att_conf_id, data table)
        self._by_id: dict[int, str] = {}                # att_conf_id -> attribute
        self._query = b""                               # event_times_after's statement for...
        self._query_attributes: list[str] = []          # ...these attributes, in this order
        self._next_lookup = 0.0                         # when to look unconfigured attributes up again
        self._relations: list[int] = []                 # the data relations' oids (rows_inserted)...
        self._relations_until = 0.0                     # ...until this monotonic time
        # Each relation's highest count seen: a chunk or partition dropped (retention) takes its counts
        # with it, and a dropped oid reads 0 until the list is refreshed; the total stays cumulative.
        self._counted: dict[int, int] = {}
        # The WAL position read by the last `server_work` and when, for the `log_bytes` that follows it (once).
        self._wal_seen: tuple[int | None, float] | None = None

    def rows_inserted(self) -> int:
        self._refresh_relations()
        for oid, count in self.conn.execute(_INSERTED, (self._relations,)).fetchall():
            self._counted[oid] = max(self._counted.get(oid, 0), int(count or 0))
        return sum(self._counted.values())

    def _refresh_relations(self) -> None:
        now = time.monotonic()
        if now >= self._relations_until:
            found = self.conn.execute(_DATA_RELATIONS).fetchone()
            self._relations = list(found[0] or []) if found else []
            self._relations_until = now + RELATIONS_REFRESH_S

    def server_work(self) -> dict[str, float]:
        """Checkpoints started and autovacuums of the data relations finished, since the server started."""
        self._refresh_relations()
        checkpoints = _CHECKPOINTS_17 if self.conn.info.server_version >= 170000 else _CHECKPOINTS_15
        row = self.conn.execute(_SERVER_WORK.format(checkpoints=checkpoints, wal=_WAL_BYTES),
                                (self._relations,)).fetchone()
        started, vacuums, wal = row if row else (0, 0, None)
        self._wal_seen = (int(wal) if wal is not None else None, time.monotonic())
        return {"checkpoints": float(started), "autovacuums": float(vacuums)}

    def log_bytes(self) -> int | None:
        """The WAL written since the cluster began (bytes; None on a standby): the position the last
        `server_work` read when it has not been taken yet (the sampler calls the two in turn), else
        read now."""
        seen, self._wal_seen = self._wal_seen, None
        if seen is not None and time.monotonic() - seen[1] < SEEN_FRESH_S:
            return seen[0]
        row = self.conn.execute(_WAL_BYTES).fetchone()
        return int(row[0]) if row and row[0] is not None else None

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

    def event_times_after(self, after: Mapping[str, datetime]) -> dict[str, list[datetime]]:
        """One statement for all the attributes (base.OutsideReader): a UNION ALL of one range scan of
        the (att_conf_id, data_time) primary key per attribute, so a poll that finds nothing costs one
        index probe per attribute and one round trip. Its text changes only when another attribute is
        located, so psycopg prepares it after a few polls and the server no longer parses it."""
        missing = [a for a in after if a not in self._where]
        if missing and time.monotonic() >= self._next_lookup:  # once a second, not at every poll
            self._locate(missing)
            self._next_lookup = time.monotonic() + UNCONFIGURED_LOOKUP_S
        located = [a for a in after if a in self._where]  # the others are not configured yet: nothing visible
        if not located:
            return {}
        if located != self._query_attributes:
            self._query = sql.SQL(" UNION ALL ").join(
                sql.SQL("SELECT att_conf_id, data_time FROM {} WHERE att_conf_id = %s AND data_time > %s"
                        ).format(sql.Identifier(self._where[a][1])) for a in located).as_bytes(self.conn)
            self._query_attributes = located
        params = [p for a in located for p in (self._where[a][0], after[a])]
        found: dict[str, list[datetime]] = {}
        for att_id, t in self.conn.execute(self._query, params).fetchall():
            utc = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
            found.setdefault(self._by_id[att_id], []).append(utc)
        for times in found.values():
            times.sort()
        return found

    def _locate(self, attributes: Sequence[str]) -> None:
        """Look up the att_conf_id and data table of attributes not located yet, in one statement."""
        for name, att_id, table in self.conn.execute(
                "SELECT att_name, att_conf_id, table_name FROM att_conf WHERE att_name = ANY(%s)",
                (list(attributes),)).fetchall():
            self._where[str(name)] = (int(att_id), str(table))
            self._by_id[int(att_id)] = str(name)

    def close(self) -> None:
        self.conn.close()


class PgOutsideFigures:
    """The outside figures of the PostgreSQL family (hdbbench.backends.abilities.outside.OutsideFigures)."""

    def reader(self, backend: Any) -> PgOutsideReader:
        """Inserted rows and visible rows read from outside the subscriber, on a connection of its own."""
        return PgOutsideReader(backend.connect(autocommit=True))

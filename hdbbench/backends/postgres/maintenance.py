# SPDX-License-Identifier: Apache-2.0
"""The maintenance jobs of the PostgreSQL layout and TimescaleDB's (hdbbench.backends.abilities.maintenance).

What each job is, as facilities run them:

* ``reorder``: TimescaleDB: the newest *closed* chunk of each data table that holds rows CLUSTERed on
  its primary key, which is what the official reorder policy does to each chunk once it is closed
  (reorder_chunk is under the Timescale licence, which Debian's Apache-only build lacks; CLUSTER
  leaves the same order and holds a heavier lock, on that chunk only). Plain PostgreSQL has no
  partitions: the whole data table is CLUSTERed, blocking the archiver's inserts while it runs.
* ``retention``: TimescaleDB: the oldest chunk dropped (`drop_chunks`), as the official TTL job does;
  plain PostgreSQL: `DELETE` of the oldest period (one chunk interval of the official schema), to
  show why nobody does it. Neither touches rows stamped after the trial started.
* ``aggregates``: the official five levels materialised as tables (hdbbench.backends.abilities.aggregates).
* ``vacuum_analyze``: `VACUUM (ANALYZE)` of each data table that holds rows.
* ``backup``: `pg_basebackup` of the live server (tar format, WAL streamed, an immediate checkpoint),
  as facilities back up.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from psycopg import sql

from hdbbench.backends.abilities.maintenance import Job, JobContext, JobOutcome, Stopwatch, aggregates_job
from hdbbench.backends.model import SchemaVariant
from hdbbench.backends.postgres.aging import _cluster_leaf, _data_tables
from hdbbench.backends.postgres.tables import WRITER_USER, chunk_days

BACKUP_TIMEOUT_S = 3600


def _tables_with_rows(conn: Any) -> list[str]:
    out = []
    for table in _data_tables():
        if conn.execute("SELECT to_regclass(%s)", (f"public.{table}",)).fetchone()[0] is None:
            continue
        if conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(table))).fetchone()[0]:
            out.append(table)
    return out


def _chunks(conn: Any, table: str) -> list[tuple[str, str, datetime]]:
    """(schema, name, range_end) of the table's chunks, oldest first."""
    return [(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT chunk_schema, chunk_name, range_end FROM timescaledb_information.chunks "
        "WHERE hypertable_name = %s ORDER BY range_end", (table,)).fetchall()]


def _rows(conn: Any, schema: str, name: str) -> int:
    """Counted (a fresh chunk has no statistics to estimate from); not part of the job's time."""
    return int(conn.execute(sql.SQL("SELECT count(*) FROM {}.{}").format(sql.Identifier(schema),
                                                                       sql.Identifier(name))).fetchone()[0])


def reorder(backend: Any, ctx: JobContext) -> JobOutcome:
    done: list[str] = []
    clock = Stopwatch()
    with backend.connect(autocommit=True) as conn:
        now = conn.execute("SELECT now()").fetchone()[0]
        for table in _tables_with_rows(conn):
            if not backend.timescale:
                rows = _rows(conn, "public", table)
                with clock.timing():
                    _cluster_leaf(conn, ("public", table))
                done.append(f"table {table} ({rows:,} rows)")
                continue
            closed = [c for c in _chunks(conn, table) if c[2] <= now]
            if closed:
                schema, name, _ = closed[-1]
                rows = _rows(conn, schema, name)
                with clock.timing():
                    _cluster_leaf(conn, (schema, name))
                done.append(f"{table}'s newest closed chunk {name} ({rows:,} rows)")
    if not done:
        return JobOutcome("nothing to reorder: no closed chunk holds rows", seconds=clock.seconds)
    return JobOutcome("CLUSTER of " + ", ".join(done), seconds=clock.seconds)


def retention(backend: Any, ctx: JobContext) -> JobOutcome:
    done: list[str] = []
    clock = Stopwatch()
    with backend.connect(autocommit=True) as conn:
        for table in _tables_with_rows(conn):
            if backend.timescale:
                chunks = [c for c in _chunks(conn, table) if c[2] <= ctx.protect_after]
                if chunks:
                    schema, name, end = chunks[0]
                    rows = _rows(conn, schema, name)
                    with clock.timing():
                        conn.execute("SELECT drop_chunks(%s::regclass, older_than => %s::timestamptz)", (table, end))
                    done.append(f"dropped {table}'s oldest chunk {name} ({rows:,} rows)")
                continue
            oldest = conn.execute(sql.SQL("SELECT min(data_time) FROM {}").format(sql.Identifier(table))).fetchone()[0]
            # A plain table's "oldest period" is one chunk interval of the official schema.
            period = timedelta(days=chunk_days(table, SchemaVariant.parse("pk")))
            until = min(oldest + period, ctx.protect_after)
            with clock.timing():
                cur = conn.execute(sql.SQL("DELETE FROM {} WHERE data_time < %s").format(sql.Identifier(table)),
                                   (until,))
            if cur.rowcount:
                done.append(f"deleted {cur.rowcount:,} rows of {table} before {until:%Y-%m-%d %H:%M}")
    return JobOutcome("; ".join(done) if done else "nothing older than the trial to remove", seconds=clock.seconds)


def vacuum_analyze_tables(conn: Any) -> list[str]:
    """VACUUM (ANALYZE) of each data table that holds rows (`conn` in autocommit); the tables."""
    tables = _tables_with_rows(conn)
    for table in tables:
        conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(table)))
    return tables


def vacuum_analyze(backend: Any, ctx: JobContext) -> JobOutcome:
    with backend.connect(autocommit=True) as conn:
        tables = vacuum_analyze_tables(conn)
    return JobOutcome("VACUUM (ANALYZE) of " + ", ".join(tables) if tables else "no table holds rows")


def backup(backend: Any, ctx: JobContext) -> JobOutcome:
    """The whole server (pg_basebackup copies every database) into ctx.backup_dir, tar format."""
    endpoint = ctx.endpoint
    # --checkpoint=fast: the default (spread) waits out a paced checkpoint, minutes of doing nothing.
    command = ["pg_basebackup", "-D", str(ctx.backup_dir), "-F", "tar", "-X", "stream", "--checkpoint=fast", "--no-sync",
               "-h", endpoint.host, "-p", str(endpoint.port), "-U", endpoint.user, "-w"]
    done = subprocess.run(command, env={**os.environ, "PGPASSWORD": endpoint.password}, capture_output=True,
                          text=True, timeout=BACKUP_TIMEOUT_S, check=False)
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if "error" in ln.lower() or "fatal" in ln.lower()] or lines
        raise RuntimeError(f"pg_basebackup exited with {done.returncode}: {errors[0] if errors else 'no message'}")
    written = _bytes_under(ctx.backup_dir)
    return JobOutcome(f"pg_basebackup of the server, {written / 2**20:,.0f} MiB (tar, WAL streamed)", bytes=written)


def _bytes_under(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


class PgMaintenance:
    """The maintenance jobs of the PostgreSQL family (hdbbench.backends.abilities.maintenance.MaintenanceJobs)."""

    def jobs(self) -> dict[str, Job]:
        return {"reorder": reorder, "retention": retention, "aggregates": aggregates_job,
                "vacuum_analyze": vacuum_analyze, "backup": backup}

    def lock_waiters(self, backend: Any) -> int:
        """Sessions of the event subscriber's account waiting on a heavyweight lock now."""
        with backend.connect(autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND usename = %s "
                               "AND wait_event_type = 'Lock'", (backend.database, WRITER_USER)).fetchone()
        return int(row[0]) if row else 0

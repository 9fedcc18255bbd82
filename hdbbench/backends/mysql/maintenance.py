# SPDX-License-Identifier: Apache-2.0
"""The maintenance jobs of the MariaDB layout (hdbbench.backends.abilities.maintenance), as MySQL facilities run them.

* ``retention``: the oldest monthly partition that holds rows dropped (`ALTER TABLE … DROP PARTITION`),
  as the HDB++ MySQL project's partition script and ALBA do, since deleting rows is too heavy; only
  partitions that end before the trial started.
* ``partition_rotation``: next month's partition added by reorganising the catch-all `future` into it
  and a new `future` (`REORGANIZE PARTITION`), as the partition script does ahead of each month.
* ``aggregates``: the official five levels materialised as tables (hdbbench.backends.abilities.aggregates).
* ``optimize``: `OPTIMIZE TABLE` of each data table that holds rows (InnoDB: recreate and analyze).
* ``backup``: `mariadb-backup --backup` of the live server (a physical copy of the data directory).

InnoDB keeps every table in primary-key order by itself: there is no reorder job.
"""

from __future__ import annotations

import subprocess
from datetime import date, timezone
from pathlib import Path
from typing import Any

from hdbbench.backends.abilities.maintenance import Job, JobContext, JobOutcome, Stopwatch, aggregates_job
from hdbbench.backends.mysql.aging import _data_tables, _run
from hdbbench.backends.mysql.tables import RW_USER, quote_ident

BACKUP_TIMEOUT_S = 3600


def _with_rows(cur: Any, database: str) -> list[str]:
    out = []
    for table in _data_tables(cur, database):
        cur.execute(f"SELECT EXISTS (SELECT 1 FROM {quote_ident(table)})")
        if cur.fetchone()[0]:
            out.append(table)
    return out


def _partitions(cur: Any, database: str, table: str) -> list[tuple[str, str]]:
    """(name, upper bound as written: a quoted date or MAXVALUE) in order; [] when not partitioned."""
    cur.execute("SELECT PARTITION_NAME, PARTITION_DESCRIPTION FROM information_schema.PARTITIONS WHERE "
                "TABLE_SCHEMA = ? AND TABLE_NAME = ? AND PARTITION_NAME IS NOT NULL "
                "ORDER BY PARTITION_ORDINAL_POSITION", (database, table))
    return [(r[0], str(r[1])) for r in cur.fetchall()]


def _bound(description: str) -> date | None:
    text = description.strip("'\"")
    return None if text.upper() == "MAXVALUE" else date.fromisoformat(text[:10])


def retention(backend: Any, ctx: JobContext) -> JobOutcome:
    keep = ctx.protect_after.astimezone(timezone.utc).date()
    clock = Stopwatch()

    def work(cur: Any) -> list[str]:
        done = []
        for table in _with_rows(cur, backend.database):
            for name, description in _partitions(cur, backend.database, table):
                bound = _bound(description)
                if bound is None or bound > keep:
                    break
                cur.execute(f"SELECT COUNT(*) FROM {quote_ident(table)} PARTITION ({quote_ident(name)})")
                rows = int(cur.fetchone()[0])
                if rows:
                    with clock.timing():
                        cur.execute(f"ALTER TABLE {quote_ident(table)} DROP PARTITION {quote_ident(name)}")
                    done.append(f"dropped {table}'s oldest partition {name} ({rows:,} rows)")
                    break
        return done
    done = _run(backend, work)
    return JobOutcome("; ".join(done) if done else "no partition older than the trial holds rows", seconds=clock.seconds)


def partition_rotation(backend: Any, ctx: JobContext) -> JobOutcome:
    def work(cur: Any) -> list[str]:
        done = []
        for table in _data_tables(cur, backend.database):
            parts = _partitions(cur, backend.database, table)
            bounds = [b for b in (_bound(d) for _, d in parts) if b is not None]
            if not parts or _bound(parts[-1][1]) is not None or not bounds:
                continue  # not partitioned, or no catch-all to split
            low = bounds[-1]
            high = date(low.year + (low.month == 12), low.month % 12 + 1, 1)
            name = f"p{low:%Y%m}"
            cur.execute(f"ALTER TABLE {quote_ident(table)} REORGANIZE PARTITION {quote_ident(parts[-1][0])} INTO "
                        f"(PARTITION {quote_ident(name)} VALUES LESS THAN ('{high}'), "
                        f"PARTITION {quote_ident(parts[-1][0])} VALUES LESS THAN MAXVALUE)")
            done.append(table)
        return done
    done = _run(backend, work)
    if not done:
        return JobOutcome("no table is partitioned with a catch-all partition: nothing to rotate")
    return JobOutcome(f"the next month's partition added to {len(done)} tables by REORGANIZE PARTITION of the catch-all")


def optimize(backend: Any, ctx: JobContext) -> JobOutcome:
    def work(cur: Any) -> list[str]:
        tables = _with_rows(cur, backend.database)
        for table in tables:
            cur.execute(f"OPTIMIZE TABLE {quote_ident(table)}")
            for row in cur.fetchall():  # (table, op, msg_type, text): an error comes back as a row
                if str(row[2]).lower() == "error":
                    raise RuntimeError(f"OPTIMIZE TABLE {table}: {row[3]}")
        return tables
    tables = _run(backend, work)
    return JobOutcome("OPTIMIZE TABLE (recreate + analyze) of " + ", ".join(tables) if tables else "no table holds rows")


def backup(backend: Any, ctx: JobContext) -> JobOutcome:
    """A physical backup of the whole server into ctx.backup_dir (mariadb-backup reads the data
    directory's files itself: the server must be on this machine)."""
    endpoint = ctx.endpoint
    datadir = _run(backend, lambda cur: (cur.execute("SELECT @@datadir"), cur.fetchone()[0])[1], database=False)
    command = ["mariadb-backup", "--backup", f"--target-dir={ctx.backup_dir}", f"--datadir={datadir}",
               f"--host={endpoint.host}", f"--port={endpoint.port}", f"--user={endpoint.user}",
               f"--password={endpoint.password}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=BACKUP_TIMEOUT_S, check=False)
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if "error" in ln.lower()] or lines
        raise RuntimeError(f"mariadb-backup exited with {done.returncode}: {errors[0] if errors else 'no message'}")
    written = _bytes_under(ctx.backup_dir)
    return JobOutcome(f"mariadb-backup of the server, {written / 2**20:,.0f} MiB", bytes=written)


def _bytes_under(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


class MySQLMaintenance:
    """The maintenance jobs of MariaDB (hdbbench.backends.abilities.maintenance.MaintenanceJobs)."""

    def jobs(self) -> dict[str, Job]:
        return {"retention": retention, "partition_rotation": partition_rotation, "aggregates": aggregates_job,
                "optimize": optimize, "backup": backup}

    def lock_waiters(self, backend: Any) -> int:
        """Sessions of the event subscriber's account waiting on a metadata or row lock now."""
        def work(cur: Any) -> int:
            cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST p WHERE p.USER = ? AND p.DB = ? AND "
                        "(p.STATE LIKE 'Waiting for%lock%' OR p.ID IN (SELECT trx_mysql_thread_id FROM "
                        "information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'))", (RW_USER, backend.database))
            return int(cur.fetchone()[0])
        return _run(backend, work, database=False)  # type: ignore[no-any-return]

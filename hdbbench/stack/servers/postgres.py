# SPDX-License-Identifier: Apache-2.0
"""A private PostgreSQL 15 server with TimescaleDB preloaded.

TCP on its one address only (loopback by default; no Unix socket: its path length limit and a socket
directory are not worth it), password authentication (scram-sha-256) for the superuser ``hdbbench``.
On an address of the benchmarking range, clients of that range are let in (pg_hba.conf) too.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path
from typing import Any

from hdbbench.stack.servers import homes, process
from hdbbench.stack.servers.base import PrivateServer
from hdbbench.stack.servers.endpoints import PostgresEndpoint
from hdbbench.stack.servers.ports import BENCHMARK_NETWORK, LOOPBACK

PG_BINDIR = Path(os.environ.get("HDBBENCH_PG_BINDIR", "/usr/lib/postgresql/15/bin"))
SUPERUSER = "hdbbench"

# Autovacuum as a facility's live table meets it (shared with the Patroni members, hdbbench.stack.servers.patroni).
AUTOVACUUM = {
    # Each database is looked at every second rather than every minute (the default). A facility's
    # live table is always in its insert-triggered vacuum cycle (every 20 % of growth, vacuum work in
    # proportion to the rows written); a table created seconds before a trial met its first vacuum
    # only after up to a minute, and a saturation search then measured two limits: about 87k events/s
    # before it and 62k after it on TimescaleDB (measured 2026-11-27, docs/default-run-time.md).
    "autovacuum_naptime": "1s",
    # ...but autoanalyze only after a million rows (plus the default 10 % of the table): it samples
    # 30,000 rows whatever the table's size, which on a facility's table (billions of rows) costs
    # nothing per row and on a trial's 100,000-row table, analysed every second, about 15 µs of CPU
    # per stored event (measured here). Loads are analysed when they end (refresh_statistics).
    "autovacuum_analyze_threshold": "1000000",
}

# The settings of each profile (hdbbench.stack.settings): memory sizes fit a 2-core, 24 GiB machine running
# both database servers, the devices and the subscribers at once.
_COMMON = {
    "shared_buffers": "2GB",
    "effective_cache_size": "8GB",
    "work_mem": "64MB",
    "maintenance_work_mem": "1GB",
    # Modest: a large max_wal_size filled 4 GB of WAL during a 3 M-row load on such a machine.
    "max_wal_size": "1GB",
    "min_wal_size": "256MB",
    "checkpoint_timeout": "10min",
    **AUTOVACUUM,
    "max_connections": "200",
    "timezone": "UTC",
    "log_timezone": "UTC",
    "timescaledb.telemetry_level": "off",
    "timescaledb.max_background_workers": "4",
    "max_worker_processes": "16",
    "jit": "off",
}
PROFILES = {
    "durable": {**_COMMON, "fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"},
    # Elettra reported 3x with TimescaleDB from synchronous_commit=off.
    "relaxed": {**_COMMON, "fsync": "on", "synchronous_commit": "off", "full_page_writes": "on"},
}
MEMORY_RULE = ("shared_buffers 25 % of the budget (the PostgreSQL manual's starting point), "
               "effective_cache_size 75 % (shared buffers and the page cache, both charged to the budget), "
               "work_mem budget/64 and maintenance_work_mem budget/8, each at most the profile's")


def buffers_for(budget: int) -> dict[str, str]:
    """PostgreSQL's memory settings under a budget of `budget` bytes (MEMORY_RULE), in kB."""
    kib = budget // 1024
    return {
        "shared_buffers": f"{kib // 4}kB",
        "effective_cache_size": f"{kib * 3 // 4}kB",
        "work_mem": f"{min(kib // 64, 64 * 1024)}kB",
        "maintenance_work_mem": f"{min(kib // 8, 1024 * 1024)}kB",
    }


# Where setup.sh records the TimescaleDB version it built (a fact of the results' environment).


def pg_binary(name: str) -> str:
    candidate = PG_BINDIR / name
    return str(candidate) if candidate.exists() else (shutil.which(name) or str(candidate))


class PostgresServer(PrivateServer):
    name = "postgres"
    preferred_port = 25432
    account = "postgres"
    stop_signal = signal.SIGINT  # "fast" shutdown: roll back open transactions, checkpoint, exit

    def initialise(self, meta: dict[str, Any]) -> None:
        data = self.prepare_data_dir()
        if (data / "PG_VERSION").exists():
            self._admit_benchmark_network(data)
            return
        pwfile = data.parent / "initdb.pw"  # where initdb, run as the server's account, can read it
        homes.write_file(pwfile, meta["password"] + "\n", 0o600, *self._ids())
        try:
            process.run_checked(
                [pg_binary("initdb"), "-D", str(data), "-U", SUPERUSER, f"--pwfile={pwfile}",
                 "--auth-host=scram-sha-256", "--auth-local=peer", "--encoding=UTF8", "--locale=C",
                 "--no-instructions"],
                what="PostgreSQL initdb", log_path=self.dir / "initdb.log", run_as=self.run_as, cwd=self.work_dir(),
                cgroup_procs=self.cgroup_procs,
            )
        finally:
            pwfile.unlink(missing_ok=True)
        self._admit_benchmark_network(data)

    def _admit_benchmark_network(self, data: Path) -> None:
        """Clients on the other hosts of the benchmarking range may log in (with the password)."""
        if self.address == LOOPBACK:
            return
        hba = data / "pg_hba.conf"
        line = f"host all all {BENCHMARK_NETWORK} scram-sha-256"
        text = hba.read_text()
        if line not in text:
            hba.write_text(text.rstrip("\n") + "\n" + line + "\n")  # the file keeps its owner

    def command(self, port: int) -> list[str]:
        argv = [pg_binary("postgres"), "-D", str(self.data_dir),
                "-c", f"listen_addresses={self.address}", "-c", f"port={port}",
                "-c", "unix_socket_directories=", "-c", "shared_preload_libraries=timescaledb"]
        for key, value in self.settings.items():
            argv += ["-c", f"{key}={value}"]
        return argv

    def endpoint(self, port: int, meta: dict[str, Any]) -> PostgresEndpoint:
        return PostgresEndpoint(host=self.address, port=port, user=SUPERUSER, password=meta["password"])

    def is_ready(self, port: int, meta: dict[str, Any]) -> bool:
        # deferred: the PostgreSQL driver loads only where a PostgreSQL server is used
        import psycopg

        try:
            with self.endpoint(port, meta).connect(connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def version(self, port: int, meta: dict[str, Any]) -> str | None:
        with self.endpoint(port, meta).connect() as conn:
            server = conn.execute("SHOW server_version").fetchone()
            ts = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'timescaledb'"
            ).fetchone()
        return f"PostgreSQL {server[0] if server else '?'}; TimescaleDB {ts[0] if ts else 'not installed'}"


def probe(endpoint: PostgresEndpoint) -> None:
    """Raise (the driver's own message) unless an external server accepts this endpoint's login."""
    endpoint.connect(connect_timeout=5).close()


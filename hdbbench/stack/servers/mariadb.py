# SPDX-License-Identifier: Apache-2.0
"""A private MariaDB 10.11 server.

The option file must be mariadbd's first argument (``--defaults-file``), or /etc/mysql is read too.
TCP on its one address (loopback by default) for clients; a Unix socket only for the one-time creation of the ``hdbbench``
account (root authenticates over the socket with the password set at that moment).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError
from hdbbench.stack.servers import homes, process
from hdbbench.stack.servers.base import PrivateServer
from hdbbench.stack.servers.endpoints import MariaDBEndpoint
from hdbbench.stack.servers.ports import BENCHMARK_NETWORK, LOOPBACK

ADMIN_USER = "hdbbench"

# The settings of each profile (hdbbench.stack.settings): durable flushes InnoDB's log at every commit and
# keeps the doublewrite buffer; relaxed is the tuning Elettra reported as 5x.
_COMMON = {
    "innodb_buffer_pool_size": "4G",
    # MariaDB 10.11's default. InnoDB flushes no page until its redo log is about 3/4 full (seen here:
    # from 380 MB of a 512M log, 2 M rows into a search); with 96M a trial's server is in the state of
    # a facility's loaded one, its page cleaner at work, 20 to 40 s into a search (docs/stack.md).
    "innodb_log_file_size": "96M",
    "innodb_file_per_table": "1",
    "max_allowed_packet": "256M",
    "max_connections": "200",
    "default_time_zone": "+00:00",
    "character_set_server": "utf8mb4",
    "skip_name_resolve": "1",
    "local_infile": "1",
}
PROFILES = {
    "durable": {**_COMMON, "innodb_flush_log_at_trx_commit": "1", "innodb_doublewrite": "1"},
    "relaxed": {**_COMMON, "innodb_flush_log_at_trx_commit": "2", "innodb_doublewrite": "0"},
}
# Measured here (MariaDB 10.11, relaxed profile, 2026-11-25): loading history with a 128 MiB pool the
# server's own anonymous memory was 233-245 MiB, so ≈ 110 MiB besides the pool (key and Aria caches,
# log buffer, table caches of ~60 partitioned tables, connections); a 256 MiB budget with half of it
# for the pool was killed by the OOM killer. The pool gets half of what is left once that is set aside.
SERVER_OWN_MIB = 128
MIN_BUDGET_MIB = 192
MEMORY_RULE = ("innodb_buffer_pool_size half of the budget less 128 MiB for the server itself (measured: "
               "≈ 110 MiB besides the pool while loading; InnoDB reads its data with O_DIRECT, so the pool is its "
               "cache), key_buffer_size and aria_pagecache_buffer_size budget/32; at least 192 MiB")


def buffers_for(budget: int) -> dict[str, str]:
    """MariaDB's memory settings under a budget of `budget` bytes (MEMORY_RULE), in whole MiB;
    ConfigError below the least budget it runs in."""
    mib = budget >> 20
    if mib < MIN_BUDGET_MIB:
        raise ConfigError(f"MariaDB needs a memory budget of at least {MIN_BUDGET_MIB} MiB (it takes ≈ 110 MiB "
                          f"besides its buffer pool), got {mib} MiB")
    small = f"{max(8, min(mib // 32, 128))}M"
    return {"innodb_buffer_pool_size": f"{(mib - SERVER_OWN_MIB) // 2}M", "key_buffer_size": small,
            "aria_pagecache_buffer_size": small}


_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes


def _binary(name: str, fallback: str) -> str:
    return shutil.which(name) or fallback


class MariaDBServer(PrivateServer):
    name = "mariadb"
    preferred_port = 23306
    account = "mysql"

    @property
    def socket_path(self) -> Path:
        path = self.data_dir / "mariadbd.sock"  # in the directory the server's account owns
        if len(str(path)) <= _SOCKET_PATH_MAX:
            return path
        # A deep state directory: the server's home (made in command()) has a short path.
        return homes.home_path(self.state_dir, self.name) / "mariadbd.sock"

    def initialise(self, meta: dict[str, Any]) -> None:
        data = self.prepare_data_dir()
        if (data / "mysql").is_dir():
            return
        meta.pop("admin_created", None)  # a new data directory has no accounts yet
        user = self.run_as.name if self.run_as else None
        argv = [_binary("mariadb-install-db", "/usr/bin/mariadb-install-db"), "--no-defaults",
                f"--datadir={data}", "--skip-test-db", "--auth-root-authentication-method=normal",
                # Its own temporary directory: bootstrap temporary tables in a shared /tmp were seen to
                # vanish under concurrent work ("Unknown table 'mysql.tmp_user_sys'").
                f"--tmpdir={data.parent}"]
        if user:
            argv.append(f"--user={user}")
        process.run_checked(argv, what="mariadb-install-db", log_path=self.dir / "install-db.log",
                            run_as=self.run_as, cwd=self.work_dir(), cgroup_procs=self.cgroup_procs)

    def _write_option_file(self, port: int) -> Path:
        options = {
            "datadir": str(self.data_dir),
            "socket": str(self.socket_path),
            "pid-file": str(self.data_dir / "mariadbd.pid"),
            "port": str(port),
            "bind-address": self.address,
            **({"user": self.run_as.name} if self.run_as else {}),
            **{key.replace("_", "-"): value for key, value in self.settings.items()},
        }
        cnf = self.data_dir.parent / "my.cnf"  # where mariadbd, run as the server's account, can read it
        # 0644: mariadbd refuses world-writable option files; it holds no password.
        homes.write_file(cnf, "[mariadbd]\n" + "".join(f"{k}={v}\n" for k, v in options.items()), 0o644)
        return cnf

    def command(self, port: int) -> list[str]:
        if self.socket_path.parent != self.data_dir:
            homes.make_home(self.state_dir, self.name, *self._ids())
        cnf = self._write_option_file(port)
        return [_binary("mariadbd", "/usr/sbin/mariadbd"), f"--defaults-file={cnf}"]

    def endpoint(self, port: int, meta: dict[str, Any]) -> MariaDBEndpoint:
        return MariaDBEndpoint(host=self.address, port=port, user=ADMIN_USER, password=meta["password"])

    def _socket_ready(self) -> bool:
        return self.socket_path.exists()

    def is_ready(self, port: int, meta: dict[str, Any]) -> bool:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        if meta.get("admin_created") and self._grants_current(meta):
            try:
                self.endpoint(port, meta).connect(connect_timeout=2).close()
                return True
            except mariadb.Error:
                return False
        return self._socket_ready()

    def after_start(self, port: int, meta: dict[str, Any]) -> None:
        """Create the admin account once; root then needs the same password on the socket."""
        if meta.get("admin_created") and self._grants_current(meta) and self.is_ready(port, meta):
            return  # (a data directory first served on another address gets its grants renewed)
        granted = list(self._client_hosts())
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        password = meta["password"]
        # DDL takes no placeholders; the password is ours (token_urlsafe), so it is safe to inline.
        if not password.replace("-", "").replace("_", "").isalnum():
            raise ValueError("generated password has unexpected characters")
        try:
            conn = mariadb.connect(unix_socket=str(self.socket_path), user="root", password=password)
        except mariadb.Error:
            conn = mariadb.connect(unix_socket=str(self.socket_path), user="root", password="")
        cur = conn.cursor()
        for host in self._client_hosts():
            cur.execute(f"CREATE USER IF NOT EXISTS '{ADMIN_USER}'@'{host}' IDENTIFIED BY '{password}'")
            cur.execute(f"ALTER USER '{ADMIN_USER}'@'{host}' IDENTIFIED BY '{password}'")
            cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{ADMIN_USER}'@'{host}' WITH GRANT OPTION")
        cur.execute(f"ALTER USER 'root'@'localhost' IDENTIFIED BY '{password}'")
        conn.commit()
        conn.close()
        meta["admin_created"] = True
        meta["granted_hosts"] = granted

    def _grants_current(self, meta: dict[str, Any]) -> bool:
        granted = list(self._client_hosts())
        return meta.get("granted_hosts", granted) == granted

    def _client_hosts(self) -> tuple[str, ...]:
        """Where the admin account may log in from: this host, and the benchmarking range when the
        server listens there (clients on the other hosts)."""
        hosts = (LOOPBACK, "localhost")
        if self.address == LOOPBACK:
            return hosts
        return (*hosts, self.address, f"{BENCHMARK_NETWORK.network_address}/{BENCHMARK_NETWORK.netmask}")

    def version(self, port: int, meta: dict[str, Any]) -> str | None:
        conn = self.endpoint(port, meta).connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT VERSION()")
            row = cur.fetchone()
            return f"MariaDB {row[0]}" if row else None
        finally:
            conn.close()


def probe(endpoint: MariaDBEndpoint) -> None:
    """Raise (the driver's own message) unless an external server accepts this endpoint's login."""
    endpoint.connect().close()

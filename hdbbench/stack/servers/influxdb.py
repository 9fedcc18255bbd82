# SPDX-License-Identifier: Apache-2.0
"""A private InfluxDB 1.6 server (Debian's `influxdb`), for the what-if backend `influxdb`.

`influxd -config FILE` with a configuration file of its own, written at every start beside its data
(``influxdb.conf`` in the server's home when it runs as the ``influxdb`` account, else in
``<state>/influxdb/``): the HTTP API on its one address and port, the RPC service of backups and
restores (``bind-address``, on all interfaces at 8088 by default) on the same address and a second
free port, meta, data and WAL directories in its data directory, usage reporting off, and the
``_internal`` monitor store on, whose ``write`` measurement counts the points written (the outside
counter of hdbbench.backends.influxdb.outside). Every other listener of the package (graphite,
collectd, opentsdb, udp, ifql) is off.

HTTP authentication is on: the first start creates the administrator ``hdbbench`` (InfluxDB lets the
first user be created without credentials while it has none), and every later request names it.
`/ping` needs no credentials: readiness is a 204 there.

Settings (the profiles, ``--set influxdb.<key>=<value>``) are keys of the ``[data]`` section:
durable writes fsync the WAL at every write (``wal-fsync-delay = "0s"``, the default), relaxed
gathers 100 ms of writes into one fsync. Under a memory budget the in-memory write cache shrinks
(MEMORY_RULE); the inmem index and the page cache of its TSM files (mmap) are the rest of its memory.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.stack.servers import homes
from hdbbench.stack.servers.base import PrivateServer
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint
from hdbbench.stack.servers.ports import pick_free_port, port_is_free

ADMIN_USER = "hdbbench"
PACKAGE = "influxdb"  # Debian's package of influxd 1.6
BINARY = "influxd"
FALLBACK_BINARY = Path("/usr/bin/influxd")
RPC_PREFERRED_PORT = 28088

_COMMON = {
    "index-version": "inmem",              # 1.6's default; tsi1 is the alternative for high cardinality
    "cache-max-memory-size": "1073741824",  # the write cache: writes are refused beyond it
    "cache-snapshot-memory-size": "26214400",
    "max-series-per-database": "1000000",
    "max-values-per-tag": "100000",
    "query-log-enabled": "false",           # the log would hold every extraction query
    # A shard's write cache goes to a TSM file 2 s after its last write (default 10 min): a measured
    # database's events are then in TSM files, as a facility's older data is, when they are sized.
    "cache-snapshot-write-cold-duration": "2s",
}
PROFILES = {
    "durable": {**_COMMON, "wal-fsync-delay": "0s"},
    "relaxed": {**_COMMON, "wal-fsync-delay": "100ms"},
}
MIN_BUDGET_MIB = 128
MEMORY_RULE = ("cache-max-memory-size a quarter of the budget and cache-snapshot-memory-size budget/32 (at "
               "most 25 MiB, the default): the write cache; the inmem index and the TSM files' page cache (mmap) "
               "take the rest; at least 128 MiB")


def buffers_for(budget: int) -> dict[str, str]:
    """InfluxDB's memory settings under a budget of `budget` bytes (MEMORY_RULE), in bytes."""
    if budget >> 20 < MIN_BUDGET_MIB:
        raise ConfigError(f"InfluxDB needs a memory budget of at least {MIN_BUDGET_MIB} MiB, got {budget >> 20} MiB")
    return {"cache-max-memory-size": str(budget // 4),
            "cache-snapshot-memory-size": str(min(budget // 32, 25 * 1024 * 1024))}


def _toml_value(value: str) -> str:
    """A setting as TOML: numbers and booleans bare, anything else a quoted string."""
    if value.isdigit() or value in ("true", "false"):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class InfluxDBServer(PrivateServer):
    name = "influxdb"
    preferred_port = 28086
    account = "influxdb"  # Debian's package creates it; influxd runs as root too, but need not
    ready_timeout_s = 60.0
    _rpc_port: int | None = None  # chosen by command(), recorded by after_start()

    @staticmethod
    def binary() -> str:
        found = shutil.which(BINARY) or (str(FALLBACK_BINARY) if FALLBACK_BINARY.exists() else None)
        if found is None:
            raise ServerError(f"influxd not found: install Debian's package `{PACKAGE}` (scripts/setup.sh)")
        return found

    def initialise(self, meta: dict[str, Any]) -> None:
        self.binary()
        data = self.prepare_data_dir()
        if not (data / "meta").is_dir():
            meta.pop("admin_created", None)  # a new data directory has no users yet
        for sub in ("meta", "data", "wal"):
            path = data / sub
            if not path.exists():
                path.mkdir(mode=0o700)
                uid, gid = self._ids()
                if (uid, gid) != (os.geteuid(), os.getegid()):
                    os.chown(path, uid, gid)

    def config_text(self, port: int, rpc_port: int) -> str:
        data = self.data_dir
        settings = {"dir": str(data / "data"), "wal-dir": str(data / "wal"), **self.settings}
        lines = [
            "reporting-disabled = true",
            f'bind-address = "{self.address}:{rpc_port}"',
            "[meta]", f'  dir = "{data / "meta"}"', "  retention-autocreate = true", "  logging-enabled = false",
            "[data]", *(f"  {key} = {_toml_value(value)}" for key, value in settings.items()),
            "[monitor]", "  store-enabled = true", '  store-database = "_internal"', '  store-interval = "10s"',
            "[http]", "  enabled = true", f'  bind-address = "{self.address}:{port}"', "  auth-enabled = true",
            "  log-enabled = false", "  pprof-enabled = false", "  unix-socket-enabled = false",
            "  max-body-size = 0",  # a batch of large arrays must not be cut off at 25 MB
            "[continuous_queries]", "  enabled = false",
            "[subscriber]", "  enabled = false",
            "[[graphite]]", "  enabled = false", "[[collectd]]", "  enabled = false",
            "[[opentsdb]]", "  enabled = false", "[[udp]]", "  enabled = false",
            "[ifql]", "  enabled = false",
            "[logging]", "  level = \"warn\"", "  suppress-logo = true",
        ]
        return "\n".join(lines) + "\n"

    @property
    def config_path(self) -> Path:
        return self.data_dir.parent / "influxdb.conf"  # where influxd, run as its account, can read it

    def command(self, port: int) -> list[str]:
        meta = self.meta()
        rpc_port = int(meta.get("rpc_port", 0))
        if not rpc_port or rpc_port == port or not port_is_free(rpc_port, self.address):
            rpc_port = pick_free_port(RPC_PREFERRED_PORT, avoid={port}, host=self.address)
        self._rpc_port = rpc_port
        homes.write_file(self.config_path, self.config_text(port, rpc_port), 0o644)  # no password in it
        return [self.binary(), "-config", str(self.config_path)]

    def endpoint(self, port: int, meta: dict[str, Any]) -> InfluxDBEndpoint:
        return InfluxDBEndpoint(host=self.address, port=port, user=ADMIN_USER, password=meta["password"])

    def is_ready(self, port: int, meta: dict[str, Any]) -> bool:
        try:
            status, _, _ = self.endpoint(port, meta).request("GET", "/ping", timeout_s=2)
        except OSError:
            return False
        return status == 204

    def after_start(self, port: int, meta: dict[str, Any]) -> None:
        """Create the administrator once (allowed without credentials while there is no user)."""
        meta["rpc_port"] = self._rpc_port or meta.get("rpc_port")
        endpoint = self.endpoint(port, meta)
        if meta.get("admin_created") and _query(endpoint, "SHOW DATABASES")[0] == 200:
            return
        password = meta["password"]
        if not password.replace("-", "").replace("_", "").isalnum():
            raise ValueError("generated password has unexpected characters")
        status, body = _query(endpoint, f"CREATE USER {ADMIN_USER} WITH PASSWORD '{password}' WITH ALL PRIVILEGES")
        if status != 200:
            raise ServerError(f"influxdb: creating the administrator failed ({status}: {body[:200]!r})")
        meta["admin_created"] = True

    def version(self, port: int, meta: dict[str, Any]) -> str | None:
        _, headers, _ = self.endpoint(port, meta).request("GET", "/ping", timeout_s=5)
        found = {k.lower(): v for k, v in headers.items()}.get("x-influxdb-version")
        return f"InfluxDB {found}" if found else None


def _query(endpoint: InfluxDBEndpoint, text: str) -> tuple[int, bytes]:
    """POST one InfluxQL statement; a fresh server may need a moment before its meta store answers."""
    for attempt in range(20):
        status, _, body = endpoint.request("POST", "/query", {"q": text}, timeout_s=10)
        if status != 503 or attempt == 19:
            return status, body
        time.sleep(0.1)
    return status, body


def probe(endpoint: InfluxDBEndpoint) -> None:
    """Raise (InfluxDB's own message) unless an external server accepts this endpoint's login."""
    status, _, body = endpoint.request("GET", "/query", {"q": "SHOW DATABASES"}, timeout_s=5)
    if status != 200:
        raise ServerError(f"InfluxDB at {endpoint.url} refused {endpoint.user!r} ({status}: {body[:200]!r})")

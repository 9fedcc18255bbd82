# SPDX-License-Identifier: Apache-2.0
"""A private ClickHouse server (Debian's clickhouse-server 18.16), a what-if engine beside HDB++'s.

Its own `config.xml` and `users.xml`, written at each start beside its data directory: HTTP and native
TCP on its one address (loopback by default), no interserver port (no replication), its data,
temporary files and logs in its own directory, the server's time zone UTC. Clients speak HTTP
(`query`, the standard library's urllib; no client package). ClickHouse 18.16 has no SQL accounts
(users live in users.xml; SQL access control came with 20.x): one account, `hdbbench`, with the
stack's generated password, used by every client including the subscriber.

Durability: 18.16 writes every insert as a new part and does not fsync it (`fsync_after_insert`
came later), so the `durable` and `relaxed` profiles hold the same settings; the result records them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.error
import urllib.request
from base64 import b64encode
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.stack.servers import homes
from hdbbench.stack.servers.base import PrivateServer
from hdbbench.stack.servers.endpoints import ClickHouseEndpoint
from hdbbench.stack.servers.ports import BENCHMARK_NETWORK, LOOPBACK, pick_free_port

ADMIN_USER = "hdbbench"
PACKAGE = "clickhouse-server"
BINARY = "/usr/sbin/clickhouse-server"
TCP_PORT_PREFERRED = 29000

# Server-wide caches (config.xml) and the per-query memory limit (users.xml's profile): the values
# fit a 2-core, 24 GiB machine running every server at once. Both profiles alike (module docstring).
_COMMON = {
    "mark_cache_size": str(1 << 30),
    "uncompressed_cache_size": str(1 << 30),
    "max_memory_usage": str(4 << 30),
    "max_concurrent_queries": "100",
}
PROFILES = {"durable": dict(_COMMON), "relaxed": dict(_COMMON)}
USER_SETTINGS = ("max_memory_usage",)  # settings of the users' profile; the others are the server's

# Measured here (18.16, idle, empty): 85 MiB resident. The rest of a budget goes to the caches and
# to a query's working memory; the page cache holds the columns' files (charged to the budget too).
MIN_BUDGET_MIB = 256
MEMORY_RULE = ("mark_cache_size budget/8, uncompressed_cache_size budget/16, max_memory_usage (one query) "
               "budget/2; at least 256 MiB (≈ 85 MiB resident when idle)")


def buffers_for(budget: int) -> dict[str, str]:
    """ClickHouse's memory settings under a budget of `budget` bytes (MEMORY_RULE)."""
    if budget >> 20 < MIN_BUDGET_MIB:
        raise ConfigError(f"ClickHouse needs a memory budget of at least {MIN_BUDGET_MIB} MiB, got {budget >> 20} MiB")
    return {"mark_cache_size": str(budget // 8), "uncompressed_cache_size": str(budget // 16),
            "max_memory_usage": str(budget // 2)}


def query(endpoint: ClickHouseEndpoint, sql: str, data: bytes | None = None, *, timeout_s: float = 300.0,
          database: str | None = None, settings: Mapping[str, str] | None = None) -> bytes:
    """Run one statement over HTTP and return the response body. With `data`, the statement is in the
    URL and `data` is the body (`INSERT ... FORMAT ...`); otherwise the statement is the body.
    ServerError with ClickHouse's own message when it refuses."""
    with open_query(endpoint, sql, data, timeout_s=timeout_s, database=database, settings=settings) as response:
        return bytes(response.read())


@contextmanager
def open_query(endpoint: ClickHouseEndpoint, sql: str, data: bytes | None = None, *, timeout_s: float = 300.0,
               database: str | None = None, settings: Mapping[str, str] | None = None) -> Iterator[Any]:
    """`query`, its response left open to be read as it streams (line by line for JSONEachRow)."""
    params = {**(settings or {}), **({"database": database} if database else {})}
    body = sql.encode() if data is None else data
    if data is not None:
        params["query"] = sql
    request = urllib.request.Request(endpoint.url(params), data=body, method="POST",
                                     headers={"Authorization": _basic(endpoint)})
    try:
        response = urllib.request.urlopen(request, timeout=timeout_s)
    except urllib.error.HTTPError as exc:
        message = exc.read().decode(errors="replace").strip()
        raise ServerError(f"ClickHouse at {endpoint.host}:{endpoint.port}: {message or exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ServerError(f"ClickHouse at {endpoint.host}:{endpoint.port} is not reachable: {reason}") from None
    with response:
        yield response


def _basic(endpoint: ClickHouseEndpoint) -> str:
    return "Basic " + b64encode(f"{endpoint.user}:{endpoint.password}".encode()).decode()


def binary() -> str:
    """The server's binary; ServerError naming the package to install when it is missing."""
    found = shutil.which("clickhouse-server") or (BINARY if Path(BINARY).exists() else None)
    if found is None:
        raise ServerError(f"clickhouse-server is not installed: apt-get install {PACKAGE} (scripts/setup.sh)")
    return found


class ClickHouseServer(PrivateServer):
    name = "clickhouse"
    preferred_port = 28123  # HTTP
    account = "clickhouse"  # Debian's package creates it; as root the server runs as that account
    _password: str | None = None  # from the stack's record (initialise), written into users.xml
    _tcp_port = 0                 # the native protocol's port, picked free at each start

    def initialise(self, meta: dict[str, Any]) -> None:
        binary()
        data = self.prepare_data_dir()
        for sub in ("tmp", "user_files", "format_schemas"):
            (data / sub).mkdir(mode=0o700, exist_ok=True)
            if self._runs_as_other_account():
                os.chown(data / sub, *self._ids())
        self._password = str(meta["password"])

    def command(self, port: int) -> list[str]:
        self._tcp_port = pick_free_port(TCP_PORT_PREFERRED, avoid={port}, host=self.address)
        password = self._password or str(self.meta()["password"])  # a restart without `up`
        config = self._write_configuration(port, self._tcp_port, password)
        return [binary(), f"--config-file={config}"]

    def _write_configuration(self, http_port: int, tcp_port: int, password: str) -> Path:
        """config.xml and users.xml beside the data directory, readable by the server's account only
        (users.xml holds the password's digest)."""
        home = self.data_dir.parent
        data = self.data_dir
        server_settings = {k: v for k, v in self.settings.items() if k not in USER_SETTINGS}
        user_settings = {k: v for k, v in self.settings.items() if k in USER_SETTINGS}
        users = home / "users.xml"
        config = home / "config.xml"
        homes.write_file(users, _users_xml(password, user_settings, self._client_networks()), 0o600, *self._ids())
        homes.write_file(config, _config_xml({
            "http_port": str(http_port), "tcp_port": str(tcp_port), "listen_host": self.address,
            "path": f"{data}/", "tmp_path": f"{data}/tmp/", "user_files_path": f"{data}/user_files/",
            "format_schema_path": f"{data}/format_schemas/", "users_config": str(users),
            "default_profile": "default", "default_database": "default", "timezone": "UTC",
            "pid": str(data / "clickhouse.pid"), **server_settings,
        }), 0o600, *self._ids())
        return config

    def _client_networks(self) -> tuple[str, ...]:
        """Where the account may log in from: this host, and the benchmarking range when the server
        listens there (clients on the other hosts)."""
        return (LOOPBACK,) if self.address == LOOPBACK else (LOOPBACK, str(BENCHMARK_NETWORK))

    def after_start(self, port: int, meta: dict[str, Any]) -> None:
        meta["tcp_port"] = self._tcp_port

    def endpoint(self, port: int, meta: dict[str, Any]) -> ClickHouseEndpoint:
        return ClickHouseEndpoint(host=self.address, port=port, user=ADMIN_USER, password=str(meta["password"]))

    def is_ready(self, port: int, meta: dict[str, Any]) -> bool:
        try:
            return query(self.endpoint(port, meta), "SELECT 1", timeout_s=2).strip() == b"1"
        except ServerError:
            return False

    def version(self, port: int, meta: dict[str, Any]) -> str | None:
        return "ClickHouse " + query(self.endpoint(port, meta), "SELECT version()").decode().strip()


def _config_xml(values: dict[str, str]) -> str:
    """The server's configuration; its log goes to the console, which the stack keeps in server.log
    (no file the server's account would need to write in the state directory)."""
    body = "".join(f"  <{k}>{escape(v)}</{k}>\n" for k, v in values.items())
    return ('<?xml version="1.0"?>\n<yandex>\n'
            "  <logger><level>warning</level><console>1</console></logger>\n"
            f"{body}</yandex>\n")


def _users_xml(password: str, profile: dict[str, str], networks: tuple[str, ...]) -> str:
    digest = hashlib.sha256(password.encode()).hexdigest()
    settings = "".join(f"<{k}>{escape(v)}</{k}>" for k, v in profile.items())
    unlimited = "".join(f"<{k}>0</{k}>" for k in ("queries", "errors", "result_rows", "read_rows", "execution_time"))
    return ('<?xml version="1.0"?>\n<yandex>\n'
            f"  <profiles><default>{settings}</default></profiles>\n"
            f"  <users><{ADMIN_USER}><password_sha256_hex>{digest}</password_sha256_hex>"
            f"<networks>{''.join(f'<ip>{n}</ip>' for n in networks)}</networks><profile>default</profile><quota>default</quota>"
            f"</{ADMIN_USER}></users>\n"
            f"  <quotas><default><interval><duration>3600</duration>{unlimited}</interval></default></quotas>\n"
            "</yandex>\n")


def probe(endpoint: ClickHouseEndpoint) -> None:
    """Raise (ClickHouse's own message) unless an external server accepts this endpoint's login."""
    query(endpoint, "SELECT 1", timeout_s=5)

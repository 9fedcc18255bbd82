# SPDX-License-Identifier: Apache-2.0
"""How to reach each server of a stack: private ones started by hdbbench, or external ones.

An endpoint is a frozen value: everything a client needs (host, port, credentials), plus whether
hdbbench owns the server (private) or must never start or stop it (external). `StackEndpoints` maps
the server kinds of a stack (hdbbench.stack.servers.registry) to theirs.
"""

from __future__ import annotations

import base64
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from hdbbench.model.errors import ConfigError


def _libpq_quote(value: str) -> str:
    """Quote a value for a libpq key=value connection string."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class PostgresEndpoint:
    host: str
    port: int
    user: str
    password: str
    dbname: str = "postgres"
    external: bool = False

    def conninfo(self, dbname: str | None = None) -> str:
        """A libpq connection string (the HDB++ `connect_string` format)."""
        parts = {
            "host": self.host,
            "port": str(self.port),
            "user": self.user,
            "password": self.password,
            "dbname": dbname or self.dbname,
        }
        return " ".join(f"{k}={_libpq_quote(v)}" for k, v in parts.items())

    def connect(self, dbname: str | None = None, **kwargs: Any) -> Any:
        # deferred: the PostgreSQL driver loads only where a PostgreSQL server is used
        import psycopg

        return psycopg.connect(self.conninfo(dbname), **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"conninfo": self.conninfo()}

    def external_value(self) -> str:
        """The URL another host's hdbbench reaches this server by (password included)."""
        return f"postgresql://{quote(self.user)}:{quote(self.password, safe='')}@{self.host}:{self.port}/{self.dbname}"

    @classmethod
    def from_url(cls, url: str) -> PostgresEndpoint | ClusterEndpoint:
        """Parse `postgresql://user:password@host:port/dbname` (an external server); a URL with several
        hosts (`@h1:5432,h2:5432,h3:5432/db`, a facility's replicated cluster) is a ClusterEndpoint."""
        if "," in urlsplit(url).netloc:
            return ClusterEndpoint.from_url(url)
        parts = urlsplit(url)
        if parts.scheme not in ("postgresql", "postgres") or not parts.hostname:
            raise ConfigError(f"not a PostgreSQL URL (postgresql://user:password@host:port/db): {url!r}")
        return cls(
            host=parts.hostname,
            port=parts.port or 5432,
            user=unquote(parts.username or "postgres"),
            password=unquote(parts.password or ""),
            dbname=parts.path.lstrip("/") or "postgres",
            external=True,
        )


@dataclass(frozen=True)
class ClusterEndpoint:
    """A replicated PostgreSQL cluster (hdbbench.stack.servers.patroni): every member's address, one port.

    Clients reach the primary, wherever it is now, by libpq's multi-host connection string: libpq tries
    the hosts in turn and keeps the first whose session is `target_session_attrs` ("read-write": the
    primary). After a failover a client that reconnects finds the new primary the same way. `member`
    gives one member alone (reads from a replica); `rest_port` is each member's Patroni REST API.
    """

    hosts: tuple[str, ...]
    port: int
    user: str
    password: str
    dbname: str = "postgres"
    external: bool = False
    target_session_attrs: str = "read-write"
    rest_port: int = 8008

    def __post_init__(self) -> None:
        object.__setattr__(self, "hosts", tuple(self.hosts))  # a list when read back from JSON

    @property
    def host(self) -> str:
        """The hosts as libpq's `host` takes them (also what tools given `-h` accept)."""
        return ",".join(self.hosts)

    def conninfo(self, dbname: str | None = None, target_session_attrs: str | None = None) -> str:
        """A libpq multi-host connection string (the HDB++ `connect_string` format)."""
        parts = {
            "host": self.host,
            "port": str(self.port),
            "user": self.user,
            "password": self.password,
            "dbname": dbname or self.dbname,
            "target_session_attrs": target_session_attrs or self.target_session_attrs,
            # A member that is down or cut off must not hold a client past the next host for long: at
            # connection (connect_timeout), nor in a session whose peer no longer answers (a host cut
            # off sends no reset): unacknowledged data for 10 s, or an idle session's keepalives.
            "connect_timeout": "3",
            "tcp_user_timeout": "10000",
            "keepalives_idle": "5",
            "keepalives_interval": "2",
            "keepalives_count": "3",
        }
        return " ".join(f"{k}={_libpq_quote(v)}" for k, v in parts.items())

    def connect(self, dbname: str | None = None, **kwargs: Any) -> Any:
        # deferred: the PostgreSQL driver loads only where a PostgreSQL server is used
        import psycopg

        return psycopg.connect(self.conninfo(dbname), **kwargs)

    def member(self, host: str) -> PostgresEndpoint:
        """One member alone, whatever its role (a replica for reads)."""
        return PostgresEndpoint(host=host, port=self.port, user=self.user, password=self.password,
                                dbname=self.dbname, external=self.external)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"conninfo": self.conninfo()}

    def external_value(self) -> str:
        """The URL another host's hdbbench reaches the primary by (password included)."""
        netloc = ",".join(f"{h}:{self.port}" for h in self.hosts)
        return (f"postgresql://{quote(self.user)}:{quote(self.password, safe='')}@{netloc}/{self.dbname}"
                f"?target_session_attrs={self.target_session_attrs}")

    @classmethod
    def from_url(cls, url: str) -> ClusterEndpoint:
        """Parse `postgresql://user:password@h1:port,h2:port,h3:port/dbname` (an external cluster, as
        libpq takes it; every member on the same port, as external_value writes it)."""
        parts = urlsplit(url)
        credentials, _, hostlist = parts.netloc.rpartition("@")
        user, _, password = credentials.partition(":")
        hosts, ports = [], set()
        for item in hostlist.split(","):
            host, _, port = item.rpartition(":") if ":" in item else (item, "", "5432")
            if not host or not port.isdigit():
                raise ConfigError(f"not a PostgreSQL cluster URL (postgresql://user:password@h1:port,h2:port/db): {url!r}")
            hosts.append(host)
            ports.add(int(port))
        if parts.scheme not in ("postgresql", "postgres") or len(ports) != 1:
            raise ConfigError(f"not a PostgreSQL cluster URL with one port for every host "
                              f"(postgresql://user:password@h1:port,h2:port/db): {url!r}")
        query = dict(p.partition("=")[::2] for p in parts.query.split("&") if p)
        return cls(hosts=tuple(hosts), port=ports.pop(), user=unquote(user or "postgres"), password=unquote(password),
                   dbname=parts.path.lstrip("/") or "postgres", external=True,
                   target_session_attrs=query.get("target_session_attrs", "read-write"))


@dataclass(frozen=True)
class MariaDBEndpoint:
    host: str
    port: int
    user: str
    password: str
    external: bool = False

    def connect(self, database: str | None = None, **kwargs: Any) -> Any:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        params: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "connect_timeout": 10,
        }
        if database:
            params["database"] = database
        params.update(kwargs)
        conn = mariadb.connect(**params)
        cur = conn.cursor()
        # Partition bounds and datetime(6) values are interpreted in the session time zone: use UTC.
        cur.execute("SET time_zone = '+00:00'")
        cur.close()
        return conn

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"url": f"mysql://{self.user}@{self.host}:{self.port}/"}

    def external_value(self) -> str:
        """The URL another host's hdbbench reaches this server by (password included)."""
        return f"mysql://{quote(self.user)}:{quote(self.password, safe='')}@{self.host}:{self.port}"

    @classmethod
    def from_url(cls, url: str) -> MariaDBEndpoint:
        """Parse `mysql://user:password@host:port` (an external server)."""
        parts = urlsplit(url)
        if parts.scheme not in ("mysql", "mariadb") or not parts.hostname:
            raise ConfigError(f"not a MariaDB URL (mysql://user:password@host:port): {url!r}")
        return cls(
            host=parts.hostname,
            port=parts.port or 3306,
            user=unquote(parts.username or "root"),
            password=unquote(parts.password or ""),
            external=True,
        )


@dataclass(frozen=True)
class ClickHouseEndpoint:
    """A ClickHouse server reached over HTTP (hdbbench.stack.servers.clickhouse.query)."""

    host: str
    port: int  # the HTTP port
    user: str
    password: str
    external: bool = False

    def url(self, params: Mapping[str, str] | None = None) -> str:
        """The HTTP interface's URL with query parameters (credentials go in a header, not here)."""
        query = "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in (params or {}).items())
        return f"http://{self.host}:{self.port}/" + (f"?{query}" if query else "")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"url": f"clickhouse://{self.user}@{self.host}:{self.port}/"}

    def external_value(self) -> str:
        """The URL another host's hdbbench reaches this server by (password included)."""
        return f"clickhouse://{quote(self.user)}:{quote(self.password, safe='')}@{self.host}:{self.port}"

    @classmethod
    def from_url(cls, url: str) -> ClickHouseEndpoint:
        """Parse `clickhouse://user:password@host:port` (an external server's HTTP port)."""
        parts = urlsplit(url)
        if parts.scheme != "clickhouse" or not parts.hostname:
            raise ConfigError(f"not a ClickHouse URL (clickhouse://user:password@host:http_port): {url!r}")
        return cls(host=parts.hostname, port=parts.port or 8123, user=unquote(parts.username or "default"),
                   password=unquote(parts.password or ""), external=True)


@dataclass(frozen=True)
class TangoEndpoint:
    host: str
    port: int
    kind: str = "pytango-sqlite"
    external: bool = False

    @property
    def tango_host(self) -> str:
        return f"{self.host}:{self.port}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"tango_host": self.tango_host}

    def external_value(self) -> str:
        return self.tango_host

    @classmethod
    def from_tango_host(cls, tango_host: str) -> TangoEndpoint:
        host, sep, port = tango_host.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ConfigError(f"TANGO_HOST must be host:port, got {tango_host!r}")
        return cls(host=host, port=int(port), kind="external", external=True)


@dataclass(frozen=True)
class LocalEndpoint:
    """A directory of this host for backends that keep their data in files (no server process)."""

    path: str
    external: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class InfluxDBEndpoint:
    """An InfluxDB 1.x HTTP API (hdbbench.stack.servers.influxdb): `/ping`, `/query` (InfluxQL), `/write`
    (line protocol). Clients authenticate with HTTP basic auth as `user`."""

    host: str
    port: int
    user: str
    password: str
    external: bool = False

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def request(self, method: str, path: str, params: Mapping[str, str] | None = None,
                body: bytes | None = None, timeout_s: float = 60.0) -> tuple[int, dict[str, str], bytes]:
        """One HTTP request (standard library only): (status, headers, body); an HTTP error status is
        returned, not raised; a connection failure raises OSError."""
        query = f"?{urllib.parse.urlencode(dict(params))}" if params else ""
        req = urllib.request.Request(f"{self.url}{path}{query}", data=body, method=method)
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
        if body is not None:
            req.add_header("Content-Type", "text/plain; charset=utf-8")
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                return resp.status, dict(resp.headers.items()), resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers.items()), exc.read()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"url": self.url}

    def external_value(self) -> str:
        """The URL another host's hdbbench reaches this server by (password included)."""
        return f"influxdb://{quote(self.user)}:{quote(self.password, safe='')}@{self.host}:{self.port}"

    @classmethod
    def from_url(cls, url: str) -> InfluxDBEndpoint:
        """Parse `influxdb://user:password@host:port` (an external server)."""
        parts = urlsplit(url)
        if parts.scheme != "influxdb" or not parts.hostname:
            raise ConfigError(f"not an InfluxDB URL (influxdb://user:password@host:port): {url!r}")
        return cls(host=parts.hostname, port=parts.port or 8086, user=unquote(parts.username or ""),
                   password=unquote(parts.password or ""), external=True)


def endpoint_from_dict(cls: type, raw: Mapping[str, Any]) -> Any:
    """An endpoint of class `cls` from its to_dict() (extra keys such as conninfo are derived); a
    PostgreSQL endpoint with several hosts is a cluster's (an external one given by a multi-host URL)."""
    if cls is PostgresEndpoint and "hosts" in raw:
        cls = ClusterEndpoint
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in raw.items() if k in names})


class StackEndpoints(Mapping[str, Any]):
    """The endpoints of a stack by server kind (``endpoints["postgres"]``, ``endpoints.get(name)``):
    only the kinds the stack has. Tango, the control system every part uses, has a property.

    `roles` maps a kind to the kind that took its place in this stack (``{"postgres": "patroni"}``:
    the Patroni cluster serves as the PostgreSQL server, hdbbench.stack.servers.registry `serves`): asking
    for the role gives the stand-in's endpoint, so the backends of that kind reach it without knowing.
    Iteration gives the kinds that run, never a role."""

    def __init__(self, endpoints: Mapping[str, Any] | None = None, roles: Mapping[str, str] | None = None) -> None:
        self._endpoints = {name: e for name, e in (endpoints or {}).items() if e is not None}
        self.roles = {role: name for role, name in (roles or {}).items() if name != role}

    def kind_of(self, name: str) -> str:
        """The kind that runs in the place of kind `name` (itself unless a stand-in took its place)."""
        return self.roles.get(name, name)

    def __getitem__(self, name: str) -> Any:
        return self._endpoints[self.kind_of(name)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._endpoints)

    def __len__(self) -> int:
        return len(self._endpoints)

    def __repr__(self) -> str:
        return f"StackEndpoints({self._endpoints!r}, roles={self.roles!r})"

    @property
    def tango(self) -> TangoEndpoint | None:
        return self._endpoints.get("tango")

    def to_dict(self) -> dict[str, Any]:
        """As stack.json holds them; read back by `servers.registry.endpoints_from_dict`."""
        return {name: endpoint.to_dict() for name, endpoint in self._endpoints.items()}

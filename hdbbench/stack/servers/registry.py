# SPDX-License-Identifier: Apache-2.0
"""The one list of server kinds a stack can hold: one `ServerKind` entry each.

Adding a kind of server = its module beside `postgres.py` (the private server: a `PrivateServer`,
or an object with the same life cycle without a process, as `local.py`), its endpoint class in
`endpoints.py`, and one entry in `SERVER_KINDS`. The stack, settings profiles, `[hosts]`, CPU
placement, runs, the CLI, fault injectors, the subscribers' LibConfiguration and the report
iterate over this list; nothing outside `hdbbench/stack/servers/` and `hdbbench/backends/` names a kind
of database server.

Entries are in start order: a kind comes after the kinds it `needs` (the C++ Tango database runs
on MariaDB).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError
from hdbbench.stack.servers import clickhouse, influxdb, mariadb, patroni, postgres, tangodb
from hdbbench.stack.servers.endpoints import (
    ClickHouseEndpoint,
    ClusterEndpoint,
    InfluxDBEndpoint,
    LocalEndpoint,
    MariaDBEndpoint,
    PostgresEndpoint,
    StackEndpoints,
    TangoEndpoint,
    endpoint_from_dict,
)
from hdbbench.stack.servers.local import LocalDirectory
from hdbbench.stack.servers.ports import LOOPBACK


@dataclass(frozen=True)
class ServerArgs:
    """What the stack hands a kind's factory to make its private server."""

    state_dir: Path
    settings: Mapping[str, str] = field(default_factory=dict)
    attached: bool = False
    keep_running: bool = False
    address: str = LOOPBACK
    flavour: str = ""  # which implementation of the kind (the Tango database's "pytango" or "cpp")


@dataclass(frozen=True)
class ServerKind:
    name: str                         # the stack component: `stack up --only NAME`, endpoints[NAME]
    label: str                        # how messages name it
    endpoint_class: type
    make: Callable[[ServerArgs], Any]  # the private server (a PrivateServer, or LocalDirectory)
    process: bool = True              # has a process: pid, CPU samples, placement, stop/kill/restart
    from_external: Callable[[str], Any] | None = None  # an external server's endpoint from its URL
    external_env: str | None = None   # the environment variable giving an external server
    external_option: str | None = None  # the CLI option giving one (`--NAME`)
    external_help: str = ""
    probe: Callable[[Any], str | None] | None = None  # why an external one is unusable (or raises), None: fine
    settings: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # profile -> settings
    hosts_key: str | None = None      # its key in a scenario's [hosts] table; None: always on the controller
    group: str | None = None          # CPU placement group (hdbbench.stack.placement.GROUPS)
    archive: bool = False             # stores archived events: its CPU is sampled with the trials
    faults: tuple[str, ...] = ()      # server faults it supports: "stop", "kill", "fill"; a cluster's "switchover", "failover"
    flavours: tuple[str, ...] = ()    # implementations to choose from; the first is the default
    needs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # flavour -> kinds it runs on
    always: bool = False              # in every stack, whatever components are asked for
    on_request: bool = False          # only in a stack that names it (`--only`): never a default component
    # The kind whose place it can take in a stack (`[stack] servers = { postgres = "patroni" }`): the
    # stack then starts it instead, and that kind's backends are given its endpoint (StackEndpoints).
    serves: str | None = None
    replicas: bool = False            # has standbys to read from (`replica_endpoint()`; hdbbench.parts.replica_reads)
    # Its buffers under a memory budget (hdbbench.stack.servers.confine): budget bytes -> settings that
    # override the profile's, and the rule in words. None: no budget can be given.
    buffers_for: Callable[[int], dict[str, str]] | None = None
    memory_rule: str | None = None

    @property
    def reports_settings(self) -> bool:
        """Its settings in force are recorded with results (it has a section in the profiles)."""
        return bool(self.settings)

    def private(self, args: ServerArgs) -> Any:
        return self.make(args)

    def external_endpoint(self, value: str) -> Any:
        if self.from_external is None:
            raise ConfigError(f"a {self.label} cannot be external")
        return self.from_external(value)


def _tango(args: ServerArgs) -> Any:
    if args.flavour == "cpp":
        return tangodb.CppTangoDatabaseServer(args.state_dir, attached=args.attached, address=args.address)
    return tangodb.PyTangoDatabaseServer(args.state_dir, {}, attached=args.attached, address=args.address)


def _process(cls: type) -> Callable[[ServerArgs], Any]:
    return lambda a: cls(a.state_dir, a.settings, attached=a.attached, keep_running=a.keep_running,
                         address=a.address)


SERVER_KINDS: tuple[ServerKind, ...] = (
    ServerKind(
        "postgres", "PostgreSQL", PostgresEndpoint, _process(postgres.PostgresServer),
        from_external=PostgresEndpoint.from_url, external_env="HDBBENCH_POSTGRES_URL", external_option="postgres-url",
        external_help="Use this external PostgreSQL/TimescaleDB (postgresql://user:pw@host:port/db).",
        probe=postgres.probe, settings=postgres.PROFILES, hosts_key="postgres", group="databases", archive=True,
        faults=("stop", "kill", "fill"), buffers_for=postgres.buffers_for, memory_rule=postgres.MEMORY_RULE,
    ),
    ServerKind(
        "mariadb", "MariaDB", MariaDBEndpoint, _process(mariadb.MariaDBServer),
        from_external=MariaDBEndpoint.from_url, external_env="HDBBENCH_MARIADB_URL", external_option="mariadb-url",
        external_help="Use this external MariaDB/MySQL (mysql://user:pw@host:port).",
        probe=mariadb.probe, settings=mariadb.PROFILES, hosts_key="mariadb", group="databases", archive=True,
        faults=("stop", "kill", "fill"), buffers_for=mariadb.buffers_for, memory_rule=mariadb.MEMORY_RULE,
    ),
    ServerKind(
        "tango", "Tango database", TangoEndpoint, _tango,
        from_external=TangoEndpoint.from_tango_host, external_env="HDBBENCH_TANGO_HOST", external_option="tango-host",
        external_help="An existing Tango database instead of the stack's own.",
        probe=tangodb.probe, hosts_key="tango_db", group="tango", flavours=("pytango", "cpp"),
        needs={"cpp": ("mariadb",)},
    ),
    # Three PostgreSQL+TimescaleDB members on three hosts (network namespaces; needs root), managed by
    # Patroni with a three-member etcd. Not one process (pid, pinning, the process faults do not apply
    # as such) and only when asked for: it takes the machine's network namespaces and root.
    ServerKind("patroni", "Patroni cluster", ClusterEndpoint,
               lambda a: patroni.PatroniCluster(a.state_dir, a.settings, attached=a.attached,
                                                keep_running=a.keep_running, address=a.address),
               process=False, on_request=True,
               faults=("switchover", "failover", "primary_host_isolated", "replica_lost"),
               settings=patroni.PROFILES,
               serves="postgres", replicas=True),
    # The what-if engine InfluxDB 1.6: started only for a scenario that names its backend (or `--only influxdb`).
    ServerKind("influxdb", "InfluxDB", InfluxDBEndpoint, _process(influxdb.InfluxDBServer), settings=influxdb.PROFILES,
               from_external=InfluxDBEndpoint.from_url, external_env="HDBBENCH_INFLUXDB_URL",
               external_option="influxdb-url",
               external_help="Use this external InfluxDB 1.x (influxdb://user:pw@host:http_port).",
               probe=influxdb.probe, group="databases", archive=True, faults=("stop", "kill"), on_request=True,
               buffers_for=influxdb.buffers_for, memory_rule=influxdb.MEMORY_RULE),
    # A what-if engine (no HDB++ library writes it): only in a stack that names it, or a run of a
    # scenario naming a backend on it.
    ServerKind(
        "clickhouse", "ClickHouse", ClickHouseEndpoint, _process(clickhouse.ClickHouseServer),
        from_external=ClickHouseEndpoint.from_url, external_env="HDBBENCH_CLICKHOUSE_URL",
        external_option="clickhouse-url",
        external_help="Use this external ClickHouse (clickhouse://user:pw@host:http_port).",
        probe=clickhouse.probe, settings=clickhouse.PROFILES, hosts_key="clickhouse", group="databases",
        archive=True, faults=("stop", "kill"), on_request=True, buffers_for=clickhouse.buffers_for,
        memory_rule=clickhouse.MEMORY_RULE,
    ),
    ServerKind("local", "local directory", LocalEndpoint, lambda a: LocalDirectory(a.state_dir), process=False,
               archive=True, always=True),
)
SERVER_NAMES: tuple[str, ...] = tuple(k.name for k in SERVER_KINDS)
DEFAULT_SERVER_NAMES: tuple[str, ...] = tuple(k.name for k in SERVER_KINDS if not k.on_request)


def kind(name: str) -> ServerKind:
    for k in SERVER_KINDS:
        if k.name == name:
            return k
    raise ConfigError(f"unknown server kind {name!r} (known: {', '.join(SERVER_NAMES)})")


def serving_problem(role: str, name: str) -> str | None:
    """Why kind `name` cannot take the place of kind `role` in a stack (None: it can)."""
    if role not in SERVER_NAMES:
        return f"{role!r} is not a server kind (known: {', '.join(SERVER_NAMES)})"
    if name not in SERVER_NAMES:
        return f"{role} = {name!r}: not a server kind (known: {', '.join(SERVER_NAMES)})"
    if name != role and kind(name).serves != role:
        stand_ins = [k.name for k in SERVER_KINDS if k.serves == role]
        return (f"{role} = {name!r}: the {kind(name).label} cannot serve as the {kind(role).label} "
                f"({'only ' + ', '.join(stand_ins) + ' can' if stand_ins else 'no other kind can'})")
    return None


def label(name: str) -> str:
    return kind(name).label


def with_settings() -> tuple[ServerKind, ...]:
    """The kinds with a section in the settings profiles, in registry order."""
    return tuple(k for k in SERVER_KINDS if k.settings)


def external_kinds() -> tuple[ServerKind, ...]:
    """The kinds an external server can stand in for (an environment variable or a CLI option)."""
    return tuple(k for k in SERVER_KINDS if k.external_env)


def external_from_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Kind -> URL (or host:port) of the external servers the environment gives."""
    env = os.environ if environ is None else environ
    return {k.name: env[k.external_env] for k in external_kinds() if k.external_env and env.get(k.external_env)}


def confinable_kinds() -> tuple[str, ...]:
    """The kinds a memory budget and a storage class apply to: database servers with a process that
    store archived events and say how their buffers follow a budget."""
    return tuple(k.name for k in SERVER_KINDS if k.process and k.archive and k.buffers_for is not None)


def placement_groups() -> dict[str, str]:
    """Kind -> CPU placement group, for the kinds with processes to pin."""
    return {k.name: k.group for k in SERVER_KINDS if k.group and k.process}


def hosts_keys() -> dict[str, str]:
    """[hosts] key -> kind, for the kinds a scenario may put on a host of its own."""
    return {k.hosts_key: k.name for k in SERVER_KINDS if k.hosts_key}


def archive_kinds() -> tuple[str, ...]:
    """The kinds that store archived events (their CPU is sampled with the insertion trials)."""
    return tuple(k.name for k in SERVER_KINDS if k.archive)


def settings_example() -> str:
    """An override as `--set` takes it, for help texts."""
    first = with_settings()[0]
    key = next(iter(first.settings[next(iter(first.settings))]))
    return f"{first.name}.{key}=<value>"


def endpoints_from_dict(data: Mapping[str, Any], roles: Mapping[str, str] | None = None) -> StackEndpoints:
    """The endpoints of a `StackEndpoints.to_dict()`; kinds unknown to the registry are left out."""
    return StackEndpoints({kind.name: endpoint_from_dict(kind.endpoint_class, data[kind.name])
                           for kind in SERVER_KINDS if data.get(kind.name)}, roles)

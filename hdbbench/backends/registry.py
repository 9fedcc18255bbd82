# SPDX-License-Identifier: Apache-2.0
"""The one list of backends: each one's name, the stack server it runs on, and its class.

Adding a backend = its folder beside `postgres/` and `mysql/` + one `BackendEntry` line below.
Everything else (CLI choices, scenario validation, which server an extraction restarts, whose CPU
the report adds to the archiving path, the subscriber's LibConfiguration, disk measurement) asks
this module, and a backend's optional abilities its class (hdbbench.backends.abilities). It is not
part of `base` because it imports the backend folders, which import `base`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hdbbench.backends.base import Backend
from hdbbench.backends.clickhouse import ClickHouseBackend
from hdbbench.backends.influxdb import InfluxBackend
from hdbbench.backends.mysql import MySQLBackend
from hdbbench.backends.null import NullBackend
from hdbbench.backends.postgres import PostgresBackend, TimescaleBackend
from hdbbench.model.errors import ConfigError
from hdbbench.stack.servers import registry as servers


@dataclass(frozen=True)
class BackendEntry:
    name: str
    server: str  # the kind of stack server it runs on (hdbbench.stack.servers.registry)
    backend_class: type[Backend]


REGISTRY: tuple[BackendEntry, ...] = (
    BackendEntry("timescaledb", "postgres", TimescaleBackend),
    BackendEntry("postgresql", "postgres", PostgresBackend),
    BackendEntry("mysql", "mariadb", MySQLBackend),
    BackendEntry("null", "local", NullBackend),
    BackendEntry("clickhouse", "clickhouse", ClickHouseBackend),
    BackendEntry("influxdb", "influxdb", InfluxBackend),
)
BACKENDS: tuple[str, ...] = tuple(e.name for e in REGISTRY)
# "Every backend" where none is named (a scenario without `backends`, the CLI's defaults): the HDB++
# backends that lack no ability. A backend without a database (it measures the subscriber alone) and a
# what-if engine (no HDB++ library writes it) are only ever named.
DEFAULT_BACKENDS: tuple[str, ...] = tuple(
    e.name for e in REGISTRY if not e.backend_class.lacks and not e.backend_class.what_if)



def entry(name: str) -> BackendEntry:
    for e in REGISTRY:
        if e.name == name:
            return e
    raise ConfigError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")


def backend_class(name: str) -> type[Backend]:
    return entry(name).backend_class


def server_of(name: str) -> str | None:
    """The kind of stack server a backend runs on; None for an unknown name."""
    return next((e.server for e in REGISTRY if e.name == name), None)


def server_kind(name: str) -> servers.ServerKind:
    """The server kind (its registry entry) backend `name` runs on."""
    return servers.kind(entry(name).server)


def get_backend(name: str, endpoint: Any, database: str = "hdbpp") -> Backend:
    """The backend `name` on `endpoint` (one of its server kind) for `database`."""
    return entry(name).backend_class(endpoint, database)


def endpoint_for(name: str, endpoints: Mapping[str, Any]) -> Any | None:
    """The endpoint of a StackEndpoints that backend `name` runs on, or None when the stack has none."""
    return endpoints.get(entry(name).server)


def backend_for_stack(name: str, stack: Mapping[str, Any], database: str = "hdbpp") -> Backend:
    """The backend `name` on the matching server of a StackEndpoints."""
    endpoint = endpoint_for(name, stack)
    if endpoint is None:
        raise ConfigError(f"backend {name} needs a {server_kind(name).label} server and the stack has none")
    return get_backend(name, endpoint, database)


def published_as(engine: str) -> str | None:
    """Our backend that published studies name `engine` (its class's `published_as`), if any."""
    return next((e.name for e in REGISTRY if e.backend_class.published_as == engine), None)


def cold_notes() -> tuple[str, ...]:
    """What the backends' cold restarts leave warm (their classes' `cold_note`)."""
    return tuple(dict.fromkeys(e.backend_class.cold_note for e in REGISTRY if e.backend_class.cold_note))


def lib_configuration(name: str, database: str, endpoints: Mapping[str, Any],
                      overrides: Mapping[str, Any] | None = None) -> list[str]:
    """LibConfiguration lines (HDB++ keys) that point a subscriber at `database` of backend `name`;
    `endpoints` maps server kinds to endpoints (a StackEndpoints); overrides (e.g. batch_size) are
    appended or win."""
    e = entry(name)
    endpoint = endpoints.get(e.server)
    if endpoint is None:
        raise ConfigError(f"backend {name} needs a {servers.kind(e.server).label} server")
    lines = e.backend_class.subscriber_configuration(endpoint, database)
    lines.update({k: str(v) for k, v in (overrides or {}).items()})
    # Refused here, before a real library would crash on it in a subscriber process.
    if (problem := e.backend_class.lib_configuration_problem(lines)) is not None:
        raise ConfigError(f"LibConfiguration for {name}: {problem}")
    return [f"{key}={value}" for key, value in lines.items()]


def server_facts(endpoints: Mapping[str, Any]) -> dict[str, Any]:
    """Per stack server present: its version and the settings that change sizes."""
    facts: dict[str, Any] = {}
    for e in REGISTRY:
        endpoint = endpoints.get(e.server)
        if endpoint is not None and e.server not in facts:
            facts[e.server] = e.backend_class.server_facts(endpoint)
    return facts


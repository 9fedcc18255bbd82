# SPDX-License-Identifier: Apache-2.0
"""Database backends, one module each, behind the `Backend` interface of `base`.

    backend = get_backend("timescaledb", stack.postgres, "hdbpp")
    backend.create_schema("pk+2")
    with backend.bulk_writer() as writer: ...
"""

from __future__ import annotations

from typing import Any

from hdbbench.backends.base import Backend, BulkWriter, SchemaVariant
from hdbbench.errors import ConfigError

BACKENDS: tuple[str, ...] = ("timescaledb", "postgresql", "mysql")

__all__ = ["BACKENDS", "Backend", "BulkWriter", "SchemaVariant", "backend_for_stack", "get_backend"]


def get_backend(name: str, endpoint: Any, database: str = "hdbpp") -> Backend:
    """The backend `name` on `endpoint` (PostgresEndpoint or MariaDBEndpoint) for `database`."""
    if name == "timescaledb":
        from hdbbench.backends.timescaledb import TimescaleBackend

        return TimescaleBackend(endpoint, database)
    if name == "postgresql":
        from hdbbench.backends.postgresql import PostgresBackend

        return PostgresBackend(endpoint, database)
    if name == "mysql":
        from hdbbench.backends.mysql import MySQLBackend

        return MySQLBackend(endpoint, database)
    raise ConfigError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")


def backend_for_stack(name: str, stack: Any, database: str = "hdbpp") -> Backend:
    """The backend `name` on the matching server of a StackEndpoints."""
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
    endpoint = stack.mariadb if name == "mysql" else stack.postgres
    if endpoint is None:
        server = "MariaDB" if name == "mysql" else "PostgreSQL"
        raise ConfigError(f"backend {name} needs a {server} server and the stack has none")
    return get_backend(name, endpoint, database)

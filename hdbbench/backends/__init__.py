# SPDX-License-Identifier: Apache-2.0
"""Database backends, one folder per family (`postgres/`, `mysql/`), behind the interfaces of
`base`, listed once in `registry` (see README.md in this folder).

    backend = get_backend("timescaledb", stack["postgres"], "hdbpp")
    backend.create_schema("pk+2")
    with backend.bulk_writer() as writer: ...
"""

from __future__ import annotations

from hdbbench.backends.base import Backend, BulkWriter, ExtractionBackend, SchemaVariant
from hdbbench.backends.registry import (
    BACKENDS,
    DEFAULT_BACKENDS,
    backend_class,
    backend_for_stack,
    endpoint_for,
    get_backend,
    server_of,
)

__all__ = [
    "BACKENDS", "DEFAULT_BACKENDS", "Backend", "BulkWriter", "ExtractionBackend", "SchemaVariant", "backend_class", "backend_for_stack",
    "endpoint_for", "get_backend", "server_of",
]

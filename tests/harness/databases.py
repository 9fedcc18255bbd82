# SPDX-License-Identifier: Apache-2.0
"""Fresh HDB++ databases for tests, and reading them back.

A test gets a backend on a new uniquely named database with its schema (`fresh_backend`), dropped
afterwards, pass or fail. Stored events are counted and read through the backend's own API
(`Backend.count_rows_by_attribute`, `Backend.fetch_events`); `sql` is for what a test checks of one
schema's tables, with placeholders written as {} whatever the driver.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from typing import Any

from hdbbench.backends import Backend, get_backend


def unique_db_name(backend: str, prefix: str = "h3test") -> str:
    return f"{prefix}_{backend[:5]}_{uuid.uuid4().hex[:10]}"


@contextmanager
def fresh_backend(backend: str, endpoint: Any, variant: str | None = None, prefix: str = "h3test") -> Iterator[Backend]:
    """A backend on a new uniquely named database with its schema; dropped afterwards, pass or fail."""
    b = get_backend(backend, endpoint, unique_db_name(backend, prefix))
    try:
        b.create_schema(variant)
        yield b
    finally:
        try:
            b.drop_schema()
        except Exception:  # noqa: BLE001 - best effort: a failed test's server may be gone
            pass


def rows(backend: Backend, since: datetime | None = None) -> dict[str, int]:
    """Stored events per attribute name (an array event counts once), from `since` on."""
    return backend.count_rows_by_attribute(since)


def sql(backend: Backend, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one query on the backend's database in a connection of its own (so it sees every commit
    and holds no lock afterwards); placeholders are written as {}."""
    with closing(backend.endpoint.connect(backend.database)) as conn:
        cur = conn.cursor()
        cur.execute(query.replace("{}", getattr(backend, "placeholder", "%s")), params)
        out = [tuple(r) for r in cur.fetchall()]
        conn.commit()
        return out

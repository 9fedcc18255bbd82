# SPDX-License-Identifier: Apache-2.0
"""Fresh HDB++ databases for tests, and reading them back.

A test gets a backend on a new uniquely named database with its schema (`fresh_backend`), dropped
afterwards, pass or fail. Stored events are counted and read through the backend's own API
(`Backend.count_rows_by_attribute`, `Backend.fetch_events`), never by SQL of the test's; `sql` is for
what a test checks of one schema's tables, with placeholders written as {} whatever the driver.
`CommittingLoad` commits events in a thread until its server goes away (fault tests).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hdbbench.backends import Backend, get_backend
from hdbbench.backends.accounts import as_account
from hdbbench.model.hdbtypes import AttributeInfo, Event, TangoType
from tests.harness.waiting import eventually


def unique_db_name(backend: str, prefix: str = "h3test") -> str:
    return f"{prefix}_{backend[:5]}_{uuid.uuid4().hex[:10]}"


@contextmanager
def fresh_backend(backend: str, endpoint: Any, variant: str | None = None,
                  prefix: str = "h3test") -> Iterator[Backend]:
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


READ_ONLY_ACCOUNTS = {"mysql": "hdbppro"}     # HDB++'s read-only account; PostgreSQL flavours: hdb_data_reporter


def read_only_account(backend: str) -> str:
    return READ_ONLY_ACCOUNTS.get(backend, "hdb_data_reporter")


def url_of(endpoint: Any, database: str) -> str:
    """The URL of `database` on `endpoint`, as a user gives it (password included)."""
    parts = urlsplit(endpoint.external_value())
    return urlunsplit(parts._replace(path=f"/{database}"))


def read_only_url(backend: Backend) -> str:
    """The URL of the backend's database as HDB++'s read-only account."""
    return url_of(as_account(backend.endpoint, read_only_account(backend.name)), backend.database)


def sql(backend: Backend, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one query on the backend's database in a connection of its own (so it sees every commit
    and holds no lock afterwards); placeholders are written as {}."""
    with closing(backend.endpoint.connect(backend.database)) as conn:
        cur = conn.cursor()
        cur.execute(query.replace("{}", getattr(backend, "placeholder", "%s")), params)
        out = [tuple(r) for r in cur.fetchall()]
        conn.commit()
        return out


def double_events(att: AttributeInfo, n: int, start: datetime) -> list[Event]:
    """n events of a DevDouble attribute, 1 ms apart from `start`, values 0..n-1."""
    return [Event(att.name, start + timedelta(milliseconds=k), float(k)) for k in range(n)]


class CommittingLoad:
    """A thread that commits batches of events of one attribute until the server goes away (or the
    `with` ends); `acknowledged` counts the events whose commit returned."""

    BATCH = 50

    def __init__(self, backend: Backend, att: AttributeInfo, start: datetime,
                 events: Callable[[AttributeInfo, int, datetime], list[Event]] = double_events) -> None:
        assert att.type == TangoType.DEV_DOUBLE or events is not double_events
        self.acknowledged = 0
        self._stop = threading.Event()
        self._writer = backend.bulk_writer()
        self._writer.register_attribute(att)
        self._att, self._start, self._events = att, start, events
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                at = self._start + timedelta(milliseconds=self.acknowledged)
                batch = self._events(self._att, self.BATCH, at)
                self.acknowledged += self._writer.write(batch)
        except Exception:  # noqa: BLE001 - the server went away: the load ends
            pass

    def __enter__(self) -> CommittingLoad:
        self.thread.start()
        eventually(lambda: self.acknowledged > 0, 30, "the load's first commit")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join(timeout=60)
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001 - its connection died with the server
            pass

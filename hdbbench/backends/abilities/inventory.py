# SPDX-License-Identifier: Apache-2.0
"""The inventory-reading ability: the attributes of a live HDB++ archive and their stored events, read
in a read-only session for `hdbbench inventory from-hdb` (hdbbench.load.inventory.from_hdb does the
rest without a line of SQL; hdbbench.load.inventory.archive finds which reader a URL needs).

A backend's `InventoryReader` gives the URL of its servers as a user writes it (for messages) and
opens an `ArchiveSession` on an endpoint of its server kind: ServerError when the server cannot be
reached, ConfigError when the database is not HDB++. Every method of a session raises `TimeoutError`
when the server cancels a statement at its timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, Protocol, TypeVar

from hdbbench.model.errors import ServerError, first_line
from hdbbench.model.hdbtypes import AttrFormat, TangoType

# What `events` returns as each row's value: the number (numeric scalars), the length in characters
# (strings), or nothing.
NUMBER, LENGTH = "number", "length"
C = TypeVar("C")   # a driver's connection
S = TypeVar("S")   # a backend's ArchiveSession


@dataclass(frozen=True)
class ArchivedAttribute:
    """One att_conf row as the layout records it."""

    id: int
    name: str
    type: TangoType | None          # None: a type number this testbed does not know
    format: AttrFormat | None       # None: the layout does not keep it (MySQL arrays: by their dims)
    write: str                      # ro (READ) | rw (every other write type)
    table: str                      # its data table


class EventRow(NamedTuple):
    """One stored event, as much of it as an inventory needs (never an array's elements)."""

    data_time: datetime             # timezone-aware UTC
    quality: int | None
    error: bool                     # stored with an error description instead of a value
    has_value: bool                 # value_r or value_w is not NULL
    value: float | None             # NUMBER: the value (value_r, else value_w); LENGTH: its characters


class ArchiveSession(Protocol):
    backend: str                    # the registry name of the backend whose layout this is

    def attributes(self) -> list[ArchivedAttribute]:
        """Every att_conf row, by att_conf_id."""

    def last_time(self, att: ArchivedAttribute) -> datetime | None:
        """The newest data_time of the attribute (an index lookup); None without any event."""

    def events(self, att: ArchivedAttribute, since: datetime | None, until: datetime, limit: int,
               value: str | None) -> list[EventRow]:
        """Its events with since <= data_time <= until (no lower bound when since is None), newest
        first, at most `limit` rows read (so fewer events where an event is several rows)."""

    def dims(self, att: ArchivedAttribute, at: datetime) -> tuple[int, int]:
        """(dim_x, dim_y) of the array event at `at` (dim_y 0 for a spectrum), from value_r or value_w."""

    def set_timeout(self, seconds: float) -> None:
        """Cancel any later statement that runs longer than `seconds`."""

    def close(self) -> None: ...


class InventoryReader(Protocol):
    """Read-only sessions on the archives of one server kind (the backend's)."""

    url_form: str                   # e.g. postgresql://user:password@host:port/database

    def open_archive(self, endpoint: Any, database: str, statement_timeout_s: float) -> ArchiveSession:
        """A session that only reads `database` on `endpoint`, each statement bounded by the timeout."""


def open_session(connect: Callable[[], C], session: Callable[[C], S], driver_error: type[Exception],
                 where: str, database: str) -> S:
    """An `open_archive`: connect, then make the session (closing the connection when that fails); a
    connection the driver refuses is ServerError in one line."""
    try:
        conn = connect()
    except driver_error as exc:
        raise ServerError(f"cannot connect to {where}, database {database!r}: {first_line(exc)}") from exc
    try:
        return session(conn)
    except BaseException:
        conn.close()  # type: ignore[attr-defined]
        raise

# SPDX-License-Identifier: Apache-2.0
"""What a backend folder's `inventory` module hands `hdbbench inventory from-hdb`: the attributes of a
live HDB++ archive and their stored events, read in a read-only session (hdbbench.load.inventory.from_hdb
does the rest without a line of SQL).

A backend's module (`hdbbench/backends/<folder>/inventory.py`, found by
`registry.folder_module(backend, "inventory")`) gives:

- `URL_FORM`: the URL of its servers as a user writes it (for messages);
- `open_archive(endpoint, database, statement_timeout_s) -> ArchiveSession`: a session that only
  reads (ServerError when the server cannot be reached, ConfigError when the database is not HDB++).

Every method of a session raises `TimeoutError` when the server cancels a statement at its timeout.

`resolve_url` finds which: the URL's server kind is the one of the stack's database kinds whose
external URL parser takes it (hdbbench.stack.servers.registry), and its module the `inventory` module of a
backend on that kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Any, NamedTuple, Protocol, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from hdbbench.backends import registry
from hdbbench.model.errors import ConfigError, ServerError, first_line
from hdbbench.model.hdbtypes import AttrFormat, TangoType
from hdbbench.stack.servers import registry as servers

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


def open_session(connect: Callable[[], C], session: Callable[[C], S], driver_error: type[Exception],
                 where: str, database: str) -> S:
    """A backend module's `open_archive`: connect, then make the session (closing the connection when
    that fails); a connection the driver refuses is ServerError in one line."""
    try:
        conn = connect()
    except driver_error as exc:
        raise ServerError(f"cannot connect to {where}, database {database!r}: {first_line(exc)}") from exc
    try:
        return session(conn)
    except BaseException:
        conn.close()  # type: ignore[attr-defined]
        raise


# ------------------------------------------------------------------------ where a URL points


@dataclass(frozen=True)
class Archive:
    """Where a URL points: the server kind, its endpoint, the database and the backend folder's
    inventory module (no connection yet)."""

    url: str             # the URL with its password masked
    kind: str
    endpoint: Any
    database: str
    module: ModuleType


def masked(url: str) -> str:
    """The URL with its password replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"//[^/]*@", "//***@", url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return urlunsplit(parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:***@{host}"))


def _inventory_modules() -> dict[str, ModuleType]:
    """Server kind -> the `inventory` module of the backends that run on it (one per kind)."""
    out: dict[str, ModuleType] = {}
    for e in registry.REGISTRY:
        module = registry.folder_module(e.name, "inventory")
        if module is not None:
            out.setdefault(e.server, module)
    return out


def resolve_url(url: str) -> Archive:
    """The archive a URL names, or ConfigError with one line (the password never in it)."""
    shown = masked(url)
    modules = _inventory_modules()
    forms = " or ".join(m.URL_FORM for m in modules.values())
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise ConfigError(f"cannot parse the URL {shown}: {exc}; give {forms}") from None
    if not parts.scheme or "://" not in url:
        raise ConfigError(f"{shown} is not a URL: give {forms}")
    for kind in servers.SERVER_KINDS:
        module = modules.get(kind.name)
        if module is None or not kind.archive or kind.from_external is None:
            continue
        try:
            endpoint = kind.external_endpoint(url)
        except (ConfigError, ValueError):
            continue
        database = unquote(parts.path.lstrip("/"))
        if not database or "/" in database:
            raise ConfigError(f"{shown} names no database: give {module.URL_FORM}")
        return Archive(shown, kind.name, endpoint, database, module)
    raise ConfigError(f"{shown}: unknown kind of URL {parts.scheme + '://'!r}; give {forms}")

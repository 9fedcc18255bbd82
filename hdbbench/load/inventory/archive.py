# SPDX-License-Identifier: Apache-2.0
"""Where `hdbbench inventory from-hdb` reads: the URL of a live HDB++ archive resolved to its server
kind, endpoint, database and the backend's `InventoryReader` (hdbbench.backends.abilities.inventory,
where the sessions and the rows they give are defined; hdbbench.load.inventory.from_hdb does the rest
without a line of SQL).

`resolve_url` finds which: the URL's server kind is the one of the stack's database kinds whose
external URL parser takes it (hdbbench.stack.servers.registry), and its reader the `inventory_reader()`
of a backend on that kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from hdbbench.backends import registry
from hdbbench.backends.abilities.inventory import InventoryReader
from hdbbench.model.errors import ConfigError
from hdbbench.stack.servers import registry as servers

# ------------------------------------------------------------------------ where a URL points


@dataclass(frozen=True)
class Archive:
    """Where a URL points: the server kind, its endpoint, the database and the reader of its backends
    (no connection yet)."""

    url: str             # the URL with its password masked
    kind: str
    endpoint: Any
    database: str
    reader: InventoryReader


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


def _inventory_readers() -> dict[str, InventoryReader]:
    """Server kind -> the inventory reader of the backends that run on it (one per kind)."""
    out: dict[str, InventoryReader] = {}
    for e in registry.REGISTRY:
        reader = e.backend_class.inventory_reader()
        if reader is not None:
            out.setdefault(e.server, reader)
    return out


def resolve_url(url: str) -> Archive:
    """The archive a URL names, or ConfigError with one line (the password never in it)."""
    shown = masked(url)
    readers = _inventory_readers()
    forms = " or ".join(r.url_form for r in readers.values())
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise ConfigError(f"cannot parse the URL {shown}: {exc}; give {forms}") from None
    if not parts.scheme or "://" not in url:
        raise ConfigError(f"{shown} is not a URL: give {forms}")
    for kind in servers.SERVER_KINDS:
        reader = readers.get(kind.name)
        if reader is None or not kind.archive or kind.from_external is None:
            continue
        try:
            endpoint = kind.external_endpoint(url)
        except (ConfigError, ValueError):
            continue
        database = unquote(parts.path.lstrip("/"))
        if not database or "/" in database:
            raise ConfigError(f"{shown} names no database: give {reader.url_form}")
        return Archive(shown, kind.name, endpoint, database, reader)
    raise ConfigError(f"{shown}: unknown kind of URL {parts.scheme + '://'!r}; give {forms}")

# SPDX-License-Identifier: Apache-2.0
"""An inventory from a Tango database: what its HDB++ archivers archive today, and how.

Read from the database at TANGO_HOST (and nothing else): every device of class HdbEventSubscriber and
its ``AttributeList`` property, whose lines are ``tango://host:port/domain/family/member/attribute``
optionally followed by ``;strategy=...;ttl=...`` (the name is kept, the rest dropped; the property is
hdbpp-es's list of configured attributes, which ``AttributeAdd`` appends to); and, where there is one,
every configuration manager (class HdbConfigurationManager) with its ``ArchiverList`` property (the
subscribers it manages, device names with or without ``tango://host:port/``; the class property
when the device has none, as hdbpp-cm reads it): a listed archiver the database does not have, and a
subscriber no manager lists, are each said in a warning line.

Each archived attribute is then described by its live device (hdbbench.load.inventory.tango_config): type,
format, write type, array size, and a rate. Rates come from the archive when a URL is given (read as
`inventory from-hdb` reads it), else from the attributes' configuration. The
inventory's groups carry the attribute names; its [[archivers]] are today's assignment.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hdbbench.load.inventory import tango_config
from hdbbench.load.inventory.archive import masked
from hdbbench.load.inventory.from_hdb import DEFAULT_WINDOW_H, read_archive
from hdbbench.load.inventory.grouping import AttributeShape, build_inventory, twice_assigned
from hdbbench.load.inventory.model import Archiver, Inventory
from hdbbench.load.inventory.write import write_inventory
from hdbbench.model.errors import ConfigError, ServerError

SUBSCRIBER_CLASS = "HdbEventSubscriber"
MANAGER_CLASS = "HdbConfigurationManager"
ATTRIBUTE_LIST = "AttributeList"
ARCHIVER_LIST = "ArchiverList"


@dataclass(frozen=True)
class Reading:
    """An inventory read from a facility, the header lines that say how, and the warnings."""

    inventory: Inventory
    header: tuple[str, ...]
    warnings: tuple[str, ...]


def attribute_name(line: str) -> str:
    """The attribute of one AttributeList line: its name, without ``;strategy=...;ttl=...``."""
    return line.split(";", 1)[0].strip()


def device_name(name: str) -> str:
    """A device name without ``tango://host:port/``, lower case (how hdbpp-cm compares archivers)."""
    text = name.strip()
    if text.lower().startswith("tango://"):
        text = text[len("tango://"):].partition("/")[2]
    return text.lower()


def devices_of_class(db: Any, class_name: str) -> list[str]:
    """Every device of `class_name` defined in the database (exported or not), sorted."""
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    try:
        found = list(db.get_device_name("*", class_name))
    except tango.DevFailed:
        found = []
    if not found:  # a database without wildcards in DbGetDeviceList: server by server
        for server in db.get_server_list("*"):
            pairs = list(db.get_device_class_list(server))
            found += [dev for dev, cls in zip(pairs[::2], pairs[1::2]) if cls.lower() == class_name.lower()]
    return sorted(dict.fromkeys(found), key=str.lower)


def property_lines(db: Any, device: str, name: str) -> list[str]:
    return [line for line in db.get_device_property(device, [name])[name] if line.strip()]


def archivers_of(db: Any) -> list[Archiver]:
    """Each HdbEventSubscriber with the attributes of its AttributeList, in its order."""
    return [Archiver(device, tuple(dict.fromkeys(attribute_name(line)
                                                 for line in property_lines(db, device, ATTRIBUTE_LIST))))
            for device in devices_of_class(db, SUBSCRIBER_CLASS)]


def manager_warnings(db: Any, archivers: Sequence[Archiver]) -> tuple[list[str], list[str]]:
    """(the managers and what they manage, for the header; warning lines)."""
    managers = devices_of_class(db, MANAGER_CLASS)
    if not managers:
        return [f"no configuration manager ({MANAGER_CLASS}) in the database"], []
    ours = {a.name.lower(): a.name for a in archivers}
    header: list[str] = []
    warnings: list[str] = []
    managed: set[str] = set()
    for manager in managers:
        listed = property_lines(db, manager, ARCHIVER_LIST)
        if not listed:
            listed = [x for x in db.get_class_property(MANAGER_CLASS, [ARCHIVER_LIST])[ARCHIVER_LIST] if x.strip()]
        header.append(f"configuration manager {manager}: ArchiverList of {len(listed)}")
        missing = [x for x in listed if device_name(x) not in ours]
        managed.update(device_name(x) for x in listed)
        if missing:
            warnings.append(f"configuration manager {manager} lists {len(missing)} archivers the database does not "
                            f"have as {SUBSCRIBER_CLASS}: {tango_config.shown(missing)}")
    unmanaged = [name for key, name in ours.items() if key not in managed]
    if unmanaged:
        warnings.append(f"{len(unmanaged)} {SUBSCRIBER_CLASS} devices are in no manager's {ARCHIVER_LIST}: "
                        f"{tango_config.shown(unmanaged)}")
    return header, warnings


def archive_figures(url: str, window_h: float = DEFAULT_WINDOW_H) -> dict[str, AttributeShape]:
    """What `inventory from-hdb` reads of each attribute of the archive at `url`, by lower-case name."""
    return {shape.name.lower(): shape for shape in read_archive(url, window_h=window_h).attributes}


def archive_rates(url: str | None, names: Sequence[str], window_h: float = DEFAULT_WINDOW_H
                  ) -> tuple[dict[str, float], list[str], str, dict[str, AttributeShape]]:
    """(rates by lower-case name from the archive, warnings, where they come from in words, everything
    the archive says by name)."""
    if not url:
        return {}, [], "", {}
    figures = archive_figures(url, window_h)
    wanted = {n.lower() for n in names}
    rates = {name: float(f.rate_hz) for name, f in figures.items() if name in wanted and f.rate_hz > 0}
    words = f"from the archive {masked(url)} over {window_h:g} h"
    missing = len(wanted - set(rates))
    warnings = [f"{missing} attributes have no events in the archive {masked(url)}: their rates come from "
                "their configuration"] if missing else []
    return rates, warnings, words, figures


def unique_names(names: Iterable[str]) -> list[str]:
    """Each name once (compared without case), in order."""
    seen: set[str] = set()
    out = []
    for name in names:
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return out


def read_tango(tango_host: str, name: str, url: str | None = None,
               default_period_s: float = tango_config.DEFAULT_PERIOD_S, window_h: float = DEFAULT_WINDOW_H) -> Reading:
    """The inventory of what the archivers registered at `tango_host` archive (the module docstring)."""
    if default_period_s <= 0:
        raise ConfigError(f"the default period must be > 0 s, got {default_period_s:g}")
    db = tango_config.database(tango_host)
    archivers = archivers_of(db)
    if not archivers:
        raise ServerError(f"the Tango database {tango_host} has no {SUBSCRIBER_CLASS} device: no archiver to read")
    warnings: list[str] = []
    twice = twice_assigned(archivers)
    if twice:
        warnings.append(f"{len(twice)} attributes are in two archivers' AttributeList; each is kept with the first: "
                        + tango_config.shown([f"{n} ({', '.join(o)})" for n, o in twice.items()]))
    managers, manager_lines = manager_warnings(db, archivers)
    warnings += manager_lines
    names = unique_names(n for a in archivers for n in a.attributes)
    rates, rate_lines, archive_words, _ = archive_rates(url, names, window_h)
    warnings += rate_lines
    described = tango_config.describe(tango_host, names, rates, default_period_s)
    warnings += described.warnings
    if not described.shapes:
        raise ServerError(f"none of the {len(names)} archived attributes could be described by its device: "
                          + " ".join(described.warnings))
    inventory = build_inventory(name, tango_host, described.shapes, archivers)
    header = (f"inventory read by `hdbbench inventory from-tango {tango_host}` at "
              f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M:%S')} UTC",
              f"{len(archivers)} archivers ({SUBSCRIBER_CLASS}, AttributeList): {len(names)} attributes; "
              f"{len(described.shapes)} described by their devices, {len(described.unknown)} unknown (not in the groups)",
              *managers,
              "rates: " + tango_config.rate_words(described.rate_sources, default_period_s,
                                                  f"{described.rate_sources[tango_config.RATE_FROM_CALLER]} "
                                                  f"{archive_words}"),
              "array sizes are the attributes' maximum (max_dim_x, max_dim_y); strings are taken as 20 characters")
    return Reading(inventory, header, tuple(warnings))


def write_reading(reading: Reading, output: Path) -> Path:
    """The reading's inventory into `output` (atomically), its header as comments."""
    return write_inventory(output, reading.inventory, reading.header)

# SPDX-License-Identifier: Apache-2.0
"""An inventory from a yaml2archiving configuration (the tool of tango-controls/hdbpp, used at SKA and
MAX IV to configure HDB++ from YAML).

The format, as its public configurations write it (e.g. SKA's skampi ``attribute_config.yaml``)::

    db: "tango-host:10000"            # the Tango database the devices are in
    manager: mid-eda/cm/01            # the configuration manager (HdbConfigurationManager)
    archiver: mid-eda/es/01           # the event subscriber the attributes go to
    configuration:
      - class: DishLeafNode           # every device of the class ...
        filtering:
          device: "ska_mid/tm_leaf_node/d0001"   # ... whose name matches (here: a regular expression,
                                                 # in full, ignoring case)
        archiver: mid-eda/es/02       # (accepted here, not seen in public files: another archiver)
        attributes:
          state:
            archive_period: 1000      # ms: periodic archive events
            polling_period: 1000      # ms
          healthState:
            code_push_event: true     # the device pushes its archive events itself
            # archive_abs_change, archive_rel_change, archive_strategy: allowed, not used here

Names become ``tango://<db>/<device>/<attribute>`` in lower case (as HDB++ stores them); the archiver
assignment is the top-level ``archiver`` unless an entry or an attribute names another. The devices
of a class need the live Tango database (``types_from``, the only host contacted; the file's ``db``
only names the attributes); the attributes' types come from their devices there, or from the archive
(``url``, read by hdbbench.load.inventory.from_hdb), where only entries naming one device (``filtering:
device`` without a pattern) can be resolved. Rates: the file's ``archive_period`` (else
``polling_period``) where it gives one, else the archive's (with ``url``), else the device's
configuration (hdbbench.load.inventory.tango_config).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hdbbench.load.inventory import tango_config
from hdbbench.load.inventory.archive import masked
from hdbbench.load.inventory.from_hdb import DEFAULT_WINDOW_H
from hdbbench.load.inventory.from_tango import (
    SUBSCRIBER_CLASS,
    Reading,
    archive_rates,
    devices_of_class,
    unique_names,
)
from hdbbench.load.inventory.grouping import AttributeShape, build_inventory
from hdbbench.load.inventory.model import Archiver
from hdbbench.model.errors import ConfigError, ServerError

LITERAL_DEVICE = re.compile(r"[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+")
FILTER_KEYS = ("device",)


@dataclass(frozen=True)
class Entry:
    """One item of `configuration`: a class (or one device), its attributes and their settings."""

    index: int                           # 1-based, for messages
    class_name: str | None
    device_filter: str | None
    archiver: str | None
    attributes: dict[str, dict[str, Any]]


@dataclass(frozen=True)
class ArchivingConfig:
    source: Path
    db: str
    manager: str | None
    archiver: str | None
    entries: tuple[Entry, ...]


def _not_archiving(path: Path, what: str) -> ConfigError:
    return ConfigError(f"{path}: not a yaml2archiving configuration: {what}")


def load_archiving_config(path: str | Path) -> ArchivingConfig:
    """Read and check a yaml2archiving file; one ConfigError line naming the file and what is wrong."""
    # deferred: optional; only YAML files need it
    import yaml

    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}): "
                          "not an archiving configuration") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}: not YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(document, dict):
        raise _not_archiving(path, f"its top level is {type(document).__name__}, not a mapping with "
                                   "db, manager, archiver and configuration")
    configuration = document.get("configuration")
    if not isinstance(configuration, list) or not configuration:
        keys = ", ".join(map(str, document)) or "none"
        raise _not_archiving(path, f"no `configuration` list of classes and their attributes (its keys: {keys})")
    db = document.get("db")
    if not isinstance(db, str) or not db.strip():
        raise _not_archiving(path, "no `db` (the Tango host, HOST:PORT, its devices are in)")
    archiver = _optional_text(path, document, "archiver", "")
    entries = tuple(_entry(path, n + 1, item) for n, item in enumerate(configuration))
    if archiver is None:
        unassigned = [e.index for e in entries if e.archiver is None
                      and any(s.get("archiver") is None for s in e.attributes.values())]
        if unassigned:
            raise _not_archiving(path, f"no `archiver` (the event subscriber) for configuration entry #{unassigned[0]}")
    return ArchivingConfig(path, db.strip(), _optional_text(path, document, "manager", ""), archiver, entries)


def _optional_text(path: Path, mapping: dict[str, Any], key: str, where: str) -> str | None:
    value = mapping.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{path}: {where}`{key}` must be a device name, got {value!r}")
    return value.strip()


def _entry(path: Path, index: int, item: Any) -> Entry:
    where = f"configuration entry #{index}: "
    if not isinstance(item, dict):
        raise ConfigError(f"{path}: {where}must be a mapping with class and attributes, got {item!r}")
    class_name = _optional_text(path, item, "class", where)
    filtering = item.get("filtering") or {}
    if not isinstance(filtering, dict):
        raise ConfigError(f"{path}: {where}`filtering` must be a mapping (device: NAME), got {filtering!r}")
    if unknown := sorted(set(map(str, filtering)) - set(FILTER_KEYS)):
        raise ConfigError(f"{path}: {where}`filtering` by {unknown[0]!r} is not known here (only by device)")
    device = _optional_text(path, filtering, "device", where + "filtering ")
    if class_name is None and (device is None or not LITERAL_DEVICE.fullmatch(device)):
        raise ConfigError(f"{path}: {where}names no `class` (nor one device in filtering: device)")
    attributes = item.get("attributes")
    if not isinstance(attributes, dict) or not attributes:
        raise ConfigError(f"{path}: {where}`attributes` must map attribute names to their settings")
    settings = {}
    for attr, values in attributes.items():
        if values is None:
            values = {}
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: {where}attribute {attr!r}: settings must be a mapping, got {values!r}")
        for key in ("archive_period", "polling_period"):
            if values.get(key) is not None and (isinstance(values[key], bool)
                                                or not isinstance(values[key], (int, float)) or values[key] < 0):
                raise ConfigError(f"{path}: {where}attribute {attr!r}: {key} must be milliseconds >= 0, "
                                  f"got {values[key]!r}")
        _optional_text(path, values, "archiver", f"{where}attribute {attr!r}: ")
        settings[str(attr)] = values
    return Entry(index, class_name, device, _optional_text(path, item, "archiver", where), settings)


def yaml_rate(settings: dict[str, Any]) -> float | None:
    """Events/s the YAML gives an attribute: 1000 / archive_period, else 1000 / polling_period (ms)."""
    for key in ("archive_period", "polling_period"):
        if (period := tango_config.period_ms(settings.get(key))) is not None:
            return 1000.0 / period
    return None


def _devices(config: ArchivingConfig, entry: Entry, db: Any) -> list[str] | str:
    """The entry's devices (lower case), or why they are not known (in words)."""
    pattern = re.compile(entry.device_filter, re.IGNORECASE) if entry.device_filter else None
    if db is None:
        if entry.device_filter and LITERAL_DEVICE.fullmatch(entry.device_filter):
            return [entry.device_filter.lower()]
        return f"class {entry.class_name}: its devices need the Tango database (--types-from HOST)"
    candidates = devices_of_class(db, entry.class_name) if entry.class_name else [entry.device_filter or ""]
    found = [d.lower() for d in candidates if pattern is None or pattern.fullmatch(d)]
    return found or f"no device of class {entry.class_name}" + (f" matching {entry.device_filter!r}"
                                                                if entry.device_filter else "")


def assignment(config: ArchivingConfig, db: Any) -> tuple[list[Archiver], dict[str, float], list[str]]:
    """(archivers with their attributes in the YAML's order, YAML rates by name, warning lines)."""
    owner: dict[str, str] = {}     # name -> archiver (a later entry overrides an earlier one)
    rates: dict[str, float] = {}
    unresolved = []
    for entry in config.entries:
        devices = _devices(config, entry, db)
        if isinstance(devices, str):
            unresolved.append(f"#{entry.index} ({devices})")
            continue
        for device in devices:
            for attr, settings in entry.attributes.items():
                name = f"tango://{config.db}/{device}/{attr}".lower()
                owner.pop(name, None)
                owner[name] = settings.get("archiver") or entry.archiver or config.archiver or ""
                if (rate := yaml_rate(settings)) is not None:
                    rates[name] = rate
    by_archiver: dict[str, list[str]] = {}
    for name, archiver in owner.items():
        by_archiver.setdefault(archiver, []).append(name)
    warnings = [f"{len(unresolved)} configuration entries give no attributes: {tango_config.shown(unresolved)}"] \
        if unresolved else []
    return [Archiver(a, tuple(names)) for a, names in by_archiver.items()], rates, warnings


def read_yaml(path: str | Path, name: str, types_from: str | None = None, url: str | None = None,
              default_period_s: float = tango_config.DEFAULT_PERIOD_S, window_h: float = DEFAULT_WINDOW_H) -> Reading:
    """The inventory a yaml2archiving file configures (the module docstring)."""
    config = load_archiving_config(path)
    if types_from is None and not url:
        raise ConfigError(f"{config.source}: the attributes' types need their live devices or the archive: give "
                          f"--types-from HOST:PORT (the file's db is {config.db}) or --url ARCHIVE_URL")
    db = tango_config.database(types_from) if types_from else None
    archivers, yaml_rates, warnings = assignment(config, db)
    names = unique_names(n for a in archivers for n in a.attributes)
    if not names:
        raise ServerError(f"{config.source}: no attribute to archive found: " + " ".join(warnings))
    archive, rate_lines, archive_words, figures = archive_rates(url, names, window_h)
    given = {**{k: v for k, v in archive.items() if k not in yaml_rates}, **yaml_rates}   # the file's periods win
    if types_from:
        warnings += rate_lines
        described = tango_config.describe(types_from, names, given, default_period_s)
        types = f"the devices of {types_from}"
    else:
        described = from_archive(names, figures, given)
        types = f"the archive {masked(url or '')}"
    warnings += described.warnings
    if not described.shapes:
        raise ServerError(f"{config.source}: none of its {len(names)} attributes could be described by {types}: "
                          + " ".join(described.warnings))
    if db is not None:
        known = {a.lower() for a in devices_of_class(db, SUBSCRIBER_CLASS)}
        if absent := [a.name for a in archivers if a.name.lower() not in known]:
            warnings.append(f"{len(absent)} archivers of the file are not {SUBSCRIBER_CLASS} devices in "
                            f"{types_from}: " + tango_config.shown(absent))
    from_file = sum(1 for n in names if n.lower() in yaml_rates)
    from_archive_ = sum(1 for n in names if n.lower() in archive and n.lower() not in yaml_rates)
    words = "; ".join(x for x in (from_file and f"{from_file} from the file's archive_period or polling_period",
                                  from_archive_ and f"{from_archive_} {archive_words}")
                      if x)
    header = (f"inventory read by `hdbbench inventory from-yaml {config.source}` at "
              f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M:%S')} UTC",
              f"yaml2archiving configuration for db {config.db}, manager {config.manager or '(none)'}: "
              f"{len(config.entries)} entries, {len(archivers)} archivers, {len(names)} attributes",
              f"types from {types}: {len(described.shapes)} described, {len(described.unknown)} unknown "
              "(not in the groups)",
              "rates: " + tango_config.rate_words(described.rate_sources, default_period_s, words or "given"),
              "array sizes are the attributes' maximum; strings are taken as 20 characters")
    inventory = build_inventory(name, config.source, described.shapes, archivers)
    return Reading(inventory, header, tuple(warnings))


def from_archive(names: list[str], figures: dict[str, AttributeShape], rates: dict[str, float]) -> tango_config.Described:
    """Shapes from what the archive says of each attribute (`figures` by lower-case name), at `rates`
    where given (else the archive's own rate)."""
    out = tango_config.Described()
    for name in names:
        f = figures.get(name.lower())
        if f is None:
            out.unknown[name] = "not in the archive"
            continue
        out.shapes.append(replace(f, name=name, rate_hz=rates.get(name.lower(), f.rate_hz)))
        out.rate_sources[tango_config.RATE_FROM_CALLER] += 1
    if out.unknown:
        out.warnings.append(f"{len(out.unknown)} attributes unknown, left out of the groups: "
                            + tango_config.shown([f"{n} ({why})" for n, why in out.unknown.items()]))
    return out

# SPDX-License-Identifier: Apache-2.0
"""Subscriber kinds: the HDB++ event subscribers a scenario compares, each measured on every backend.

    [[subscribers.kinds]]
    name = "hdbbench-es"                       # ours: binary defaults to the built one

    [[subscribers.kinds]]
    name = "hdbpp-es"
    binary = "/usr/bin/hdb++es-srv"            # any HdbEventSubscriber executable
    env = { LD_LIBRARY_PATH = "/opt/hdbpp/lib" }
    lib_configuration = { libname = "libhdb++timescale.so.2" }   # merged over the generated lines

Without the table the one kind is ours (`DEFAULT_KIND`). Every kind is driven the same way, through
the Tango interface of class HdbEventSubscriber only (hdbbench.subscribers.launcher); the first kind is the
reference of the report's ratios. A kind's `lib_configuration` is merged over the generated lines and
the scenario's ``[subscribers] lib_configuration``; a batch-size sweep still sets ``batch_size``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.backends.registry import backend_class
from hdbbench.model.tomlfile import Table
from hdbbench.subscribers.launcher import DEFAULT_BINARY

OURS = "hdbbench-es"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
# Tango's event consumer (cppTango 9.3.4 ... 10.3.3) sends its subscriptions on one ZeroMQ SUB socket with
# this send high-water mark; past it, libzmq drops the topics it replays to a device server connected
# later, for good (hdbpp-reference.md §1c). An archiver subscribes two topics per attribute.
TANGO_SUB_SEND_HWM = 10_000
TOPICS_PER_ATTRIBUTE = 2


@dataclass(frozen=True)
class SubscriberKind:
    name: str = OURS
    binary: Path | None = None                        # None: our built subscriber
    env: tuple[tuple[str, str], ...] = ()             # added to the subscriber process's environment
    lib_configuration: tuple[tuple[str, str], ...] = ()
    # Attributes one process of this kind archives without losing subscriptions (None: no limit).
    # Default: ours lifts Tango's limit (its `event_sub_send_hwm`, 0 = unlimited); any other binary
    # is taken to have Tango's, 10,000 topics / 2 = 5,000. A kind that knows better says so.
    safe_attributes: int | None = None

    def executable(self) -> Path:
        return self.binary if self.binary is not None else DEFAULT_BINARY

    @property
    def slug(self) -> str:
        """The name as it may appear in trial labels, file names and database names."""
        return slugify(self.name)

    @property
    def ours(self) -> bool:
        """Our subscriber (hdbbench-es): the built binary, whose own keys (spool, queue) apply."""
        return self.binary is None or self.binary.resolve() == DEFAULT_BINARY.resolve()

    def send_hwm(self, lib_configuration: Mapping[str, str] = {}) -> int | None:
        """The send high-water mark of this kind's event consumer (None: unlimited): ours reads
        `event_sub_send_hwm` (0 = unlimited, its default); another binary is Tango's own."""
        if not self.ours:
            return TANGO_SUB_SEND_HWM  # another binary: Tango's own consumer, as the real hdbpp-es
        given = {**dict(lib_configuration), **dict(self.lib_configuration)}.get("event_sub_send_hwm", "0")
        return int(given) if str(given).isdigit() and int(given) > 0 else None

    def attribute_limit(self, lib_configuration: Mapping[str, str] = {}) -> int | None:
        """Attributes per process before subscriptions are lost: the kind's `safe_attributes`, else
        what its send high-water mark allows (two topics per attribute)."""
        if self.safe_attributes is not None:
            return self.safe_attributes
        hwm = self.send_hwm(lib_configuration)
        return None if hwm is None else hwm // TOPICS_PER_ATTRIBUTE

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "binary": str(self.executable()), "env": dict(self.env),
                "lib_configuration": dict(self.lib_configuration), "safe_attributes": self.safe_attributes}


def unproven_cause(unproven: int, attributes_per_process: int, hwm: int | None) -> str | None:
    """The likely cause of attributes whose event path could not be proven, from the topic count."""
    if not unproven:
        return None
    topics = attributes_per_process * TOPICS_PER_ATTRIBUTE
    if hwm is not None and topics > hwm:
        return (f"{topics:,} topics per subscriber process > {hwm:,}: Tango's event consumer dropped "
                "subscriptions to the device servers connected later (subscriber/README.md, Tango's event consumer limit)")
    return (f"not Tango's event consumer limit ({topics:,} topics per process"
            + (f", within its {hwm:,}" if hwm is not None else ", no limit") + "): read the subscriber's log")


DEFAULT_KIND = SubscriberKind()


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "kind"


def trial_label(backend: str, kind_index: int, kind: SubscriberKind, trial: str) -> str:
    """``<backend>_<trial>`` for the first kind (as without kinds); ``<backend>_<kind>_<trial>`` for the others."""
    return f"{backend}_{trial}" if kind_index == 0 else f"{backend}_{kind.slug}_{trial}"


def parse_kinds(subscribers: Table, backends: Sequence[str], scenario_lib: Mapping[str, str]) -> tuple[SubscriberKind, ...]:
    """The ``[[subscribers.kinds]]`` entries, checked completely (names unique, binaries executable,
    LibConfiguration values the backends' libraries accept); () when the scenario has none."""
    for backend in backends:
        if (problem := lib_configuration_problem(backend, scenario_lib)) is not None:
            raise subscribers.fail("lib_configuration", f"{problem} (backend {backend})")
    kinds: list[SubscriberKind] = []
    for entry in subscribers.tables("kinds"):
        kind = _parse_kind(entry)
        if any(k.name == kind.name or k.slug == kind.slug for k in kinds):
            raise entry.fail("name", f"{kind.name!r} names a kind twice (kind names must be unique)")
        merged = {**scenario_lib, **dict(kind.lib_configuration)}
        for backend in backends:
            if (problem := lib_configuration_problem(backend, merged)) is not None:
                raise entry.fail("lib_configuration", f"{problem} (backend {backend})")
        kinds.append(kind)
        entry.finish()
    return tuple(kinds)


def _parse_kind(entry: Table) -> SubscriberKind:
    name = entry.string("name")
    if not _NAME.match(name):
        raise entry.fail("name", f"{name!r} must start with a letter or digit and hold only letters, digits, "
                                 "'_', '.', '+' and '-'")
    binary = None
    if (given := entry.string("binary", None)) is not None:
        binary = Path(given).expanduser()
        if not binary.is_absolute():  # relative to the scenario's folder, else to the working directory
            near = entry.document.source.parent / binary
            binary = (near if near.exists() or not binary.exists() else binary).resolve()
        if not binary.is_file():
            raise entry.fail("binary", f"{binary}: no such file")
        if not os.access(binary, os.X_OK):
            raise entry.fail("binary", f"{binary}: not executable")
    env = _string_pairs(entry, "env")
    for key, _ in env:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
            raise entry.fail("env", f"{key!r} is not an environment variable name")
    lib = _string_pairs(entry, "lib_configuration")
    safe = entry.count("safe_attributes", None)
    return SubscriberKind(name=name, binary=binary, env=env, lib_configuration=lib, safe_attributes=safe)


def _string_pairs(entry: Table, key: str) -> tuple[tuple[str, str], ...]:
    """A table of free keys whose values are strings or numbers (kept as text, as LibConfiguration lines are)."""
    values = entry.mapping(key, {})
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise entry.fail(key, f"{name}: must be a string or a number, got {value!r}")
    return tuple((str(k), str(v)) for k, v in values.items())


def lib_configuration_problem(backend: str, lines: Mapping[str, str]) -> str | None:
    """What the real library of `backend` would refuse or crash on in these LibConfiguration keys."""
    return backend_class(backend).lib_configuration_problem(lines)


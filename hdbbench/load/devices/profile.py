# SPDX-License-Identifier: Apache-2.0
"""Device profiles (TOML, see devices/profiles/): an attribute mix, read and validated completely.

`load_profile` refuses an unknown type, a negative rate, an empty image, a name Tango rejects ... with
a `ConfigError` naming ``file:line`` before anything is registered or started.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from hdbbench.load import emitter as em
from hdbbench.model.paths import REPO
from hdbbench.model.tomlfile import Table, kind_name, read_document

REPO_ROOT = REPO
PROFILES_DIR = REPO_ROOT / "devices" / "profiles"


# Names the device itself uses; a generated attribute must not take them (Tango is case-insensitive).
RESERVED_NAMES = frozenset(n.lower() for n in (
    "State", "Status", "Running", "EmitterSeed", "GeneratedAttributes", "EventsEmittedList",
    "ErrorsEmittedList", "ChecksumList", "AchievedRateList", "TargetRateList", "EventsEmittedTotal",
    "AchievedRate", "MaxLag", "PushFailures", "Statistics"))
_ATTR_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
_DEVICE_PREFIX = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SPEC_FIELDS = {f.name for f in fields(em.AttrSpec)}
_ALIASES = {"ro": "READ", "rw": "READ_WRITE", "read": "READ", "read_write": "READ_WRITE"}
MAX_ATTRIBUTES = 100_000    # per profile: a larger fleet is surely a typo (and would not fit in memory)
MAX_RATE_HZ = 1e6           # per attribute: an archive event every microsecond


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    path: Path
    seed: int
    servers: int
    devices_per_server: int
    device_prefix: str
    attributes: tuple[em.AttrSpec, ...]
    timestamps: str = "schedule"       # source timestamps: em.TIMESTAMP_MODES
    phases: str = "aligned"            # schedule phases: em.PHASE_MODES


def _canonical(field_name: str, value: Any) -> Any:
    """Accept case-insensitive spellings of enumerated fields."""
    if field_name == "type" and isinstance(value, str):
        low = {t.lower(): t for t in em.TYPES} | {t.lower()[3:]: t for t in em.TYPES}
        return low.get(value.lower(), value)
    if field_name in ("format",) and isinstance(value, str):
        return value.upper()
    if field_name == "write" and isinstance(value, str):
        return _ALIASES.get(value.lower(), value)
    if field_name == "labels" and isinstance(value, list):
        return tuple(value)
    return value


def _spec_from(entry: Mapping[str, Any], defaults: Mapping[str, Any]) -> em.AttrSpec:
    merged = {k: _canonical(k, v) for k, v in {**defaults, **entry}.items()}
    _check_field_types(merged)
    try:
        spec = em.validate_spec(em.AttrSpec(**merged))
    except TypeError as exc:  # a wrongly typed field: dataclass or math error
        raise em.SpecError(str(exc)) from None
    if spec.rate_hz > MAX_RATE_HZ:
        raise em.SpecError(f"rate_hz must be <= {MAX_RATE_HZ:g}, got {spec.rate_hz:g}")
    return spec


def _check_field_types(merged: Mapping[str, Any]) -> None:
    """A field of the wrong type is named with its key (not as a math error deep in validation)."""
    for f in fields(em.AttrSpec):
        if f.name not in merged or merged[f.name] is None:
            continue
        value, wanted = merged[f.name], _FIELD_KINDS.get(str(f.type).split(" |")[0])
        if wanted and (isinstance(value, bool) and bool not in wanted or not isinstance(value, wanted)):
            shown = tuple(list if k is tuple else k for k in wanted)
            raise em.SpecError(f"{f.name} must be {kind_name(shown)}, got {value!r}")
        if isinstance(value, float) and value != value:
            raise em.SpecError(f"{f.name} must be a number, got nan")


_FIELD_KINDS: dict[str, tuple[type, ...]] = {
    "str": (str,), "float": (int, float), "int": (int,), "tuple[str, ...]": (tuple,)}


def _expand_attribute(entry: dict[str, Any], defaults: Mapping[str, Any]) -> list[em.AttrSpec]:
    count = entry.pop("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_ATTRIBUTES:
        raise em.SpecError(f"count must be an integer from 1 to {MAX_ATTRIBUTES}, got {count!r}")
    base = _spec_from(entry, defaults)
    if count == 1:
        return [base]
    width = len(str(count - 1))
    return [em.replace_spec(base, name=f"{base.name}_{i:0{width}d}") for i in range(count)]


def _expand_matrix(entry: dict[str, Any], defaults: Mapping[str, Any]) -> list[em.AttrSpec]:
    """Every type x format x write type of the lists ("all" = every one Tango allows)."""
    def pick(key: str, universe: Sequence[str], field_name: str) -> list[str]:
        val = entry.pop(key, "all")
        vals = list(universe) if val == "all" else [_canonical(field_name, v) for v in val]
        for v in vals:
            if v not in universe:
                raise em.SpecError(f"{key}: unknown {field_name} {v!r}")
        return vals

    types = pick("types", list(em.TYPES), "type")
    formats = pick("formats", em.FORMATS, "format")
    writes = pick("writes", em.WRITE_TYPES, "write")
    prefix = entry.pop("name_prefix", "")
    per_type = entry.pop("per_type", {})
    out = []
    for t in types:
        for f in formats:
            if em.TYPES[t].kind == "encoded" and f != "SCALAR":
                continue  # Tango allows DevEncoded only as SCALAR
            for w in writes:
                name = f"{prefix}{t[3:].lower()}_{f.lower()}_{'rw' if w == 'READ_WRITE' else 'ro'}"
                fields_ = {**entry, **per_type.get(t, {}), "type": t, "format": f, "write": w, "name": name}
                if f == "SCALAR":
                    fields_.pop("dim_y", None)
                out.append(_spec_from(fields_, defaults))
    return out


_ENTRY_KEYS = {  # the keys an entry of each kind may give
    "attribute": _SPEC_FIELDS | {"count"},
    "matrix": _SPEC_FIELDS - {"type", "format", "write", "name"}
    | {"types", "formats", "writes", "name_prefix", "per_type"},
}


def load_profile(path: str | Path) -> Profile:
    """Read and validate a profile; raise ConfigError "file:line: entry: problem" on the first problem."""
    path = Path(path)
    top = read_document(path, "device profile").root()
    head = top.table("profile")
    name = head.string("name", path.stem)
    if not _PROFILE_NAME.match(name):
        raise head.fail("name", f"{name!r} must be lower-case letters, digits and '-' (≤ 48)")
    seed = head.seed("seed", 1)
    servers = head.count("servers", 1)
    per_server = head.count("devices_per_server", 1)
    timestamps = head.choice("timestamps", em.TIMESTAMP_MODES, "schedule")
    phases = head.choice("phases", em.PHASE_MODES, "aligned")
    prefix = head.string("device_prefix", f"sim/{name}")
    if not _DEVICE_PREFIX.match(prefix):
        raise head.fail("device_prefix", f"{prefix!r} must be 'domain/family'")
    description = head.string("description", "")
    head.finish()
    defaults_table = top.table("defaults")
    defaults_table.known(*(_SPEC_FIELDS - {"name"}))
    defaults_table.finish()
    defaults = dict(defaults_table.values)
    specs: list[tuple[em.AttrSpec, Table]] = []
    for kind, expand in (("attribute", _expand_attribute), ("matrix", _expand_matrix)):
        for entry in top.tables(kind):
            entry.known(*_ENTRY_KEYS[kind])
            entry.finish()
            if kind == "attribute":
                _check_attribute_name(entry)
            try:
                expanded = expand(dict(entry.values), defaults)
            except em.SpecError as exc:
                raise entry.fail(None, str(exc), at=_field_in(str(exc))) from None
            specs += [(s, entry) for s in expanded]
            if len(specs) > MAX_ATTRIBUTES:
                raise entry.fail(None, f"the profile defines more than {MAX_ATTRIBUTES} attributes", at="count")
    top.finish()
    if not specs:
        raise top.fail(None, "the profile defines no [[attribute]] or [[matrix]] entry")
    _check_names(specs)
    return Profile(name, description, path, seed, servers, per_server, prefix, tuple(s for s, _ in specs),
                   timestamps, phases)


def _check_attribute_name(entry: Table) -> None:
    name = entry.string("name")
    if not _ATTR_NAME.match(name):
        raise entry.fail(None, f"{name!r} is not a valid Tango attribute name "
                               "(a letter, then letters, digits or '_', at most 64)", at="name")


def _field_in(message: str) -> str | None:
    """The key a SpecError message is about (its line is the one to show), if it names one."""
    m = re.search(r"\b(" + "|".join(sorted(_SPEC_FIELDS | {"count", "types", "formats", "writes"},
                                            key=len, reverse=True)) + r")\b", message)
    return m.group(1) if m else None


def _check_names(specs: list[tuple[em.AttrSpec, Table]]) -> None:
    seen: dict[str, str] = {}
    for spec, entry in specs:
        low = spec.name.lower()
        if not _ATTR_NAME.match(spec.name):
            raise entry.fail(None, f"{spec.name!r} is not a valid Tango attribute name")
        if low in RESERVED_NAMES:
            raise entry.fail(None, f"{spec.name!r} is reserved by the device", at="name")
        if low in seen:
            raise entry.fail(None, f"attribute {spec.name!r} also defined by {seen[low]} (names are case-insensitive)",
                             at="name")
        seen[low] = entry.label

# SPDX-License-Identifier: Apache-2.0
"""A facility's attribute inventory: the groups of archived attributes, their rates and retention.

An inventory (TOML) lists groups of archived attributes:

    name = "example-facility"
    retention_days = 730            # default for every group

    [[attributes]]
    label = "BPM positions"         # optional, defaults to <format>_<type>_<write>
    type = "devdouble"              # Tango type: devdouble, DevDouble or DEV_DOUBLE
    format = "scalar"               # scalar | spectrum | image
    write = "ro"                    # ro (READ) | rw (READ_WRITE and the other written types)
    count = 4000                    # attributes in the group
    rate_hz = 1.0                   # archive events per attribute per second ...
    # period_s = 10                 # ... or one event every period_s (exactly one of the two)
    elements = 1000                 # spectrum length (spectrum only)
    # dims = [640, 480]             # image width and height (image only)
    # string_chars = 20             # devstring only: characters per value
    # retention_days = 365          # overrides the default

Validation is complete before anything else: an unknown key, a wrong type or an impossible value is
a ConfigError naming the file, the line and the key
(``inventories/x.toml:9: [[attributes]] #3 rate_hz: must be > 0, got 0``).

The one reader of inventories: the sizing projection (hdbbench.parts.disk.sizing), the facility's
simulated devices (hdbbench.load.facility) and the archiver plans all take an `Inventory` from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, TangoType, parse_type
from hdbbench.model.tomlfile import Table, from_values, read_document, suggestion

MAX_RATE_HZ = 1e6           # per attribute: an archive event every microsecond
MAX_ELEMENTS = 1 << 24      # per spectrum or image, as for the simulated devices: more is surely a typo


@dataclass(frozen=True)
class Group:
    label: str
    type: TangoType
    format: AttrFormat
    write: str  # ro | rw
    count: int
    rate_hz: float
    dim_x: int = 1
    dim_y: int = 0
    string_chars: int = 20
    retention_days: float = 365.0
    # What a live archive says of the group's values (hdbbench inventory from-hdb); None: not known.
    error_share: float | None = None     # events stored with an error instead of a value
    invalid_share: float | None = None   # events of INVALID quality (no value)
    value_step: float | None = None      # mean |value - previous value| of a scalar numeric attribute
    repeat_share: float | None = None    # events whose value equals the previous one
    names: tuple[str, ...] = ()          # the archive's attribute names (count of them), where read

    @property
    def elements(self) -> int:
        if self.format == AttrFormat.SCALAR:
            return 1
        return self.dim_x * (self.dim_y if self.format == AttrFormat.IMAGE else 1)

    @property
    def events_per_day(self) -> float:
        return self.count * self.rate_hz * 86400.0

    def to_dict(self) -> dict[str, Any]:
        out = {"label": self.label, "type": self.type.suffix, "format": self.format.name.lower(), "write": self.write,
               "count": self.count, "rate_hz": self.rate_hz, "elements": self.elements, "dim_x": self.dim_x,
               "dim_y": self.dim_y, "string_chars": self.string_chars, "retention_days": self.retention_days}
        for key in VALUE_STATISTICS:
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


VALUE_STATISTICS = ("error_share", "invalid_share", "value_step", "repeat_share")


@dataclass(frozen=True)
class Archiver:
    """One archiver (an HdbEventSubscriber device) and the attributes assigned to it."""

    name: str
    attributes: tuple[str, ...]


@dataclass(frozen=True)
class Inventory:
    name: str
    source: Path
    groups: tuple[Group, ...]
    archivers: tuple[Archiver, ...] = ()   # today's assignment, where the source records one

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "source": str(self.source), "groups": [g.to_dict() for g in self.groups]}
        if self.archivers:
            out["archivers"] = [{"name": a.name, "attributes": len(a.attributes)} for a in self.archivers]
        return out


# ----------------------------------------------------------------------------------- parsing


def load_inventory(path: str | Path) -> Inventory:
    """Read and validate an inventory completely; ConfigError "file:line: key: problem" otherwise."""
    return _parse(read_document(path, "inventory").root())


def parse_inventory(document: dict[str, Any], source: str | Path) -> Inventory:
    """An inventory from values already parsed (no line numbers in its errors)."""
    return _parse(from_values(document, source).root())


def _parse(top: Table) -> Inventory:
    name = top.string("name")
    if not name:
        raise top.fail("name", "must not be empty")
    retention = top.positive("retention_days", 365.0)
    if not top.has("attributes"):
        raise top.fail("attributes", "is missing: give at least one [[attributes]] group")
    groups = [_parse_group(entry, retention) for entry in top.tables("attributes", required=True, name_key="label")]
    archivers = tuple(_parse_archiver(entry) for entry in top.tables("archivers", name_key="name"))
    top.finish()
    labels = [g.label for g in groups]
    duplicate = next((x for x in labels if labels.count(x) > 1), None)
    if duplicate:
        raise top.fail("attributes", f"has two groups labelled {duplicate!r}; give them distinct labels")
    names = [a.name for a in archivers]
    if twice := next((x for x in names if names.count(x) > 1), None):
        raise top.fail("archivers", f"names the archiver {twice!r} twice")
    seen: set[str] = set()
    for attribute in (n for a in archivers for n in a.attributes):
        if attribute in seen:
            raise top.fail("archivers", f"assigns {attribute!r} to two archivers")
        seen.add(attribute)
    return Inventory(name, top.document.source, tuple(groups), archivers)


def _parse_archiver(r: Table) -> Archiver:
    name = r.string("name")
    if not name:
        raise r.fail("name", "must not be empty")
    attributes = tuple(r.list_of("attributes", str, [], non_empty=False))
    r.finish()
    return Archiver(name, attributes)


def _parse_group(r: Table, default_retention: float) -> Group:
    type_text = r.string("type")
    try:
        ttype = parse_type(type_text)
    except ConfigError:
        raise r.fail("type", f"is not a Tango type: {type_text!r}"
                             + suggestion(type_text.lower(), [t.suffix for t in TangoType])) from None
    fmt = AttrFormat[r.choice("format", ("scalar", "spectrum", "image"), "scalar").upper()]
    write = r.choice("write", ("ro", "rw"), "ro")
    count = r.count("count", 1)
    rate = _rate(r)
    dim_x, dim_y = _dims(r, fmt)
    if fmt != AttrFormat.SCALAR and ttype == TangoType.DEV_ENCODED:
        raise r.fail("format", "must be scalar for devencoded (Tango allows DevEncoded only as a scalar)")
    chars = r.count("string_chars", 20)
    if r.has("string_chars") and ttype != TangoType.DEV_STRING:
        raise r.fail("string_chars", "applies to devstring only")
    retention = r.positive("retention_days", default_retention)
    shares = {key: r.number(key, None, minimum=0.0, maximum=1.0) if r.has(key) else None
              for key in ("error_share", "invalid_share", "repeat_share")}
    step = r.number("value_step", None, minimum=0.0) if r.has("value_step") else None
    names = tuple(r.list_of("names", str, [], non_empty=False))
    if names and len(names) != count:
        raise r.fail("names", f"lists {len(names)} names for a group of count = {count}")
    default_label = f"{fmt.name.lower()}_{ttype.suffix}_{write}" + (f"_x{dim_x}" if fmt == AttrFormat.SPECTRUM else "")
    label = r.string("label", default_label)
    r.finish()
    return Group(label, ttype, fmt, write, count, rate, dim_x, dim_y, chars, retention, value_step=step, names=names,
                 **shares)


def _rate(r: Table) -> float:
    has_rate, has_period = r.has("rate_hz"), r.has("period_s")
    r.known("rate_hz", "period_s")
    if has_rate == has_period:
        raise r.fail("rate_hz", "give exactly one of rate_hz and period_s")
    if has_rate:
        return r.number("rate_hz", positive=True, maximum=MAX_RATE_HZ)
    return 1.0 / r.number("period_s", positive=True, minimum=1.0 / MAX_RATE_HZ)


def _dims(r: Table, fmt: AttrFormat) -> tuple[int, int]:
    r.known("elements", "dims")  # which one applies depends on the format
    if fmt == AttrFormat.SCALAR:
        for key in ("elements", "dims"):
            if r.has(key):
                raise r.fail(key, "applies to spectrum/image groups only")
        return 1, 0
    if fmt == AttrFormat.SPECTRUM:
        if r.has("dims"):
            raise r.fail("dims", "applies to images; give a spectrum's length as elements")
        if not r.has("elements"):
            raise r.fail("elements", "is missing (the spectrum length)")
        return r.integer("elements", minimum=1, maximum=MAX_ELEMENTS), 0
    if r.has("elements"):
        raise r.fail("elements", "applies to spectra; give an image's size as dims = [width, height]")
    if not r.has("dims"):
        raise r.fail("dims", "is missing (dims = [width, height])")
    dims = r.list_of("dims", int, minimum=1)
    if len(dims) != 2:
        raise r.fail("dims", f"must be [width, height] with integers >= 1, got {dims!r}")
    if dims[0] * dims[1] > MAX_ELEMENTS:
        raise r.fail("dims", f"{dims[0]} x {dims[1]} is more than {MAX_ELEMENTS} elements")
    return int(dims[0]), int(dims[1])

# SPDX-License-Identifier: Apache-2.0
"""Archived attributes, one by one, into the groups of an inventory.

Each attribute is described by what HDB++ stores it as (type, format, write type, array size) and by
its rate. Attributes of the same type, format, write side (ro: READ; rw: the written kinds), array
size and rate band are one group, which lists their names; the band is the rate rounded to two
significant digits (1.0, 0.33, 0.017 Hz ...), and the group's rate is its members' mean. The result
is the Inventory hdbbench.sizing reads (hdbbench.inventory.write writes it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hdbbench.hdbtypes import AttrFormat, TangoType, WriteType
from hdbbench.sizing import MAX_ELEMENTS, MAX_RATE_HZ, Archiver, Group, Inventory

ARCHIVABLE_TYPES = frozenset(int(t) for t in TangoType)


@dataclass(frozen=True)
class AttributeShape:
    """One archived attribute as HDB++ stores it, and its archive events per second."""

    name: str
    type: TangoType
    format: AttrFormat
    write: WriteType
    dim_x: int = 1        # spectrum length / image width (the attribute's maximum)
    dim_y: int = 0        # image height
    rate_hz: float = 1.0

    @property
    def side(self) -> str:
        return "ro" if self.write == WriteType.READ else "rw"

    @property
    def elements(self) -> int:
        if self.format == AttrFormat.SCALAR:
            return 1
        return self.dim_x * (self.dim_y if self.format == AttrFormat.IMAGE else 1)


def shape_of(name: str, data_type: int, data_format: int, writable: int, max_dim_x: int, max_dim_y: int,
             rate_hz: float) -> AttributeShape | str:
    """The shape from an attribute's Tango configuration numbers, or why HDB++ cannot archive it
    (in words)."""
    if int(data_type) not in ARCHIVABLE_TYPES:
        return f"type {int(data_type)} is not archived by HDB++"
    ttype, fmt = TangoType(int(data_type)), AttrFormat(int(data_format))
    if fmt != AttrFormat.SCALAR and ttype == TangoType.DEV_ENCODED:
        return "DevEncoded is archived as a scalar only"
    dim_x = max(1, int(max_dim_x)) if fmt != AttrFormat.SCALAR else 1
    dim_y = max(1, int(max_dim_y)) if fmt == AttrFormat.IMAGE else 0
    shape = AttributeShape(name, ttype, fmt, WriteType(int(writable)), dim_x, dim_y, rate_hz)
    if shape.elements > MAX_ELEMENTS:
        return f"{shape.elements} elements is more than an inventory takes ({MAX_ELEMENTS})"
    return shape


def rate_band(rate_hz: float) -> float:
    """The rate rounded to two significant digits: the groups' rate bands."""
    if rate_hz <= 0 or not math.isfinite(rate_hz):
        raise ValueError(f"a rate must be > 0, got {rate_hz!r}")
    return float(f"{rate_hz:.2g}")


def _label(ttype: TangoType, fmt: AttrFormat, side: str, dim_x: int, dim_y: int, band: float) -> str:
    size = f"_x{dim_x}" if fmt == AttrFormat.SPECTRUM else f"_{dim_x}x{dim_y}" if fmt == AttrFormat.IMAGE else ""
    return f"{fmt.name.lower()}_{ttype.suffix}_{side}{size}_{band:g}hz"


def group_shapes(shapes: Iterable[AttributeShape]) -> tuple[Group, ...]:
    """One Group per (type, format, write side, size, rate band), its names in the order given;
    groups ordered by type, format, side, size and band."""
    members: dict[tuple[TangoType, AttrFormat, str, int, int, float], list[AttributeShape]] = {}
    for shape in shapes:
        rate = min(shape.rate_hz, MAX_RATE_HZ)
        key = (shape.type, shape.format, shape.side, shape.dim_x, shape.dim_y, rate_band(rate))
        members.setdefault(key, []).append(shape)
    groups = []
    for key in sorted(members, key=lambda k: (int(k[0]), int(k[1]), k[2], k[3], k[4], k[5])):
        ttype, fmt, side, dim_x, dim_y, band = key
        shapes_of = members[key]
        mean = sum(min(s.rate_hz, MAX_RATE_HZ) for s in shapes_of) / len(shapes_of)
        groups.append(Group(_label(ttype, fmt, side, dim_x, dim_y, band), ttype, fmt, side, len(shapes_of),
                            mean, dim_x, dim_y, names=tuple(s.name for s in shapes_of)))
    return tuple(groups)


def build_inventory(name: str, source: str | Path, shapes: Sequence[AttributeShape],
                    archivers: Sequence[Archiver]) -> Inventory:
    """The inventory of `shapes` with today's assignment `archivers` (an attribute listed by two
    archivers is kept with the first: the inventory assigns each attribute once)."""
    seen: set[str] = set()
    kept = []
    for archiver in archivers:
        names = tuple(n for n in dict.fromkeys(archiver.attributes) if n.lower() not in seen)
        seen.update(n.lower() for n in names)
        kept.append(Archiver(archiver.name, names))
    return Inventory(name, Path(source), group_shapes(shapes), tuple(kept))


def twice_assigned(archivers: Sequence[Archiver]) -> dict[str, list[str]]:
    """Attribute (lower case) -> the archivers listing it, for those listed by more than one."""
    where: dict[str, list[str]] = {}
    for archiver in archivers:
        for name in dict.fromkeys(n.lower() for n in archiver.attributes):
            where.setdefault(name, []).append(archiver.name)
    return {name: owners for name, owners in where.items() if len(owners) > 1}

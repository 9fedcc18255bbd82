# SPDX-License-Identifier: Apache-2.0
"""Archived attributes, one by one, into the groups of an inventory.

Each attribute is described by what HDB++ stores it as (type, format, write type, array size) and by
its rate. Attributes of the same type, format, write side (ro: READ; rw: the written kinds), array
size and rate band are one group, which lists their names; the band is the rate rounded to two
significant digits (1.0, 0.33, 0.017 Hz ...), and the group's rate is its members' mean. A group's
label says its shape and period ("scalar devdouble ro every 10 s"), whichever source the attributes
came from (an archive, a Tango database, a yaml2archiving file). The result is the Inventory
hdbbench.parts.disk.sizing reads (hdbbench.load.inventory.write writes it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hdbbench.load.inventory.figures import NUMERIC_TYPES, ValueTally
from hdbbench.load.inventory.model import MAX_ELEMENTS, MAX_RATE_HZ, Archiver, Group, Inventory
from hdbbench.model.hdbtypes import AttrFormat, TangoType, WriteType

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
    values: ValueTally | None = None   # what its stored events say (an archive's), where read

    @property
    def side(self) -> str:
        return "ro" if self.write == WriteType.READ else "rw"

    @property
    def elements(self) -> int:
        if self.format == AttrFormat.SCALAR:
            return 1
        return self.dim_x * (self.dim_y if self.format == AttrFormat.IMAGE else 1)


def shape_of(name: str, data_type: int, data_format: int, writable: int, max_dim_x: int, max_dim_y: int,
             rate_hz: float, values: ValueTally | None = None) -> AttributeShape | str:
    """The shape from an attribute's Tango configuration numbers, or why HDB++ cannot archive it
    (in words)."""
    if int(data_type) not in ARCHIVABLE_TYPES:
        return f"type {int(data_type)} is not archived by HDB++"
    ttype, fmt = TangoType(int(data_type)), AttrFormat(int(data_format))
    if fmt != AttrFormat.SCALAR and ttype == TangoType.DEV_ENCODED:
        return "DevEncoded is archived as a scalar only"
    dim_x = max(1, int(max_dim_x)) if fmt != AttrFormat.SCALAR else 1
    dim_y = max(1, int(max_dim_y)) if fmt == AttrFormat.IMAGE else 0
    shape = AttributeShape(name, ttype, fmt, WriteType(int(writable)), dim_x, dim_y, rate_hz, values)
    if shape.elements > MAX_ELEMENTS:
        return f"{shape.elements} elements is more than an inventory takes ({MAX_ELEMENTS})"
    return shape


def rate_band(rate_hz: float) -> float:
    """The rate rounded to two significant digits: the groups' rate bands."""
    if rate_hz <= 0 or not math.isfinite(rate_hz):
        raise ValueError(f"a rate must be > 0, got {rate_hz!r}")
    return float(f"{rate_hz:.2g}")


def period_text(rate_hz: float, digits: int = 2) -> str:
    """`every 10 s`, `every 0.5 s`, `every 5 min`, `every 2 h`, `every 3 d`."""
    period = 1.0 / rate_hz
    units = (("s", 1.0, 120.0), ("min", 60.0, 7200.0), ("h", 3600.0, 172800.0), ("d", 86400.0, math.inf))
    for unit, seconds, below in units:
        if period < below:
            value = float(f"{period / seconds:.{digits}g}")
            return f"every {value:g} {unit}"
    raise AssertionError("unreachable")


def _sig(x: float, digits: int = 6) -> float:
    return float(f"{x:.{digits}g}")


def _mean_rate(shapes: Sequence[AttributeShape]) -> float:
    return _sig(sum(min(s.rate_hz, MAX_RATE_HZ) for s in shapes) / len(shapes))


def _size(shape: AttributeShape) -> str:
    if shape.format == AttrFormat.SPECTRUM:
        return f" x{shape.dim_x}"
    return f" {shape.dim_x}x{shape.dim_y}" if shape.format == AttrFormat.IMAGE else ""


def _labels(groups: Sequence[Sequence[AttributeShape]]) -> list[str]:
    """`<format> <type> <ro|rw>[ x<length>] every <period>` from each group's mean rate, with more
    digits of the period where two groups would read the same."""
    def label(members: Sequence[AttributeShape], digits: int) -> str:
        s = members[0]
        return f"{s.format.name.lower()} {s.type.suffix} {s.side}{_size(s)} {period_text(_mean_rate(members), digits)}"

    for digits in range(2, 8):
        out = [label(m, digits) for m in groups]
        if len(set(out)) == len(out):
            return out
    return [f"{label(m, 8)} #{k + 1}" for k, m in enumerate(groups)]


def _group(label: str, members: Sequence[AttributeShape]) -> Group:
    """One group of `members` (one shape and band): its rate the members' mean, and the statistics of
    their values where the archive gave them (hdbbench.load.inventory.figures)."""
    s = members[0]
    tallies = [m.values for m in members if m.values is not None]
    v = ValueTally.total(tallies)
    numeric = s.format == AttrFormat.SCALAR and s.type in NUMERIC_TYPES
    return Group(
        label=label, type=s.type, format=s.format, write=s.side, count=len(members), rate_hz=_mean_rate(members),
        dim_x=s.dim_x, dim_y=s.dim_y,
        string_chars=max(1, round(v.chars_sum / v.chars_n)) if v.chars_n else 20,
        error_share=round(v.errors / v.events, 6) if v.events else None,
        invalid_share=round(v.invalid / v.events, 6) if v.events else None,
        value_step=_sig(v.step_sum / v.pairs) if numeric and v.pairs else None,
        repeat_share=round(v.repeats / v.pairs, 6) if numeric and v.pairs else None,
        names=tuple(m.name for m in members))


def group_shapes(shapes: Iterable[AttributeShape]) -> tuple[Group, ...]:
    """One Group per (type, format, write side, size, rate band), its names in the order given;
    groups ordered by type, format, side, size and band."""
    members: dict[tuple[TangoType, AttrFormat, str, int, int, float], list[AttributeShape]] = {}
    for shape in shapes:
        key = (shape.type, shape.format, shape.side, shape.dim_x, shape.dim_y,
               rate_band(min(shape.rate_hz, MAX_RATE_HZ)))
        members.setdefault(key, []).append(shape)
    keys = sorted(members, key=lambda k: (int(k[0]), int(k[1]), k[2], k[3], k[4], k[5]))
    labels = _labels([members[k] for k in keys])
    return tuple(_group(label, members[k]) for k, label in zip(keys, labels, strict=True))


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

# SPDX-License-Identifier: Apache-2.0
"""The memory model ability: the hot set of a steady insert stream, from a backend's own geometry.

An HDB++ archive takes events of every attribute all the time. Each insert lands at its attribute's
insertion point in every index whose key starts with `att_conf_id` (the end of that attribute's run of
keys), at the one insertion point of an index keyed by time only, at the heap's (or clustered index's)
insertion point, and descends through the internal pages above those leaves; foreign-key checks and the
subscriber's look-ups touch the configuration tables. Those pages are touched again within a round of
events, so they must all stay cached: once they outgrow the memory left for caching, every insert reads
pages from storage and the stored rate falls off the knee the growth trial measures (docs/aging.md).

While the database is young, several attributes share each leaf and the hot set is the whole of those
indexes; it stops growing (but for internal pages, which grow with the logarithm of the size) once
every attribute has a leaf of its own in each such index. `MemoryModel.knee_bytes` is the database size
at which the hot set first exceeds the cache, None when it never does.

A backend declares it with `Backend.memory_model()`, returning its implementation or None (its layout
has no such geometry, or nobody worked it out). The implementation keeps no state and needs no server:
the facility planner asks it of a backend's name with an inventory's attribute counts. The geometry
helpers here (`IndexShape`, `TableShape`, `hot_pages`, `grown_pages`) are shared by the backends'
implementations; the page sizes, entry widths and fills are each backend's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from hdbbench.backends.model import SchemaVariant
from hdbbench.model.hdbtypes import AttrFormat, TangoType

# How far `knee_bytes` looks: None means the hot set stays within the cache up to a database this large.
SEARCH_LIMIT_BYTES = float(2**50)  # 1 PiB
# Leaves several attributes insert into at once split wherever the next insert falls: a B-tree under
# inserts at random places settles at ln 2 ≈ 69 % full (Yao, "On random 2-3 trees", 1978).
MIXED_FILL = math.log(2)


@dataclass(frozen=True)
class HotSetPart:
    """One kind of page the insert stream keeps touching, and how many of them."""

    what: str          # e.g. "att_scalar_devdouble_pkey: one leaf per attribute"
    pages: float
    page_bytes: int

    @property
    def bytes(self) -> float:
        return self.pages * self.page_bytes


@dataclass(frozen=True)
class HotSet:
    parts: tuple[HotSetPart, ...]

    @property
    def bytes(self) -> float:
        return sum(p.bytes for p in self.parts)

    def lines(self) -> list[str]:
        """One line per part, its pages and MiB, for reports and plans."""
        return [f"{p.what}: {p.pages:,.0f} pages, {p.bytes / 2**20:,.1f} MiB" for p in self.parts]


class MemoryModel(Protocol):
    """The pages a steady insert stream keeps touching, from the backend's table and index geometry."""

    page_bytes: int

    def cache_bytes(self, budget_bytes: float) -> float:
        """The memory left for caching pages under a memory budget (page cache included), by the
        stack's buffer rule for the backend's server, less the server's own memory."""

    def hot_set(self, attributes: Mapping[tuple[TangoType, AttrFormat], int], variant: SchemaVariant,
                database_bytes: float | None = None) -> HotSet:
        """The pages a steady insert stream into these attributes touches at once, when the database
        holds database_bytes (None: grown enough that every attribute has its own leaves)."""

    def knee_bytes(self, attributes: Mapping[tuple[TangoType, AttrFormat], int], variant: SchemaVariant,
                   cache_bytes: float, bytes_per_event: float | None = None) -> float | None:
        """The database size from which the hot set exceeds cache_bytes (None: never, in this model,
        up to SEARCH_LIMIT_BYTES). bytes_per_event: the database's growth per event when measured
        (e.g. by the disk part), instead of the geometry's own figure."""


# --- geometry shared by the implementations ----------------------------------------------------
@dataclass(frozen=True)
class IndexShape:
    """One B-tree (index, or InnoDB's clustered primary key) of a data table."""

    name: str
    per_attribute: bool      # key starts with att_conf_id: one insertion point per attribute
    entry_bytes: float       # one leaf entry with its line pointer / directory share
    behind_fill: float       # fill of the leaves an attribute's own insertion point leaves behind
    pivot_bytes: float       # one internal-page entry (key + downlink)
    internal_fill: float
    fill_rule: str           # why behind_fill, in a few words (shown in the hot set's parts)
    usable_bytes: float      # bytes of a page entries may take (page less headers)
    per_entry: float = 1.0   # entries per row (1; an array stored one row per element is still one)


@dataclass(frozen=True)
class TableShape:
    """A data table the stream inserts into: its attributes, row width and B-trees."""

    name: str
    attributes: int
    row_bytes: float             # bytes a row takes outside its B-trees (the heap); 0 where a B-tree holds it
    row_usable_bytes: float      # bytes of a heap page rows may take
    insertion_pages: float       # heap pages at the insertion point (0 where the clustered index is the table)
    indexes: tuple[IndexShape, ...]


def leaves(index: IndexShape, attributes: int, rows_per_attribute: float) -> tuple[float, float]:
    """(leaves of the index, leaves holding an insertion point) after rows_per_attribute rows of
    each attribute. While a leaf holds several attributes it fills like random inserts (MIXED_FILL);
    once an attribute's run outgrows one leaf, its older leaves keep the fill its split rule leaves."""
    entries = rows_per_attribute * index.per_entry
    if entries <= 0:
        return 1.0, 1.0
    shared = index.usable_bytes * MIXED_FILL / index.entry_bytes
    if not index.per_attribute:
        total = attributes * entries * index.entry_bytes / (index.usable_bytes * index.behind_fill)
        return max(1.0, total), 1.0
    if entries <= shared:
        total = max(1.0, attributes * entries / shared)
        return total, total
    behind = index.usable_bytes * index.behind_fill / index.entry_bytes
    return attributes * (1.0 + (entries - shared) / behind), float(attributes)


def internal_levels(index: IndexShape, leaf_count: float) -> list[float]:
    """Internal pages per level above `leaf_count` leaves, lowest level first (none for one leaf)."""
    fanout = index.usable_bytes * index.internal_fill / index.pivot_bytes
    levels: list[float] = []
    pages = leaf_count
    while pages > 1.0:
        pages = max(1.0, math.ceil(pages / fanout))
        levels.append(pages)
    return levels


def hot_pages(table: TableShape, rows_per_attribute: float, page_bytes: int) -> list[HotSetPart]:
    """The parts of one data table's hot set after rows_per_attribute rows of each attribute."""
    parts: list[HotSetPart] = []
    if table.insertion_pages:
        parts.append(HotSetPart(f"{table.name}: heap insertion point", table.insertion_pages, page_bytes))
    for index in table.indexes:
        total, hot = leaves(index, table.attributes, rows_per_attribute)
        if index.per_attribute:
            own = hot >= table.attributes
            what = (f"{index.name}: one leaf per attribute ({index.fill_rule})" if own else
                    f"{index.name}: every leaf (attributes share them, {MIXED_FILL:.0%} full)")
        else:
            what = f"{index.name}: the one insertion leaf (key by time only)"
        parts.append(HotSetPart(what, hot, page_bytes))
        # Internal pages on the paths to the hot leaves: every one of them while they are fewer than
        # the hot leaves, else one per hot leaf; keyed by time only, the one path.
        internal = sum(min(level, hot) for level in internal_levels(index, total))
        if internal:
            parts.append(HotSetPart(f"{index.name}: internal pages above them", internal, page_bytes))
    return parts


def grown_pages(table: TableShape, rows_per_attribute: float) -> float:
    """Pages the table and its B-trees occupy after rows_per_attribute rows of each attribute."""
    rows = table.attributes * rows_per_attribute
    pages = rows * table.row_bytes / table.row_usable_bytes if table.row_bytes else 0.0
    for index in table.indexes:
        total, _ = leaves(index, table.attributes, rows_per_attribute)
        pages += total + sum(internal_levels(index, total))
    return pages


def rows_at(size_of: Callable[[float], float], database_bytes: float) -> float:
    """Rows per attribute at which size_of(rows) reaches database_bytes (size_of increases with rows)."""
    if size_of(0.0) >= database_bytes:
        return 0.0
    low, high = 0.0, 1.0
    while size_of(high) < database_bytes:
        low, high = high, high * 2.0
        if high > 1e18:
            return high
    for _ in range(80):
        mid = (low + high) / 2.0
        low, high = (mid, high) if size_of(mid) < database_bytes else (low, mid)
    return high


def first_past(hot_of: Callable[[float], float], size_of: Callable[[float], float], cache_bytes: float,
               limit_bytes: float = SEARCH_LIMIT_BYTES) -> float | None:
    """The database size (size_of) at the fewest rows per attribute whose hot set (hot_of) exceeds
    cache_bytes; None when it does not up to limit_bytes. The hot set grows with rows (leaves until
    every attribute has its own, then internal pages), so a doubling search and a bisection find it."""
    if hot_of(0.0) > cache_bytes:
        return size_of(0.0)
    high = 1.0
    while hot_of(high) <= cache_bytes:
        if size_of(high) >= limit_bytes:
            return None
        high *= 2.0
    low = high / 2.0 if high > 1.0 else 0.0
    for _ in range(60):
        mid = (low + high) / 2.0
        low, high = (mid, high) if hot_of(mid) <= cache_bytes else (low, mid)
    return size_of(high)


def whole_tables(sizes: Sequence[tuple[str, float, float]], page_bytes: int) -> list[HotSetPart]:
    """The configuration tables as parts, whole: (what, bytes of entries, fill) each."""
    return [HotSetPart(f"{what} (whole)", max(1.0, math.ceil(size / (page_bytes * fill))), page_bytes)
            for what, size, fill in sizes]


class BTreeMemoryModel:
    """`hot_set` and `knee_bytes` over a backend's geometry: a subclass gives its page size, default
    index set, data tables as TableShapes (`tables`) and configuration tables as parts (`config_parts`)."""

    page_bytes: int = 8192
    default_indexes: str = "pk"

    def tables(self, attributes: Mapping[tuple[TangoType, AttrFormat], int], variant: SchemaVariant) -> list[TableShape]:
        raise NotImplementedError

    def config_parts(self, attributes: int) -> list[HotSetPart]:
        raise NotImplementedError

    def _size_of(self, shapes: list[TableShape], config: float) -> Callable[[float], float]:
        return lambda rows: config + sum(grown_pages(s, rows) for s in shapes) * self.page_bytes

    def _hot_of(self, shapes: list[TableShape], config: float) -> Callable[[float], float]:
        return lambda rows: config + sum(p.bytes for s in shapes for p in hot_pages(s, rows, self.page_bytes))

    def hot_set(self, attributes: Mapping[tuple[TangoType, AttrFormat], int], variant: SchemaVariant,
                database_bytes: float | None = None) -> HotSet:
        shapes = self.tables(attributes, variant.with_default_indexes(self.default_indexes))
        config = self.config_parts(sum(attributes.values()))
        if database_bytes is None:  # just past the rows by which every attribute has its own leaves
            rows = max((saturation_rows(i) for s in shapes for i in s.indexes), default=0.0)
        else:
            rows = rows_at(self._size_of(shapes, sum(p.bytes for p in config)), database_bytes)
        return HotSet(tuple(p for s in shapes for p in hot_pages(s, rows, self.page_bytes)) + tuple(config))

    def knee_bytes(self, attributes: Mapping[tuple[TangoType, AttrFormat], int], variant: SchemaVariant,
                   cache_bytes: float, bytes_per_event: float | None = None) -> float | None:
        shapes = self.tables(attributes, variant.with_default_indexes(self.default_indexes))
        config = sum(p.bytes for p in self.config_parts(sum(attributes.values())))
        size_of = self._size_of(shapes, config)
        if bytes_per_event is not None:
            events = sum(s.attributes for s in shapes)
            size_of = lambda rows: config + rows * events * bytes_per_event  # noqa: E731
        return first_past(self._hot_of(shapes, config), size_of, cache_bytes)


def saturation_rows(index: IndexShape) -> float:
    """Rows per attribute just past those by which each attribute has a leaf of its own in `index`."""
    return index.usable_bytes * MIXED_FILL / index.entry_bytes / index.per_entry * 1.01

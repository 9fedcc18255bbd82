# SPDX-License-Identifier: Apache-2.0
"""The hot set of PostgreSQL and TimescaleDB (hdbbench.backends.abilities.memory), from the family's
own table model (tables.py: `data_table`, `config_tables`) and PostgreSQL's page geometry.

Geometry (PostgreSQL 15, 8 KiB pages): a heap page has 8,168 bytes for rows (24-byte page header),
a B-tree page 8,152 (and a 16-byte special space); every item has a 4-byte line pointer. A heap row is
a 23-byte header plus its null bitmap, MAXALIGNed (8), then its columns at their alignments; an index
entry an 8-byte IndexTuple header plus its key columns, MAXALIGNed. Inserts go to the end of the heap
(one insertion page per table: no free space elsewhere in an insert-only table), so the heap is not
hot; the indexes are. How full the leaves behind each attribute's insertion point stay follows from
src/backend/access/nbtree/nbtsplitloc.c (`_bt_findsplitloc`, `_bt_afternewitemoff`, `_bt_strategy`):

- (att_conf_id, data_time), the primary key: the newest row of an attribute goes after every entry on
  its leaf with the same att_conf_id, the "split after new item" case, which splits at the leaf
  fillfactor (BTREE_DEFAULT_FILLFACTOR, 90): leaves behind stay 90 % full;
- (att_conf_id, data_time DESC): the newest row is the first of its attribute's run, and the split
  after new item is "never inferred when new item is first": a 50:50 split, leaves behind half full;
- (att_conf_id) alone: duplicates, kept as posting lists since PostgreSQL 13 (≈ 6.1 bytes per row:
  a 6-byte heap TID, plus a 16-byte tuple and its line pointer per ≈ 223 TIDs, maxpostingsize being
  half of BTMaxItemSize), split by the single-value strategy (BTREE_SINGLEVAL_FILLFACTOR, 96 %).

Internal pages hold truncated pivots (an IndexTuple with the key and a heap TID at most, 24 bytes +
pointer) at the ln 2 fill of inserts in many places. The configuration tables are counted whole:
every data row's foreign-key check reads att_conf's primary key and locks its row (FOR KEY SHARE).
TimescaleDB's chunk has the same indexes (create_default_indexes => false in ddl.py), the current
chunk's are the hot ones; a database given by size is taken as one chunk (a growth trial's is).
Assumed widths where the key (type, format) does not say: READ attributes (value_w NULL), valid events
(no error description), strings of 20 characters, arrays of 100 elements, attribute names of 50.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from hdbbench.backends.abilities.memory import (
    MIXED_FILL,
    BTreeMemoryModel,
    HotSetPart,
    IndexShape,
    TableShape,
    whole_tables,
)
from hdbbench.backends.model import SchemaVariant, TableDef
from hdbbench.backends.postgres.tables import VALUE_TYPES, config_tables, data_table
from hdbbench.model.hdbtypes import AttrFormat, TangoType

PAGE = 8192
HEAP_USABLE = PAGE - 24            # page header
BTREE_USABLE = PAGE - 24 - 16      # page header, B-tree special space
LINE_POINTER = 4
MAXALIGN = 8
LEAF_FILLFACTOR = 0.90             # BTREE_DEFAULT_FILLFACTOR
SINGLEVAL_FILLFACTOR = 0.96        # BTREE_SINGLEVAL_FILLFACTOR
POSTING_BYTES_PER_ROW = 6.1        # deduplicated (att_conf_id): see the module docstring
PIVOT_BYTES = 24 + LINE_POINTER
STRING_CHARS, ARRAY_ELEMENTS, NAME_CHARS, ENCODED_BYTES = 20, 100, 50, 64
# The server's own memory under a budget, not available for caching: measured here (PostgreSQL 15,
# 128 MiB budget, an idle growth trial's server) 2.4-4.3 MiB of anonymous memory in each of its ten
# processes (postmaster, checkpointer, background writer, WAL writer, autovacuum and TimescaleDB
# launchers, logical replication launcher, three client connections): 28 MiB; plus ≈ 8 MiB of
# shared memory besides shared_buffers (lock tables, WAL buffers, process arrays), estimated.
SERVER_OWN_BYTES = 38 * 2**20

# Column type (as the table model spells it) -> (bytes, alignment) in a heap row or index entry.
_FIXED = {"boolean": (1, 1), "smallint": (2, 2), "integer": (4, 4), "bigint": (8, 8), "real": (4, 4),
          "double precision": (8, 8), "timestamp with time zone": (8, 8)}
# Varlena values (1-byte header when short, unaligned): numeric domains at their digits, text, bytea.
_VARLENA = {"uchar": 5, "ushort": 7, "ulong": 9, "ulong64": 13, "text": 1 + STRING_CHARS,
            "bytea": 1 + ENCODED_BYTES, "json": 0}


def _align(offset: int, to: int) -> int:
    return -(-offset // to) * to


def _width(type_: str) -> tuple[int, int]:
    if type_ in _FIXED:
        return _FIXED[type_]
    if type_.endswith("[]"):  # 4-byte varlena header + 20-byte one-dimensional array header + elements
        element = _FIXED.get(type_[:-2], (_VARLENA.get(type_[:-2], 9), 4))[0]
        return 24 + ARRAY_ELEMENTS * element, 8
    return _VARLENA.get(type_, 1 + STRING_CHARS), 1


def heap_row_bytes(table: TableDef, null: frozenset[str]) -> int:
    """One heap row with its line pointer, the columns in `null` NULL."""
    header = _align(23 + (math.ceil(len(table.columns) / 8) if null else 0), MAXALIGN)
    offset = 0
    for column in table.columns:
        if column.name in null:
            continue
        size, align = _width(column.type)
        offset = _align(offset, align) + size
    return _align(header + offset, MAXALIGN) + LINE_POINTER


def entry_bytes(table: TableDef, columns: list[str]) -> int:
    """One B-tree leaf entry on these key columns, with its line pointer."""
    offset = 8  # IndexTupleData: heap TID and size/flags
    for name in columns:
        size, align = _width(table.column(name).type)
        offset = _align(offset, align) + size
    return _align(offset, MAXALIGN) + LINE_POINTER


def index_shapes(table: TableDef, timescale: bool) -> tuple[IndexShape, ...]:
    """The data table's primary key and indexes as B-tree shapes, each with its split rule."""
    keys = [(f"{table.name}_pkey", ", ".join(table.primary_key))] + [(i.name, i.columns) for i in table.indexes]
    prefix = "current chunk's " if timescale else ""
    shapes = []
    for name, text in keys:
        columns = [c.split()[0] for c in text.split(",")]
        descending = any(c.strip().upper().endswith("DESC") for c in text.split(","))
        per_attribute = columns[0] == "att_conf_id"
        if columns == ["att_conf_id"]:
            entry, fill, rule = POSTING_BYTES_PER_ROW, SINGLEVAL_FILLFACTOR, "posting lists, 96 % full behind"
        elif descending:
            entry, fill, rule = entry_bytes(table, columns), 0.5, "newest first: 50:50 splits, 50 % full behind"
        else:
            entry, fill, rule = entry_bytes(table, columns), LEAF_FILLFACTOR, "split after new item, 90 % full behind"
        shapes.append(IndexShape(prefix + name, per_attribute, entry, fill, PIVOT_BYTES, MIXED_FILL, rule,
                                 BTREE_USABLE))
    return tuple(shapes)


class PgMemoryModel(BTreeMemoryModel):
    """The hot set of HDB++ on PostgreSQL (timescale=False) or TimescaleDB (True)."""

    page_bytes = PAGE
    default_indexes = "pk+2"

    def __init__(self, timescale: bool) -> None:
        self.timescale = timescale

    def cache_bytes(self, budget_bytes: float) -> float:
        """shared_buffers and the page cache share the budget (both caches of the same pages; a page
        hot in shared buffers lets its page-cache copy go cold, so the two hold different pages)."""
        return max(0.0, budget_bytes - SERVER_OWN_BYTES)

    def tables(self, attributes: Mapping[tuple[TangoType, AttrFormat], int], variant: SchemaVariant) -> list[TableShape]:
        shapes = []
        for (tango_type, fmt), count in sorted(attributes.items(), key=lambda kv: (kv[0][0].value, kv[0][1].value)):
            if count <= 0:
                continue
            table = data_table(tango_type, fmt, variant, self.timescale)
            null = frozenset({"value_w", "value_w_label", "att_error_desc_id", "details"})
            shapes.append(TableShape(table.name, count, heap_row_bytes(table, null), HEAP_USABLE, 1.0,
                                     index_shapes(table, self.timescale)))
        return shapes

    def config_parts(self, attributes: int) -> list[HotSetPart]:
        """att_conf, att_parameter, att_history and the lookup tables with their indexes, whole."""
        big = {"att_conf": 1, "att_parameter": 1, "att_history": 2}  # rows per attribute
        sizes: list[tuple[str, float, float]] = []
        for table in config_tables(self.timescale):
            keys = ([", ".join(table.primary_key)] if table.primary_key else []) + [i.columns for i in table.indexes]
            rows = big.get(table.name, 0) * attributes
            if not rows:  # a lookup table of a few rows: one page, and one per index
                sizes.append((f"{table.name} and its {len(keys)} indexes", (1 + len(keys)) * PAGE, 1.0))
                continue
            sizes.append((table.name, rows * _config_row_bytes(table), 1.0))
            for key in keys:
                names = [c.split()[0] for c in key.split(",")]
                if "att_name" in names:  # names arrive in no order: leaves 50-100 % full, ln 2 on average
                    entry, fill = _align(8 + 1 + NAME_CHARS, MAXALIGN) + LINE_POINTER, MIXED_FILL
                else:  # serial ids and times ascend: the rightmost leaf splits at the fillfactor
                    entry, fill = entry_bytes(table, names), LEAF_FILLFACTOR
                sizes.append((f"{table.name} ({key})", rows * entry, fill))
        return whole_tables(sizes, PAGE)


def _config_row_bytes(table: TableDef) -> int:
    """A configuration row: its texts at typical lengths (an attribute name of NAME_CHARS, its five
    name parts and table name of STRING_CHARS, parameters' texts of a few characters)."""
    null = frozenset(c.name for c in table.columns if c.type == "json" or c.type.endswith("[]"))
    empty_arrays = sum(24 for c in table.columns if c.type.endswith("[]"))  # enum_labels '{}' (a header only)
    names = sum(NAME_CHARS - STRING_CHARS for c in table.columns if c.name == "att_name")
    return heap_row_bytes(table, null) + empty_arrays + names


# The value types the widths above cover, checked at import: a new type in tables.py must be given one.
assert all(_width(v[0])[0] > 0 for v in VALUE_TYPES.values())

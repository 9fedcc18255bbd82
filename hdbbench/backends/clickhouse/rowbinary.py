# SPDX-License-Identifier: Apache-2.0
"""Data rows in ClickHouse's RowBinary format: every value exact.

The data tables are written in RowBinary, not as text: ClickHouse 18.16's text parser rounds about
one double in six (and one float in sixteen) to a neighbouring value (measured here on 2,050 values
written with Python's repr, %.17g or %.20g alike), which a storage benchmark must not do to the data
it measures. RowBinary is each column's little-endian bytes in the INSERT's column order; a Nullable
value is a flag byte (1: NULL, nothing follows) then the value; a String or an Array is its length as
an unsigned LEB128 varint, then its bytes or elements. The subscriber's writer writes the same bytes
(subscriber/src/clickhouse_writer.cpp).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from hdbbench.backends.clickhouse.tables import VALUE_TYPES
from hdbbench.model.columnar import ColumnBatch
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, as_plain

# struct codes of the layout's value types (tables.VALUE_TYPES)
CODES = {"UInt8": "B", "Int16": "h", "UInt16": "H", "Int32": "i", "UInt32": "I", "Int64": "q", "UInt64": "Q",
         "Float32": "f", "Float64": "d"}
_NULL = b"\x01"
_PRESENT = b"\x00"


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def string(text: str) -> bytes:
    data = text.encode()
    return varint(len(data)) + data


def _packer(tango_type: TangoType) -> Any:
    if tango_type == TangoType.DEV_STRING:
        return lambda v: string(str(v))
    code = "<" + CODES[VALUE_TYPES[tango_type]]
    if code[-1] in "fd":
        return lambda v: struct.pack(code, float(v))
    return lambda v: struct.pack(code, int(v))


def nullable(value: Any, tango_type: TangoType) -> bytes:
    return _NULL if value is None else _PRESENT + _packer(tango_type)(as_plain(value))


def array(value: Any, tango_type: TangoType) -> tuple[bytes, int, int]:
    """An array value, with its dimensions (x, y; y is 0 for a spectrum); None is []; an image is
    flattened row-major."""
    plain = as_plain(value)
    if plain is None:
        return varint(0), 0, 0
    if plain and isinstance(plain[0], list):
        dim_y, dim_x = len(plain), len(plain[0])
        items = [v for row in plain for v in row]
    else:
        dim_x, dim_y, items = len(plain), 0, plain
    pack = _packer(tango_type)
    return varint(len(items)) + b"".join(pack(v) for v in items), dim_x, dim_y


def data_row(att_id: int, time_us: int, info: AttributeInfo, event: Event, value_w: Any,
             error_id: int | None) -> bytes:
    """One event as its table's row (writer.SCALAR_COLUMNS or writer.ARRAY_COLUMNS)."""
    head = struct.pack("<Qq", att_id, time_us)
    tail = struct.pack("<b", int(event.quality)) + (_NULL if error_id is None else _PRESENT + struct.pack("<Q", error_id))
    if info.format == AttrFormat.SCALAR:
        return head + nullable(event.value_r, info.type) + nullable(value_w, info.type) + tail
    read, x_r, y_r = array(event.value_r, info.type)
    write, x_w, y_w = array(value_w, info.type)
    return head + read + write + struct.pack("<IIII", x_r, y_r, x_w, y_w) + tail


def scalar_batch(batch: ColumnBatch) -> bytes:
    """A column batch (scalar numeric rows, no error) as RowBinary rows of writer.SCALAR_COLUMNS.

    A Nullable value's bytes are there only when it is not NULL, so rows are grouped by which of
    their two values are present, each group one packed record array (row order within an insert is
    of no consequence: the table sorts)."""
    value = np.dtype("<" + CODES[VALUE_TYPES[batch.tango_type]])
    out = []
    has_w = batch.has_w & batch.rw
    for with_r in (True, False):
        for with_w in (True, False):
            rows = np.flatnonzero((batch.has_r == with_r) & (has_w == with_w))
            if rows.size == 0:
                continue
            fields = [("id", "<u8"), ("t", "<i8"), ("r_null", "u1")] + ([("r", value)] if with_r else []) \
                + [("w_null", "u1")] + ([("w", value)] if with_w else []) + [("q", "i1"), ("e_null", "u1")]
            packed = np.zeros(rows.size, dtype=np.dtype(fields))  # packed: no alignment padding
            packed["id"] = batch.att_conf_id[rows]
            packed["t"] = batch.data_time_us[rows]
            packed["r_null"] = 0 if with_r else 1
            packed["w_null"] = 0 if with_w else 1
            if with_r:
                packed["r"] = batch.value_r[rows]
            if with_w:
                packed["w"] = batch.value_w[rows]
            packed["q"] = batch.quality[rows]
            packed["e_null"] = 1
            out.append(packed.tobytes())
    return b"".join(out)

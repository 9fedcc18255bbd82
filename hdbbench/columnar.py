# SPDX-License-Identifier: Apache-2.0
"""Scalar rows as numpy columns: the fast bulk-load path of data generation and dump loading.

A `ColumnBatch` holds rows of one Tango type (scalar format) for any number of attributes, as
columns: att_conf_id, data_time (µs since the Unix epoch, UTC), value_r/value_w with NULL masks,
quality, and whether each row's attribute has a write side (MariaDB routes those rows to `_rw`).
The encoders here turn a batch into what a server loads fastest — PostgreSQL's binary COPY stream
(built with vectorised scatters, no Python loop per row) and MariaDB's `LOAD DATA` text — and know
nothing about connections; the backends send the bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from hdbbench.hdbtypes import TangoType

# Tango type -> numpy dtype of generated values and of the PostgreSQL binary COPY field.
# Unsigned types (PostgreSQL numeric domains), strings and DevEncoded have no fixed-width binary
# form here: they go through the generic BulkWriter.
FAST_TYPES: dict[TangoType, tuple[str, str]] = {
    TangoType.DEV_BOOLEAN: ("bool", "?"),
    TangoType.DEV_SHORT: ("int16", ">i2"),
    TangoType.DEV_LONG: ("int32", ">i4"),
    TangoType.DEV_LONG64: ("int64", ">i8"),
    TangoType.DEV_FLOAT: ("float32", ">f4"),
    TangoType.DEV_DOUBLE: ("float64", ">f8"),
    TangoType.DEV_STATE: ("int32", ">i4"),
    TangoType.DEV_ENUM: ("int16", ">i2"),
}

PG_EPOCH_OFFSET_US = 946_684_800_000_000  # 2000-01-01 (PostgreSQL's timestamp epoch) in Unix µs
PGCOPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
PGCOPY_TRAILER = struct.pack(">h", -1)


@dataclass
class ColumnBatch:
    """Scalar rows of one Tango type; every array has one entry per row."""

    tango_type: TangoType
    att_conf_id: np.ndarray      # int64
    data_time_us: np.ndarray     # int64, µs since 1970-01-01 UTC
    value_r: np.ndarray          # FAST_TYPES dtype
    value_w: np.ndarray
    has_r: np.ndarray            # bool: False = NULL value_r
    has_w: np.ndarray            # bool: False = NULL value_w (READ attributes)
    rw: np.ndarray               # bool: the attribute has a write side (MariaDB `_rw` table)
    quality: np.ndarray          # int16

    def __len__(self) -> int:
        return int(self.att_conf_id.shape[0])

    def take(self, index: np.ndarray) -> ColumnBatch:
        """The rows at `index` (a bool mask or positions), in that order."""
        return ColumnBatch(
            self.tango_type, self.att_conf_id[index], self.data_time_us[index], self.value_r[index],
            self.value_w[index], self.has_r[index], self.has_w[index], self.rw[index], self.quality[index],
        )


# ------------------------------------------------------------------------ PostgreSQL binary COPY

PG_COPY_COLUMNS = ("att_conf_id", "data_time", "value_r", "value_w", "quality")


def _scatter(buf: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
    """Write each fixed-width value's bytes at its row offset in `buf`."""
    if values.shape[0] == 0:
        return
    width = values.dtype.itemsize
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(-1, width)
    buf[offsets[:, None] + np.arange(width)] = raw


def pg_binary_rows(batch: ColumnBatch) -> bytes:
    """The rows of `batch` as PostgreSQL binary COPY tuples (no header or trailer) for PG_COPY_COLUMNS."""
    n = len(batch)
    wire = FAST_TYPES[batch.tango_type][1]
    vwidth = np.dtype(wire).itemsize
    fields: list[tuple[np.ndarray, str, np.ndarray | None]] = [
        (batch.att_conf_id, ">i4", None),
        (batch.data_time_us - PG_EPOCH_OFFSET_US, ">i8", None),
        (batch.value_r, wire, batch.has_r),
        (batch.value_w, wire, batch.has_w),
        (batch.quality, ">i2", None),
    ]
    row_len = np.full(n, 2 + 5 * 4 + 4 + 8 + 2, dtype=np.int64)
    row_len += np.where(batch.has_r, vwidth, 0) + np.where(batch.has_w, vwidth, 0)
    starts = np.cumsum(row_len) - row_len
    buf = np.zeros(int(row_len.sum()), dtype=np.uint8)
    _scatter(buf, starts, np.full(n, len(fields), dtype=">i2"))
    pos = starts + 2
    for values, dtype, present in fields:
        width = np.dtype(dtype).itemsize
        lengths = np.full(n, width, dtype=">i4")
        if present is None:
            _scatter(buf, pos, lengths)
            _scatter(buf, pos + 4, values.astype(dtype))
            pos = pos + 4 + width
        else:
            lengths[~present] = -1
            _scatter(buf, pos, lengths)
            _scatter(buf, pos[present] + 4, values[present].astype(dtype))
            pos = pos + 4 + np.where(present, width, 0)
    return buf.tobytes()


# ------------------------------------------------------------------------------ MariaDB LOAD DATA


def _text(values: np.ndarray, present: np.ndarray, tango_type: TangoType) -> list[str]:
    if tango_type == TangoType.DEV_BOOLEAN:
        plain = values.astype(np.int8).tolist()
    elif values.dtype.kind == "f":
        plain = values.astype(np.float64).tolist()  # repr of a float64 reads back exactly
    else:
        plain = values.tolist()
    text = list(map(str, plain))
    if not present.all():
        for k in np.flatnonzero(~present).tolist():
            text[k] = "\\N"
    return text


def mysql_times(data_time_us: np.ndarray) -> list[str]:
    """`YYYY-MM-DD HH:MM:SS.ffffff` UTC, as datetime(6) columns hold them."""
    iso = np.datetime_as_string(data_time_us.astype("datetime64[us]"), unit="us")
    return [s.replace("T", " ") for s in iso.tolist()]


def mysql_tsv(batch: ColumnBatch, with_w: bool) -> bytes:
    """Tab-separated rows `att_conf_id, data_time, value_r[, value_w], quality` (\\N = NULL)."""
    cols = [
        list(map(str, batch.att_conf_id.tolist())),
        mysql_times(batch.data_time_us),
        _text(batch.value_r, batch.has_r, batch.tango_type),
    ]
    if with_w:
        cols.append(_text(batch.value_w, batch.has_w, batch.tango_type))
    cols.append(list(map(str, batch.quality.tolist())))
    if not cols[0]:
        return b""
    return ("\n".join(map("\t".join, zip(*cols))) + "\n").encode()

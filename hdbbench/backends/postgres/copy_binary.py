# SPDX-License-Identifier: Apache-2.0
"""`columnar.ColumnBatch`es as PostgreSQL's binary COPY stream, built with vectorised scatters (no
Python loop per row); knows nothing about connections (`extraction.PgColumnLoader` sends the bytes)."""

from __future__ import annotations

import struct

import numpy as np

from hdbbench.model.columnar import FAST_TYPES, ColumnBatch

PG_EPOCH_OFFSET_US = 946_684_800_000_000  # 2000-01-01 (PostgreSQL's timestamp epoch) in Unix µs
PGCOPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
PGCOPY_TRAILER = struct.pack(">h", -1)


def wire_dtype(batch: ColumnBatch) -> np.dtype:
    """The big-endian binary COPY field of the batch's values."""
    return np.dtype(FAST_TYPES[batch.tango_type]).newbyteorder(">")


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
    wire = wire_dtype(batch)
    vwidth = wire.itemsize
    fields: list[tuple[np.ndarray, str | np.dtype, np.ndarray | None]] = [
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

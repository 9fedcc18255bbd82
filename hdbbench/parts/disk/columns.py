# SPDX-License-Identifier: Apache-2.0
"""The fast load path of disk cases: scalar numeric events built as numpy columns and sent through
the backend's column loader (binary COPY on PostgreSQL, LOAD DATA on MariaDB), as `hdbbench data
generate` does; several times faster than building one `Event` per row.

Values are a pure function of (seed, attribute, event number), like the emitter's, with the same
character: floating-point types a slow wave plus noise in every mantissa bit, integers a wave of
amplitude 1000 with small steps, booleans a slow step, states and enums a cycle. READ_WRITE
attributes carry the same value on both sides. Other types and all arrays take the emitter path.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from datetime import datetime

import numpy as np

from hdbbench.backends.base import Backend, ExtractionBackend
from hdbbench.model.columnar import FAST_TYPES, ColumnBatch
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType, WriteType
from hdbbench.parts.datagen import mix64, unit_float
from hdbbench.parts.disk.cases import RAW_FIXED_BYTES, VALUE_BYTES, Case, Tally

COLUMN_ROWS = 250_000  # rows per column-loader batch (one transaction each)


def columns_apply(backend: Backend, case: Case) -> bool:
    """Whether the case can take the column path on this backend."""
    return case.format == AttrFormat.SCALAR and case.type in FAST_TYPES and isinstance(backend, ExtractionBackend)


def column_values(tango_type: TangoType, seed: int, attribute: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Value of event k of each attribute, as the numpy dtype of the column path."""
    h = mix64(k.astype(np.uint64) * np.uint64(4099) + attribute.astype(np.uint64), seed, 0xD15C)
    wave = np.sin(k.astype(np.float64) * (2 * math.pi) / (600.0 + 37.0 * attribute))
    dtype = FAST_TYPES[tango_type]
    if tango_type in (TangoType.DEV_DOUBLE, TangoType.DEV_FLOAT):
        return (1000.0 * wave + unit_float(h) - 0.5).astype(dtype)
    if tango_type == TangoType.DEV_BOOLEAN:
        return ((k // (50 + attribute)) % 2).astype(bool)
    if tango_type == TangoType.DEV_STATE:
        return ((k // 10) % 14).astype(dtype)
    if tango_type == TangoType.DEV_ENUM:
        return ((k // 10) % 3).astype(dtype)
    return (np.round(1000.0 * wave) + (h % np.uint64(7)).astype(np.int64) - 3).astype(dtype)


def event_blocks(first: int, stop: int, attributes: int, order: str = "time") -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(attribute, event number k) arrays of events first..stop-1 (event i = attribute i mod A, k = i div A),
    in load order: `time` (all attributes at each instant, as a subscriber stores them) or `pk`
    (attribute by attribute, in time within each: a dump reloaded in primary-key order)."""
    if order == "time":
        for lo in range(first, stop, COLUMN_ROWS):
            k, a = np.divmod(np.arange(lo, min(stop, lo + COLUMN_ROWS), dtype=np.int64), attributes)
            yield a, k
        return
    for att in range(attributes):
        k_first, k_stop = -(-(first - att) // attributes), -(-(stop - att) // attributes)
        for lo in range(max(0, k_first), k_stop, COLUMN_ROWS):
            k = np.arange(lo, min(k_stop, lo + COLUMN_ROWS), dtype=np.int64)
            yield np.full(len(k), att, dtype=np.int64), k


def column_batch(case: Case, ids: np.ndarray, seed: int, t0_us: int, a: np.ndarray, k: np.ndarray) -> ColumnBatch:
    """Event k of attribute a (at t0 + k * period) for each pair of the two arrays."""
    values = column_values(case.type, seed, a, k)
    n = len(k)
    rw = case.write != WriteType.READ
    return ColumnBatch(
        case.type, ids[a], t0_us + k * int(round(case.period_s * 1_000_000)), values, values,
        np.full(n, case.write != WriteType.WRITE), np.full(n, rw), np.full(n, rw), np.zeros(n, dtype=np.int16),
    )


def column_load(backend: Backend, case: Case, infos: Sequence[AttributeInfo], seed: int, t0: datetime,
                first: int, stop: int, tally: Tally, order: str = "time") -> int:
    """Store events first..stop-1 through the column loader, in `order`; return the events stored."""
    assert isinstance(backend, ExtractionBackend)
    with backend.bulk_writer() as writer:
        ids = np.array([writer.register_attribute(info) for info in infos], dtype=np.int64)
    t0_us = int(t0.timestamp()) * 1_000_000 + t0.microsecond
    loader = backend.column_loader()
    try:
        for a, k in event_blocks(first, stop, len(ids), order):
            loader.load(column_batch(case, ids, seed, t0_us, a, k))
    finally:
        loader.close()
    n = stop - first
    sides = (case.write != WriteType.WRITE) + (case.write != WriteType.READ)
    tally.events += n
    tally.raw_bytes += n * (RAW_FIXED_BYTES + sides * VALUE_BYTES[case.type])
    tally.element_rows += n
    return n

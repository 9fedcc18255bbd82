# SPDX-License-Identifier: Apache-2.0
"""The value models over a block of events: numeric grids (constant, sine, step, noise, walk, counter),
state/enum choices, strings and DevEncoded payloads, cast to the attribute's Tango type.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hdbbench.load.emitter.spec import AttrSpec
from hdbbench.load.emitter.types import STATE_NAMES, TypeInfo
from hdbbench.model import valuefn as vf


def _int_range(info: TypeInfo) -> tuple[float, float]:
    ii = np.iinfo(np.dtype(info.dtype))
    # 64-bit types: stay within the integers a float64 holds exactly, so casts never overflow.
    return float(max(ii.min, -(2**53))), float(min(ii.max, 2**53))


Values = tuple[list[Any], "np.ndarray | None"]  # per-event values, and the typed (events, elements) array


class _Draws:
    """The value draws of a block's events: slot SLOT_VALUE + j for element (or byte) j."""

    def __init__(self, words: np.ndarray) -> None:
        self.words = words

    def words_for(self, count: int) -> np.ndarray:
        return vf.draws(self.words, vf.SLOT_VALUE, count)

    def units(self, count: int) -> np.ndarray:
        return vf.unit(self.words_for(count))

    def below(self, count: int, n: int) -> np.ndarray:
        return vf.below(self.words_for(count), n).astype(np.int64)


def _model_values(spec: AttrSpec, source: _Draws, ks: np.ndarray,
                  carry: np.ndarray) -> tuple[Values, np.ndarray | None]:
    """Values of events ks (one block), and the walk's step sums after them."""
    kind = spec.kind
    if kind in ("bool", "int", "float"):
        grid, carry_out = _numeric_grid(spec, source, ks, carry)
        return _numeric_values(spec, grid), carry_out
    if kind in ("state", "enum"):
        idx = _choice_index(spec, source, ks)
        return _indexed_values(spec, idx), None
    if kind == "string":
        return (_string_values(spec, source, ks), None), None
    return (_encoded_values(spec, source, ks), None), None


def integer_step(spec: AttrSpec) -> int:
    """The integer increment (counter) and largest step (walk) of integer types: round half to even."""
    return max(1, round(spec.step))


def _numeric_grid(spec: AttrSpec, source: _Draws, ks: np.ndarray,
                  carry: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(events, elements) float64 grid before the cast to the Tango type (devices/spec/value-function.md)."""
    n, m = len(ks), spec.elements
    kk = ks[:, None].astype(np.float64)
    jj = np.arange(m, dtype=np.float64)[None, :]
    model = spec.value_model
    if model == "constant":
        return np.full((n, m), spec.offset), None
    if model == "sine":
        return spec.offset + spec.amplitude * vf.sin2pi(kk / spec.period + jj / m), None
    if model == "step":
        level = (ks[:, None] // spec.period + np.arange(m)[None, :]) % spec.levels
        return spec.offset + spec.amplitude * level.astype(np.float64), None
    if model == "noise":
        return spec.offset + spec.amplitude * (2.0 * source.units(m) - 1.0), None
    if model == "counter":
        inc = spec.step if spec.kind == "float" else float(integer_step(spec))
        return spec.offset + inc * kk + jj, None
    # walk: integer steps summed exactly (int64), so the position of event k does not depend on how
    # the sum is split into blocks; float types scale the integer lattice to the requested std-dev.
    if spec.kind == "float":
        q = vf.WALK_QUANTUM
        sums = carry[None, :] + np.cumsum(source.below(m, 2 * q + 1) - q, axis=0)
        scale = spec.step * math.sqrt(3.0) / q
        path = spec.offset + scale * sums.astype(np.float64)
    else:
        s = integer_step(spec)
        sums = carry[None, :] + np.cumsum(source.below(m, 2 * s + 1) - s, axis=0)
        path = spec.offset + sums.astype(np.float64)
    lo, hi = spec.offset - spec.amplitude, spec.offset + spec.amplitude
    return vf.fold(path, lo, hi), sums[-1].copy()


def _numeric_values(spec: AttrSpec, grid: np.ndarray) -> Values:
    info = spec.info
    if spec.kind == "bool":
        arr = grid != 0 if spec.value_model == "constant" else grid > spec.offset
    elif spec.kind == "int":
        lo, hi = _int_range(info)
        if spec.value_model == "counter":
            # Wrap counters around the type's range so they never saturate.
            span = hi - lo + 1
            grid = np.mod(grid - lo, span) + lo
        arr = np.clip(np.rint(grid), lo, hi).astype(np.dtype(info.dtype).newbyteorder("="))
    else:
        arr = grid.astype(np.dtype(info.dtype).newbyteorder("="))
    return _split(spec, arr), arr


def _split(spec: AttrSpec, arr: np.ndarray) -> list[Any]:
    """Per-event values: python scalars for SCALAR, read-only numpy arrays otherwise."""
    if spec.format == "SCALAR":
        return arr[:, 0].tolist()
    shaped = arr.reshape((arr.shape[0], *spec.shape))
    shaped.setflags(write=False)
    return list(shaped)


def _choice_index(spec: AttrSpec, source: _Draws, ks: np.ndarray) -> np.ndarray:
    n, m, c = len(ks), spec.elements, len(spec.choices)
    jj = np.arange(m)[None, :]
    model = spec.value_model
    if model == "constant":
        base = int(spec.offset) % c
        return np.full((n, m), base)
    if model == "cycle":
        return (ks[:, None] + jj) % c
    if model == "step":
        return (ks[:, None] // spec.period + jj) % c
    return source.below(m, c)


def _indexed_values(spec: AttrSpec, idx: np.ndarray) -> Values:
    if spec.kind == "state":
        codes = np.array([STATE_NAMES.index(s) for s in spec.choices], dtype=np.uint32)
        arr = codes[idx]
    else:
        arr = idx.astype(np.int16)
    return _split(spec, arr), arr


def _string_values(spec: AttrSpec, source: _Draws, ks: np.ndarray) -> list[Any]:
    n, m = len(ks), spec.elements
    model = spec.value_model
    if model == "constant":
        flat = [[spec.text] * m for _ in range(n)]
    elif model == "counter":
        flat = [[f"{spec.text}{k}" if m == 1 else f"{spec.text}{k}.{j}" for j in range(m)] for k in ks.tolist()]
    elif model == "cycle":
        c = spec.labels
        flat = [[c[(k + j) % len(c)] for j in range(m)] for k in ks.tolist()]
    elif spec.labels:
        idx = source.below(m, len(spec.labels))
        flat = [[spec.labels[i] for i in row] for row in idx.tolist()]
    else:
        words = source.words_for(m) >> np.uint64(32)
        flat = [[f"{spec.text}{w:08x}" for w in row] for row in words.tolist()]
    if spec.format == "SCALAR":
        return [row[0] for row in flat]
    if spec.format == "SPECTRUM":
        return [tuple(row) for row in flat]
    x = spec.dim_x
    return [tuple(tuple(row[y * x:(y + 1) * x]) for y in range(spec.dim_y)) for row in flat]


def _encoded_values(spec: AttrSpec, source: _Draws, ks: np.ndarray) -> list[Any]:
    fmt, size = spec.text or "raw", max(spec.dim_x, 8)
    model = spec.value_model
    if model == "noise":
        data = (source.words_for(size) & np.uint64(0xFF)).astype(np.uint8)
        return [(fmt, row.tobytes()) for row in data]
    fill = bytes((int(spec.offset) + i) % 256 for i in range(size - 8))
    if model == "constant":
        return [(fmt, bytes(8) + fill)] * len(ks)
    return [(fmt, int(k).to_bytes(8, "little") + fill) for k in ks.tolist()]

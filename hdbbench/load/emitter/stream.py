# SPDX-License-Identifier: Apache-2.0
"""`EventStream`: an attribute's event sequence generated in blocks with random access by k, and
the pure prediction API (`predict_event`, `predict_events`, `predict_checksum`) over cached streams.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdbbench.load.emitter.digest import Checksum, Event, _dims, event_digest, stream_key
from hdbbench.load.emitter.spec import AttrSpec, validate_spec
from hdbbench.load.emitter.types import ALARM, ERROR_REASON, INVALID, VALID, WARNING
from hdbbench.load.emitter.values import _Draws, _model_values
from hdbbench.model import valuefn as vf


def block_size(spec: AttrSpec) -> int:
    """Events per block: 512 for scalars, fewer for arrays so a block stays ≲ 64k elements."""
    return max(1, min(512, 65536 // max(1, spec.elements)))


@dataclass
class Block:
    b: int
    k0: int
    values: list[Any]          # python/numpy value per event, None for INVALID/error events
    qualities: np.ndarray      # uint8
    errors: np.ndarray         # bool
    digests: np.ndarray        # uint64
    carry: np.ndarray | None   # walk position after the block


class EventStream:
    """The event sequence of one attribute; random access by k, cached per block."""

    CHECKPOINT_EVERY = 16  # blocks between saved walk positions (random access cost bound)

    def __init__(self, seed: int, key: str, spec: AttrSpec) -> None:
        self.seed = int(seed)
        self.key = key
        self.spec = validate_spec(spec)
        self.size = block_size(spec)
        self._base = vf.stream_base(self.seed, key)
        self._block: Block | None = None
        self._recent: dict[int, Block] = {}  # a few blocks, for random access that hops between them
        self._walk_start = self._initial_position()
        self._checkpoints: dict[int, np.ndarray] = {0: self._walk_start}

    # -- public
    def event(self, k: int) -> Event:
        blk = self.block(k // self.size)
        i = k - blk.k0
        return Event(k, blk.values[i], int(blk.qualities[i]), ERROR_REASON if blk.errors[i] else None)

    def digest(self, k: int) -> int:
        blk = self.block(k // self.size)
        return int(blk.digests[k - blk.k0])

    def raw_value(self, k: int) -> Any:
        """The model value of event k even if the event is INVALID or an error (e.g. a set point)."""
        blk = self._generate(k // self.size, keep_all=True)
        return blk.values[k - blk.k0]

    def checksum(self, n: int) -> Checksum:
        """Checksum of events 0..n-1 (what the device reports after emitting n events)."""
        total = 0
        for b in range(0, (n + self.size - 1) // self.size):
            d = self.block(b).digests
            total += int(d[: n - b * self.size].sum(dtype=np.uint64)) if (b + 1) * self.size > n \
                else int(d.sum(dtype=np.uint64))
        return Checksum(n, total & 0xFFFFFFFFFFFFFFFF)

    def block(self, b: int) -> Block:
        if self._block is None or self._block.b != b:
            blk = self._recent.get(b)
            if blk is None:
                blk = self._generate(b)
                if len(self._recent) >= 4:
                    self._recent.pop(next(iter(self._recent)))
                self._recent[b] = blk
            self._block = blk
        return self._block

    # -- generation
    def _initial_position(self) -> np.ndarray:
        return np.zeros(self.spec.elements, dtype=np.int64)  # a walk's integer step sum before event 0

    def _carry_in(self, b: int) -> np.ndarray:
        if self.spec.value_model != "walk":
            return self._walk_start
        if b in self._checkpoints:
            return self._checkpoints[b]
        if self._block is not None and self._block.b == b - 1 and self._block.carry is not None:
            return self._block.carry
        start = max(c for c in self._checkpoints if c < b)
        carry = self._checkpoints[start]
        for bb in range(start, b):
            carry = self._raw(bb, carry)[2]
            if (bb + 1) % self.CHECKPOINT_EVERY == 0:
                self._checkpoints[bb + 1] = carry
        return carry

    def _raw(self, b: int, carry: np.ndarray) -> tuple[_Draws, Any, np.ndarray | None]:
        ks = np.arange(b * self.size, (b + 1) * self.size, dtype=np.int64)
        words = vf.event_words(self._base, ks)
        u_err = vf.unit(vf.draws(words, vf.SLOT_ERROR, 1)[:, 0])
        u_q = vf.unit(vf.draws(words, vf.SLOT_QUALITY, 1)[:, 0])
        source = _Draws(words)
        values, carry_out = _model_values(self.spec, source, ks, carry)
        return source, (u_err, u_q, values), carry_out

    def _generate(self, b: int, keep_all: bool = False) -> Block:
        carry = self._carry_in(b)
        _, (u_err, u_q, values), carry_out = self._raw(b, carry)
        if carry_out is not None and (b + 1) % self.CHECKPOINT_EVERY == 0:
            self._checkpoints[b + 1] = carry_out
        s = self.spec
        errors = u_err < s.p_error
        q = np.full(self.size, VALID, dtype=np.uint8)
        c1, c2, c3 = s.p_invalid, s.p_invalid + s.p_alarm, s.p_invalid + s.p_alarm + s.p_warning
        q[u_q < c3] = WARNING
        q[u_q < c2] = ALARM
        q[u_q < c1] = INVALID
        q[errors] = INVALID  # an error event carries no value; its quality is not part of the digest
        values, payload = values
        vals: list[Any] = []
        digests = np.empty(self.size, dtype=np.uint64)
        # A fast path for numeric payloads: one cast per block, the same bytes as canonical_bytes().
        rows = None if payload is None else payload.reshape(self.size, -1).astype(s.info.dtype)
        dims = b"".join(d.to_bytes(4, "little") for d in _dims(s.format, values[0]))
        err_digest = event_digest(s.type, s.format, None, INVALID, ERROR_REASON)
        for i in range(self.size):
            v, qi = values[i], int(q[i])
            if errors[i] or qi == INVALID:
                vals.append(v if keep_all else None)
                digests[i] = err_digest if errors[i] else event_digest(s.type, s.format, None, qi)
                continue
            vals.append(v)
            if rows is None:
                digests[i] = event_digest(s.type, s.format, v, qi)
            else:
                data = b"v" + bytes((qi,)) + dims + rows[i].tobytes()
                digests[i] = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
        return Block(b, b * self.size, vals, q, errors, digests, carry_out)


# --------------------------------------------------------------------------------------------
# Pure prediction API

_STREAMS: dict[tuple[int, str, AttrSpec], EventStream] = {}


def _stream(seed: int, key: str, spec: AttrSpec) -> EventStream:
    ident = (int(seed), key, spec)
    st = _STREAMS.get(ident)
    if st is None:
        if len(_STREAMS) > 4096:
            _STREAMS.clear()
        st = _STREAMS[ident] = EventStream(seed, key, spec)
    return st


def predict_event(seed: int, device: str, spec: AttrSpec, k: int) -> Event:
    """Event k of attribute `spec` of `device` for `seed`: what the device emits as its k-th event."""
    if k < 0:
        raise ValueError("k must be >= 0")
    return _stream(seed, stream_key(device, spec.name), spec).event(k)


def predict_events(seed: int, device: str, spec: AttrSpec, start: int, stop: int) -> Iterator[Event]:
    st = _stream(seed, stream_key(device, spec.name), spec)
    return (st.event(k) for k in range(start, stop))


def predict_checksum(seed: int, device: str, spec: AttrSpec, n: int) -> Checksum:
    """Checksum of events 0..n-1: equals the device's after it emitted n events of this attribute."""
    return _stream(seed, stream_key(device, spec.name), spec).checksum(n)

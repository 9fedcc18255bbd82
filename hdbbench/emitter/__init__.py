# SPDX-License-Identifier: Apache-2.0
"""Seeded, timing-independent event generator behind the simulated Tango devices (no Tango import).

Model
-----
An attribute is described by an `AttrSpec` (Tango type, format, write type, rate, dimensions, value
model, quality/error probabilities, event mode). Its k-th event (k = 0, 1, 2, ...) is a pure function
of ``(seed, key, spec, k)``, where ``key`` is the attribute's identity (``"<device>/<attribute>"``,
lower-case): `predict_event` computes it without any clock, and the running device emits the very
same sequence whatever its rate, pauses, bursts or scheduling jitter.

Every random number is a counter-based hash of (seed, key, k, slot) (`hdbbench.valuefn`), and the
value models use only correctly rounded floating-point operations: the C++ generator device
(devices/gen/) computes bit-identical events. The definition is devices/spec/value-function.md, pinned
by devices/spec/value-vectors.json, which both implementations are tested against. For speed, events
are generated in blocks of `block_size(spec)` consecutive indices (vectorised); only the random walk
carries state across blocks (its integer step sums, exact, so blocking does not change a value).

Per event: ``u_err = unit(draw(k, 0)) < p_error`` gives an error event (a DevFailed with reason `ERROR_REASON`);
otherwise ``u_q = unit(draw(k, 1))`` picks the quality: INVALID (value None) with ``p_invalid``, then ALARM with
``p_alarm``, WARNING with ``p_warning``, else VALID.

Checksum (order-independent)
----------------------------
``digest(event) = little-endian uint64 of blake2b(canonical_bytes, digest_size=8)`` where
canonical_bytes is ``b"e" + reason`` for an error event, ``b"v" + quality byte`` for an INVALID event,
and ``b"v" + quality byte + uint32 dim_x + uint32 dim_y + payload`` otherwise. The payload is the value
in its canonical little-endian dtype (`TYPES`: bool/uchar u1, short i2, ushort u2, long i4, ulong u4,
long64 i8, ulong64 u8, float f4, double f8, state u4, enum i2); strings are UTF-8, each followed by
NUL; DevEncoded is ``format + NUL + data``. Dimensions are (1, 0) for a scalar, (n, 0) for a spectrum,
(x, y) for an image. The checksum of a set of events is ``(count, sum of digests mod 2**64)``: it does
not depend on arrival order, so a receiver or a database reader (timestamps excluded, since they
depend on timing) can recompute it with `event_digest` from what it stored.

Timestamps
----------
The runtime `Emitter` stamps event k with its *scheduled* time in integer microseconds: after a start
(or a rate change) at epoch (t0, k0), ``ts(k) = t0 + round((k - k0) * 1e6 / rate)``; a burst stamps its
events 1 µs apart from ``max(now, last + 1 µs)``. Per attribute, timestamps are strictly increasing,
so the HDB++ primary key (att_conf_id, data_time) never collides.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from hdbbench import valuefn as vf

ERROR_REASON = "HdbBench_SimulatedError"
ERROR_DESC = "simulated error event"

# AttrQuality numbers (tango.AttrQuality).
VALID, INVALID, ALARM, CHANGING, WARNING = 0, 1, 2, 3, 4
QUALITY_NAMES = {VALID: "ATTR_VALID", INVALID: "ATTR_INVALID", ALARM: "ATTR_ALARM",
                 CHANGING: "ATTR_CHANGING", WARNING: "ATTR_WARNING"}

# tango.DevState numbers, in Tango's order.
STATE_NAMES = ("ON", "OFF", "CLOSE", "OPEN", "INSERT", "EXTRACT", "MOVING", "STANDBY", "FAULT",
               "INIT", "RUNNING", "ALARM", "DISABLE", "UNKNOWN")


@dataclass(frozen=True)
class TypeInfo:
    name: str       # Tango name, e.g. "DevDouble"
    number: int     # Tango CmdArgType number (hdbpp-reference §4)
    kind: str       # bool | int | float | string | state | enum | encoded
    dtype: str      # canonical little-endian numpy dtype of the checksum payload ("" if none)


TYPES: dict[str, TypeInfo] = {t.name: t for t in (
    TypeInfo("DevBoolean", 1, "bool", "<u1"),
    TypeInfo("DevUChar", 22, "int", "<u1"),
    TypeInfo("DevShort", 2, "int", "<i2"),
    TypeInfo("DevUShort", 6, "int", "<u2"),
    TypeInfo("DevLong", 3, "int", "<i4"),
    TypeInfo("DevULong", 7, "int", "<u4"),
    TypeInfo("DevLong64", 23, "int", "<i8"),
    TypeInfo("DevULong64", 24, "int", "<u8"),
    TypeInfo("DevFloat", 4, "float", "<f4"),
    TypeInfo("DevDouble", 5, "float", "<f8"),
    TypeInfo("DevString", 8, "string", ""),
    TypeInfo("DevState", 19, "state", "<u4"),
    TypeInfo("DevEnum", 29, "enum", "<i2"),
    TypeInfo("DevEncoded", 28, "encoded", ""),
)}
FORMATS = ("SCALAR", "SPECTRUM", "IMAGE")
WRITE_TYPES = ("READ", "READ_WRITE")
MODES = ("push", "poll")
MODELS: dict[str, tuple[str, ...]] = {
    "bool": ("constant", "step", "noise", "sine"),
    "int": ("constant", "sine", "step", "noise", "walk", "counter"),
    "float": ("constant", "sine", "step", "noise", "walk", "counter"),
    "string": ("constant", "counter", "cycle", "noise"),
    "state": ("constant", "cycle", "step", "noise"),
    "enum": ("constant", "cycle", "step", "noise"),
    "encoded": ("constant", "counter", "noise"),
}
DEFAULT_MODEL = {"bool": "step", "int": "walk", "float": "walk", "string": "counter",
                 "state": "cycle", "enum": "cycle", "encoded": "counter"}
DEFAULT_STATES = ("ON", "MOVING", "STANDBY", "ALARM", "FAULT")
DEFAULT_ENUM_LABELS = ("OFF", "ON", "FAULT")
MAX_DIM = 1 << 24  # elements; a larger spectrum/image is surely a typo


class SpecError(ValueError):
    """An attribute specification is invalid (the launcher turns it into a ConfigError with its line)."""


@dataclass(frozen=True)
class AttrSpec:
    """One generated attribute. Units are in the names; every field has a usable default."""

    name: str
    type: str = "DevDouble"
    format: str = "SCALAR"
    write: str = "READ"
    mode: str = "push"                  # push: code-pushed archive events; poll: Tango polling + criteria
    rate_hz: float = 1.0                # push rate, or polling frequency in poll mode
    dim_x: int = 1                      # spectrum length / image width / DevEncoded payload bytes
    dim_y: int = 0                      # image height
    model: str = ""                     # "" = DEFAULT_MODEL of the type's kind
    offset: float = 0.0
    amplitude: float = 1.0
    period: int = 100                   # events per sine period / per step level
    levels: int = 2                     # step model: number of levels
    step: float = 0.1                   # walk: step std-dev (integer types: max step); counter: increment
    labels: tuple[str, ...] = ()        # enum labels; state or string values of cycle/step/noise
    text: str = ""                      # string prefix / DevEncoded format name
    abs_change: float | None = None     # poll mode: archive_abs_change
    rel_change: float | None = None     # poll mode: archive_rel_change (percent)
    archive_period_ms: int | None = None  # poll mode: archive_period
    p_error: float = 0.0
    p_invalid: float = 0.0
    p_alarm: float = 0.0
    p_warning: float = 0.0

    @property
    def info(self) -> TypeInfo:
        return TYPES[self.type]

    @property
    def kind(self) -> str:
        return TYPES[self.type].kind

    @property
    def value_model(self) -> str:
        return self.model or DEFAULT_MODEL[self.kind]

    @property
    def shape(self) -> tuple[int, ...]:
        """numpy shape of one event's value: () scalar, (n,) spectrum, (y, x) image."""
        if self.format == "SPECTRUM":
            return (self.dim_x,)
        if self.format == "IMAGE":
            return (self.dim_y, self.dim_x)
        return ()

    @property
    def elements(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    @property
    def choices(self) -> tuple[str, ...]:
        """Values of the state/enum/string cycle, step and noise models."""
        if self.kind == "enum":
            return self.labels or DEFAULT_ENUM_LABELS
        if self.kind == "state":
            return self.labels or DEFAULT_STATES
        return self.labels

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AttrSpec:
        data = json.loads(text)
        data["labels"] = tuple(data.get("labels", ()))
        return validate_spec(cls(**data))


def _fail(spec_name: str, msg: str) -> SpecError:
    return SpecError(f"attribute {spec_name!r}: {msg}")


def validate_spec(spec: AttrSpec) -> AttrSpec:
    """Check one spec; return it (normalised) or raise SpecError naming the field."""
    n = spec.name
    if spec.type not in TYPES:
        raise _fail(n, f"unknown type {spec.type!r} (one of {', '.join(TYPES)})")
    if spec.format not in FORMATS:
        raise _fail(n, f"unknown format {spec.format!r} (one of {', '.join(FORMATS)})")
    if spec.write not in WRITE_TYPES:
        raise _fail(n, f"unknown write type {spec.write!r} (one of {', '.join(WRITE_TYPES)})")
    if spec.mode not in MODES:
        raise _fail(n, f"unknown mode {spec.mode!r} (one of {', '.join(MODES)})")
    if spec.kind == "encoded" and spec.format != "SCALAR":
        raise _fail(n, "Tango allows DevEncoded only as SCALAR")
    if not (math.isfinite(spec.rate_hz) and spec.rate_hz > 0):
        raise _fail(n, f"rate_hz must be > 0, got {spec.rate_hz}")
    if spec.mode == "poll" and spec.rate_hz > 1000:
        raise _fail(n, "poll mode: rate_hz above 1000 (polling period below 1 ms)")
    if spec.format != "SCALAR" or spec.kind == "encoded":
        if spec.dim_x < 1:
            raise _fail(n, f"dim_x must be >= 1, got {spec.dim_x}")
    if spec.format == "IMAGE" and spec.dim_y < 1:
        raise _fail(n, f"image dim_y must be >= 1, got {spec.dim_y}")
    if spec.elements > MAX_DIM or spec.dim_x > MAX_DIM:
        raise _fail(n, f"more than {MAX_DIM} elements")
    if spec.value_model not in MODELS[spec.kind]:
        raise _fail(n, f"model {spec.value_model!r} does not fit {spec.type} "
                       f"(one of {', '.join(MODELS[spec.kind])})")
    if spec.period < 1 or spec.levels < 1:
        raise _fail(n, "period and levels must be >= 1")
    probs = (spec.p_error, spec.p_invalid, spec.p_alarm, spec.p_warning)
    if any(not (0.0 <= p <= 1.0) for p in probs) or sum(probs[1:]) > 1.0:
        raise _fail(n, "probabilities must be in [0, 1] and p_invalid + p_alarm + p_warning <= 1")
    if spec.kind == "state":
        bad = [s for s in spec.choices if s not in STATE_NAMES]
        if bad:
            raise _fail(n, f"unknown DevState name(s) {bad}")
    if spec.kind == "enum" and len(set(spec.choices)) != len(spec.choices):
        raise _fail(n, "enum labels must be distinct")
    if spec.kind == "string" and spec.value_model == "cycle" and not spec.labels:
        raise _fail(n, "string model 'cycle' needs labels")
    if spec.mode == "push" and (spec.abs_change, spec.rel_change, spec.archive_period_ms) != (None,) * 3:
        raise _fail(n, "abs_change/rel_change/archive_period_ms apply to mode = 'poll' only")
    if spec.mode == "poll" and (spec.archive_period_ms or 0) < 0:
        raise _fail(n, "archive_period_ms must be >= 0")
    return spec


# --------------------------------------------------------------------------------------------
# Events and digests


class Event(NamedTuple):
    """Event k of an attribute. value is None for INVALID quality and for error events."""

    k: int
    value: Any
    quality: int
    error: str | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None


def stream_key(device: str, attribute: str) -> str:
    return f"{device}/{attribute}".lower()


def _dims(spec_format: str, value: Any) -> tuple[int, int]:
    if spec_format == "SCALAR":
        return 1, 0
    if spec_format == "SPECTRUM":
        return len(value), 0
    rows = len(value)
    return (len(value[0]) if rows else 0), rows


def canonical_bytes(type_name: str, fmt: str, value: Any, quality: int, error: str | None = None) -> bytes:
    """The bytes hashed by `event_digest` (see the module docstring)."""
    if error is not None:
        return b"e" + error.encode()
    head = b"v" + bytes([quality])
    if quality == INVALID or value is None:
        return head
    info = TYPES[type_name]
    dx, dy = _dims(fmt, value)
    head += dx.to_bytes(4, "little") + dy.to_bytes(4, "little")
    if info.kind == "encoded":
        fmt_name, data = value
        return head + str(fmt_name).encode() + b"\0" + bytes(data)
    if info.kind == "string":
        flat = [value] if fmt == "SCALAR" else (
            list(value) if fmt == "SPECTRUM" else [s for row in value for s in row])
        return head + b"".join(str(s).encode() + b"\0" for s in flat)
    return head + np.asarray(value).astype(info.dtype, copy=False).tobytes()


def event_digest(type_name: str, fmt: str, value: Any, quality: int, error: str | None = None) -> int:
    """64-bit digest of one event, from generated or received values alike."""
    data = canonical_bytes(type_name, fmt, value, quality, error)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


@dataclass
class Checksum:
    """Order-independent checksum of a set of events: count and sum of digests mod 2**64."""

    count: int = 0
    total: int = 0

    def add(self, digest: int) -> None:
        self.count += 1
        self.total = (self.total + digest) & 0xFFFFFFFFFFFFFFFF

    def __str__(self) -> str:
        return f"{self.count}:{self.total:016x}"


# --------------------------------------------------------------------------------------------
# Block generation


def block_size(spec: AttrSpec) -> int:
    """Events per block: 512 for scalars, fewer for arrays so a block stays ≲ 64k elements."""
    return max(1, min(512, 65536 // max(1, spec.elements)))


def _int_range(info: TypeInfo) -> tuple[float, float]:
    ii = np.iinfo(np.dtype(info.dtype))
    # 64-bit types: stay within the integers a float64 holds exactly, so casts never overflow.
    return float(max(ii.min, -(2**53))), float(min(ii.max, 2**53))


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


# --------------------------------------------------------------------------------------------
# Runtime: schedules, bursts, statistics (driven by a clock; the device supplies the sink)

Sink = Callable[["AttrState", Event, int], None]  # (attribute, event, timestamp_us)


@dataclass
class AttrState:
    """Runtime state of one attribute inside an Emitter."""

    index: int
    spec: AttrSpec
    stream: EventStream
    rate_hz: float
    next_k: int = 0
    running: bool = False
    epoch_us: int = 0
    epoch_k: int = 0
    last_ts_us: int = 0
    last_pushed_us: int = 0             # timestamp of the last push when stamping at push time
    burst_left: int = 0
    generation: int = 0                 # bumps invalidate queued schedule entries
    checksum: Checksum = field(default_factory=Checksum)
    errors: int = 0
    last_event: Event | None = None
    recent: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=64))

    def due_us(self, k: int) -> int:
        return self.epoch_us + round((k - self.epoch_k) * 1e6 / self.rate_hz)


@dataclass(frozen=True)
class AttrStats:
    name: str
    mode: str
    running: bool
    target_rate_hz: float
    achieved_rate_hz: float
    emitted: int
    errors: int
    checksum: str       # "count:sum16hex"
    checksum_sum: int
    lag_s: float


TIMESTAMP_MODES = ("schedule", "push")


class Emitter:
    """Emits the events of a device's attributes at their rates, through `sink`, on a given clock.

    `step(now)` emits every push-mode event due at `now`; `sample(name, now)` serves one poll-mode
    read. All methods are thread-safe (one lock): Tango command threads steer, one thread steps.
    """

    MAX_CATCH_UP = 5000  # events of one attribute per step, so one late attribute cannot starve others

    def __init__(self, seed: int, device: str, specs: Sequence[AttrSpec], sink: Sink,
                 clock: Callable[[], float] = time.time, timestamps: str = "schedule") -> None:
        if timestamps not in TIMESTAMP_MODES:
            raise SpecError(f"timestamps must be one of {', '.join(TIMESTAMP_MODES)}, got {timestamps!r}")
        # "schedule": an event carries its due time (deterministic, whatever the pusher's lateness);
        # "push": the time it is pushed, as a real device stamps a value when it reads it. Event age
        # at commit then measures the archiving path, not the simulator's lateness (reported as lag).
        self.stamp_at_push = timestamps == "push"
        names = [s.name.lower() for s in specs]
        if len(set(names)) != len(names):
            raise SpecError("duplicate attribute names (Tango names are case-insensitive)")
        self.seed, self.device, self._sink, self._clock = int(seed), device, sink, clock
        self.attrs = [AttrState(i, s, EventStream(seed, stream_key(device, s.name), s), s.rate_hz)
                      for i, s in enumerate(specs)]
        self._by_name = {s.spec.name.lower(): s for s in self.attrs}
        self._heap: list[tuple[int, int, int]] = []  # (due_us, index, generation)
        self._lock = threading.RLock()
        self.push_failures = 0
        self.last_push_failure = ""

    # -- lookup
    def get(self, name: str) -> AttrState:
        try:
            return self._by_name[name.lower()]
        except KeyError:
            raise KeyError(f"no generated attribute {name!r}") from None

    def _select(self, names: Iterable[str] | None, mode: str | None = "push") -> list[AttrState]:
        states = self.attrs if names is None else [self.get(n) for n in names]
        return [s for s in states if mode is None or s.spec.mode == mode]

    def _now_us(self, now: float | None) -> int:
        return int((self._clock() if now is None else now) * 1e6)

    # -- control
    def start(self, names: Iterable[str] | None = None, now: float | None = None) -> None:
        with self._lock:
            t = self._now_us(now)
            for st in self._select(names, mode=None):
                if not st.running:
                    st.running = True
                    self._rearm(st, t)

    def stop(self, names: Iterable[str] | None = None) -> None:
        with self._lock:
            for st in self._select(names, mode=None):
                st.running = False
                st.generation += 1

    def set_rate(self, rate_hz: float, names: Iterable[str] | None = None, now: float | None = None) -> None:
        if not (math.isfinite(rate_hz) and rate_hz > 0):
            raise ValueError(f"rate must be > 0, got {rate_hz}")
        with self._lock:
            t = self._now_us(now)
            for st in self._select(names):
                st.rate_hz = float(rate_hz)
                if st.running:
                    self._rearm(st, t)

    def burst(self, n: int, names: Iterable[str] | None = None) -> None:
        """Queue n extra events per attribute, emitted at the next step as fast as possible."""
        if n < 0:
            raise ValueError("burst size must be >= 0")
        with self._lock:
            for st in self._select(names):
                st.burst_left += n
                st.generation += 1  # replaces the queued schedule entry, re-pushed after the burst
                heapq.heappush(self._heap, (0, st.index, st.generation))

    def reset(self) -> None:
        """Stop everything and rewind to event 0 with zeroed statistics: the next run repeats the first."""
        with self._lock:
            for st in self.attrs:
                self.attrs[st.index] = AttrState(st.index, st.spec, st.stream, st.spec.rate_hz,
                                                 last_ts_us=st.last_ts_us, generation=st.generation + 1)
            self._by_name = {s.spec.name.lower(): s for s in self.attrs}
            self._heap.clear()
            self.push_failures = 0

    def _rearm(self, st: AttrState, now_us: int) -> None:
        st.generation += 1
        st.epoch_k = st.next_k
        st.epoch_us = max(now_us, st.last_ts_us + 1)
        if st.spec.mode == "push":
            heapq.heappush(self._heap, (st.epoch_us, st.index, st.generation))

    # -- emission
    def step(self, now: float | None = None, budget: int | None = None) -> int:
        """Emit the events due at `now` (at most about `budget`); return how many were emitted.

        Events are taken and counted under the lock, then handed to the sink without it: the sink
        (Tango's push) may wait for the device monitor, which a command thread can hold while it waits
        for this lock. Call step from one thread only, so each attribute's events stay in order.
        """
        with self._lock:
            t = self._now_us(now)
            batch: list[tuple[AttrState, Event, int]] = []
            left = budget if budget is not None else 1 << 62
            while self._heap and self._heap[0][0] <= t and len(batch) < left:
                _, idx, gen = heapq.heappop(self._heap)
                st = self.attrs[idx]
                if gen != st.generation:
                    continue
                self._take_due(st, t, min(self.MAX_CATCH_UP, left - len(batch)), batch)
        for st, ev, ts_us in batch:
            if self.stamp_at_push:
                # Strictly increasing per attribute: the HDB++ primary key is (attribute, data_time).
                ts_us = st.last_ts_us = max(self._now_us(None), st.last_pushed_us + 1)
                st.last_pushed_us = ts_us
            try:
                self._sink(st, ev, ts_us)
            except Exception as exc:  # noqa: BLE001 - the pusher must survive; the failure is counted
                self.push_failures += 1
                self.last_push_failure = f"{st.spec.name} k={ev.k}: {exc}"
        return len(batch)

    def _take_due(self, st: AttrState, now_us: int, limit: int, batch: list[tuple[AttrState, Event, int]]) -> None:
        count = 0
        while st.burst_left and count < limit:
            st.burst_left -= 1
            batch.append(self._take(st, max(now_us, st.last_ts_us + 1), now_us))
            count += 1
        if st.running and not st.burst_left:
            if count:  # a burst moved time on: the regular schedule restarts after it
                st.epoch_k, st.epoch_us = st.next_k, st.last_ts_us + round(1e6 / st.rate_hz)
            while count < limit and st.due_us(st.next_k) <= now_us:
                batch.append(self._take(st, max(st.due_us(st.next_k), st.last_ts_us + 1), now_us))
                count += 1
        if st.burst_left:
            heapq.heappush(self._heap, (now_us, st.index, st.generation))
        elif st.running:
            heapq.heappush(self._heap, (st.due_us(st.next_k), st.index, st.generation))

    def _take(self, st: AttrState, ts_us: int, now_us: int) -> tuple[AttrState, Event, int]:
        ev = st.stream.event(st.next_k)
        self._account(st, ev, ts_us, now_us)
        return st, ev, ts_us

    def _account(self, st: AttrState, ev: Event, ts_us: int, now_us: int) -> None:
        st.checksum.add(st.stream.digest(ev.k))
        st.errors += ev.is_error
        st.next_k = ev.k + 1
        st.last_ts_us = ts_us
        st.last_event = ev
        if not st.recent or now_us - st.recent[-1][0] * 1e6 >= 50_000:
            st.recent.append((now_us / 1e6, st.checksum.count))

    def sample(self, name: str, now: float | None = None) -> tuple[Event, int]:
        """Serve one poll-mode read: the next event and its timestamp (the device's clock)."""
        with self._lock:
            st = self.get(name)
            t = self._now_us(now)
            ev = st.stream.event(st.next_k)
            ts = max(t, st.last_ts_us + 1)
            self._account(st, ev, ts, t)
            return ev, ts

    def next_due_s(self, now: float | None = None) -> float | None:
        """Seconds until the next scheduled event (<= 0: due now), None when nothing is scheduled."""
        with self._lock:
            while self._heap and self._heap[0][2] != self.attrs[self._heap[0][1]].generation:
                heapq.heappop(self._heap)
            if not self._heap:
                return None
            return (self._heap[0][0] - self._now_us(now)) / 1e6

    # -- statistics
    def stats(self, now: float | None = None) -> list[AttrStats]:
        with self._lock:
            t = self._now_us(now) / 1e6
            return [self._stats(st, t) for st in self.attrs]

    def _stats(self, st: AttrState, now_s: float) -> AttrStats:
        rate = 0.0
        window = [(t, c) for t, c in st.recent if now_s - t <= 5.0]
        if len(window) >= 2 and window[-1][0] > window[0][0]:
            rate = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0])
        lag = 0.0
        if st.running and st.spec.mode == "push":
            lag = max(0.0, now_s - st.due_us(st.next_k) / 1e6)
        return AttrStats(st.spec.name, st.spec.mode, st.running, st.rate_hz, rate, st.checksum.count,
                         st.errors, str(st.checksum), st.checksum.total, lag)

    def total_emitted(self) -> int:
        with self._lock:
            return sum(st.checksum.count for st in self.attrs)


def replace_spec(spec: AttrSpec, **changes: Any) -> AttrSpec:
    return validate_spec(replace(spec, **changes))

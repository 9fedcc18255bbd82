# SPDX-License-Identifier: Apache-2.0
"""Seeded, timing-independent event generator behind the simulated Tango devices (no Tango import).

Model
-----
An attribute is described by an `AttrSpec` (Tango type, format, write type, rate, dimensions, value
model, quality/error probabilities, event mode). Its k-th event (k = 0, 1, 2, ...) is a pure function
of ``(seed, key, spec, k)``, where ``key`` is the attribute's identity (``"<device>/<attribute>"``,
lower-case): `predict_event` computes it without any clock, and the running device emits the very
same sequence whatever its rate, pauses, bursts or scheduling jitter.

Every random number is a counter-based hash of (seed, key, k, slot) (`hdbbench.model.valuefn`), and the
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
(or a rate change) at epoch (t0, k0), ``ts(k) = t0 + round((k - k0 + phase) * 1e6 / rate)``; a burst stamps
its events 1 µs apart from ``max(now, last + 1 µs)``. Per attribute, timestamps are strictly increasing,
so the HDB++ primary key (att_conf_id, data_time) never collides. ``phase`` is 0 with ``phases =
"aligned"`` (every attribute of a rate due at the same instants) and ``schedule_phase(seed, key)``, a
fraction of the period in [0, 1), with ``phases = "seeded"`` (spread as a facility's polling phases).

Modules
-------
    types    qualities, states, the type table, formats, modes and value models
    spec     `AttrSpec` and its validation (`SpecError`)
    digest   `Event`, canonical bytes, `event_digest` and `Checksum`
    values   the value models over a block of events
    stream   `EventStream` (blocks, random access by k) and the prediction API
    pacing   the runtime `Emitter` (schedules, bursts, samples, statistics)

Every public name is re-exported here: ``from hdbbench import emitter as em; em.AttrSpec``.
"""

from __future__ import annotations

from hdbbench.load.emitter.digest import Checksum, Event, canonical_bytes, event_digest, stream_key
from hdbbench.load.emitter.pacing import PHASE_MODES, TIMESTAMP_MODES, AttrState, AttrStats, Emitter, Sink
from hdbbench.load.emitter.spec import AttrSpec, SpecError, replace_spec, validate_spec
from hdbbench.load.emitter.stream import (
    Block,
    EventStream,
    block_size,
    predict_checksum,
    predict_event,
    predict_events,
)
from hdbbench.load.emitter.types import (
    ALARM,
    CHANGING,
    DEFAULT_ENUM_LABELS,
    DEFAULT_MODEL,
    DEFAULT_STATES,
    ERROR_DESC,
    ERROR_REASON,
    FORMATS,
    INVALID,
    MAX_DIM,
    MODELS,
    MODES,
    QUALITY_NAMES,
    STATE_NAMES,
    TYPES,
    VALID,
    WARNING,
    WRITE_TYPES,
    TypeInfo,
)
from hdbbench.load.emitter.values import Values, integer_step

__all__ = [
    "ALARM", "CHANGING", "DEFAULT_ENUM_LABELS", "DEFAULT_MODEL", "DEFAULT_STATES", "ERROR_DESC",
    "ERROR_REASON", "FORMATS", "INVALID", "MAX_DIM", "MODELS", "MODES", "PHASE_MODES", "QUALITY_NAMES",
    "STATE_NAMES", "TIMESTAMP_MODES", "TYPES", "VALID", "WARNING", "WRITE_TYPES", "AttrSpec", "AttrState",
    "AttrStats", "Block", "Checksum", "Emitter", "Event", "EventStream", "Sink", "SpecError", "TypeInfo",
    "Values", "block_size", "canonical_bytes", "event_digest", "integer_step", "predict_checksum",
    "predict_event", "predict_events", "replace_spec", "stream_key", "validate_spec",
]

# SPDX-License-Identifier: Apache-2.0
"""Write value-vectors.json, the test vectors of value-function.md, from the Python reference.

Run ``python devices/spec/make_vectors.py`` after a deliberate change of the value function; the
Python tests check the file is what this script writes, the C++ tests check the C++ engine against it.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from hdbbench.load import emitter as em  # noqa: E402
from hdbbench.model import valuefn as vf  # noqa: E402

OUT = Path(__file__).with_name("value-vectors.json")
DEVICE = "sim/vectors/d0"
SEED = 20261123
EARLY = range(0, 8)           # events compared one by one
LATE = range(1022, 1026)      # across a block boundary, after a long walk
CHECKSUM_EVENTS = 1026        # events 0..1025
BYTES_EVENTS = 3
T0_US = 1_700_000_000_000_000  # schedules start here (µs since the epoch)


def _bits(x: float) -> str:
    return f"{struct.unpack('<Q', struct.pack('<d', x))[0]:016x}"


def case_specs() -> list[em.AttrSpec]:
    """Every type x format x model, with every quality and error events."""
    out = []
    for type_name, info in em.TYPES.items():
        for fmt in em.FORMATS:
            if info.kind == "encoded" and fmt != "SCALAR":
                continue
            for model in em.MODELS[info.kind]:
                labels: tuple[str, ...] = ()
                if info.kind == "string" and model in ("cycle", "noise"):
                    labels = ("alpha", "beta", "gamma")
                if info.kind == "enum":
                    labels = ("OFF", "ON", "FAULT", "MOVING")
                text = "s" if info.kind == "string" else ("fmt" if info.kind == "encoded" else "")
                dim_x = 12 if info.kind == "encoded" else (1 if fmt == "SCALAR" else 5)
                out.append(em.validate_spec(em.AttrSpec(
                    name=f"{type_name[3:].lower()}_{fmt.lower()}_{model}", type=type_name, format=fmt,
                    model=model, dim_x=dim_x, dim_y=3 if fmt == "IMAGE" else 0, offset=3.0, amplitude=2.5,
                    period=7, levels=3, step=0.75, labels=labels, text=text,
                    p_error=0.1, p_invalid=0.1, p_alarm=0.1, p_warning=0.1)))
    # Edges: large offsets saturate and wrap integer counters; a noise string without labels.
    out.append(em.validate_spec(em.AttrSpec(name="short_counter_wrap", type="DevShort", model="counter",
                                            offset=32760.0, step=1.0)))
    out.append(em.validate_spec(em.AttrSpec(name="uchar_walk_clip", type="DevUChar", model="walk",
                                            offset=250.0, amplitude=40.0, step=3.0)))
    out.append(em.validate_spec(em.AttrSpec(name="long64_counter", type="DevLong64", model="counter",
                                            offset=-9007199254740990.0, step=2.0)))
    out.append(em.validate_spec(em.AttrSpec(name="string_noise_hex", type="DevString", model="noise", text="n")))
    out.append(em.validate_spec(em.AttrSpec(name="double_walk_tiny", model="walk", offset=120.0, amplitude=0.05,
                                            step=0.002)))
    return out


def case(spec: em.AttrSpec) -> dict[str, Any]:
    stream = em.EventStream(SEED, em.stream_key(DEVICE, spec.name), spec)
    events, first_bytes = [], []
    for k in [*EARLY, *LATE]:
        ev = stream.event(k)
        # [k, quality, 1 if an error event, digest]
        events.append([k, ev.quality, int(ev.error is not None), f"{stream.digest(k):016x}"])
        if k < BYTES_EVENTS:  # the full canonical bytes of a few events, to say where a mismatch is
            first_bytes.append(em.canonical_bytes(spec.type, spec.format, ev.value, ev.quality, ev.error).hex())
    placeholder = em.EventStream(SEED, "placeholder", spec).raw_value(0)
    ph_bytes = em.canonical_bytes(spec.type, spec.format, placeholder, em.VALID)
    checksum = stream.checksum(CHECKSUM_EVENTS)
    return {"spec": json.loads(spec.to_json()), "events": events, "bytes": first_bytes,
            "placeholder_bytes": ph_bytes.hex(),
            "checksum": {"count": checksum.count, "sum": f"{checksum.total:016x}"}}


def primitives() -> dict[str, Any]:
    words = [0, 1, 0x9E3779B97F4A7C15, (1 << 64) - 1, 0x0123456789ABCDEF]
    keys = ["", "a", "sim/vectors/d0/double_scalar_walk", "placeholder"]
    base = vf.stream_base(SEED, keys[2])
    ks = np.array([0, 1, 2, 511, 512, 1 << 40], dtype=np.int64)
    ew = vf.event_words(base, ks)
    d = vf.draws(ew, 0, 4)
    phases = [0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.99, 1.25, 7.0 / 3.0, 123456.789]
    blobs = [b"", b"v\x00", b"e" + em.ERROR_REASON.encode(), bytes(range(200))]
    return {
        "mix64": [[f"{w:016x}", f"{vf.mix64(w):016x}"] for w in words],
        "fnv1a64": [[k, f"{vf.fnv1a64(k.encode()):016x}"] for k in keys],
        "stream_base": [[SEED, k, f"{vf.stream_base(SEED, k):016x}"] for k in keys],
        "event_word": [[f"{base:016x}", int(k), f"{int(w):016x}"] for k, w in zip(ks, ew)],
        "draw": [[int(k), slot, f"{int(d[i, slot]):016x}"] for i, k in enumerate(ks) for slot in range(4)],
        "unit": [[f"{int(w):016x}", _bits(float(vf.unit(np.array([w], dtype=np.uint64))[0]))] for w in d[:, 2]],
        "sin2pi": [[_bits(t), _bits(float(vf.sin2pi(np.array([t]))[0]))] for t in phases],
        "schedule_phase": [[seed, key, _bits(vf.schedule_phase(seed, key))]
                           for seed in (0, SEED) for key in [*keys, *schedule_keys()]],
        "blake2b64": [[b.hex(), hashlib.blake2b(b, digest_size=8).digest().hex()] for b in blobs],
    }


def schedule_specs() -> list[em.AttrSpec]:
    """Rates with whole and fractional periods in µs; three of one rate, to see them spread or not."""
    rates = {"fast": 7.0, "one_a": 1.0, "one_b": 1.0, "one_c": 1.0, "third": 3.0, "slow": 0.1}
    specs = [em.AttrSpec(name=name, rate_hz=rate, p_alarm=0.2) for name, rate in rates.items()]
    return [*specs, em.AttrSpec(name="text", type="DevString", rate_hz=2.0, p_error=0.3)]


def schedule_keys() -> list[str]:
    return [em.stream_key(DEVICE, s.name) for s in schedule_specs()]


# A start, rate changes of every attribute and of some, a burst of some, each followed by takes.
# Times are µs after T0_US; ["rate", hz, t, names] with names [] for every push attribute.
SCHEDULE_SCRIPT: list[list[Any]] = [
    ["start", 0], ["take", 2_500_000], ["take", 4_250_000], ["rate", 2.0, 4_250_000, []], ["take", 6_500_000],
    ["rate", 5.0, 7_000_000, ["one_a", "third"]], ["take", 9_000_000], ["burst", 2, ["fast", "slow"]],
    ["take", 9_500_000], ["take", 12_750_000], ["take", 30_000_000],
]


def schedule(phases: str) -> dict[str, Any]:
    """The events (k, timestamp) and checksums of the script, run by the Python Emitter on given times."""
    specs = schedule_specs()
    events: dict[str, list[list[int]]] = {s.name: [] for s in specs}

    def sink(st: em.AttrState, ev: em.Event, ts_us: int) -> None:
        events[st.spec.name].append([ev.k, ts_us])

    def at(offset_us: int) -> float:
        now = (T0_US + offset_us) / 1e6
        assert int(now * 1e6) == T0_US + offset_us, "pick times the emitter reads back exactly"
        return now

    emitter = em.Emitter(SEED, DEVICE, specs, sink, phases=phases)
    for op in SCHEDULE_SCRIPT:
        if op[0] == "start":
            emitter.start(now=at(op[1]))
        elif op[0] == "take":
            emitter.step(now=at(op[1]))
        elif op[0] == "rate":
            emitter.set_rate(op[1], op[3] or None, now=at(op[2]))
        else:
            emitter.burst(op[1], op[2] or None)
    stats = emitter.stats(now=at(SCHEDULE_SCRIPT[-1][1]))
    return {"phases": phases, "specs": [json.loads(s.to_json()) for s in specs],
            "events": [events[s.name] for s in specs],
            "checksums": [[st.emitted, f"{st.checksum_sum:016x}"] for st in stats]}


def document() -> str:
    doc = {"about": "test vectors of devices/spec/value-function.md, written by make_vectors.py",
           "device": DEVICE, "seed": SEED, "primitives": primitives(), "t0_us": T0_US,
           "schedule_script": SCHEDULE_SCRIPT, "schedules": [schedule(p) for p in em.PHASE_MODES],
           "cases": [case(s) for s in case_specs()]}
    text = json.dumps(doc, separators=(",", ":"))
    return text.replace('{"spec"', '\n{"spec"').replace('{"phases"', '\n{"phases"') + "\n"


if __name__ == "__main__":
    OUT.write_text(document())
    print(f"wrote {OUT}")

# SPDX-License-Identifier: Apache-2.0
"""Every event once, through our subscriber: one simulated device pushes every type x format x write
type a backend holds (`Backend.cannot_hold`), with quality changes and error events, and each event
it emits after a rewind must be stored once, as emitted (error-ness, quality, value by digest, order),
with no event lost, no duplicate and no database error. For the backends without a test module of
the subscriber's own (the what-if engines)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hdbbench.backends.registry import backend_class
from hdbbench.load import emitter as em
from hdbbench.model.hdbtypes import AttrFormat, parse_type
from tests.harness.composed import Harness, expected_stored, last_was_error, rewound
from tests.harness.waiting import eventually, seen

EVENTS_PER_ATTRIBUTE = 6
ALL_TYPES = ("DevBoolean", "DevUChar", "DevShort", "DevUShort", "DevLong", "DevULong", "DevLong64", "DevULong64",
             "DevFloat", "DevDouble", "DevString", "DevState", "DevEnum")


def held_types(backend: str) -> list[str]:
    """The Tango types (DevEncoded aside: it has no arrays) the backend holds in every format."""
    cls = backend_class(backend)
    return [t for t in ALL_TYPES if all(cls.cannot_hold(parse_type(t), f) is None for f in AttrFormat)]


def profile_text(backend: str, seed: int, string_text: str) -> str:
    """A device profile of every held type, format and write type; `string_text` is what the string
    attributes count with (the characters the backend's encoding must escape)."""
    return f"""
[profile]
name = "{backend}-types"
seed = {seed}
servers = 1
devices_per_server = 1
device_prefix = "sim/{backend}types"

[defaults]
rate_hz = 4.0
dim_x = 5
dim_y = 3
p_alarm = 0.05
p_warning = 0.05
p_invalid = 0.05
p_error = 0.05

[[matrix]]
types = {held_types(backend)!r}
formats = "all"
writes = "all"
per_type.DevString = {{ model = "counter", text = {string_text!r} }}
per_type.DevState = {{ model = "cycle", labels = ["ON", "MOVING", "FAULT"] }}
per_type.DevEnum = {{ model = "noise", labels = ["OFF", "ON"] }}
"""


def assert_every_event_stored_once(harness: Harness, backend: str, endpoint: Any, tmp_path: Path, *,
                                   seed: int, string_text: str, subscriber_id: int) -> None:
    profile = tmp_path / f"{backend}-types.toml"
    profile.write_text(profile_text(backend, seed, string_text))
    sims = harness.devices(profile)
    db = harness.database(backend, endpoint=endpoint, prefix="es")
    es = harness.subscriber(subscriber_id, db, sims.names, flush_interval_ms=50,
                            properties={"SubscribeRetryPeriod": ["5"]})
    harness.archiving(es, db, sims, rewind=False)
    after_error = last_was_error(sims)
    since = rewound(sims)
    sim = sims.proxy()
    sim.Start()
    specs = {s.name: s for s in sims.plan.specs}
    push = [name for name, s in specs.items() if s.mode == "push"]
    assert len(push) >= 2 * len(held_types(backend))  # every held type, scalar and arrays

    def emitted() -> dict[str, int]:
        return dict(zip(sim.GeneratedAttributes, (int(x) for x in sim.EventsEmittedList)))

    eventually(lambda: seen(min(emitted()[a] for a in push) >= EVENTS_PER_ATTRIBUTE, emitted()),
               60, f"{EVENTS_PER_ATTRIBUTE} events of every push attribute")
    sim.Stop()
    counts = emitted()
    predicted = {a: expected_stored(list(em.predict_events(sims.plan.seed, sims.device, specs[a], 0, counts[a])),
                                    after_error[a]) for a in push}
    want = {sims.full_name(a): len(events) for a, events in predicted.items()}

    def complete() -> Any:
        got = db.count_rows_by_attribute(since)
        missing = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
        return seen(not missing, missing)

    eventually(complete, 60, "events stored since the rewind = the run's events (stored, expected)")
    mismatches = []
    for attr in push:
        rows = [r for r in db.fetch_events(sims.full_name(attr)) if r.data_time >= since]
        times = [r.data_time for r in rows]
        assert times == sorted(times) and len(set(times)) == len(times), f"{attr}: times not strictly increasing"
        mismatches += mismatched(specs[attr], predicted[attr], rows)
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]}"
    assert es.LostEventNumber == 0 and es.DbErrorNumber == 0 and es.DbConnected
    assert es.DuplicateRowNumber == 0


def mismatched(spec: em.AttrSpec, predicted: list[em.Event], rows: list[Any]) -> list[Any]:
    """Stored rows that differ from the emitted events: error-ness, quality, value (by digest)."""
    out: list[Any] = []
    for k, (exp, got) in enumerate(zip(predicted, rows)):
        if exp.is_error or got.error_desc is not None:
            ok = exp.is_error and got.error_desc is not None and em.ERROR_DESC in got.error_desc
        elif exp.quality == em.INVALID:
            ok = got.quality == em.INVALID and got.value_r is None
        else:
            ok = got.quality == exp.quality and (em.event_digest(spec.type, spec.format, got.value_r, got.quality)
                                                 == em.event_digest(spec.type, spec.format, exp.value, exp.quality))
        if not ok:
            out.append((spec.name, k, exp, got))
    return out

# SPDX-License-Identifier: Apache-2.0
"""The seeded generator and its runtime, without Tango: a fake clock drives everything."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from hdbbench.load import emitter as em
from hdbbench.load.devices import PROFILES_DIR, load_profile, plan_fleet
from hdbbench.model import valuefn as vf
from hdbbench.model.errors import ConfigError

DEV = "sim/test/d0"


def all_specs(**common: object) -> list[em.AttrSpec]:
    out = []
    for t in em.TYPES:
        for f in em.FORMATS:
            if t == "DevEncoded" and f != "SCALAR":
                continue
            for model in em.MODELS[em.TYPES[t].kind]:
                labels = ("a", "b", "c") if t == "DevString" else ()
                out.append(em.AttrSpec(name=f"{t}_{f}_{model}", type=t, format=f, model=model, dim_x=5,
                                       dim_y=3, labels=labels, **common))  # type: ignore[arg-type]
    return out


class FakeClock:
    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class Recorder:
    def __init__(self) -> None:
        self.events: dict[str, list[tuple[em.Event, int]]] = {}

    def __call__(self, st: em.AttrState, ev: em.Event, ts_us: int) -> None:
        self.events.setdefault(st.spec.name, []).append((ev, ts_us))


def same_value(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


@pytest.mark.parametrize("spec", all_specs(p_error=0.1, p_invalid=0.1, p_alarm=0.1, p_warning=0.1),
                         ids=lambda s: s.name)
def test_event_k_is_a_pure_function_of_seed_attribute_and_k(spec: em.AttrSpec) -> None:
    stream = em.EventStream(5, "a/b/c/x", spec)
    seq = [stream.event(k) for k in range(700)]
    fresh = em.EventStream(5, "a/b/c/x", spec)
    for k in random.Random(1).sample(range(700), 60):  # random order, crossing blocks both ways
        ev = fresh.event(k)
        assert (ev.k, ev.quality, ev.error) == (seq[k].k, seq[k].quality, seq[k].error)
        assert same_value(ev.value, seq[k].value), (k, ev.value, seq[k].value)
        assert fresh.digest(k) == em.event_digest(spec.type, spec.format, ev.value, ev.quality, ev.error)
    predicted = em.predict_event(5, "a/b/c", spec, 3)
    direct = em.EventStream(5, em.stream_key("a/b/c", spec.name), spec).event(3)
    assert same_value(predicted.value, direct.value) and predicted.quality == direct.quality


def test_seed_and_attribute_change_the_sequence() -> None:
    spec = em.AttrSpec(name="x", model="noise")
    base = [em.predict_event(1, DEV, spec, k).value for k in range(20)]
    assert base == [em.predict_event(1, DEV, spec, k).value for k in range(20)]
    assert base != [em.predict_event(2, DEV, spec, k).value for k in range(20)]
    assert base != [em.predict_event(1, "sim/test/d1", spec, k).value for k in range(20)]


def test_values_have_the_tango_types_shapes_and_ranges() -> None:
    for spec in all_specs():
        ev = em.predict_event(3, DEV, spec, 10)
        if spec.format == "SCALAR":
            assert not isinstance(ev.value, np.ndarray)
        elif spec.kind == "string":
            assert len(ev.value) == (spec.dim_x if spec.format == "SPECTRUM" else spec.dim_y)
        else:
            assert ev.value.shape == spec.shape
            want = np.bool_ if spec.kind == "bool" else np.dtype(spec.info.dtype).newbyteorder("=")
            assert ev.value.dtype == want
    enum = em.AttrSpec(name="e", type="DevEnum", model="noise", labels=("A", "B"))
    assert {em.predict_event(1, DEV, enum, k).value for k in range(200)} == {0, 1}
    state = em.AttrSpec(name="s", type="DevState", model="cycle", labels=("ON", "FAULT"))
    assert [em.predict_event(1, DEV, state, k).value for k in range(3)] == [0, 8, 0]
    walk = em.AttrSpec(name="w", type="DevUChar", model="walk", offset=100, amplitude=20, step=3)
    vals = [em.predict_event(1, DEV, walk, k).value for k in range(3000)]
    assert 80 <= min(vals) and max(vals) <= 120 and len(set(vals)) > 10


def test_quality_and_error_frequencies_follow_the_probabilities() -> None:
    spec = em.AttrSpec(name="q", p_error=0.1, p_invalid=0.1, p_alarm=0.2, p_warning=0.1)
    evs = [em.predict_event(9, DEV, spec, k) for k in range(5000)]
    errors = sum(e.is_error for e in evs) / 5000
    invalid = sum(e.quality == em.INVALID and not e.is_error for e in evs) / 4500
    alarm = sum(e.quality == em.ALARM for e in evs) / 4500
    assert 0.08 < errors < 0.12 and 0.08 < invalid < 0.12 and 0.17 < alarm < 0.23
    assert all(e.value is None for e in evs if e.is_error or e.quality == em.INVALID)


def test_emitter_follows_the_schedule_and_emits_the_predicted_events() -> None:
    clock, rec = FakeClock(), Recorder()
    specs = [em.AttrSpec(name="a", rate_hz=10, p_error=0.2, p_invalid=0.2),
             em.AttrSpec(name="b", type="DevString", rate_hz=3)]
    emi = em.Emitter(11, DEV, specs, rec, clock)
    emi.start()
    t0 = int(clock.t * 1e6)
    for _ in range(100):  # 10 s in jittery steps
        clock.t += random.Random(int(clock.t)).uniform(0.01, 0.2)
        emi.step()
    a = rec.events["a"]
    assert [ts for _, ts in a] == [t0 + k * 100_000 for k in range(len(a))]
    assert [e for e, _ in a] == [em.predict_event(11, DEV, specs[0], k) for k in range(len(a))]
    assert abs(len(a) - 10 * (clock.t - t0 / 1e6)) <= 1
    assert len(rec.events["b"]) == pytest.approx(3 * (clock.t - t0 / 1e6), abs=1)
    st = {s.name: s for s in emi.stats()}
    assert st["a"].emitted == len(a)
    assert st["a"].checksum == str(em.predict_checksum(11, DEV, specs[0], len(a)))


def test_push_stamping_uses_the_push_time_strictly_increasing() -> None:
    clock = FakeClock()
    stamps: list[int] = []

    def late_sink(st: em.AttrState, ev: em.Event, ts_us: int) -> None:
        stamps.append(ts_us)
        clock.t += 0.003 if len(stamps) % 2 else 0.0  # every other push takes 3 ms, the rest no time

    spec = em.AttrSpec(name="a", rate_hz=1000)
    emi = em.Emitter(5, DEV, [spec], late_sink, clock, timestamps="push")
    emi.start()
    clock.t += 0.050  # the pusher wakes 50 ms late: 50 events are due at once
    pushed_from = int(clock.t * 1e6)
    emi.step()
    assert len(stamps) == 51
    assert stamps[0] == pushed_from  # the push time, not the due time 50 ms earlier
    assert all(b > a for a, b in zip(stamps, stamps[1:]))  # unique even when the clock stands still
    assert emi.get("a").last_ts_us == stamps[-1]  # what the device reports as the attribute's time


def test_unknown_timestamp_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(em.SpecError, match="timestamps"):
        em.Emitter(1, DEV, [em.AttrSpec(name="a")], lambda *a: None, timestamps="sometimes")
    path = tmp_path / "p.toml"
    path.write_text('[profile]\nname = "t"\ntimestamps = "sometimes"\n\n[[attribute]]\nname = "a"\n')
    with pytest.raises(ConfigError, match=r"p\.toml:3: \[profile\] timestamps"):
        load_profile(path)


def _first_offsets(emi: em.Emitter, clock: FakeClock, rec: Recorder, period_s: float) -> dict[str, int]:
    """Each attribute's first event after now, as µs after now (steps through one period)."""
    start, seen = int(clock.t * 1e6), {name: len(evs) for name, evs in rec.events.items()}
    clock.t += period_s - 1e-6
    emi.step()
    return {name: evs[seen.get(name, 0)][1] - start for name, evs in rec.events.items()}


def test_seeded_phases_spread_a_period_aligned_ones_coincide_and_rate_changes_keep_them() -> None:
    specs = [em.AttrSpec(name=f"a{i}", rate_hz=2.0) for i in range(40)]
    offsets = {}
    for phases in em.PHASE_MODES:
        clock, rec = FakeClock(), Recorder()
        emi = em.Emitter(7, DEV, specs, rec, clock, phases=phases)
        emi.start()
        first = _first_offsets(emi, clock, rec, 0.5)
        assert len(first) == len(specs)
        clock.t += 10.0
        emi.step()
        emi.set_rate(4.0)  # a period of 250 ms: each attribute keeps its fraction of the period
        after = _first_offsets(emi, clock, rec, 0.25)
        assert all(abs(after[n] / 250_000 - first[n] / 500_000) < 4e-6 for n in first)
        offsets[phases] = sorted(first.values())
    assert offsets["aligned"] == [0] * len(specs)
    seeded = offsets["seeded"]
    assert len(set(seeded)) == len(specs)  # no two attributes at once
    assert all(any(q * 125_000 <= o < (q + 1) * 125_000 for o in seeded) for q in range(4))
    phase = vf.schedule_phase(7, em.stream_key(DEV, "a0"))
    assert 0.0 <= phase < 1.0 and seeded.count(round(phase * 500_000)) == 1


def test_unknown_phase_mode_is_refused_and_profiles_default_to_aligned(tmp_path: Path) -> None:
    with pytest.raises(em.SpecError, match="phases must be one of aligned, seeded, got 'random'"):
        em.Emitter(1, DEV, [em.AttrSpec(name="a")], lambda *a: None, phases="random")
    path = tmp_path / "p.toml"
    path.write_text('[profile]\nname = "t"\nphases = "random"\n\n[[attribute]]\nname = "a"\n')
    with pytest.raises(ConfigError, match=r"p\.toml:3: \[profile\] phases: must be one of aligned, seeded"):
        load_profile(path)
    path.write_text('[profile]\nname = "t"\n\n[[attribute]]\nname = "a"\n')
    assert load_profile(path).phases == "aligned"
    assert {p.phases for p in plan_fleet(load_profile(path), 2, 2)} == {"aligned"}
    path.write_text('[profile]\nname = "t"\nphases = "seeded"\n\n[[attribute]]\nname = "a"\n')
    assert {p.phases for p in plan_fleet(load_profile(path), 2, 2)} == {"seeded"}


def test_checksum_is_order_independent_and_matches_digests() -> None:
    spec = em.AttrSpec(name="c", type="DevShort", format="SPECTRUM", dim_x=7, p_error=0.1, p_invalid=0.1)
    evs = list(em.predict_events(4, DEV, spec, 0, 1500))
    digests = [em.event_digest(spec.type, spec.format, e.value, e.quality, e.error) for e in evs]
    random.Random(0).shuffle(digests)
    ck = em.Checksum()
    for d in digests:
        ck.add(d)
    assert str(ck) == str(em.predict_checksum(4, DEV, spec, 1500))


def test_same_seed_gives_the_same_checksums_whatever_the_timing() -> None:
    spec = em.AttrSpec(name="x", model="walk", p_alarm=0.3, p_error=0.05)
    results = []
    for jitter in (0.001, 0.37):
        clock = FakeClock()
        emi = em.Emitter(21, DEV, [spec], lambda *a: None, clock)
        emi.start()
        while emi.total_emitted() < 500:
            clock.t += jitter
            emi.step(budget=500 - emi.total_emitted())
        results.append(emi.stats()[0].checksum)
    assert results[0] == results[1] == str(em.predict_checksum(21, DEV, spec, 500))


def test_burst_rate_change_stop_and_reset() -> None:
    clock, rec = FakeClock(), Recorder()
    spec = em.AttrSpec(name="a", rate_hz=1)
    emi = em.Emitter(1, DEV, [spec], rec, clock)
    emi.burst(5)
    assert emi.step() == 5  # a burst works while stopped
    ts = [t for _, t in rec.events["a"]]
    assert ts == sorted(set(ts))
    emi.start()
    emi.set_rate(100)
    clock.t += 1.0
    n = emi.step()
    assert 99 <= n <= 101
    emi.stop()
    clock.t += 5
    assert emi.step() == 0
    stamps = [t for _, t in rec.events["a"]]
    assert all(b > a for a, b in zip(stamps, stamps[1:]))  # strictly increasing: no PK collision
    first = emi.stats()[0].checksum
    emi.reset()
    emi.burst(len(stamps))
    emi.step()
    assert emi.stats()[0].checksum == first
    assert rec.events["a"][len(stamps)][0].k == 0


def test_sample_serves_poll_reads_in_sequence() -> None:
    clock = FakeClock()
    spec = em.AttrSpec(name="p", type="DevLong", mode="poll", model="counter", step=1, abs_change=2)
    emi = em.Emitter(1, DEV, [spec], lambda *a: None, clock)
    got = []
    for _ in range(4):
        clock.t += 0.1
        got.append(emi.sample("p"))
    assert [e.value for e, _ in got] == [0, 1, 2, 3]
    assert emi.next_due_s() is None  # poll attributes are never scheduled by the pusher


@pytest.mark.parametrize("changes, field", [
    ({"type": "DevFoo"}, "type"), ({"rate_hz": -1.0}, "rate_hz"), ({"format": "IMAGE", "dim_y": 0}, "dim_y"),
    ({"type": "DevEncoded", "format": "SPECTRUM"}, "SCALAR"), ({"model": "cycle"}, "model"),
    ({"p_alarm": 1.5}, "probabilities"), ({"abs_change": 1.0}, "poll"),
])
def test_invalid_specs_are_refused(changes: dict[str, object], field: str) -> None:
    with pytest.raises(em.SpecError, match=field):
        em.validate_spec(em.AttrSpec(name="x", **changes))  # type: ignore[arg-type]


def test_spec_json_round_trip() -> None:
    for spec in all_specs(p_alarm=0.1):
        assert em.AttrSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize("profile", sorted(PROFILES_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_shipped_profiles_are_valid(profile: Path) -> None:
    prof = load_profile(profile)
    assert prof.attributes


def test_all_types_profile_covers_every_type_format_and_write_type() -> None:
    prof = load_profile(PROFILES_DIR / "all-types.toml")
    combos = {(s.type, s.format, s.write) for s in prof.attributes}
    expected = {(t, f, w) for t in em.TYPES for f in em.FORMATS for w in em.WRITE_TYPES
                if t != "DevEncoded" or f == "SCALAR"}
    assert expected <= combos


BROKEN = {
    "unknown type": ('type = "DevFoo"', "unknown type"),
    "negative rate": ("rate_hz = -5", "rate_hz"),
    "image size 0": ('format = "IMAGE"\ndim_x = 0\ndim_y = 0', "dim_x"),
    "bad name": ('name = "bad name"', "not a valid Tango attribute name"),
    "reserved name": ('name = "State"', "reserved"),
    "unknown key": ("rat_hz = 5", "unknown key"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_profiles_name_the_line(tmp_path: Path, case: str) -> None:
    body, message = BROKEN[case]
    name_line = "" if body.startswith("name") else 'name = "ok"\n'
    text = f'[profile]\nname = "t"\n\n[[attribute]]\nname = "fine"\n\n[[attribute]]\n{name_line}{body}\n'
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_profile(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}:")
    line = int(msg.split(":")[1])
    assert 7 <= line <= len(text.splitlines())  # the second [[attribute]] entry, not the first
    assert "[[attribute]] #2" in msg

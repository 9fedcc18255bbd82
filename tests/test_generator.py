# SPDX-License-Identifier: Apache-2.0
"""The C++ generator HdbBenchGen against the Python HdbBenchSim, with a real Tango database.

The same profile and seed run on each engine in turn (same device names, so the same event streams):
every type x format x write type, with quality changes and error events. Bursts give an exact number
of events whatever the timing. The engines must agree with each other and with the prediction of
`hdbbench.load.emitter`, through the devices' counters and checksums and through the archive events a
client receives. Waits are bounded and never assert on timing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tango

from hdbbench.load import devices as launcher
from hdbbench.load import emitter as em
from hdbbench.model.errors import ConfigError
from tests.harness import eventually, prove_delivery
from tests.harness.composed import GENERATOR_PROFILE
from tests.harness.devices import EventCollector, received_digest

BURST = 40
ENGINES = ("python", "cpp")

pytestmark = pytest.mark.skipif(not launcher.cpp_engine_built(),
                                reason=f"HdbBenchGen not built ({launcher.gen_binary()}): run cmake --build build")


def run_engine(tango_host: str, root: Path, engine: str, push_threads: int = 1) -> dict[str, Any]:
    """Bring the profile up on one engine, burst BURST events per attribute, collect what was seen."""
    profile = root / "pytest-gen.toml"
    profile.write_text(GENERATOR_PROFILE)
    with launcher.running_fleet(tango_host, profile, state_dir=root / f"state-{engine}-{push_threads}",
                                engine=engine, push_threads=push_threads) as fleet:
        (name, plan), = fleet.devices.items()
        proxy = tango.DeviceProxy(fleet.device_url(name))
        proxy.set_timeout_millis(10000)
        col = EventCollector()
        ids = [proxy.subscribe_event(s.name, tango.EventType.ARCHIVE_EVENT, col) for s in plan.specs]
        try:
            # ZeroMQ subscription filters reach the publisher asynchronously: prove each path by an arrival.
            prove_delivery(lambda names: proxy.BurstAttributes([[1], names]), col.counts,
                           [s.name.lower() for s in plan.specs])
            proxy.Reset()
            col.clear()  # drop the synchronous events of the subscriptions and the proof's
            proxy.Burst(BURST)
            n = BURST * len(plan.specs)
            eventually(lambda: proxy.EventsEmittedTotal >= n, 60, lambda: f"{proxy.EventsEmittedTotal} of {n} emitted")
            eventually(lambda: all(len(col.get(s.name)) >= BURST for s in plan.specs), 30,
                       lambda: f"received {sorted((len(col.get(s.name)), s.name) for s in plan.specs)[:4]}")
            names = [n.lower() for n in proxy.GeneratedAttributes]
            return {"engine": engine, "plan": plan, "state": proxy.state(), "fleet": fleet,
                    "emitted": dict(zip(names, (int(x) for x in proxy.EventsEmittedList))),
                    "errors": dict(zip(names, (int(x) for x in proxy.ErrorsEmittedList))),
                    "checksums": dict(zip(names, (int(x) for x in proxy.ChecksumList))),
                    "statistics": json.loads(proxy.Statistics),
                    "events": {s.name.lower(): col.get(s.name) for s in plan.specs}}
        finally:
            for i in ids:
                proxy.unsubscribe_event(i)


@pytest.fixture(scope="module")
def runs(tango_host: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("generator")
    out = {engine: run_engine(tango_host, root, engine) for engine in ENGINES}
    out["cpp-3-threads"] = run_engine(tango_host, root, "cpp", push_threads=3)
    return out


def test_both_engines_emit_the_predicted_counts_and_checksums(runs: dict[str, dict[str, Any]]) -> None:
    py, cpp = runs["python"], runs["cpp"]
    plan = cpp["plan"]
    assert len({(s.type, s.format, s.write) for s in plan.specs}) == 80  # every combination Tango allows
    assert cpp["emitted"] == py["emitted"] == {s.name.lower(): BURST for s in plan.specs}
    assert cpp["errors"] == py["errors"] and sum(cpp["errors"].values()) > 0
    for spec in plan.specs:
        want = em.predict_checksum(plan.seed, plan.name, spec, BURST).total
        assert cpp["checksums"][spec.name.lower()] == py["checksums"][spec.name.lower()] == want, spec.name
    stats = cpp["statistics"]
    assert stats["engine"] == "cpp" and stats["events_emitted_total"] == BURST * len(plan.specs)
    assert stats["push_failures"] == 0, stats["last_push_failure"]
    assert cpp["state"] == tango.DevState.STANDBY


def test_received_events_are_identical_on_both_engines(runs: dict[str, dict[str, Any]]) -> None:
    plan = runs["cpp"]["plan"]
    seen_quality: set[int] = set()
    for spec in plan.specs:
        key = spec.name.lower()
        received = {}
        for engine in ENGINES:
            events = runs[engine]["events"][key]
            assert len(events) == BURST, f"{engine} {spec.name}: {len(events)} events"
            received[engine] = [received_digest(spec, ev) for ev in events]
            for k, ev in enumerate(events):
                want = em.predict_event(plan.seed, plan.name, spec, k)
                seen_quality.add(want.quality)
                where = f"{engine} {spec.name} event {k}"
                if want.error is not None:
                    assert ev.err and ev.errors[0].reason == em.ERROR_REASON, where
                    continue
                assert not ev.err, f"{where}: {ev.errors[0].desc}"
                av = ev.attr_value
                assert av.type == tango.CmdArgType(spec.info.number), f"{where}: type {av.type}"
                assert int(av.quality) == want.quality, f"{where}: quality {av.quality}"
                if want.quality == em.INVALID:
                    assert av.value is None, f"{where}: INVALID with a value"
                else:
                    assert received[engine][k] == em.event_digest(spec.type, spec.format, want.value, want.quality), \
                        f"{where}: received {av.value!r}, predicted {want.value!r}"
                if spec.write == "READ_WRITE" and spec.kind != "encoded" and want.quality != em.INVALID:
                    assert av.w_value is not None, f"{where}: no set point"
        assert received["cpp"] == received["python"], spec.name
    assert {em.VALID, em.INVALID, em.ALARM, em.WARNING} <= seen_quality


def test_several_pushing_threads_emit_the_same_events(runs: dict[str, dict[str, Any]]) -> None:
    threaded, single = runs["cpp-3-threads"], runs["cpp"]
    assert threaded["statistics"]["push_threads"] == 3 and single["statistics"]["push_threads"] == 1
    assert threaded["checksums"] == single["checksums"] and threaded["emitted"] == single["emitted"]
    for spec in single["plan"].specs:
        key = spec.name.lower()
        assert [received_digest(spec, ev) for ev in threaded["events"][key]] == \
            [received_digest(spec, ev) for ev in single["events"][key]], spec.name


def test_burst_timestamps_are_strictly_increasing_per_attribute(runs: dict[str, dict[str, Any]]) -> None:
    for spec in runs["cpp"]["plan"].specs:
        stamps = [(ev.attr_value.time.tv_sec, ev.attr_value.time.tv_usec)
                  for ev in runs["cpp"]["events"][spec.name.lower()] if not ev.err]
        assert stamps == sorted(set(stamps)), spec.name


def test_cpp_engine_refuses_poll_mode_before_anything_starts(tango_host: str, tmp_path: Path) -> None:
    bad = tmp_path / "polled.toml"
    bad.write_text('[profile]\nname = "pytest-gen-poll"\n\n[[attribute]]\nname = "p"\nmode = "poll"\n')
    with pytest.raises(ConfigError, match=r"polled\.toml: device engine 'cpp' .*'p' has mode = 'poll'"):
        launcher.up(tango_host, bad, state_dir=tmp_path / "state", engine="cpp")
    assert not (tmp_path / "state").exists()


def test_resolve_engine_prefers_the_built_cpp_engine() -> None:
    assert launcher.resolve_engine(None) == "cpp" == launcher.resolve_engine("auto")
    # ...unless the profile has poll-mode attributes, which only the Python engine serves
    assert launcher.resolve_engine("auto", launcher.PROFILES_DIR / "all-types.toml") == "python"
    assert launcher.resolve_engine("auto", launcher.PROFILES_DIR / "insertion-devdouble.toml") == "cpp"
    assert launcher.resolve_engine("python") == "python"
    with pytest.raises(ConfigError, match="engine"):
        launcher.resolve_engine("java")

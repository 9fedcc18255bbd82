# SPDX-License-Identifier: Apache-2.0
"""HdbBenchSim through the launcher, with a real Tango database: events checked against the seed.

One server for the module. Waits are bounded (`eventually`) and never assert on timing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tango

from hdbbench.load import devices as launcher
from hdbbench.load import emitter as em
from hdbbench.model.errors import ConfigError
from tests.harness import eventually
from tests.harness.devices import EventCollector, received_digest

PROFILE = """
[profile]
name = "pytest-sim"
seed = 4242
device_prefix = "test/hdbbenchsim"

[defaults]
rate_hz = 20.0
dim_x = 6
dim_y = 3
p_alarm = 0.1
p_warning = 0.1
p_invalid = 0.05
p_error = 0.05

[[matrix]]
per_type.DevString = { model = "counter", text = "s" }
per_type.DevEnum = { model = "noise", labels = ["A", "B", "C"] }
per_type.DevDouble = { model = "walk", amplitude = 5.0, step = 0.3 }
per_type.DevLong = { model = "counter", step = 1 }

[[attribute]]
name = "poll_counter"
type = "DevLong"
mode = "poll"
rate_hz = 20
model = "counter"
step = 1
abs_change = 4
p_alarm = 0.0
p_warning = 0.0
p_invalid = 0.0
p_error = 0.0

[[attribute]]
name = "poll_constant"
type = "DevDouble"
mode = "poll"
rate_hz = 20
model = "constant"
offset = 7.5
archive_period_ms = 400
p_alarm = 0.0
p_warning = 0.0
p_invalid = 0.0
p_error = 0.0
"""
EVENTS_PER_ATTRIBUTE = 12


@pytest.fixture(scope="module")
def fleet(tango_host: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[launcher.Fleet]:
    root = tmp_path_factory.mktemp("devices")
    profile = root / "pytest-sim.toml"
    profile.write_text(PROFILE)
    with launcher.running_fleet(tango_host, profile, state_dir=root / "state") as f:
        yield f


@pytest.fixture(scope="module")
def device(fleet: launcher.Fleet) -> tuple[tango.DeviceProxy, launcher.DevicePlan]:
    (name, plan), = fleet.devices.items()
    proxy = tango.DeviceProxy(fleet.device_url(name))
    proxy.set_timeout_millis(10000)
    return proxy, plan


@pytest.fixture(scope="module")
def subscribed(device: tuple[tango.DeviceProxy, launcher.DevicePlan]) -> Iterator[EventCollector]:
    proxy, plan = device
    col = EventCollector()
    ids = [proxy.subscribe_event(s.name, tango.EventType.ARCHIVE_EVENT, col) for s in plan.specs]
    yield col
    for i in ids:
        proxy.unsubscribe_event(i)


def check_event(spec: em.AttrSpec, ev: tango.EventData, want: em.Event) -> None:
    where = f"{spec.name} event {want.k}"
    if want.error is not None:
        assert ev.err and ev.errors[0].reason == em.ERROR_REASON, f"{where}: expected an error event"
        return
    assert not ev.err, f"{where}: unexpected error {ev.errors[0].desc if ev.errors else ''}"
    av = ev.attr_value
    assert av.type == tango.CmdArgType(spec.info.number), f"{where}: type {av.type}"
    assert int(av.data_format) == em.FORMATS.index(spec.format), f"{where}: format {av.data_format}"
    assert int(av.quality) == want.quality, f"{where}: quality {av.quality}, want {want.quality}"
    if want.quality == em.INVALID:
        assert av.value is None, f"{where}: INVALID event with a value"
    else:
        assert received_digest(spec, ev) == em.event_digest(spec.type, spec.format, want.value, want.quality), \
            f"{where}: received {av.value!r}, predicted {want.value!r}"
    if spec.write == "READ_WRITE" and spec.kind != "encoded" and want.quality != em.INVALID:
        assert av.w_value is not None, f"{where}: no set point"


def source_us(ev: tango.EventData) -> int:
    t = ev.attr_value.time
    return t.tv_sec * 1_000_000 + t.tv_usec


def stats(proxy: tango.DeviceProxy) -> dict[str, dict[str, Any]]:
    return {a["name"].lower(): a for a in json.loads(proxy.Statistics)["attributes"]}


def test_push_events_of_every_type_match_the_seed(device: tuple[tango.DeviceProxy, launcher.DevicePlan],
                                                  subscribed: EventCollector) -> None:
    proxy, plan = device
    push = [s for s in plan.specs if s.mode == "push"]
    combos = {(s.type, s.format, s.write) for s in push}
    assert len(combos) == 80  # every type x format x write type Tango allows
    proxy.Reset()
    subscribed.clear()  # drop the synchronous events of the subscriptions
    proxy.Start()
    eventually(lambda: all(subscribed.count(s.name) >= EVENTS_PER_ATTRIBUTE for s in push), 60,
               lambda: f"counts {sorted((subscribed.count(s.name), s.name) for s in push)[:5]}")
    proxy.Stop()
    emitted = dict(zip([n.lower() for n in proxy.GeneratedAttributes], proxy.EventsEmittedList))
    eventually(lambda: all(subscribed.count(s.name) == emitted[s.name.lower()] for s in push), 20,
               lambda: f"received vs emitted {[(s.name, subscribed.count(s.name), emitted[s.name.lower()]) for s in push if subscribed.count(s.name) != emitted[s.name.lower()]][:5]}")
    checksums = dict(zip([n.lower() for n in proxy.GeneratedAttributes], proxy.ChecksumList))
    seen_quality: set[int] = set()
    errors = 0
    for spec in push:
        events = subscribed.get(spec.name)
        period_us = round(1e6 / spec.rate_hz)
        stamps = []
        for k, ev in enumerate(events):
            want = em.predict_event(plan.seed, plan.name, spec, k)
            check_event(spec, ev, want)
            seen_quality.add(want.quality)
            errors += want.error is not None
            if not ev.err:
                stamps.append((k, source_us(ev)))
        k0, t0 = stamps[0]
        assert [t - t0 for _, t in stamps] == [(k - k0) * period_us for k, _ in stamps], \
            f"{spec.name}: source timestamps are not the device's schedule"
        total = em.Checksum()
        for ev in events:
            total.add(received_digest(spec, ev))
        assert total.total == int(checksums[spec.name.lower()]), f"{spec.name}: received != emitted checksum"
        assert str(total) == str(em.predict_checksum(plan.seed, plan.name, spec, len(events)))
    assert {em.VALID, em.INVALID, em.ALARM, em.WARNING} <= seen_quality and errors > 0


def test_same_seed_gives_identical_checksums(device: tuple[tango.DeviceProxy, launcher.DevicePlan]) -> None:
    proxy, plan = device
    push = [s for s in plan.specs if s.mode == "push"]
    runs = []
    for _ in range(2):
        proxy.Reset()
        proxy.Burst(25)  # an exact number of events, whatever the timing
        eventually(lambda: proxy.EventsEmittedTotal >= 25 * len(push), 30,
                   lambda: f"{proxy.EventsEmittedTotal} of {25 * len(push)} emitted")
        runs.append(dict(zip(proxy.GeneratedAttributes, proxy.ChecksumList)))
    assert runs[0] == runs[1]
    for spec in push:
        assert int(runs[0][spec.name]) == em.predict_checksum(plan.seed, plan.name, spec, 25).total, spec.name


def test_polling_events_respect_abs_change_and_period(device: tuple[tango.DeviceProxy, launcher.DevicePlan],
                                                      subscribed: EventCollector) -> None:
    proxy, plan = device
    proxy.Reset()
    subscribed.clear()
    proxy.StartAttributes(["poll_counter", "poll_constant"])
    eventually(lambda: subscribed.count("poll_counter") >= 6 and subscribed.count("poll_constant") >= 6, 30,
               lambda: f"poll_counter {subscribed.count('poll_counter')}, "
                       f"poll_constant {subscribed.count('poll_constant')} events")
    proxy.StopAttributes(["poll_counter", "poll_constant"])
    valid = {n: [e for e in subscribed.get(n) if not e.err and e.attr_value.quality == tango.AttrQuality.ATTR_VALID]
             for n in ("poll_counter", "poll_constant")}
    counter = [e.attr_value.value for e in valid["poll_counter"]]
    steps = np.diff(counter)
    assert all(steps >= 4), f"abs_change 4 not respected: {counter}"
    # The first VALID event comes from the quality change INVALID (reset) -> VALID, and the periodic timer
    # kept running while stopped: only the gaps between the later, periodic events are the period.
    constant = valid["poll_constant"][2:]
    assert len(constant) >= 3, f"too few periodic events: {len(constant)}"
    assert all(e.attr_value.value == 7.5 for e in constant)
    gaps_ms = np.diff([source_us(e) for e in constant]) / 1000
    assert all(gaps_ms >= 400 * 0.8), f"archive_period 400 ms not respected: gaps {gaps_ms} ms"


def test_commands_change_rate_and_refuse_unknown_attributes(
        device: tuple[tango.DeviceProxy, launcher.DevicePlan]) -> None:
    proxy, _ = device
    proxy.Reset()
    proxy.SetAttributeRate([[50.0], ["double_scalar_ro"]])
    rates = dict(zip(proxy.GeneratedAttributes, proxy.TargetRateList))
    assert rates["double_scalar_ro"] == 50.0 and rates["double_scalar_rw"] == 20.0
    with pytest.raises(tango.DevFailed, match="no_such"):
        proxy.StartAttributes(["no_such"])
    proxy.SetRate(20.0)
    assert proxy.state() == tango.DevState.STANDBY


def test_status_reports_the_running_server(fleet: launcher.Fleet) -> None:
    rows = launcher.status(fleet.state_dir)
    assert [r.alive for r in rows] == [True] and rows[0].devices_answering == 1


def test_broken_profile_is_refused_before_anything_starts(tango_host: str, tmp_path: Path) -> None:
    bad = tmp_path / "broken.toml"
    bad.write_text('[profile]\nname = "pytest-broken"\n\n[[attribute]]\nname = "x"\nrate_hz = -2\n')
    with pytest.raises(ConfigError, match=r"broken\.toml:6: \[\[attribute\]\] #1 \('x'\): .*rate_hz"):
        launcher.up(tango_host, bad, state_dir=tmp_path / "state")
    assert not (tmp_path / "state").exists()
    host, _, port = tango_host.rpartition(":")
    servers = tango.Database(host, int(port)).get_server_list("HdbBenchSim/pytest-broken*")
    assert list(servers) == []

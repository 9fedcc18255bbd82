# SPDX-License-Identifier: Apache-2.0
"""A facility's inventory as devices: the mix at a scale, real devices that emit it, the scenario
that archives it, and the HDB++ limit of attributes per subscriber."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from hdbbench.load import devices as launcher
from hdbbench.load import facility
from hdbbench.load.inventory.model import load_inventory
from hdbbench.load.offered import LoadTarget
from hdbbench.model.errors import ConfigError
from hdbbench.scenario.scenario import load_scenario
from tests.harness import REPO, eventually
from tests.harness.runs import run

INVENTORY = REPO / "inventories" / "example-facility.toml"


def test_the_conversion_gives_the_inventorys_mix_at_a_scale() -> None:
    inventory = load_inventory(INVENTORY)
    plans = facility.plan_facility(inventory, 0.5, servers=2, devices_per_server=3)
    assert len(plans) == 6 and len({p.server for p in plans}) == 2
    specs = [s for p in plans for s in p.specs]
    assert len(specs) == facility.attribute_count(inventory, 0.5) == 6625
    assert len({s.name for s in specs}) == len(specs)
    mix = facility.mix(plans)
    # each group at half its count, its type, format, write type, spectrum length and rate
    assert mix[("DevDouble", "SCALAR", "READ", 1, 0, 1.0)] == 2000
    assert mix[("DevDouble", "SCALAR", "READ_WRITE", 1, 0, 0.1)] == 750     # period_s = 10
    assert mix[("DevDouble", "SCALAR", "READ", 1, 0, 0.2)] == 1500          # period_s = 5
    assert mix[("DevLong", "SCALAR", "READ", 1, 0, 0.1)] == 500
    assert mix[("DevBoolean", "SCALAR", "READ", 1, 0, 0.1)] == 1000
    assert mix[("DevState", "SCALAR", "READ", 1, 0, 1 / 60)] == 750
    assert mix[("DevString", "SCALAR", "READ", 1, 0, 1 / 60)] == 100
    assert mix[("DevDouble", "SPECTRUM", "READ", 1000, 0, 1.0)] == 5
    assert mix[("DevDouble", "SPECTRUM", "READ", 100, 0, 1 / 60)] == 20
    assert sum(mix.values()) == 6625
    assert facility.natural_rate(inventory, 0.5) == pytest.approx(sum(s.rate_hz for s in specs))
    # every device carries a slice of the whole mix, not one group each
    per_device = [Counter(s.type for s in p.specs) for p in plans]
    assert all(set(c) == {"DevDouble", "DevLong", "DevBoolean", "DevState", "DevString"} for c in per_device)
    assert max(len(p.specs) for p in plans) - min(len(p.specs) for p in plans) <= 1
    # strings carry about string_chars characters; every event is one row: pushed, no errors, VALID
    strings = [s for s in specs if s.type == "DevString"]
    assert all(len(s.text) + 2 <= 20 <= len(s.text) + 8 for s in strings)
    assert all(s.mode == "push" and s.p_error == s.p_invalid == s.p_alarm == s.p_warning == 0 for s in specs)


def test_a_tiny_scale_keeps_every_group() -> None:
    inventory = load_inventory(INVENTORY)
    plans = facility.plan_facility(inventory, 0.001)
    assert len(plans) == 1  # the default layout: one device for a few attributes
    assert len({(s.type, s.format, s.dim_x, s.rate_hz, s.write) for s in plans[0].specs}) == len(inventory.groups)
    with pytest.raises(ConfigError, match="scale must be > 0"):
        facility.plan_facility(inventory, 0)


def test_the_facility_scenario_validates() -> None:
    scenario = load_scenario(REPO / "scenarios" / "facility.toml")
    assert scenario.facility is not None and scenario.facility.scale == 1.0
    assert scenario.device_profile is None and scenario.subscribers >= 2
    assert scenario.to_dict()["facility"]["inventory"].endswith("example-facility.toml")
    attributes = facility.attribute_count(load_inventory(scenario.facility.inventory), scenario.facility.scale)
    assert attributes / scenario.subscribers <= facility.MAX_ATTRIBUTES_PER_SUBSCRIBER
    assert scenario.servers * scenario.devices_per_server > 1


def test_facility_devices_have_seeded_phases_unless_the_scenario_says_aligned(tmp_path: Path) -> None:
    inventory = load_inventory(INVENTORY)
    assert {p.phases for p in facility.plan_facility(inventory, 0.01, servers=2)} == {"seeded"}
    shipped = load_scenario(REPO / "scenarios" / "facility.toml").facility
    assert shipped is not None and shipped.phases == "seeded"
    scenario = load_scenario(_facility_scenario(tmp_path, f'inventory = "{INVENTORY}"\nphases = "aligned"'))
    assert scenario.facility is not None and scenario.facility.phases == "aligned"
    assert scenario.to_dict()["facility"]["phases"] == "aligned"
    plans = facility.plan_facility(inventory, 0.01, phases=scenario.facility.phases)
    assert {p.phases for p in plans} == {"aligned"}
    with pytest.raises(ConfigError, match="phases must be one of aligned, seeded, got 'random'"):
        facility.plan_facility(inventory, 0.01, phases="random")
    fleet = launcher.Fleet("localhost:10000", "facility", tmp_path, {p.name: p for p in plans})
    fleet.save()
    recorded = launcher.load_fleet(tmp_path)
    assert recorded is not None and {p.phases for p in recorded.devices.values()} == {"aligned"}


def _facility_scenario(tmp_path: Path, devices: str, subscribers: str = "count = 2") -> Path:
    path = tmp_path / "fac.toml"
    path.write_text(f'name = "fac"\nbackends = ["timescaledb"]\n[devices]\n{devices}\n[subscribers]\n{subscribers}\n')
    return path


@pytest.mark.parametrize("devices, subscribers, problem", [
    (f'inventory = "{INVENTORY}"\nscale = 1.0', "count = 1",
     "[subscribers] count: 1 subscriber for 13,250 attributes is 13,250 per subscriber, above the HDB++ limit "
     "of 10,000; use at least 2"),
    (f'inventory = "{INVENTORY}"\nscale = 1.0', "count = 2\n[measurements]\nsubscriber_sweep = [1]",
     "13,250 per subscriber"),
    (f'inventory = "{INVENTORY}"\nprofile = "devices/profiles/all-types.toml"', "count = 2",
     "[devices] inventory: give exactly one of profile and inventory"),
    ('scale = 0.5', "count = 2", "[devices] scale: applies to an inventory only"),
    (f'inventory = "{INVENTORY}"\nphases = "random"', "count = 2",
     "[devices] phases: must be one of aligned, seeded"),
    ('profile = "devices/profiles/all-types.toml"\nphases = "seeded"', "count = 2",
     "[devices] phases: applies to an inventory only (a profile's devices take [profile] phases)"),
    (f'inventory = "{INVENTORY}"\nscale = 0', "count = 2", "[devices] scale: must be > 0"),
    ('profile = "devices/profiles/scalar-heavy-accelerator.toml"\nservers = 300', "count = 1",
     "12,000 per subscriber"),
])
def test_a_subscriber_above_the_limit_or_a_wrong_devices_table_is_refused(
        tmp_path: Path, devices: str, subscribers: str, problem: str) -> None:
    path = _facility_scenario(tmp_path, devices, subscribers)
    with pytest.raises(ConfigError) as caught:
        load_scenario(path)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"{path}:")
    assert problem in str(caught.value)


def test_devices_up_with_an_inventory_emits_its_mix(tango_host: str, tmp_path: Path) -> None:
    state = tmp_path / "state"
    command = [sys.executable, "-m", "hdbbench", "devices"]
    up = subprocess.run([*command, "up", "--inventory", str(INVENTORY), "--scale", "0.002", "--servers", "1",
                         "--devices-per-server", "2", "--tango-host", tango_host, "--state-dir", str(state)],
                        capture_output=True, text=True, cwd=REPO, timeout=180, check=False)
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        inventory = load_inventory(INVENTORY)
        expected = facility.attribute_count(inventory, 0.002)
        assert f"1 server, 2 devices, {expected} attributes up, emitting" in up.stdout
        fleet = launcher.load_fleet(launcher.fleet_dir(state))
        assert fleet is not None and fleet.profile == str(INVENTORY)
        planned = facility.plan_facility(inventory, 0.002, 1, 2)
        assert facility.mix(list(fleet.devices.values())) == facility.mix(planned)
        load = LoadTarget(fleet.tango_host, list(fleet.devices), [], lambda: [], fleet.engine)
        for proxy in load.proxies():
            names = {n.lower() for n in proxy.read_attribute("GeneratedAttributes").value}
            assert names == {s.name.lower() for s in fleet.devices[proxy.dev_name()].specs}
        # the devices emit: the 1 Hz groups within a few seconds
        eventually(lambda: load.emitted_total() >= 10, 30, "events emitted by the facility's devices")
        # a spectrum of the inventory's length
        spec = max((s for p in fleet.devices.values() for s in p.specs if s.format == "SPECTRUM"),
                   key=lambda s: s.rate_hz)  # the fastest: its first value comes soonest
        device = next(d for d, p in fleet.devices.items() if spec in p.specs)
        proxy = load.proxies()[list(fleet.devices).index(device)]
        # Seeded phases: its first event comes at its own fraction of its period, not with the others.
        eventually(lambda: proxy.read_attribute(spec.name).value is not None, 2 / spec.rate_hz + 30,
                   f"a first value of {spec.name} ({spec.rate_hz:g} Hz)")
        value = proxy.read_attribute(spec.name).value
        assert len(value) == spec.dim_x
    finally:
        down = subprocess.run([*command, "down", "--state-dir", str(state)], capture_output=True, text=True,
                              cwd=REPO, timeout=60, check=False)
        assert down.returncode == 0, down.stderr


def test_the_offered_rate_keeps_the_mix_proportions(tango_host: str, tmp_path: Path) -> None:
    from hdbbench.run.runner import load_target

    inventory = load_inventory(INVENTORY)
    state = tmp_path / "devices"
    fleet = facility.up(tango_host, INVENTORY, 0.002, servers=1, devices_per_server=2, state_dir=state,
                        tie_to_parent=True)
    try:
        load = load_target(fleet, keep_rate_mix=True)
        load.prepare(2 * facility.natural_rate(inventory, 0.002))  # twice the facility's own rates, all alike
        for device, proxy in zip(load.devices, load.proxies()):
            names = [n.lower() for n in proxy.read_attribute("GeneratedAttributes").value]
            targets = dict(zip(names, proxy.read_attribute("TargetRateList").value))
            for spec in fleet.devices[device].specs:
                assert targets[spec.name.lower()] == pytest.approx(2 * spec.rate_hz)
        # without the mix kept, every attribute gets the same share of the total (the insertion profiles)
        uniform = load_target(fleet)
        uniform.prepare(len(uniform.attributes) * 3.0)
        for proxy in uniform.proxies():
            assert all(v == pytest.approx(3.0) for v in proxy.read_attribute("TargetRateList").value)
    finally:
        launcher.down(state)


@pytest.mark.subscriber
def test_a_run_archives_the_facility_mix_with_several_subscribers(stack_endpoints: object, test_state_dir: Path,
                                                                  tmp_path: Path) -> None:
    from hdbbench.results.document import load_results

    inventory = load_inventory(INVENTORY)
    scale = 0.002
    path = _facility_scenario(tmp_path, f'inventory = "{INVENTORY}"\nscale = {scale}\nservers = 2',
                              "count = 2\n[load]\nrate = 300\nduration_s = 5\nwarmup_s = 1\n"
                              "[measurements]\nthroughput = true")
    run_dir = run(path, test_state_dir, tmp_path)
    doc = load_results(run_dir / "results.json")
    trial = doc["results"]["trials"][0]
    accounting = trial["accounting"]
    assert trial["subscribers"] == 2
    assert len(accounting["per_attribute"]) == facility.attribute_count(inventory, scale)
    assert accounting["emitted"] > 0 and accounting["lost"] == 0 and accounting["duplicates"] == 0
    # the rates kept the mix: a 1 Hz attribute emitted more than one with an archive period of 60 s
    emitted = {row["attribute"].rsplit("/", 1)[1]: row["emitted"] for row in accounting["per_attribute"]}
    fast = [n for n, e in emitted.items() if n.startswith("magnet_and_rf_readbacks")]
    slow = [n for n, e in emitted.items() if n.startswith("device_states")]
    assert fast and slow and min(emitted[n] for n in fast) > max(emitted[n] for n in slow)
    assert doc["scenario"]["facility"]["scale"] == scale and doc["scenario"]["device_profile"] is None

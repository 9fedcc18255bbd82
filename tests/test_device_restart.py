# SPDX-License-Identifier: Apache-2.0
"""device_kill at facility scale, small: the device server the subscribers connect to last is killed and
started again with the inventory's rate mix, and the trial records which of its attributes resumed and
how long they took (hdbbench.parts.faults.processes.DeviceKill, hdbbench.parts.faults.accounting.resumption).

Real Tango devices from inventories/small-test.toml (29 attributes of rates 1 and 0.5 Hz) over three
device servers; the end-to-end test runs `hdbbench run` of a faults-only scenario with two subscribers
on TimescaleDB. Waits are by proof (the injector waits until the restarted devices emit; the run until
every attribute has a stored event after the restart), none by sleeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from hdbbench.load import devices as launcher
from hdbbench.load import facility
from hdbbench.load.inventory.model import load_inventory
from hdbbench.parts.faults.accounting import resumption
from hdbbench.parts.faults.part import FaultsPart
from hdbbench.parts.faults.processes import DeviceKill
from hdbbench.results.document import read_kind
from hdbbench.results.faults import FaultsResults
from hdbbench.scenario.scenario import parse_scenario
from tests.harness import REPO
from tests.harness.runs import run

INVENTORY = REPO / "inventories" / "small-test.toml"
SERVERS = 3


def test_the_default_target_is_the_last_server_and_first_can_be_chosen() -> None:
    base = {"name": "t", "devices": {"inventory": str(INVENTORY)}, "measurements": {"throughput": False}}
    assert parse_scenario({**base, "faults": {}}, Path("t.toml")).faults == FaultsPart(device="last")
    chosen = parse_scenario({**base, "faults": {"device": "first"}}, Path("t.toml")).faults
    assert chosen is not None and chosen.device == "first"


def test_resumption_counts_the_attributes_without_a_row_after_the_restart() -> None:
    seen = {"a": 101.0, "b": 103.0, "c": 102.0}
    every = resumption(["a", "b", "c"], {"a": 3, "b": 1, "c": 2}, seen, restarted=100.0)
    assert (every.attributes, every.never, every.p50_s, every.max_s) == (3, (), 2.0, 3.0)
    # d never had a row: it counts, and the last one's time is unknown; the p50 still is.
    some = resumption(["a", "b", "c", "d"], {"a": 3, "b": 1, "c": 2}, seen, restarted=100.0)
    assert (some.never, some.p50_s, some.max_s) == (("d",), 2.0, None)
    # silent before the kill: of b and d, b resumed (reference §1c: "153 of its 154 silent attributes")
    silent = resumption(["a", "b", "c", "d"], {"a": 3, "b": 1, "c": 2}, seen, 100.0, silent_before={"b", "d"})
    assert (silent.silent, silent.silent_resumed) == (2, 1)
    none = resumption(["a", "b"], {}, {}, restarted=100.0)
    assert (none.never, none.p50_s, none.max_s) == (("a", "b"), None, None)


def test_a_killed_facility_server_comes_back_with_the_inventorys_rates(tango_host: str, tmp_path: Path) -> None:
    import tango

    from hdbbench.run.runner import load_target

    inventory = load_inventory(INVENTORY)
    state = tmp_path / "devices"
    fleet = facility.up(tango_host, INVENTORY, 1.0, servers=SERVERS, devices_per_server=1, state_dir=state,
                        tie_to_parent=True)
    try:
        load = load_target(fleet, keep_rate_mix=True)
        assert load.rate_mix is not None
        total = 2 * facility.natural_rate(inventory, 1.0)  # every attribute at twice its own rate
        load.prepare(total)
        load.start()
        last = fleet.servers[-1]
        assert load.devices[-1] in last.devices
        kill = DeviceKill(state, load, total, "last", before_kill=lambda: None)
        kill.arm()
        assert (kill.instance, kill.devices) == (last.instance, last.devices)
        kill.begin()
        kill.end()  # returns once the restarted devices emit
        restarted = next(r for r in launcher.load_fleet(state).servers if r.instance == last.instance)
        assert restarted.pid != last.pid
        for device in last.devices:
            proxy = tango.DeviceProxy(f"tango://{tango_host}/{device}")
            names = [n.lower() for n in proxy.read_attribute("GeneratedAttributes").value]
            targets = dict(zip(names, proxy.read_attribute("TargetRateList").value))
            assert {s.name.lower(): 2 * s.rate_hz for s in fleet.devices[device].specs} == pytest.approx(targets)
        assert kill.slowest_period_s == pytest.approx(1.0)  # the 0.5 Hz strings at twice their rate
        first = DeviceKill(state, load, total, "first", before_kill=lambda: None)
        first.arm()
        assert first.instance == fleet.servers[0].instance != last.instance
    finally:
        launcher.down(state)


@pytest.mark.subscriber
def test_a_facility_device_kill_restarts_the_last_server_and_every_attribute_resumes(
        tmp_path: Path, test_state_dir: Path, stack_endpoints: object) -> None:
    from hdbbench.report.page import write_report
    from hdbbench.subscribers.launcher import SubscriberFleet

    inventory = load_inventory(INVENTORY)
    scenario = parse_scenario({
        "name": "restart", "backends": ["timescaledb"],
        "devices": {"inventory": str(INVENTORY), "scale": 1.0, "servers": SERVERS, "devices_per_server": 1},
        "subscribers": {"count": 2}, "measurements": {"throughput": False},
        "faults": {"kinds": ["device_kill"], "rate": 2 * facility.natural_rate(inventory, 1.0), "warmup_s": 2,
                   "hold_s": 2, "recover_timeout_s": 30, "drain_timeout_s": 30}}, tmp_path / "s.toml")
    run_dir = run(scenario, test_state_dir, tmp_path)
    [trial] = read_kind(run_dir / "faults.json", FaultsResults).results.trials
    assert trial.error is None, trial.error
    plans = facility.plan_facility(inventory, 1.0, SERVERS, 1, scenario.seed)
    last_server = plans[-1].server
    assert trial.killed_server == last_server
    assert trial.killed_attributes == len(plans[-1].specs) and trial.never_resumed == 0
    assert trial.never_resumed_names == [] and (trial.silent_before_kill, trial.silent_resumed) == (0, 0)
    assert trial.resume_p50_s is not None and trial.resume_max_s is not None
    assert trial.resume_p50_s <= trial.resume_max_s
    assert trial.marks["restarted"] < trial.marks["resumed"]
    assert sum(trial.lost_by_reason.values()) == trial.lost and "unattributed" not in trial.lost_by_reason
    assert trial.problems() == []
    table = (run_dir / "faults-table.csv").read_text()
    assert "never_resumed" in table.splitlines()[0] and last_server in table
    page = write_report(run_dir).read_text()
    assert f"After {last_server} was restarted" in page and "resumed after the restart" in page
    assert SubscriberFleet("127.0.0.1:1", test_state_dir / "faults" / trial.label).pids() == []

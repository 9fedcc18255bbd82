# SPDX-License-Identifier: Apache-2.0
"""`hdbbench plan archivers` (hdbbench.scenario.archivers): how many archivers and which attributes go
where, the files it writes, the facility scenario run with exactly that assignment, and `--validate`
on real servers for a small inventory."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from hdbbench.load import facility
from hdbbench.load.inventory.model import load_inventory
from hdbbench.load.inventory.write import write_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.scenario import archivers as planner
from hdbbench.scenario.archivers import plan_archivers, planned_inventory
from hdbbench.scenario.plan import plan_devices
from hdbbench.scenario.scenario import parse_scenario
from hdbbench.subscribers.kinds import OURS
from tests.harness import REPO

EXAMPLE = REPO / "inventories" / "example-facility.toml"
SMALL = """name = "small-facility"
[[attributes]]
label = "fast readbacks"
type = "devdouble"
count = 12
rate_hz = 5.0
[[attributes]]
label = "slow counters"
type = "devlong"
count = 20
period_s = 2
[[attributes]]
label = "set points"
type = "devdouble"
write = "rw"
count = 8
rate_hz = 1.0
"""


def test_the_archiver_count_is_what_the_rate_or_the_attribute_limit_asks_and_every_attribute_is_dealt_once() -> None:
    inventory = load_inventory(EXAMPLE)
    made = plan_archivers(inventory, "timescaledb", "hdbpp-es", 4000.0, "stated", 5000, headroom=0.5)
    total = facility.natural_rate(inventory, 1.0)
    assert len(made.archivers) == max(math.ceil(total / 2000.0), math.ceil(13_250 / 5000)) == 3
    names = [n for a in made.archivers for n in a.attributes]
    assert len(names) == len(set(names)) == 13_250
    assert all(a.rate <= 2000.0 + 1e-6 and len(a.attributes) <= 5000 for a in made.archivers)
    # Largest first to the lightest: no archiver ends more than one attribute's cost above another.
    rates = [a.rate for a in made.archivers]
    assert max(rates) - min(rates) <= max(g.rate_hz for g in inventory.groups) + 1e-9
    assert made.total_rate == pytest.approx(total)
    assert made.limits() == "each archiver at most 50% of 4,000 events/s (stated) and 5,000 attributes"


@pytest.mark.parametrize(("rate", "headroom", "words"), [
    (1.0, 0.5, "one attribute alone archives 5.0 events/s, more than an archiver's 0.5 events/s at 50% headroom"),
    (100.0, 0.0, "headroom must be in (0, 1], got 0"),
])
def test_a_plan_that_cannot_be_made_says_why_in_one_line(tmp_path: Path, rate: float, headroom: float,
                                                         words: str) -> None:
    (tmp_path / "s.toml").write_text(SMALL)
    with pytest.raises(ConfigError) as caught:
        plan_archivers(load_inventory(tmp_path / "s.toml"), "mysql", "hdbbench-es", rate, "stated", None, headroom)
    assert str(caught.value) == words


def test_the_planned_inventory_reads_back_and_the_facility_scenario_deals_exactly_its_assignment(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SMALL)
    inventory = load_inventory(tmp_path / "s.toml")
    made = plan_archivers(inventory, "timescaledb", "hdbbench-es", 60.0, "stated", 15, headroom=0.5)
    assert len(made.archivers) == 3  # 78 events/s at 30 a piece, and 40 attributes at 15 a piece: 3 either way
    path = write_inventory(tmp_path / "plan.toml", planned_inventory(inventory, made))
    back = load_inventory(path)
    assert [a.attributes for a in back.archivers] == [a.attributes for a in made.archivers]
    scenario = {"name": "v", "backends": ["timescaledb"], "devices": {"inventory": str(path), "scale": 1.0},
                "subscribers": {"count": len(made.archivers)}, "measurements": {"throughput": True}}
    dealt = plan_devices(parse_scenario(scenario, tmp_path / "v.toml")).assignment
    assert dealt is not None and [len(d) for d in dealt] == [len(a.attributes) for a in made.archivers]
    assert all(n.lower() == d for a, names in zip(made.archivers, dealt) for n, d in zip(a.attributes, names))
    with pytest.raises(ConfigError) as caught:
        plan_devices(parse_scenario({**scenario, "subscribers": {"count": 2}}, tmp_path / "v.toml"))
    assert "assign the attributes to 3 archivers: give [subscribers] count = 3" in str(caught.value)


def test_an_assignment_that_misses_an_attribute_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SMALL)
    inventory = load_inventory(tmp_path / "s.toml")
    made = plan_archivers(inventory, "timescaledb", "hdbbench-es", 1000.0, "stated", None)
    planned = planned_inventory(inventory, made)
    groups, _, archivers = write_inventory(tmp_path / "plan.toml", planned).read_text().partition("[[archivers]]")
    first = planned.archivers[0].attributes[0]
    archivers = archivers.replace(f'"{first}", ', "").replace(f', "{first}"', "")
    (tmp_path / "plan.toml").write_text(groups + "[[archivers]]" + archivers)
    with pytest.raises(ConfigError) as caught:
        facility.assignment_of(load_inventory(tmp_path / "plan.toml"), 1.0, facility.plan_facility(planned, 1.0))
    assert "assign 39 of the inventory's 40 attributes: assign every one" in str(caught.value)


@pytest.mark.subscriber
def test_validate_runs_the_plans_layout_and_keeps_up(tmp_path: Path, test_state_dir: Path,
                                                     stack_endpoints: object) -> None:
    (tmp_path / "s.toml").write_text(SMALL)
    out = tmp_path / "plan"
    done = subprocess.run([sys.executable, "-m", "hdbbench", "plan", "archivers", str(tmp_path / "s.toml"),
                           "--backend", "timescaledb", "--rate", "120", "--output", str(out), "--validate",
                           "--duration-s", "20", "--state-dir", str(test_state_dir)],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "keeps up: 2 archiver(s) at 78 events/s on timescaledb" in done.stderr
    assert ", lost 0, 0 attributes unproven" in done.stderr
    lines = (out / "attribute-add.txt").read_text().splitlines()
    assert len(lines) == 40 and {line.split()[0] for line in lines} == {"archiving/hdbpp/es-01", "archiving/hdbpp/es-02"}


@pytest.mark.subscriber
def test_calibrate_measures_one_archiver_on_the_mix_and_plans_from_it(tmp_path: Path, test_state_dir: Path,
                                                                      stack_endpoints: object) -> None:
    """--calibrate starts its own saturation search of one archiver on the mix (here our subscriber keeps up
    to the search's end, the rate beyond which the plan would not change) and plans from what it measured."""
    (tmp_path / "s.toml").write_text(SMALL)
    out = tmp_path / "plan"
    done = subprocess.run([sys.executable, "-m", "hdbbench", "plan", "archivers", str(tmp_path / "s.toml"),
                           "--backend", "timescaledb", "--calibrate", "--headroom", "0.9", "--output", str(out),
                           "--state-dir", str(test_state_dir)],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "calibrating: one hdbbench-es archiver on timescaledb, 1 x the inventory's attributes, saturation " \
           "search from 39 events/s" in done.stderr
    (run,) = (out / "runs").iterdir()
    sustainable, words = planner.sustainable_from_run(run, "timescaledb", OURS)
    assert sustainable >= 78 / 0.9, words        # reached the rate the plan needs: one archiver holds all 40
    header = (out / "archivers.toml").read_text()
    assert f"calibration run {run}" in header.replace("\n# ", " ")
    assert len(load_inventory(out / "archivers.toml").archivers) == 1

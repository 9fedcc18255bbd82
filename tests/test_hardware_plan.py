# SPDX-License-Identifier: Apache-2.0
"""`hdbbench plan hardware` (hdbbench.scenario.hardware, hdbbench.scenario.unit_costs): unit costs turned into
lines over the rate, the plan's figures and files, its bad inputs in one line each, the report's section, and
a scale-up planned from a real run against a real run at twice the rate and attributes."""

from __future__ import annotations

import json
import math
import os
import shutil
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hdbbench.backends.registry import backend_class
from hdbbench.load.inventory.model import load_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.records import read, write
from hdbbench.report.page import write_report
from hdbbench.results.document import read_results, results_document
from hdbbench.results.trials import TrialSummary
from hdbbench.scenario import hardware
from hdbbench.scenario import unit_costs as uc
from tests.harness import REPO
from tests.harness.servers import TEST_STATE_DIR, external_servers
from tests.harness.runs import hdbbench, run, scenario_document, write_scenario
from tests.harness.synthetic import make_run, sections_of, synthetic_trial, write_json, write_others
from tests.harness.synthetic import BACKENDS as SYNTHETIC_BACKENDS

EXAMPLE = REPO / "inventories" / "example-facility.toml"
SERVER = {"timescaledb": "postgres", "postgresql": "postgres", "mysql": "mariadb"}


def window(rate: float, cores: float, subscribers: int = 1) -> uc.Window:
    costs = SimpleNamespace(cpu_cores={"subscribers": cores}, machine_work_ms=2.0)
    return uc.Window("run", f"w{rate:g}", rate, subscribers, 100, 1000, costs)


def subscriber_cores(w: uc.Window) -> float:
    return w.costs.cpu_cores["subscribers"]


# --- the lines ------------------------------------------------------------------------------------------------
def test_windows_over_a_wide_span_of_rates_give_the_line_and_say_the_cost_per_event_is_not_constant() -> None:
    # 0.1 cores idle + 20 µs an event: all-in 120, 70 and 45 µs per event.
    found = [window(r, 0.1 + 20e-6 * r) for r in (1000.0, 2000.0, 4000.0)]
    fit = uc.fit(found, subscriber_cores)
    assert fit is not None
    assert fit.fixed == pytest.approx(0.1) and fit.per_event == pytest.approx(20e-6)
    assert fit.per_event_range == pytest.approx([45e-6, 120e-6]) and not fit.constant
    assert uc.at_rate(fit, 8000.0) == pytest.approx(0.1 + 0.16)
    assert "line over 3 windows" in fit.how


def test_the_subscribers_fixed_part_counts_once_per_archiver() -> None:
    found = [window(r, 2 * 0.05 + 10e-6 * r, subscribers=2) for r in (1000.0, 3000.0)]
    fit = uc.fit(found, subscriber_cores, per_subscriber=True)
    assert fit is not None and fit.fixed == pytest.approx(0.05)
    assert uc.at_rate(fit, 5000.0, processes=4) == pytest.approx(4 * 0.05 + 0.05)


def test_close_rates_give_one_all_in_cost_per_event_and_a_constant_one_says_so() -> None:
    found = [window(r, 30e-6 * r) for r in (1000.0, 1100.0)]
    fit = uc.fit(found, subscriber_cores)
    assert fit is not None and fit.fixed == 0.0 and fit.per_event == pytest.approx(30e-6) and fit.constant
    assert "no line" in fit.how
    assert uc.fit(found, lambda w: None) is None


def test_a_quantity_that_does_not_rise_with_the_rate_is_fixed() -> None:
    found = [window(400.0, 11.4), window(800.0, 8.4)]  # write requests of a WAL writer's timer, not of events
    fit = uc.fit(found, subscriber_cores)
    assert fit is not None and fit.per_event == 0.0 and fit.fixed == pytest.approx(9.9)
    assert uc.at_rate(fit, 1600.0) == pytest.approx(9.9) and "did not rise" in fit.how
    flat = uc.fit([window(400.0, 8.3), window(800.0, 8.3)], subscriber_cores)
    assert flat is not None and flat.per_event == pytest.approx(0.0, abs=1e-12) and flat.fixed == pytest.approx(8.3)


def test_a_line_with_a_negative_fixed_part_falls_back_to_the_all_in_cost() -> None:
    found = [window(1000.0, 0.01), window(3000.0, 0.09)]  # the line would cross zero at 750 events/s
    fit = uc.fit(found, subscriber_cores)
    assert fit is not None and fit.fixed == 0.0 and fit.per_event == pytest.approx(0.1 / 4000.0)
    assert "negative fixed part" in fit.how


# --- a plan from synthetic runs ---------------------------------------------------------------------------------
def unit_costs(backend: str, rate: float) -> dict[str, Any]:
    """Costs of a synthetic window: subscribers 0.05 + 20 µs/event, server 0.1 + 30 µs/event, 5 + 0.01 IOPS/event."""
    server = SERVER[backend]
    writes = {"write_bytes_per_s": 200.0 * rate, "write_bytes_per_event": 200.0, "write_iops": 5 + 0.01 * rate,
              "write_ios_per_event": (5 + 0.01 * rate) / rate, "log_bytes_per_s": 150.0 * rate,
              "log_bytes_per_event": 150.0, "source": "synthetic"}
    cores = {"subscribers": 0.05 + 20e-6 * rate, server: 0.1 + 30e-6 * rate}
    return {"stored_rate": rate, "window_s": 10.0, "attributes": 100, "machine_work_ms": 2.0, "cpu_cores": cores,
            "cpu_us_per_event": {k: v / rate * 1e6 for k, v in cores.items()},
            "memory_bytes": {"subscribers": 50e6, server: 300e6}, "writes": {server: writes}}


def synthetic_costed_run(root: Path) -> Path:
    """A synthetic run whose throughput trial and saturation steps recorded unit costs, with disk results."""
    run_dir = make_run(root, with_others=False)
    document = json.loads((run_dir / "results.json").read_text())
    for trial in document["results"]["trials"]:
        rate = trial["stored_rate"]["median"]
        if trial["kind"] == "throughput":
            trial["unit_costs"] = unit_costs(trial["backend"], rate)
        for step in (trial.get("saturation") or {}).get("steps", []):
            if not step["saturated"]:
                step["unit_costs"] = unit_costs(trial["backend"], step["stored_median"])
    document["scenario"]["schema_variant"] = "pk"  # as the scenario records [schema] variant
    write_json(run_dir / "results.json", document)
    write_others(run_dir, document["scenario"], document["environment"])
    return run_dir


def test_the_runs_variant_and_mix_are_the_plans(tmp_path: Path) -> None:
    run_dir = synthetic_costed_run(tmp_path)
    (measured,) = uc.read_runs([run_dir])
    assert measured.variant == "pk" and measured.inventory is None
    inventory = load_inventory(EXAMPLE)
    assert not hardware._measured_on(measured, inventory)
    assert hardware._measured_on(uc.MeasuredRun(run_dir, [], "pk", EXAMPLE), inventory)
    (p,) = hardware.plan_hardware(inventory, ["postgresql"], "hdbbench-es", [run_dir], 5, 0.5).backends
    assert p.variant == "pk" and p.hot_set.source.startswith("memory model, pk:")


def test_a_plan_from_measured_costs_carries_every_figure_its_source_and_the_line_to_the_inventorys_rate(
        tmp_path: Path) -> None:
    run_dir = synthetic_costed_run(tmp_path)
    inventory = load_inventory(EXAMPLE)
    plan = hardware.plan_hardware(inventory, ["timescaledb"], "hdbbench-es", [run_dir], years=5, headroom=0.5)
    (p,) = plan.backends
    rate = sum(g.count * g.rate_hz for g in inventory.groups)
    assert p.events_per_s == pytest.approx(rate) and p.attributes == sum(g.count for g in inventory.groups)
    archivers = int(p.archivers.needed or 0)
    assert archivers >= 1
    assert p.archiver_cores.needed == pytest.approx(archivers * 0.05 + 20e-6 * rate)
    assert p.database_cores.needed == pytest.approx(0.1 + 30e-6 * rate)
    assert p.database_cores.provide == math.ceil((0.1 + 30e-6 * rate) / 0.5)
    assert p.write_iops.needed == pytest.approx(5 + 0.01 * rate)
    assert p.storage_class == "hdd"  # 5 + 0.01 × 5,089 ≈ 56 IOPS, 112 to provide
    assert p.log_bytes_per_s.needed == pytest.approx(150.0 * rate)
    assert p.disk.needed is not None and p.disk.needed > 0
    # Memory: the least budget (to a MiB) whose cache holds the hot set; more for the hot set over the headroom.
    model = backend_class("timescaledb").memory_model()
    assert p.hot_set.needed and p.memory.needed and p.memory.provide and p.memory.provide > p.memory.needed
    assert model.cache_bytes(p.memory.needed) >= p.hot_set.needed > model.cache_bytes(p.memory.needed - 2**20)
    assert "timescaledb" in p.sentence and "archiver" in p.sentence
    assert any("device mix" in u for u in p.unknown)  # the synthetic run's mix is not the inventory's
    assert "replicas" in plan.cannot_know


def test_years_cap_at_each_groups_retention(tmp_path: Path) -> None:
    run_dir = synthetic_costed_run(tmp_path)
    inventory = load_inventory(EXAMPLE)
    disk = {years: hardware.plan_hardware(inventory, ["mysql"], "hdbbench-es", [run_dir], years, 0.5).backends[0].disk
            for years in (0.5, 1.0, 10.0, 20.0)}
    assert disk[1.0].needed == pytest.approx(2 * disk[0.5].needed)  # no group kept for less than a year
    assert disk[10.0].needed == pytest.approx(disk[20.0].needed)    # every group's retention is reached by then


def test_the_plans_files_read_back_and_the_report_gives_its_table_and_a_sentence_per_backend(tmp_path: Path) -> None:
    run_dir = synthetic_costed_run(tmp_path)
    plan = hardware.plan_hardware(load_inventory(EXAMPLE), [], "hdbbench-es", [run_dir], 5, 0.5)
    assert [p.backend for p in plan.backends] == sorted(SYNTHETIC_BACKENDS)
    hardware.write_plan(run_dir, plan, {"inventory": str(EXAMPLE)})
    assert read_results(run_dir / "hardware.json", "hardware-plan").results == plan
    text = tomllib.loads((run_dir / "hardware.toml").read_text())
    assert [b["backend"] for b in text["backends"]] == [p.backend for p in plan.backends]
    assert text["backends"][0]["database_cores"]["needed"] == pytest.approx(plan.backends[0].database_cores.needed)
    section = sections_of(write_report(run_dir).read_text())["hardware"]
    assert "<svg" in section and section.index("<svg") < section.index("<table")  # the plot first
    for p in plan.backends:
        assert p.sentence.split(":")[0] in section and "archiver" in section


def test_a_check_against_a_run_at_the_planned_scale_gives_the_error_of_each_figure(tmp_path: Path) -> None:
    run_dir = synthetic_costed_run(tmp_path / "a")
    plan = hardware.plan_hardware(load_inventory(EXAMPLE), ["timescaledb"], "hdbbench-es", [run_dir], 5, 0.5)
    checks = hardware.check(plan, run_dir, 0.3, "hdbbench-es")
    assert [c.quantity for c in checks] == [q for q, _ in hardware.CHECKED]
    # Its own throughput trial lies on the line the plan fitted: no error.
    assert all(c.error == pytest.approx(0.0, abs=1e-9) and c.within for c in checks)


# --- bad input: one line each -------------------------------------------------------------------------------------
def one_line_error(result: Any, *words: str) -> None:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hdbbench: error:"), result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_bad_inputs_are_one_line_each(tmp_path: Path) -> None:
    run_dir = synthetic_costed_run(tmp_path / "costed")
    no_rate = tmp_path / "no-rate.toml"
    no_rate.write_text('name = "x"\n[[attributes]]\ntype = "devdouble"\ncount = 3\n')
    one_line_error(hdbbench("plan", "hardware", str(no_rate), "--from", str(run_dir)), str(no_rate), "rate_hz")
    disk_only = tmp_path / "disk-only"
    disk_only.mkdir()
    (run_dir / "disk.json").rename(disk_only / "results.json")
    one_line_error(hdbbench("plan", "hardware", str(EXAMPLE), "--from", str(disk_only)), "disk", "insertion")
    empty = tmp_path / "empty"
    empty.mkdir()
    write_json(empty / "results.json", write(results_document("insertion", {}, {}, {"trials": []})))
    one_line_error(hdbbench("plan", "hardware", str(EXAMPLE), "--from", str(empty)), "no insertion trials")
    for years in ("-1", "nan", "0"):
        one_line_error(hdbbench("plan", "hardware", str(EXAMPLE), "--from", str(run_dir), "--years", years),
                       "--years")
    one_line_error(hdbbench("plan", "hardware", str(EXAMPLE), "--from", str(run_dir), "--backend", "clickhouse"),
                   "clickhouse")
    with pytest.raises(ConfigError, match="years"):
        hardware.plan_hardware(load_inventory(EXAMPLE), [], "hdbbench-es", [run_dir], float("nan"), 0.5)
    assert not (REPO / "plans" / "example-facility-hardware" / "hardware.toml.tmp").exists()


def test_a_trial_without_unit_costs_is_not_a_window(tmp_path: Path) -> None:
    trial = synthetic_trial("mysql", "throughput", 1000.0, "throughput", sustained_share=1.0)
    runs = [uc.MeasuredRun(tmp_path, [read(TrialSummary, trial)], "pk+2")]
    assert uc.windows(runs, "mysql", "hdbbench-es") == []


# --- a scale-up on this machine -----------------------------------------------------------------------------------
# Planned against measured, for the subscribers' CPU, the server's CPU and the server's write IOPS. The
# tolerances come from the spread of six repetitions of this test's runs here (docs/hardware.md
# "Validation"), rounded up, not tuned to pass: CPU errors −19 % to +15 %; write requests −3 % to +20 %,
# once +90 % (an autovacuum's writes in one 8 s window of the smaller run).
SCALE_UP_TOLERANCE = 0.5            # CPU, subscribers and server
SCALE_UP_IOPS_TOLERANCE = 1.0       # write requests
STORAGE = "nvme"  # a loop device under the server's data (limits far above these trials): its own writes, exactly


@pytest.fixture(scope="module")
def counted_writes_state_dir() -> Iterator[Path]:
    """A stack of its own (PostgreSQL and the Tango database) whose database server keeps its data on a loop
    device, so that the write requests counted are the server's alone (the machine's disk counts everyone's)."""
    if external_servers():
        pytest.skip("needs private servers")
    if os.geteuid() != 0:
        pytest.skip("a loop device under the server's data needs root (as tests/test_confine.py)")
    state_dir = TEST_STATE_DIR.parent / f"scale-up-{uuid.uuid4().hex[:8]}"
    started = hdbbench("stack", "up", "--state-dir", str(state_dir), "--profile", "relaxed", "--storage", STORAGE,
                       "--only", "postgres", "--only", "tango", timeout_s=300)
    try:
        assert started.returncode == 0, started.stderr
        yield state_dir
    finally:
        hdbbench("stack", "down", "--state-dir", str(state_dir), timeout_s=300)
        shutil.rmtree(state_dir, ignore_errors=True)


def test_a_scale_up_planned_from_a_real_run_holds_within_the_tolerance(tmp_path: Path,
                                                                        counted_writes_state_dir: Path) -> None:
    """Plan 200 attributes at 1,600 events/s from 100 attributes at 400 and 800 events/s; then measure it."""
    stack = {"profile": "relaxed", "storage": STORAGE}
    small = scenario_document(["timescaledb"], name="scale-a", stack=stack,
                              load={"rate": 800, "duration_s": 10, "warmup_s": 2},
                              measurements={"throughput": True, "sustained": {"rate": 400, "duration_s": 10}})
    large = scenario_document(["timescaledb"], name="scale-b", stack=stack,
                              load={"rate": 1600, "duration_s": 10, "warmup_s": 2}, measurements={"throughput": True})
    large["devices"]["servers"] = 2
    run_a = run(write_scenario(tmp_path / "a.toml", small), counted_writes_state_dir, tmp_path / "a")
    run_b = run(write_scenario(tmp_path / "b.toml", large), counted_writes_state_dir, tmp_path / "b")
    inventory = tmp_path / "scaled.toml"
    inventory.write_text('name = "scaled"\n[[attributes]]\ntype = "devdouble"\ncount = 200\nrate_hz = 8.0\n')
    plan = hardware.plan_hardware(load_inventory(inventory), ["timescaledb"], "hdbbench-es", [run_a], 5, 0.5)
    (p,) = plan.backends
    assert p.database_cores.fit is not None and p.database_cores.fit.points == 2  # a line over 400 and 800
    assert "loop device" in uc.windows(uc.read_runs([run_a]), "timescaledb", "hdbbench-es")[0].costs.writes[
        "postgres"].source
    checks = hardware.check(plan, run_b, SCALE_UP_TOLERANCE, "hdbbench-es")
    report = "; ".join(f"{c.quantity}: planned {c.planned}, measured {c.measured}" for c in checks)
    assert all(c.planned is not None and c.measured is not None for c in checks), report
    cpu, iops = checks[:2], checks[2]
    assert all(c.within for c in cpu), report
    assert iops.error is not None and abs(iops.error) <= SCALE_UP_IOPS_TOLERANCE, report

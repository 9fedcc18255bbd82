# SPDX-License-Identifier: Apache-2.0
"""The run plan (hdbbench.scenario.plan): every shipped scenario resolves, trials come in the run's order,
every refusal comes before anything is written, and nothing below the runner reads the scenario.

Fast: nothing is started (no server, no device, no subscriber).
"""

from __future__ import annotations

import ast
import dataclasses
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from hdbbench.cli import main
from hdbbench.load import facility
from hdbbench.load.inventory.model import load_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.run.runner import run_scenario
from hdbbench.scenario.plan import RunOptions, RunPlan, plan_run
from hdbbench.scenario.scenario import load_scenario
from hdbbench.stack.servers import registry as servers
from tests.harness import REPO

SCENARIOS = sorted((REPO / "scenarios").glob("*.toml"))
# The modules the run goes through below the runner: they take their plan entry, never the scenario.
LOWER = ("load/facility.py", "stack/placement.py", "trials/insertion.py", "parts/faults/run.py", "scenario/hosts.py")
HOSTED = """name = "hosted"
backends = ["timescaledb"]
[devices]
profile = "devices/profiles/insertion-devdouble.toml"
[load]
rate = 500
duration_s = 5
warmup_s = 1
[hosts]
tango_db = "198.18.0.1"
devices = ["198.18.0.2"]
"""


@pytest.fixture(autouse=True)
def _no_outside_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan reads the addresses of servers given from outside: none unless a test gives them."""
    for name in [n for n in os.environ if n.startswith("HDBBENCH_") and n.endswith(("_URL", "_HOST"))]:
        monkeypatch.delenv(name)


def _plan(path: Path, tmp_path: Path) -> RunPlan:
    return plan_run(load_scenario(path), RunOptions(state_dir=tmp_path / "state", runs_root=tmp_path / "runs"))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text.replace('profile = "devices/', f'profile = "{REPO}/devices/'))
    return path


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_every_shipped_scenario_resolves_into_a_plan(path: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HDBBENCH_TANGO_HOST", "198.18.0.1:10000")  # what a hosted run is given
    scenario = load_scenario(path)
    plan = _plan(path, tmp_path)
    assert plan.name == scenario.name and plan.recorded == scenario.to_dict()
    assert plan.devices.engine in ("cpp", "python") and plan.devices.attributes > 0
    assert [t.backend for t in plan.trials] == sorted((t.backend for t in plan.trials), key=scenario.backends.index)
    assert len({t.label for t in plan.trials}) == len(plan.trials)
    assert plan.hosts.distributed == (scenario.hosts is not None and scenario.hosts.distributed)
    assert (plan.faults is None) == (scenario.faults is None)
    assert (plan.extraction is None) == (scenario.extraction is None)
    assert (plan.disk is None) == (scenario.disk is None)
    assert not (tmp_path / "runs").exists() and not (tmp_path / "state").exists()


def test_trials_come_per_backend_per_kind_in_the_measurements_order(tmp_path: Path) -> None:
    plan = _plan(REPO / "scenarios" / "capped.toml", tmp_path)
    first = [t.label for t in plan.trials if t.backend == "timescaledb"]
    assert first == [*(f"timescaledb_{t}" for t in ("throughput", "batch64", "batch1024", "batch8192", "subs2",
                                                    "saturation", "sustained")),
                     *(f"timescaledb_capped_{t}" for t in ("throughput", "batch64", "batch1024", "batch8192",
                                                           "subs2", "saturation", "sustained"))]
    assert [t.backend for t in plan.trials[::14]] == ["timescaledb", "postgresql", "mysql"]
    by_label = {t.label: t for t in plan.trials}
    assert by_label["timescaledb_batch64"].lib_overrides["batch_size"] == "64"
    assert by_label["timescaledb_capped_throughput"].lib_overrides["max_events_per_s"] == "25000"
    assert by_label["timescaledb_capped_throughput"].kind.name == "capped"
    assert by_label["timescaledb_subs2"].subscribers == 2
    saturation = by_label["mysql_saturation"]
    assert saturation.rate_steps and saturation.warmup_s == 0.0


def test_the_plan_is_frozen(tmp_path: Path) -> None:
    plan = _plan(REPO / "scenarios" / "small.toml", tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.trials = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.trials[0].rate = 1.0  # type: ignore[misc]
    assert isinstance(plan.trials, tuple) and isinstance(plan.devices.devices, tuple)


def test_the_parts_are_resolved_with_their_own_settings(tmp_path: Path) -> None:
    small = _plan(REPO / "scenarios" / "small.toml", tmp_path)
    scenario = load_scenario(REPO / "scenarios" / "small.toml")
    assert small.extraction is not None and small.extraction.options.backends == scenario.backends
    assert small.disk is not None and small.disk.inventory is not None and small.disk.seed == scenario.seed
    assert [b for b, _ in small.disk.variants] == list(scenario.backends)
    faults = _plan(REPO / "scenarios" / "faults.toml", tmp_path).faults
    assert faults is not None
    kinds = faults.part.kinds
    assert [(t.backend, t.fault) for t in faults.trials[:len(kinds)]] == [("timescaledb", k) for k in kinds]
    assert all(t.label == f"{t.backend}_fault_{t.fault}" for t in faults.trials)


def test_an_inventory_is_dealt_once_with_its_phases(tmp_path: Path) -> None:
    path = REPO / "scenarios" / "facility.toml"
    scenario = load_scenario(path)
    assert scenario.facility is not None
    devices = _plan(path, tmp_path).devices
    expected = facility.plan_facility(load_inventory(scenario.facility.inventory), scenario.facility.scale,
                                      scenario.servers, scenario.devices_per_server, scenario.seed,
                                      phases=scenario.facility.phases)
    assert devices.devices == tuple(expected) and devices.keep_rate_mix
    assert {d.phases for d in devices.devices} == {scenario.facility.phases}


def test_a_hosted_plan_uses_the_servers_it_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HDBBENCH_TANGO_HOST", "198.18.0.1:10000")
    plan = _plan(_write(tmp_path, HOSTED), tmp_path)
    # Only Tango's server (and the process-less kinds every stack has): no database server is started.
    assert plan.hosts.distributed
    assert [c for c in plan.stack.components if servers.kind(c).process] == ["tango"]
    assert dict(plan.hosts.device_servers) == {plan.devices.servers[0]: "198.18.0.2"}


@pytest.mark.parametrize(("text", "env", "message"), [
    (HOSTED, {}, "HDBBENCH_TANGO_HOST"),
    (HOSTED + "[faults]\nkinds = [\"database_stop\"]\n", {"HDBBENCH_TANGO_HOST": "198.18.0.1:10000"},
     "cannot run with components on other hosts"),
    (HOSTED.split("[hosts]")[0].replace("[load]", "engine = \"cpp\"\n[load]"),
     {"HDBBENCH_GEN_BINARY": "/nonexistent/HdbBenchGen"}, "is not built"),
], ids=["hosted-without-tango-host", "faults-with-hosts", "cpp-engine-not-built"])
def test_every_refusal_comes_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
                                                         env: dict[str, str], message: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    scenario = load_scenario(_write(tmp_path, text))
    options = RunOptions(state_dir=tmp_path / "state", runs_root=tmp_path / "runs")
    with pytest.raises(ConfigError, match=message):
        run_scenario(scenario, options)
    assert not options.runs_root.exists() and not options.state_dir.exists()


def test_check_prints_the_plan_it_runs(tmp_path: Path) -> None:
    path = REPO / "scenarios" / "small.toml"
    result = CliRunner().invoke(main, ["check", "--plan", str(path)])
    assert result.exit_code == 0, result.stderr
    plan = plan_run(load_scenario(path), RunOptions())
    assert result.stdout.splitlines() == [f"ok: {path} (scenario)", *plan.lines()]
    listed = [line.split(":")[0].strip() for line in plan.lines() if line.startswith("    ")]
    assert listed[:len(plan.trials)] == [t.label for t in plan.trials]
    plain = CliRunner().invoke(main, ["check", str(path)])
    assert plain.stdout.splitlines() == [f"ok: {path} (scenario)"]  # the plan only when asked


def test_check_plan_refuses_what_the_run_refuses(tmp_path: Path) -> None:
    path = _write(tmp_path, HOSTED)
    result = CliRunner().invoke(main, ["check", "--plan", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"hdbbench: error: {path}: a scenario with components on hosts needs the "
                                          "Tango database's address: set HDBBENCH_TANGO_HOST (and "
                                          "HDBBENCH_POSTGRES_URL for its backends)"]  # timescaledb's server only


def _functions_taking_the_scenario(tree: ast.AST) -> list[str]:
    return [node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(a.arg == "scenario" for a in [*node.args.args, *node.args.kwonlyargs])]


def _scenario_reads(tree: ast.AST) -> int:
    """`scenario.x` and `self.scenario.x` reads."""
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.Attribute) and (
        (isinstance(node.value, ast.Name) and node.value.id == "scenario")
        or (isinstance(node.value, ast.Attribute) and node.value.attr == "scenario")))


@pytest.mark.parametrize("module", LOWER)
def test_no_module_below_the_runner_reads_the_scenario(module: str) -> None:
    tree = ast.parse((REPO / "hdbbench" / module).read_text())
    imports = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imports += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imports if m and m.startswith(("hdbbench.run.runner", "hdbbench.scenario.scenario"))]
    assert _functions_taking_the_scenario(tree) == [] and _scenario_reads(tree) == 0


def test_the_runner_reads_the_scenario_only_to_plan_it() -> None:
    tree = ast.parse((REPO / "hdbbench" / "run" / "runner.py").read_text())
    assert _functions_taking_the_scenario(tree) == ["run_scenario"] and _scenario_reads(tree) == 0
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "scenario"]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id == "plan_run"]
    assert len(uses) == 1 and len(calls) == 1 and calls[0].args[0] is uses[0]


def test_a_sustained_load_equal_to_the_throughput_trial_is_measured_once(tmp_path: Path) -> None:
    from hdbbench.run.runner import _same_load

    for name, once in (("default.toml", True), ("small.toml", False)):
        by_kind = {t.trial_kind: t for t in _plan(REPO / "scenarios" / name, tmp_path).trials
                   if t.backend == "timescaledb"}
        assert (_same_load(by_kind["throughput"]) == _same_load(by_kind["sustained"])) is once, name
        assert _same_load(by_kind["throughput"]) != _same_load(by_kind["batch_sweep"])

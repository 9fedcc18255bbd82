# SPDX-License-Identifier: Apache-2.0
"""Running hdbbench as the tests do: its command line as a child, scenarios written here and run in
process on the session's servers, and what a run directory holds (its trials, what a part left behind).

    hdbbench("check", path)                         the command line, from the repository
    document = scenario_document(["mysql"], load={"rate": 400})      a scenario as TOML's dict
    part_scenario("faults", {"kinds": [...]})       a scenario of one part alone (no throughput trial)
    write_scenario(tmp_path / "s.toml", document)   ... as a file
    run_dir = run(scenario_or_path, state_dir, tmp_path)             run in process: its run directory
    insertion_trials(run_dir, "saturation")         {(backend, subscriber kind): TrialSummary}
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hdbbench.results.document import read_kind, read_trials
from hdbbench.results.trials import TrialSummary
from hdbbench.subscribers.launcher import SubscriberFleet
from tests.harness.servers import REPO

HDBBENCH = [sys.executable, "-m", "hdbbench"]
PROFILES = REPO / "devices" / "profiles"


def hdbbench(*args: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess[str]:
    """`hdbbench args` as a child in the repository, its output captured (no input; never raises on failure)."""
    return subprocess.run([*HDBBENCH, *args], capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL, cwd=REPO, check=False)


# --- scenarios ----------------------------------------------------------------------------------
def scenario_document(backends: Sequence[str], profile: str = "insertion-devdouble", name: str = "t",
                      **tables: Any) -> dict[str, Any]:
    """A scenario as the dict TOML reads it: `name`, `backends`, the devices of a shipped profile
    (devices/profiles/<profile>.toml) and the other keys and tables given."""
    return {"name": name, "backends": list(backends), "devices": {"profile": str(PROFILES / f"{profile}.toml")},
            **tables}


def part_scenario(part: str, table: dict[str, Any], backends: Sequence[str] = ("timescaledb",),
                  profile: str = "insertion-devdouble", **top: Any) -> dict[str, Any]:
    """A scenario that runs one part alone: its `[part]` table, the throughput trial off."""
    return scenario_document(backends, profile, **{"measurements": {"throughput": False}, part: table, **top})


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)  # strings, numbers, booleans and lists of them are spelled alike in TOML


def write_scenario(path: Path, document: dict[str, Any], extra: str = "") -> Path:
    """`document` as a TOML file (tables of tables inline), then the TOML text `extra`; the path."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in document.items() if not isinstance(v, dict)]
    for table, values in document.items():
        if isinstance(values, dict):
            lines += [f"[{table}]", *(f"{k} = {_toml_value(v)}" for k, v in values.items())]
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


# --- runs ---------------------------------------------------------------------------------------
def run(scenario: Any, state_dir: Path, root: Path, **options: Any) -> Path:
    """Run `scenario` (a Scenario, or the path of its file) in process on the servers of `state_dir`
    (the session's are up already: the run reuses them), its run directory under `root`/runs."""
    from hdbbench.run.runner import RunOptions, run_scenario
    from hdbbench.scenario.scenario import load_scenario

    if isinstance(scenario, Path):
        scenario = load_scenario(scenario)
    return run_scenario(scenario, RunOptions(state_dir=state_dir, runs_root=root / "runs", **options))


def insertion_trials(run_dir: Path, kind: str | None = None) -> dict[tuple[str, str], TrialSummary]:
    """The run's insertion trials (of `kind`, or all) by (backend, subscriber kind)."""
    _, results = read_trials(run_dir / "results.json")
    return {(t.backend, t.subscriber_kind): t for t in results.trials if kind is None or t.kind == kind}


def fault_trials(run_dir: Path) -> dict[str, Any]:
    """The run's fault trials (faults.json) by fault."""
    from hdbbench.results.faults import FaultsResults

    return {t.fault: t for t in read_kind(run_dir / "faults.json", FaultsResults).results.trials}


def nothing_left(state_dir: Path, part: str, labels: Iterable[str]) -> None:
    """What a part's trials made under the state directory is gone: for each trial's home, no
    subscriber running, nothing mounted there, no backup left."""
    mounts = Path("/proc/mounts").read_text()
    for label in labels:
        home = state_dir / part / label
        assert SubscriberFleet("127.0.0.1:1", home).pids() == [], f"{home}: a subscriber left running"
        assert str(home) not in mounts, f"{home}: still mounted"
        assert not any((home / "backup").glob("*")), f"{home}: a backup was left behind"

# SPDX-License-Identifier: Apache-2.0
"""Run directories say their state, and results files round-trip with their environment facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hdbbench import results


def test_run_directory_records_its_state(tmp_path: Path) -> None:
    run = results.RunDirectory.create(tmp_path, "small scenario/1")
    assert run.path.parent == tmp_path and run.path.name.endswith("-small-scenario-1")
    assert run.status()["state"] == "running"
    run.set_status("interrupted", error="Ctrl-C")
    status = json.loads((run.path / "status.json").read_text())
    assert status["state"] == "interrupted" and status["error"] == "Ctrl-C" and "ended" in status
    again = results.RunDirectory.create(tmp_path, "small scenario/1")
    assert again.path != run.path


def test_results_round_trip_and_version_check(tmp_path: Path) -> None:
    run = results.RunDirectory.create(tmp_path, "rt")
    env = results.environment_facts({"postgres": "PostgreSQL 15"}, {"profile": "relaxed"})
    doc = results.results_document("insertion", {"seed": 7}, env, {"median": 1.5})
    path = run.write_json("results.json", doc)
    assert results.load_results(path) == json.loads(json.dumps(doc, default=str))
    doc["format_version"] = 999
    run.write_json("bad.json", doc)
    with pytest.raises(ValueError, match="format 999"):
        results.load_results(run.path / "bad.json")


def test_environment_facts_describe_the_machine() -> None:
    env = results.environment_facts()
    assert env["cores"] >= 1 and env["memory_bytes"] > 0
    assert env["kernel"] and env["packages"]["pytango"].startswith("10.")
    assert env["disk"]["total_bytes"] > 0

# SPDX-License-Identifier: Apache-2.0
"""Run directories say their state, and results files round-trip with their environment facts."""

from __future__ import annotations

import dataclasses
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
    doc["format_version"] = 1  # an older run: refused in one line, naming the file and both versions
    run.write_json("old.json", doc)
    with pytest.raises(results.ResultsFormatError, match=r"old\.json: results format 1, this hdbbench reads format 2"):
        results.load_results(run.path / "old.json")
    with pytest.raises(results.ResultsFormatError, match="of kind 'insertion', not 'disk'"):
        results.load_results(path, "disk")


def test_typed_records_round_trip_through_a_results_file(tmp_path: Path) -> None:
    """What a producer writes is what the report reads: write -> read -> equal."""
    stats = results.TimeStats(10, 0.5, 0.9, 1.2)
    summary = results.QuerySummary("mysql", "pk+2", "clustered", "random", 3600.0, "cold", stats, stats, 12.5, None)
    projection = results.Projection("timescaledb", "pk", False, 1e9, 3e10, 3.6e11, 7.3e11, {"wal": 2e8},
                                    [{"label": "g", "bytes_per_day": 1e9}])
    case = {f.name: v for f, v in zip(dataclasses.fields(results.CaseSize),
                                      ("postgresql", "pk", "devdouble", "spectrum", "ro", 100, "att_array_devdouble_ro",
                                       500, 830.0, 800.0, 20.0, 10.0))}
    written = results.ResultsDocument("extraction", {"seed": 1}, {}, {"summary": [summary.to_dict()],
                                                                     "projections": [projection.to_dict()],
                                                                     "cases": [case | {"engine": "heap"}]})
    run = results.RunDirectory.create(tmp_path, "typed")
    path = run.write_json("extraction.json", written.to_dict())
    read = results.read_results(path, "extraction")
    assert read == written
    assert results.QuerySummary.from_dict(read.results["summary"][0]) == summary
    assert results.Projection.from_dict(read.results["projections"][0]) == projection
    assert dataclasses.asdict(results.CaseSize.from_dict(read.results["cases"][0])) == case


def test_trials_round_trip_and_a_record_off_its_dataclass_is_refused(tmp_path: Path) -> None:
    figures = {name: {} for name in ("lib_overrides", "stored_rate", "pending_events", "pending_age_s",
                                     "event_age_at_commit_s", "event_age_at_reception_s", "time_in_subscriber_s",
                                     "cpu", "subscriber_cpu_by_thread", "accounting", "sampling_failures",
                                     "subscriber_final", "database_bytes")}
    trial = results.TrialSummary(backend="mysql", label="mysql_throughput", offered_rate=100.0, subscribers=1,
                                 duration_s=10.0, warmup_s=2.0, drained=True, sustained_share=1.0, **figures)
    written = trial.to_dict()
    assert "saturation" not in written and "device_engine" not in written  # absent, as the producer leaves them
    path = results.RunDirectory.create(tmp_path, "t").write_json(
        "results.json", results.results_document("insertion", {}, {}, {"trials": [written]}))
    assert results.TrialSummary.from_dict(results.read_results(path, "insertion").results["trials"][0]) == trial
    for broken, words in (({k: v for k, v in written.items() if k != "drained"}, "lacks drained"),
                          (written | {"colour": "red"}, "has unknown colour")):
        path.write_text(json.dumps(results.results_document("insertion", {}, {}, {"trials": [written, broken]})))
        with pytest.raises(results.ResultsFormatError, match=rf"results\.json: results\.trials\[1\]: a TrialSummary record {words}"):
            results.read_results(path)


def test_a_run_part_writes_into_the_enclosing_run_directory(tmp_path: Path) -> None:
    run = results.RunDirectory.create(tmp_path, "run")
    part = results.RunPart(run, "disk")
    part.write_json("results.json", {"x": 1})
    part.write_csv("sizes.csv", ["a"], [[1]])
    part.set_status("completed")  # the enclosing run keeps its own status
    assert sorted(p.name for p in run.path.iterdir()) == ["disk-sizes.csv", "disk.json", "logs", "status.json"]
    assert run.status()["state"] == "running"


def test_environment_facts_describe_the_machine() -> None:
    env = results.environment_facts()
    assert env["cores"] >= 1 and env["memory_bytes"] > 0
    assert env["kernel"] and env["packages"]["pytango"].startswith("10.")
    assert env["disk"]["total_bytes"] > 0

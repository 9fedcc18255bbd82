# SPDX-License-Identifier: Apache-2.0
"""Run directories say their state, and results files round-trip with their environment facts."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from hdbbench.model.records import read, write
from hdbbench.results import document as results
from hdbbench.results.extraction import ExtractionResults, QuerySummary, TimeStats, Validation
from hdbbench.results.trials import InsertionResults, TrialSummary


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
    doc = results.results_document("insertion", {"seed": 7}, env, InsertionResults(device_engine="cpp", trials=[]))
    path = run.write_json("results.json", doc)
    assert results.read_results(path) == doc
    assert results.load_results(path) == json.loads(json.dumps(write(doc), default=str))
    old = results.load_results(path) | {"format_version": 1}  # an older run: refused in one line, naming the
    run.write_json("old.json", old)                           # file and both versions
    with pytest.raises(results.ResultsFormatError, match=rf"old\.json: results format 1, this hdbbench reads format "
                                                         rf"{results.FORMAT_VERSION} only; run `hdbbench migrate"):
        results.load_results(run.path / "old.json")
    with pytest.raises(results.ResultsFormatError, match="of kind 'insertion', not 'disk'"):
        results.load_results(path, "disk")


def test_typed_records_round_trip_through_a_results_file(tmp_path: Path) -> None:
    """What a producer writes is what the report reads: write -> read -> equal (every kind: tests/test_records.py)."""
    stats = TimeStats(10, 0.5, 0.9, 1.2)
    summary = QuerySummary("mysql", "pk+2", "clustered", "random", 3600.0, "cold", stats, stats, 12.5, None)
    extraction = ExtractionResults(cold_mode="restarted", os_cache_dropped=False, loads=[], clustering=[],
                                   validation=Validation(status="skipped", queries=0, checksums={}),
                                   summary=[summary], fits=[], queries=[])
    written = results.results_document("extraction", {"seed": 1}, {}, extraction)
    run = results.RunDirectory.create(tmp_path, "typed")
    path = run.write_json("extraction.json", written)
    assert results.read_results(path, "extraction") == written
    assert results.read_kind(path, ExtractionResults).results.summary == [summary]
    assert not list(run.path.glob("*.tmp")) and not list(run.path.glob(".*"))  # written whole, nothing left beside


def written_trial(**extra: Any) -> dict[str, Any]:
    """One trial as hdbbench.trials.insertion writes it today: every part, nested as the file holds it."""
    rate = {"count": 17, "median": 4998.1, "p1": 2870.5, "p99": 5428.0, "mean": 4856.2, "min": 2557.5, "max": 5428.3}
    ages = {"window": "steady part, read at its end", "p50": 0.0146, "p99": 0.022, "max": 0.0252}
    step = {"offered_rate": 12000.0, "start_s": 0.0, "end_s": 8.0, "source_rate": 12051.0, "source_behind": False,
            "stored_rate": 12026.7, "stored_median": 11767.2, "emitted_events": 109400, "stored_events": 109400,
            "lost": 0, "error_events": 0, "visibility_lag_p50_s": 0.02, "visibility_lag_p99_s": 0.08,
            "visibility_lag_growth_s": 0.007, "max_pending": 600.0, "machine_busy": 0.74, "machine_work_ms": 2.03,
            "device_cpu_us": 4.1, "server_work": ["checkpoints"], "rules": [], "saturated": False, "errors": 0}
    trial = {
        "backend": "mysql", "label": "mysql_capped_batch64", "kind": "batch_sweep", "batch_size": 64,
        "offered_rate": 5000.0, "subscribers": 1, "lib_overrides": {"batch_size": "64"}, "duration_s": 20.0,
        "warmup_s": 4.0, "stored_rate": rate | {"source": "database counter"},
        "pending_events": {"max": 0.0, "p99": 0.0, "high_water_mark": None, "source": "HDB++ ..."},
        "pending_age_s": {"max": math.nan, "p99": math.nan},
        "event_age_at_commit_s": ages, "event_age_at_reception_s": ages, "time_in_subscriber_s": ages,
        "cpu": {"subscribers": {"cores": 0.05, "us_per_event": 11.0}, "mariadb": {"cores": 0.1, "us_per_event": 27.7}},
        "subscriber_cpu_by_thread": {},
        "accounting": {"emitted": 100, "stored": 90, "lost": 10, "duplicates": 0,
                       "per_attribute": [{"attribute": "tango://h:1/a/b/c/x", "emitted": 100, "stored": 90,
                                          "lost": 10, "extra": 0}],
                       "lost_by_reason": {"event_delivery": 4, "unattributed": 6}, "lost_in_subscriber": None,
                       "lost_in_event_delivery": 4, "error_events": 2, "missed_event_errors": 2,
                       "attributes_with_missed_events": 1, "error_events_reported": 0, "not_drained": None},
        "drained": True, "sampling_failures": {}, "subscriber_final": {"archiving/capped/1": {"AttributeNumber": 1}},
        "database_bytes": {"before": 1, "after": 3, "growth": 2},
        "saturation": {"steps": [step], "last_sustainable_rate": 12000.0, "limited_by": "none (last step reached)",
                       "ended_by": [], "criterion": "saturated when ...", "lost": 0, "error_events": 0},
        "device_engine": "cpp",
        "placement": {"requested": {}, "observed": {"subscribers": {"cpus": "0-1", "processes": [
            {"pid": 10, "name": "x", "cpus": "0-1", "thread_cpus": "0-1"}]}}, "machine_cpus": "0-1",
            "archiving_path": None},
        "delivery_unproven": 0, "subscriber_kind": "capped",
        "outside": {"counter": "rows", "counter_resolution_s": 0.0, "events_per_row": 1.0, "stored_rate": rate,
                    "rows_inserted": 90, "visibility_lag_s": {"p50": 0.02, "p99": 0.03, "max": 0.04, "count": 32,
                                                              "resolution_s": 0.013, "probe_attributes": 8},
                    "visibility_poll_failures": 0},
        "subscriber_reported": {"fields": ["pending_age_s"], "published": False, "rows_stored": None,
                                "stored_rate": None},
    }
    return trial | extra


def _json(data: Any) -> str:
    return json.dumps(data, sort_keys=True)  # NaN equals NaN as written


def test_a_trial_reads_typed_and_writes_back_exactly_as_written(tmp_path: Path) -> None:
    written = written_trial()
    trial = read(TrialSummary, written)
    assert _json(write(trial)) == _json(written) and list(write(trial)) == list(written)
    assert (trial.kind, trial.batch_size, trial.subscribers, trial.subscriber_kind) == ("batch_sweep", 64, 1, "capped")
    assert trial.accounting.lost_by_reason.items() == [("event_delivery", 4), ("unattributed", 6)]
    assert trial.saturation is not None and trial.saturation.steps[0].stored_rate == 12026.7
    assert trial.outside is not None and trial.outside.visibility_lag_s.count == 32
    assert trial.placement is not None and trial.placement.observed["subscribers"].processes[0].pid == 10
    # Optional parts the producer leaves out stay out; a figure it writes as null stays null.
    bare = written_trial(saturation=None, placement=None)
    del bare["saturation"], bare["placement"], bare["device_engine"]
    assert _json(write(read(TrialSummary, bare))) == _json(bare)
    path = results.RunDirectory.create(tmp_path, "t").write_json(
        "results.json", results.results_document("insertion", {}, {}, {"device_engine": "cpp", "trials": [written]}))
    document, typed = results.read_trials(path)
    assert document.kind == "insertion" and typed.device_engine == "cpp"
    assert [_json(write(t)) for t in typed.trials] == [_json(written)]


@pytest.mark.parametrize(("damage", "words"), [
    (lambda t: {k: v for k, v in t.items() if k != "drained"}, r"\[1\]: a TrialSummary record lacks drained"),
    (lambda t: t | {"colour": "red"}, r"\[1\]: a TrialSummary record has unknown colour"),
    (lambda t: t | {"accounting": {**t["accounting"], "lost_by_reason": {"gremlins": 3}}},
     r"\[1\]\.accounting\.lost_by_reason: a LostByReason record has unknown gremlins"),
    (lambda t: t | {"saturation": {**t["saturation"], "steps": [{"start_s": 0.0}]}},
     r"\[1\]\.saturation\.steps\[0\]: a SearchStep record lacks offered_rate"),
    (lambda t: t | {"cpu": {"subscribers": [1, 2]}}, r"\[1\]\.cpu\.subscribers: a CpuShare record must be an object"),
    (lambda t: t | {"label": ["x"]}, r"\[1\]\.label must be a str, got list"),
    (lambda t: t | {"offered_rate": "fast"}, r"\[1\]\.offered_rate must be a float, got str"),
    (lambda t: t | {"drained": None}, r"\[1\]\.drained must not be null"),
    (lambda t: t | {"kind": "batch"}, r"\[1\]\.kind must be one of 'throughput', 'batch_sweep', .* got 'batch'"),
])
def test_a_trial_off_its_dataclass_is_refused_naming_the_key(tmp_path: Path, damage: Any, words: str) -> None:
    good = written_trial()
    run = results.RunDirectory.create(tmp_path, "t")
    path = run.write_json("results.json", results.results_document("insertion", {}, {}, {"trials": [good]}))
    document = json.loads(path.read_text())  # damaged past the writer, which refuses it too
    document["results"]["trials"].append(damage(written_trial()))
    path.write_text(json.dumps(document))
    with pytest.raises(results.ResultsFormatError, match=rf"results\.json: results\.trials{words}"):
        results.read_results(path)
    with pytest.raises(ValueError, match=rf"^results\.trials{words}"):
        results.results_document("insertion", {}, {}, document["results"])


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
    # Each backend says which client packages and which facts of its server's build a run records.
    from hdbbench.backends.registry import REGISTRY

    for entry in REGISTRY:
        assert set(entry.backend_class.client_packages) <= set(env["packages"]), entry.name
        assert set(entry.backend_class.build_fact_labels) == set(entry.backend_class.build_facts()) <= set(env)

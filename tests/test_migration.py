# SPDX-License-Identifier: Apache-2.0
"""``hdbbench migrate``: a real format-1 run directory (the default scenario run by the wave-1
hdbbench, trimmed: see tests/data/format1/README.md) becomes a format-2 run directory that the report
and compare read like any other, with every figure carried exactly; refusals are one line and write
nothing. Pure Python: no server is started."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hdbbench.errors import ConfigError
from hdbbench.migration import MIGRATION_FILE, default_destination, migrate_run
from hdbbench.report import compare, criteria, data
from hdbbench.report.page import build_sections, write_report
from hdbbench.results import FORMAT_VERSION, ResultsFormatError, read_results
from tests.harness.synthetic import SECTIONS, make_run, sections_of

FIXTURE = Path(__file__).resolve().parent / "data" / "format1" / "20261123T182641Z-default"
REPO = Path(__file__).resolve().parent.parent


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _tree(root: Path) -> dict[str, str]:
    """Every file under `root` and a digest of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


@pytest.fixture()
def source(tmp_path: Path) -> Path:
    """A copy of the fixture (the migration must not touch it; a copy keeps the repository safe anyway)."""
    src = tmp_path / "runs" / FIXTURE.name
    shutil.copytree(FIXTURE, src)
    # Logs (the run's were empty, and git keeps no empty directory): one for the run, one for a part.
    (src / "logs").mkdir(exist_ok=True)
    (src / "logs" / "devices.log").write_text("a device server's log\n")
    part_logs = next((src / "extraction").iterdir()) / "logs"
    part_logs.mkdir(exist_ok=True)
    (part_logs / "cold.log").write_text("a part's log\n")
    return src


@pytest.fixture()
def migrated(source: Path) -> Path:
    dest = default_destination(source)
    migrate_run(source, dest)
    return dest


def _trial(run: Path, label: str) -> dict[str, Any]:
    return next(t for t in _json(run / "results.json")["results"]["trials"] if t["label"] == label)


# --- the migrated run reads like a format-2 run --------------------------------------------------
def test_the_fixture_is_format_1_with_its_parts_in_run_directories_of_their_own() -> None:
    assert _json(FIXTURE / "results.json")["format_version"] == 1
    assert [p.name for p in (FIXTURE / "extraction").iterdir()] and [p.name for p in (FIXTURE / "disk").iterdir()]
    with pytest.raises(ConfigError, match=r"results format 1, this hdbbench reads format 2 only; run `hdbbench "
                                          r"migrate .*` to convert"):
        write_report(FIXTURE)


def test_migrated_run_has_the_format_2_layout(source: Path, migrated: Path) -> None:
    names = {p.name for p in migrated.iterdir()}
    assert {"results.json", "extraction.json", "disk.json", "sizing.json", "extraction-queries.csv",
            "disk-sizes.csv", "disk-fits.csv", "status.json", "scenario.json", "environment.json", "series", "logs",
            MIGRATION_FILE} <= names, sorted(names)
    assert not {"extraction", "disk"} & names  # no part run directories any more
    for name, kind in (("results.json", "insertion"), ("extraction.json", "extraction"), ("disk.json", "disk"),
                       ("sizing.json", "disk-plan")):
        assert read_results(migrated / name, kind).format_version == FORMAT_VERSION
    for name in ("status.json", "scenario.json", "environment.json"):
        assert (migrated / name).read_bytes() == (source / name).read_bytes()
    assert _tree(migrated / "series") == _tree(source / "series") != {}
    sub = next((source / "extraction").iterdir())
    assert (migrated / "extraction-queries.csv").read_bytes() == (sub / "queries.csv").read_bytes()
    assert sorted(p.name for p in (migrated / "logs").iterdir()) == ["devices.log", "extraction-cold.log"]


def test_report_renders_the_migrated_run_with_the_sections_of_a_format_2_run(migrated: Path,
                                                                              tmp_path: Path) -> None:
    sections, notes = build_sections(migrated)
    assert notes == []
    found = sections_of(write_report(migrated).read_text())
    assert set(SECTIONS) <= set(found), sorted(set(SECTIONS) - set(found))
    # The same sections as a run made by today's producers; the one that says its figures are
    # missing is the one format 1 did not record, and migration.json says so.
    native = sections_of(write_report(make_run(tmp_path / "native")).read_text())
    assert set(found) == set(native), sorted(set(found) ^ set(native))
    assert [s.key for s in sections if s.missing] == ["placement"]
    assert "class='missing'" not in "".join(found[key] for key in SECTIONS)
    defaulted = {d["key"] for d in _json(migrated / MIGRATION_FILE)["defaulted"]}
    assert "results.trials[].placement" in defaulted


def test_compare_of_the_migrated_run_with_itself_gives_ratios_of_one(migrated: Path) -> None:
    figures = compare.run_figures(migrated)
    rows = compare.compare_rows([figures, figures])
    assert {r.criterion for r in rows} >= {"stored_median", "peak_rate", "saturation_rate", "sustained_share",
                                           "event_age_p99", "cpu_us_per_event", "query_p95"}
    # Format 1 measured one size per disk case: no marginal bytes per event, so no such row.
    assert "bytes_per_event" not in {r.criterion for r in rows}
    assert {r.backend for r in rows} == {"timescaledb", "mysql"}
    for row in rows:
        if row.figures[0].value is not None and row.figures[0].value > 0:
            assert row.ratios == (1.0, 1.0), row
            assert row.verdicts[1] in (compare.NOT_SIGNIFICANT, compare.NO_SPREAD), row


# --- figures carried exactly ---------------------------------------------------------------------
def test_insertion_figures_are_carried_exactly(source: Path, migrated: Path) -> None:
    figures = compare.run_figures(migrated)
    for backend in ("timescaledb", "mysql"):
        saturation = _trial(source, f"{backend}_saturation")["saturation"]["last_sustainable_rate"]
        assert saturation is not None
        assert _trial(migrated, f"{backend}_saturation")["saturation"]["last_sustainable_rate"] == saturation
        assert figures[backend]["saturation_rate"].value == saturation
        median = _trial(source, f"{backend}_throughput")["stored_rate"]["median"]
        assert _trial(migrated, f"{backend}_throughput")["stored_rate"] == _trial(source, f"{backend}_throughput")[
            "stored_rate"]
        assert figures[backend]["stored_median"].value == median
    # Every figure of every trial: the same values under the same keys (only fields format 2 lacks go).
    before = _json(source / "results.json")["results"]["trials"]
    after = _json(migrated / "results.json")["results"]["trials"]
    assert [t["label"] for t in after] == [t["label"] for t in before]
    for old, new in zip(before, after):
        assert {k: v for k, v in old.items() if k in new} == new


def test_extraction_and_disk_figures_are_carried_exactly(source: Path, migrated: Path) -> None:
    old_summary = _json(source / "extraction.json")["results"]["summary"]
    assert _json(migrated / "extraction.json")["results"]["summary"] == old_summary
    record = old_summary[-1]
    read = [f for f in data.extraction_figures(_json(migrated / "extraction.json"))
            if f.backend == record["backend"] and f.interval_s == record["interval_s"]
            and f.cold == (record["temperature"] == "cold") and f.clustered == (record["state"] == "clustered")]
    assert record["client_s"]["p95"] in [f.p95_s for f in read]
    old_cases = _json(source / "disk.json")["results"]["cases"]
    new_cases = _json(migrated / "disk.json")["results"]["cases"]
    assert len(new_cases) == len(old_cases) > 0
    # Format 1's bytes_per_event is one size's average (disk bytes / events): format 2's
    # average_bytes_per_event; format 2's bytes_per_event, a fitted marginal, was not measured.
    renamed = {"bytes_per_event", "average_bytes_per_event", "fit_note"}
    for old, new in zip(old_cases, new_cases):
        assert new["average_bytes_per_event"] == old["bytes_per_event"] is not None
        assert new["bytes_per_event"] is None and "fit_ok" not in new
        assert {k: v for k, v in new.items() if k not in renamed} == {k: v for k, v in old.items() if k not in renamed}
    variant = _json(source / "scenario.json")["schema_variant"]
    for backend in ("timescaledb", "mysql"):
        case = next(c for c in new_cases if c["backend"] == backend and c["variant"] == variant
                    and (c["case_type"], c["case_format"], c["case_write"]) == ("devdouble", "scalar", "ro"))
        assert case["data_per_event"] > 0 and case["average_bytes_per_event"] > 0
        assert criteria.disk_criteria(migrated)[backend] is None  # no marginal: never an average in its place
    assert _json(migrated / "sizing.json")["results"]["projections"] == \
        _json(source / "sizing.json")["results"]["projections"]


def test_migration_json_says_what_was_dropped_and_what_format_1_did_not_record(source: Path,
                                                                                 migrated: Path) -> None:
    log = _json(migrated / MIGRATION_FILE)
    assert (log["from_format"], log["to_format"], log["source"]) == (1, 2, str(source.resolve()))
    dropped = {(d["file"].split("/")[0], d["file"].rsplit("/", 1)[-1]) for d in log["dropped"]}
    assert {("extraction", "status.json"), ("disk", "status.json")} <= dropped
    defaulted = {(d["file"], d["key"]): d for d in log["defaulted"]}
    trials = len(_json(source / "results.json")["results"]["trials"])
    for key in ("subscriber_kind", "device_engine", "placement", "outside", "subscriber_reported"):
        assert defaulted[("results.json", f"results.trials[].{key}")]["records"] == trials
    assert "carried as average_bytes_per_event" in defaulted[("disk.json", "results.cases[].bytes_per_event")]["why"]
    assert ("sizing.json", "results.projections[]") in defaulted
    assert ("sizing.json", "results.projections[].replicas") in defaulted


def test_the_source_is_not_modified(source: Path) -> None:
    before = _tree(source)
    migrate_run(source, source.parent / "out")
    assert _tree(source) == before


# --- refusals: one line, nothing written -----------------------------------------------------------
def _refused(src: Path, dest: Path, match: str) -> str:
    siblings = _siblings(dest)
    with pytest.raises(ResultsFormatError, match=match) as caught:
        migrate_run(src, dest)
    message = str(caught.value)
    assert "\n" not in message
    assert _siblings(dest) == siblings  # no half-written destination, no temporary directory left
    return message


def test_an_existing_destination_is_refused_and_left_alone(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep")
    _refused(source, dest, r"taken: already exists")
    assert _tree(dest) == {"mine.txt": hashlib.sha256(b"keep").hexdigest()}


def test_a_file_of_an_unknown_format_is_refused(source: Path, tmp_path: Path) -> None:
    doc = _json(source / "disk.json") | {"format_version": 3}
    (source / "disk.json").write_text(json.dumps(doc))
    message = _refused(source, tmp_path / "out", r"disk\.json: format_version: 3 is neither results format 1 nor 2")
    assert not (tmp_path / "out").exists() and str(source / "disk.json") in message


@pytest.mark.parametrize("name, damage, match", [
    ("sizing.json", lambda text: text[: len(text) // 2], r"sizing\.json: cannot be read as JSON"),
    ("status.json", lambda text: "[]", r"status\.json: not a JSON object"),
    ("results.json", lambda text: json.dumps(json.loads(text) | {"results": []}), r"results\.json: results: missing"),
    ("extraction.json", lambda text: json.dumps(_poke(json.loads(text), "summary", 0, 7)),
     r"extraction\.json: results\.summary\[0\]: not an object"),
    ("results.json", lambda text: json.dumps(_poke(json.loads(text), "trials", 1, {"backend": "mysql"})),
     r"results\.json: results\.trials\[1\]: lacks label, which names the record"),
])
def test_a_malformed_file_is_refused_in_one_line(source: Path, tmp_path: Path, name: str, damage: Any,
                                                 match: str) -> None:
    path = source / name
    path.write_text(damage(path.read_text()))
    if name == "extraction.json":  # the part's own copy must say the same, else that is refused first
        sub = next((source / "extraction").iterdir())
        shutil.copyfile(path, sub / "results.json")
    _refused(source, tmp_path / "out", match)
    assert not (tmp_path / "out").exists()


def _poke(doc: dict[str, Any], key: str, index: int, value: Any) -> dict[str, Any]:
    doc["results"][key][index] = value
    return doc


def test_a_part_that_differs_from_its_copy_is_refused(source: Path, tmp_path: Path) -> None:
    sub = next((source / "disk").iterdir())
    doc = _json(sub / "results.json")
    doc["results"]["cases"] = doc["results"]["cases"][1:]
    (sub / "results.json").write_text(json.dumps(doc))
    _refused(source, tmp_path / "out", r"results\.json: differs from .*disk\.json")


def test_a_migrated_or_format_2_run_is_not_migrated_again(migrated: Path, tmp_path: Path) -> None:
    _refused(migrated, tmp_path / "again", r"already results format 2")


# --- the command -------------------------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hdbbench", "migrate", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


def test_the_command_prints_one_line_and_refuses_in_one_line(source: Path) -> None:
    done = _cli(str(source))
    dest = default_destination(source)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wrote {dest} (results format 2: ")
    assert "dropped: " in lines[0] and "status.json" in lines[0]
    assert (dest / MIGRATION_FILE).is_file()
    again = _cli(str(source), "--to", str(dest))
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.strip() == f"hdbbench: error: {dest}: already exists; give another destination with --to"

# SPDX-License-Identifier: Apache-2.0
"""``hdbbench migrate``: a real format-1 run directory (the default scenario run by the wave-1
hdbbench, trimmed: see tests/data/format1/README.md), and a format-2 run, become run directories of
today's format that the report and compare read like any other, with every figure carried exactly and
what each trial measured derived from its label (only there); refusals are one line and write nothing.
Pure Python: no server is started."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hdbbench.model.errors import ConfigError
from hdbbench.report import compare, criteria, data
from hdbbench.report.page import build_sections, write_report
from hdbbench.results.document import FORMAT_VERSION, ResultsFormatError, read_kind, read_results
from hdbbench.results.extraction import ExtractionResults
from hdbbench.results.migration import MIGRATION_FILE, default_destination, migrate_run
from tests.harness import REPO
from tests.harness.synthetic import SECTIONS, make_run, sections_of

FIXTURE = Path(__file__).resolve().parent / "data" / "format1" / "20261123T182641Z-default"


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


# --- the migrated run reads like a run of today's format --------------------------------------------------
def test_the_fixture_is_format_1_with_its_parts_in_run_directories_of_their_own() -> None:
    assert _json(FIXTURE / "results.json")["format_version"] == 1
    assert [p.name for p in (FIXTURE / "extraction").iterdir()] and [p.name for p in (FIXTURE / "disk").iterdir()]
    with pytest.raises(ConfigError, match=rf"results format 1, this hdbbench reads format {FORMAT_VERSION} only; "
                                          r"run `hdbbench "
                                          r"migrate .*` to convert"):
        write_report(FIXTURE)


def test_migrated_run_has_the_one_directory_layout(source: Path, migrated: Path) -> None:
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


def test_report_renders_the_migrated_run_with_the_sections_of_a_current_run(migrated: Path,
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
    # Every figure of every trial: the same values under the same keys (only fields format 3 lacks go), and
    # what the trial measured, which format 1 said in its label only.
    before = _json(source / "results.json")["results"]["trials"]
    after = _json(migrated / "results.json")["results"]["trials"]
    assert [t["label"] for t in after] == [t["label"] for t in before]
    derived = ("kind", "batch_size", "subscriber_kind")
    for old, new in zip(before, after):
        assert {k: v for k, v in old.items() if k in new} == {k: v for k, v in new.items() if k not in derived}
    identity = {t["label"]: (t["kind"], t["batch_size"], t["subscribers"], t["subscriber_kind"]) for t in after}
    assert identity["mysql_batch8192"] == ("batch_sweep", 8192, 1, "hdbbench-es")
    assert identity["timescaledb_subs2"] == ("subscriber_sweep", 1000, 2, "hdbbench-es")  # batch_size: lib_overrides
    assert identity["timescaledb_saturation"][0] == "saturation" and identity["mysql_throughput"][0] == "throughput"


def test_extraction_and_disk_figures_are_carried_exactly(source: Path, migrated: Path) -> None:
    old_summary = _json(source / "extraction.json")["results"]["summary"]
    assert _json(migrated / "extraction.json")["results"]["summary"] == old_summary
    record = old_summary[-1]
    read = [f for f in data.extraction_figures(read_kind(migrated / "extraction.json", ExtractionResults).results)
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
    assert (log["from_format"], log["to_format"], log["source"]) == (1, FORMAT_VERSION, str(source.resolve()))
    dropped = {(d["file"].split("/")[0], d["file"].rsplit("/", 1)[-1]) for d in log["dropped"]}
    assert {("extraction", "status.json"), ("disk", "status.json")} <= dropped
    defaulted = {(d["file"], d["key"]): d for d in log["defaulted"]}
    trials = len(_json(source / "results.json")["results"]["trials"])
    for key in ("subscriber_kind", "kind, batch_size", "device_engine", "placement", "outside", "subscriber_reported"):
        assert defaulted[("results.json", f"results.trials[].{key}")]["records"] == trials
    assert "derived from the trial label" in defaulted[("results.json", "results.trials[].kind, batch_size")]["why"]
    assert "carried as average_bytes_per_event" in defaulted[("disk.json", "results.cases[].bytes_per_event")]["why"]
    assert ("sizing.json", "results.projections[]") in defaulted
    assert ("sizing.json", "results.projections[].replicas") in defaulted


def test_the_source_is_not_modified(source: Path) -> None:
    before = _tree(source)
    migrate_run(source, source.parent / "out")
    assert _tree(source) == before


# --- a format-2 run: its trials said what they measured in their labels only ---------------------
def _as_format_2(run: Path) -> Path:
    """A run of today's producers written as format 2 wrote it: no kind or batch_size in the trials."""
    for name in ("results.json", "extraction.json", "disk.json", "sizing.json"):
        doc = _json(run / name) | {"format_version": 2}
        for trial in doc["results"].get("trials", []) if name == "results.json" else []:
            del trial["kind"], trial["batch_size"]
        (run / name).write_text(json.dumps(doc, indent=1))
    return run


def test_a_format_2_run_gets_what_each_trial_measured_from_its_label(tmp_path: Path) -> None:
    native = make_run(tmp_path / "native")
    source = _as_format_2(make_run(tmp_path / "old"))
    with pytest.raises(ConfigError, match=r"results format 2, this hdbbench reads format .* `hdbbench migrate"):
        write_report(source)
    dest = tmp_path / "new"
    log = migrate_run(source, dest)
    assert log.from_format == 2
    assert _json(dest / "results.json")["results"] == _json(native / "results.json")["results"]  # as if run today
    for name in ("extraction.json", "disk.json", "sizing.json"):  # the other files: the new version, nothing else
        # `created` is when each synthetic run was written: the two may fall in different seconds.
        migrated, today = (_json(where / name) | {"created": None} for where in (dest, native))
        assert migrated == today, name
    assert [(d.key, d.records) for d in log.defaulted] == [("results.trials[].kind, batch_size", 24)]
    page, reference = sections_of(write_report(dest).read_text()), sections_of(write_report(native).read_text())
    assert {key: _words(text) for key, text in page.items()} == {key: _words(text) for key, text in reference.items()}


def _words(section: str) -> str:
    """A report section's text without its plots (their element ids are numbered per page)."""
    return re.sub(r"<svg.*?</svg>", "", section, flags=re.S)


def test_a_run_migrated_before_keeps_its_earlier_log(migrated: Path, tmp_path: Path) -> None:
    """A format-2 run that was itself migrated from format 1 holds migration.json: it goes into the new log."""
    earlier = _json(migrated / MIGRATION_FILE)
    older = tmp_path / "older"
    shutil.copytree(migrated, older)
    _as_format_2(older)
    log = _json(migrate_run(older, tmp_path / "again") and tmp_path / "again" / MIGRATION_FILE)
    assert log["from_format"] == 2 and log["earlier"] == [earlier]
    assert write_report(tmp_path / "again").is_file()


def test_a_trial_whose_label_names_no_trial_kind_is_refused(tmp_path: Path) -> None:
    source = _as_format_2(make_run(tmp_path / "old"))
    doc = _json(source / "results.json")
    doc["results"]["trials"][3]["label"] = "mysql_warmup"
    (source / "results.json").write_text(json.dumps(doc))
    _refused(source, tmp_path / "out", r"results\.json: results\.trials\[3\]: label 'mysql_warmup' names no trial kind")


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
    doc = _json(source / "disk.json") | {"format_version": FORMAT_VERSION + 1}
    (source / "disk.json").write_text(json.dumps(doc))
    message = _refused(source, tmp_path / "out", rf"disk\.json: format_version: {FORMAT_VERSION + 1} is not a "
                                                 r"results format this hdbbench migrates \(1, 2\) or reads "
                                                 rf"\({FORMAT_VERSION}\)")
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


def test_a_migrated_or_current_run_is_not_migrated_again(migrated: Path, tmp_path: Path) -> None:
    _refused(migrated, tmp_path / "again", rf"already results format {FORMAT_VERSION}")


# --- the command -------------------------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hdbbench", "migrate", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


def test_the_command_prints_one_line_and_refuses_in_one_line(source: Path) -> None:
    done = _cli(str(source))
    dest = default_destination(source)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wrote {dest} (results format {FORMAT_VERSION}: ")
    assert "dropped: " in lines[0] and "status.json" in lines[0]
    assert (dest / MIGRATION_FILE).is_file()
    again = _cli(str(source), "--to", str(dest))
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.strip() == f"hdbbench: error: {dest}: already exists; give another destination with --to"

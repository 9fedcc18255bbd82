# SPDX-License-Identifier: Apache-2.0
"""The report's "As the archive ages" section (hdbbench.report.aging) on records built here: absent
without aging records, plots first, the load-order table beside Elettra's, planning words computed
from the records, "not measured" where a record is missing (the conventions of tests/test_report.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from hdbbench.model.records import read, write
from hdbbench.parts.aging.growth import growth_record
from hdbbench.parts.aging.history import Confinement
from hdbbench.report import plots
from hdbbench.report.aging import bytes_per_event
from hdbbench.report.page import ranking_section
from hdbbench.results.aging import AgingResults, GrowthInterval, HistoryRecord, LoadOrderRecord
from tests.harness.synthetic import run_with

MIB = 2 ** 20


def growth(backend: str, rates: list[float], memory: int | None = 256 * MIB) -> dict:
    """A growth trial at 20,000 events/s, 10 s intervals, 64 MiB more at each (320 bytes per event)."""
    intervals = [GrowthInterval(t_s=10.0 * (k + 1), stored_rate=r, event_age_p99_s=0.1 + k / 10, queue=k,
                                read_bytes=k * MIB, database_bytes=(k + 1) * 64 * MIB) for k, r in enumerate(rates)]
    record = growth_record(backend, "pk+2", 20_000.0, 10.0, Confinement(memory, "ssd"), intervals, lost=0)
    return json.loads(json.dumps(write(AgingResults(confinement=[], history=[], load_order=[], growth=[record]))))


def load(backend: str, order: str, seconds: float) -> LoadOrderRecord:
    return LoadOrderRecord(backend=backend, variant="pk+2", order=order, rows=1_000_000, attributes=2000,
                           seconds=seconds, rows_per_s=1e6 / seconds, history_bytes=1300 * MIB, cluster_seconds=4.0,
                           memory_limit_bytes=256 * MIB, storage_class="ssd")


def as_json(record: object) -> dict:
    return json.loads(json.dumps(write(record)))


def test_no_aging_records_no_section(tmp_path: Path) -> None:
    assert "aging" not in run_with(tmp_path)


def test_growth_curve_knee_and_planning_words(tmp_path: Path) -> None:
    fast = growth("postgresql", [20_000.0] * 8)
    slow = growth("mysql", [20_000.0] * 4 + [12_000.0] * 4)
    fast["growth"] += slow["growth"]
    fast["load_order"] = [as_json(load("postgresql", "pk", 10.0)), as_json(load("postgresql", "time", 40.0))]
    section = run_with(tmp_path, aging=fast)["aging"]
    assert section.index("<svg") < section.index("<table")          # plots first
    assert section.count("<svg") == 2
    assert "<details open><summary>Load order, beside Elettra" in section
    assert "5.7–130 (1 M)" in section                              # Elettra's PostgreSQL time order, 1 M rows
    # the knee of mysql at its 5th interval: 320 MiB, 1.25× its 256 MiB
    assert "mysql at 20,000 events/s (256 MiB of memory, ssd storage): below the offered rate from 320 MiB, " \
           "1.25× memory on." in section
    assert "postgresql at 20,000 events/s (256 MiB of memory, ssd storage): kept up to the end, 512 MiB." in section
    assert "took 40 s in time order against 10 s in primary-key order (4×)" in section
    assert "mysql: load order not measured." in section
    # 64 MiB per 10 s at 20,000 events/s, 512 MiB at the end: at least 80 s of archive
    assert ("archiving this mix at 20,000 events/s adds 540 GiB a day: it keeps up with 20,000 events/s for at "
            "least 1.33 minutes of archive.") in section
    assert ("Recommendation: For this mix, memory and storage, postgresql keeps up longest (at least 1.33 minutes "
            "of archive)") in section


def test_backends_that_all_kept_up_are_not_ranked_by_the_trials_end(tmp_path: Path) -> None:
    both = growth("postgresql", [20_000.0] * 8)
    both["growth"] += growth("timescaledb", [20_000.0] * 6)["growth"]
    both["growth"] += growth("mysql", [20_000.0] * 2 + [9_000.0] * 4)["growth"]
    sections = run_with(tmp_path, aging=both)
    assert "Recommendation: For this mix, memory and storage, postgresql and timescaledb kept up to the" in sections["aging"]
    assert "end (postgresql at least 1.33 minutes, timescaledb at least " in sections["aging"]
    assert "which keeps up longer lies beyond this trial" in sections["aging"]
    assert "keeps up longest" not in sections["aging"]


def test_backends_without_any_criterion_figure_are_not_ranked() -> None:
    empty = {"mysql": {"stored_median": None}, "postgresql": {"stored_median": None}}
    section = ranking_section(empty, None, "balanced", plots.Colours(list(empty)))
    assert section.missing is not None and section.missing.endswith("this run has none.")
    one = {**empty, "timescaledb": {"stored_median": 15_000.0}}
    section = ranking_section(one, None, "balanced", plots.Colours(list(one)))
    assert section.missing is not None and section.missing.endswith("them for timescaledb only.")


def test_a_missing_record_says_not_measured(tmp_path: Path) -> None:
    history = HistoryRecord(backend="mysql", variant="pk", key="k", database="d", attributes=2000, days=30.0,
                            rows=10, bytes=10, start="a", end="b", seconds=1.0, reused=False, clustered=False,
                            memory_limit_bytes=None, storage_class="ram", measured_read_iops=None)
    aging = growth("postgresql", [20_000.0] * 4)
    aging["history"] = [as_json(history)]
    section = run_with(tmp_path, aging=aging)["aging"]
    assert "mysql: growth at a fixed offered rate not measured." in section
    assert "Load order: not measured in this run." in section
    assert "GB per year per 1,000 attributes not measured." in section  # no growth trial record: no attribute count


def test_bytes_per_event_from_the_intervals() -> None:
    record = read(AgingResults, growth("postgresql", [20_000.0] * 3)).growth[0]
    # 64 MiB per 10 s at 20,000 events/s
    assert bytes_per_event(record, None) == 64 * MIB / 200_000
    assert bytes_per_event(replace(record, intervals=record.intervals[:1]), None) is None


def test_planning_fills_the_archive_at_the_scenario_load_rate() -> None:
    from hdbbench.report.aging import planning
    from hdbbench.results.trials import InsertionResults

    aging = read(AgingResults, growth("postgresql", [20_000.0] * 4 + [10_000.0] * 4))
    finding = planning(aging, InsertionResults(trials=[]).trials, load_rate=2_000.0)
    # knee at 320 MiB; 448 MiB grown over 1 M events stored (3 × 200,000 + 4 × 100,000) is 470 bytes per
    # event: 75.6 GiB a day at 2,000 events/s, so the knee is 320 MiB / 75.6 GiB a day = 5.95 minutes away
    assert "archiving this mix at 2,000 events/s adds 75.6 GiB a day" in finding.sentences[0]
    assert "it keeps up with 20,000 events/s for 5.95 minutes of archive." in finding.sentences[0]
    kept_up = planning(read(AgingResults, growth("postgresql", [20_000.0] * 4)), [], load_rate=2_000.0)
    assert kept_up.recommendation.startswith("No backend fell below its offered rate up to 256 MiB")

# SPDX-License-Identifier: Apache-2.0
"""The report's "Maintenance while archiving" section (hdbbench.report.maintenance) on records built here:
absent without maintenance records, the timelines first with each job's run shaded, one sentence per job
computed from its record (raised, kept, failed), the aggregate-vs-raw table and words, and every mismatch
named (the conventions of tests/test_report_aging.py)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from hdbbench.report.maintenance import job_words
from hdbbench.results.maintenance import (
    AggregateQuery,
    AggregateRefresh,
    MaintenanceRecord,
    MaintenanceResults,
    MaintenanceTrial,
    WindowFigures,
)
from tests.harness.synthetic import run_with

HEADER = ["t_s", "stored_rate", "event_age_p99_s", "queue", "lock_waiters"]


def window(start: float, end: float, rate: float | None, age: float | None, *, lock: float | None = 0.0,
           p95: float | None = None, lost: int = 0) -> WindowFigures:
    return WindowFigures(start_s=start, end_s=end, stored_rate=rate, event_age_p99_s=age, queue_max=12, lost=lost,
                         lock_wait_s=lock, query_p95_s=p95, queries=5 if p95 is not None else 0)


def job(backend: str, name: str, started: float, duration: float | None, before: WindowFigures,
        during: WindowFigures, *, lost: int = 0, error: str | None = None, detail: str = "",
        **extra: object) -> MaintenanceRecord:
    return MaintenanceRecord(backend=backend, job=name, label=f"{backend}_maintenance", started_s=started,
                             duration_s=duration, lost=lost, before=before, during=during, detail=detail,
                             error=error, **extra)  # type: ignore[arg-type]


def trial(backend: str, *, rows_match: bool = True, aggregates_equal: bool | None = True,
          lost: int = 0) -> MaintenanceTrial:
    return MaintenanceTrial(backend=backend, label=f"{backend}_maintenance", rate=2000.0, seconds=120.0,
                            database="hdbpp", emitted=240_000, stored=240_000 - lost, lost=lost,
                            rows_match=rows_match, aggregates_equal=aggregates_equal)


def query(backend: str, span: str, source: str, warm: float, cold: float | None = None,
          equal: bool = True) -> AggregateQuery:
    return AggregateQuery(backend=backend, span=span, days=30.0 if span == "month" else 1.0, source=source,
                          rows=720 if span == "month" else 24, cold_s=cold, warm_s=warm, equal=equal)


# A reorder on timescaledb that hurt; a retention on mysql that did not; a backup on mysql that failed.
REORDER = job("timescaledb", "reorder", 40.0, 40.0,
              window(0.0, 40.0, 2000.0, 0.020, p95=0.004), window(40.0, 80.0, 1200.0, 2.1, lock=12.0, p95=0.9),
              detail="reordered 3 chunks")
RETENTION = job("mysql", "retention", 30.0, 0.3, window(29.7, 30.0, 2000.0, 0.019), window(30.0, 30.3, 1990.0, 0.018),
                detail="dropped 1 partition of 412,000 rows")
BACKUP = job("mysql", "backup", 60.0, 5.0, window(55.0, 60.0, 2000.0, 0.019), window(60.0, 65.0, 2000.0, 0.02),
             error="mariadb-backup exited 1: no space left on device", bytes=3 * 2 ** 30)
AGGREGATES = job("timescaledb", "aggregates", 90.0, 8.0, window(82.0, 90.0, 2000.0, 0.02),
                 window(90.0, 98.0, 1990.0, 0.021), levels=[AggregateRefresh(level="1hour", seconds=2.5, rows=1440)])


def results(jobs: list[MaintenanceRecord], trials: list[MaintenanceTrial] | None = None,
            extraction: list[AggregateQuery] | None = None) -> MaintenanceResults:
    return MaintenanceResults(trials=trials if trials is not None else [trial("timescaledb"), trial("mysql")],
                              jobs=jobs, extraction=extraction or [])


def series(*labels: str, seconds: int = 120) -> dict[str, str]:
    """Each trial's maintenance series (maintenance/<label>.csv), 1 Hz rows on the trial's clock: 2,000
    events/s, 20 ms, a dip to 1,200 and 2.1 s in 40..80 s; the age not measured at t = 10 s (an empty cell)."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(HEADER)
    for t in range(seconds):
        hit = 40 <= t < 80
        writer.writerow([t, 1200 if hit else 2000, "" if t == 10 else (2.1 if hit else 0.02), 50 if hit else 3,
                         2 if hit else 0])
    return {f"maintenance/{label}.csv": text.getvalue() for label in labels}


def test_no_maintenance_records_no_section(tmp_path: Path) -> None:
    assert "maintenance" not in run_with(tmp_path)
    empty = MaintenanceResults(trials=[], jobs=[], extraction=[])
    assert "maintenance" not in run_with(tmp_path / "empty", maintenance=empty)


def test_timelines_first_with_each_job_shaded(tmp_path: Path) -> None:
    section = run_with(tmp_path, series("timescaledb_maintenance", "mysql_maintenance"),
                       maintenance=results([REORDER, AGGREGATES, RETENTION, BACKUP]))["maintenance"]
    assert section.index("<svg") < section.index("<details")      # plots first, tables folded away
    assert section.count("<svg") == 2                              # one timeline per trial
    assert "timescaledb (timescaledb_maintenance): stored rate and event age p99 per second" in section
    # the spans, named by their gid in the SVG (prefixed per figure by plots.to_svg): both panels each
    assert section.count('-job-span-reorder"') == 2
    assert section.count('-job-span-aggregates"') == 2
    assert section.count('-job-span-retention"') == 2
    assert section.count('-failed-span-backup"') == 2
    assert "-job-span-backup" not in section
    assert "<details><summary>Jobs (4)</summary>" in section
    assert "<details><summary>Trials the jobs ran in</summary>" in section


def test_a_trial_without_its_series_is_named(tmp_path: Path) -> None:
    section = run_with(tmp_path, series("timescaledb_maintenance"),
                       maintenance=results([REORDER, RETENTION]))["maintenance"]
    assert section.count("<svg") == 1
    assert ("maintenance/mysql_maintenance.csv is not in this run directory (or is empty): no timeline for mysql&#x27;s "
            "trial mysql_maintenance.") in section


def test_words_for_a_job_that_raised_the_age_one_that_did_not_and_one_that_failed(tmp_path: Path) -> None:
    assert job_words(REORDER) == (
        "reorder on timescaledb raised event age p99 from 20 ms to 2.1 s for 40 s, the stored rate fell from "
        "2,000 to 1,200 events/s, subscriber sessions waited on locks for 12 s and extraction p95 rose from 4 ms to "
        "900 ms; no loss.")
    assert job_words(RETENTION) == "retention on mysql kept event age p99 at 18 ms (19 ms before) for 0.3 s; no loss."
    assert job_words(BACKUP) == ("backup on mysql failed: mariadb-backup exited 1: no space left on device; the "
                                 "trial went on.")
    lossy = job("mysql", "optimize", 10.0, 150.0, window(0.0, 10.0, 2000.0, 0.02),
                window(10.0, 160.0, 1950.0, 0.029), lost=1234)
    assert job_words(lossy) == "optimize on mysql kept event age p99 at 29 ms (20 ms before) for 2.5 min; lost 1,234 events."
    unmeasured = job("postgresql", "vacuum_analyze", 5.0, 3.0, window(2.0, 5.0, None, None),
                     window(5.0, 8.0, None, None, lock=None))
    assert job_words(unmeasured) == "vacuum_analyze on postgresql ran with event age p99 not measured for 3 s; no loss."
    section = run_with(tmp_path, series("timescaledb_maintenance"),
                       maintenance=results([REORDER, RETENTION, BACKUP]))["maintenance"]
    assert "retention on mysql kept event age p99 at 18 ms (19 ms before) for 0.3 s; no loss." in section
    assert "backup on mysql failed: mariadb-backup exited 1: no space left on device; the trial went on." in section
    assert section.index("reorder on timescaledb raised") < section.index("retention on mysql kept")  # run order
    assert ("Recommendation: Schedule reorder on timescaledb away from the busiest archiving, or throttle it: it "
            "disturbed archiving at the trials&#x27; rates. Make backup on mysql work before relying on it.") in section
    # the jobs table: before / during, the failure and the bytes in the detail cell
    assert "<td>0.02 / 2.1</td>" in section and "<td>2,000 / 1,200</td>" in section
    assert "<td>wrote 3 GiB; failed: mariadb-backup exited 1: no space left on device</td>" in section


def test_a_harmless_run_says_so(tmp_path: Path) -> None:
    section = run_with(tmp_path, series("timescaledb_maintenance", "mysql_maintenance"),
                       maintenance=results([RETENTION, AGGREGATES]))["maintenance"]
    assert ("Recommendation: Every job ran without raising the event age, lowering the stored rate or losing events: "
            "at the trials&#x27; rates they can run while archiving.") in section
    assert "<td>reordered" not in section and "<td>1hour 2.5 s (1,440 rows)</td>" in section
    assert "Hourly aggregates against raw rows: not measured in this run." in section
    assert "⚠" not in section


def test_the_aggregate_against_raw_table_and_words(tmp_path: Path) -> None:
    extraction = [query("timescaledb", "day", "raw", 0.1), query("timescaledb", "day", "aggregate", 0.01),
                  query("timescaledb", "month", "raw", 2.3, cold=9.0),
                  query("timescaledb", "month", "aggregate", 0.01, cold=0.2),
                  query("mysql", "month", "raw", 4.0)]
    section = run_with(tmp_path, maintenance=results([AGGREGATES], extraction=extraction))["maintenance"]
    assert "<th>raw cold / warm (s)</th>" in section
    assert "<tr><td>timescaledb</td><td>month</td><td>30</td><td>9 / 2.3</td><td>0.2 / 0.01</td><td>230×</td>" \
           "<td>yes</td></tr>" in section
    assert "<tr><td>mysql</td><td>month</td><td>30</td><td>– / 4</td><td>–</td><td>–</td><td>yes</td></tr>" in section
    assert ("timescaledb: one attribute&#x27;s hourly mean/min/max over a month (30 days held): 2.3 s from raw rows, "
            "0.01 s from the aggregates (230×), warm; cold, 9 s against 0.2 s; results equal.") in section
    assert "mysql: one attribute&#x27;s hourly mean/min/max from the aggregates not measured." in section


def test_a_mismatch_is_named(tmp_path: Path) -> None:
    extraction = [query("timescaledb", "month", "raw", 2.3), query("timescaledb", "month", "aggregate", 0.01,
                                                                   equal=False)]
    trials = [trial("timescaledb", aggregates_equal=False), trial("mysql", rows_match=False, lost=7)]
    section = run_with(tmp_path, maintenance=results([AGGREGATES, RETENTION], trials, extraction))["maintenance"]
    assert ("⚠ timescaledb (timescaledb_maintenance): the aggregate tables differ from the same SQL over the raw "
            "rows after the aggregates job.") in section
    assert ("⚠ mysql (mysql_maintenance): the rows stored do not equal the events emitted (240,000 emitted, "
            "239,993 stored, 7 lost).") in section
    assert ("⚠ timescaledb: one attribute&#x27;s hourly mean/min/max over a month differs between the aggregate "
            "tables and the raw rows.") in section
    assert "(230×), warm; results DIFFER." in section
    assert "<td>NO</td>" in section
    assert "timescaledb (timescaledb_maintenance): the aggregate" not in run_with(
        tmp_path / "fine", maintenance=results([AGGREGATES], extraction=extraction[:1]))["maintenance"]

# SPDX-License-Identifier: Apache-2.0
"""Maintenance while archiving (hdbbench.parts.maintenance): the [maintenance] table, the window figures,
the records, and `hdbbench run` of the shipped maintenance-small scenario on all three backends
(every job kind each one has, on an aged history, while a subscriber archives), checked for loss,
intact rows and aggregates equal to the raw rows' SQL; and a backup into a full file system, reported
in one line while the trial goes on."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from hdbbench.model.errors import ConfigError
from hdbbench.model.records import read, write
from hdbbench.model.sampling import TimeSeries
from hdbbench.parts.maintenance.jobs import jobs_of
from hdbbench.parts.maintenance.part import JOB_KINDS, MaintenancePart
from hdbbench.parts.maintenance.windows import Query, window
from hdbbench.results.document import read_trials
from hdbbench.results.maintenance import MaintenanceRecord, MaintenanceResults, WindowFigures
from hdbbench.scenario.scenario import load_scenario, parse_scenario
from hdbbench.subscribers.launcher import DEFAULT_BINARY
from tests.harness import REPO
from tests.harness.runs import PROFILES, nothing_left, part_scenario, run

SMALL = REPO / "scenarios" / "maintenance-small.toml"
PROFILE = "maintenance-devdouble"


# --- the [maintenance] table ----------------------------------------------------------------------
def test_an_empty_maintenance_table_runs_every_job_each_backend_has() -> None:
    scenario = parse_scenario(part_scenario("maintenance", {}, ["timescaledb", "mysql"], PROFILE), Path("t.toml"))
    assert scenario.maintenance == MaintenancePart() and scenario.maintenance.jobs == JOB_KINDS
    assert set(jobs_of("timescaledb")) == {"reorder", "retention", "aggregates", "vacuum_analyze", "backup"}
    assert set(jobs_of("postgresql")) == set(jobs_of("timescaledb"))
    assert set(jobs_of("mysql")) == {"retention", "partition_rotation", "aggregates", "optimize", "backup"}
    assert jobs_of("null") == {}


def test_the_shipped_scenarios_run_every_job_kind() -> None:
    small, full = load_scenario(SMALL), load_scenario(REPO / "scenarios" / "maintenance.toml")
    assert small.backends == ("timescaledb", "mysql") and small.history is not None
    assert set(full.backends) == {"timescaledb", "postgresql", "mysql"}
    for scenario in (small, full):
        assert scenario.maintenance is not None
        covered = {job for backend in scenario.backends for job in jobs_of(backend)}
        assert covered == set(JOB_KINDS)


@pytest.mark.parametrize(("maintenance", "backends", "words"), [
    ({"jobs": ["reordr"]}, ["timescaledb"], "[maintenance] jobs: names an unknown job 'reordr'; did you mean 'reorder'?"),
    ({"jobs": ["partition_rotation"]}, ["timescaledb", "postgresql"],
     "[maintenance] jobs: 'partition_rotation' applies to none of the scenario's backends (timescaledb, postgresql)"),
    ({"jobs": ["backup", "backup"]}, ["mysql"], "[maintenance] jobs: names 'backup' twice"),
    ({"gap_s": 0.5}, ["mysql"], "[maintenance] gap_s: must be >= 2, got 0.5"),
    ({"gap": 3}, ["mysql"], "[maintenance] gap: unknown key; did you mean 'gap_s'?"),
])
def test_a_bad_maintenance_key_is_refused_in_one_line_naming_it(maintenance: dict, backends: list[str],
                                                                words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_scenario(part_scenario("maintenance", maintenance, backends, PROFILE), Path("t.toml"))
    assert str(caught.value) == f"t.toml: {words}"


# --- the window figures -------------------------------------------------------------------------------
def _series() -> TimeSeries:
    """1 Hz: 1,000 rows/s stored, except 2 s held up at t = 5..7 (the job); the age and queue peak after."""
    series = TimeSeries()
    stored = 0.0
    for t in range(12):
        stored += 0.0 if t in (5, 6) else 1000.0
        series.rows.append({"t_s": float(t), "sub.RowsStoredNumber": stored,
                            "sub.EventAgeAtCommitP99": 2.0 if t == 8 else 0.02, "sub.AttributePendingNumber": 2000.0
                            if t == 7 else 10.0, "sub.LostEventNumber": 5.0 if t >= 6 else 0.0,
                            "locks.lock_waiters": 1.0 if t in (5, 6) else 0.0})
    return series


def test_a_window_reads_the_stored_rate_and_lag_from_outside_where_the_series_has_them() -> None:
    """The database's counter (any kind) wins over the subscribers' RowsStoredNumber; the visibility lag
    is read as the age is. Here the counter says 500 rows/s while the subscriber claims 1,000."""
    series = _series()
    for row in series.rows:
        row["db.rows_inserted"] = 500.0 * row["t_s"]
        row["vis.lag_s"] = 3.0 if row["t_s"] == 8 else 0.05
    before, during = window(series, [], 1.0, 4.0), window(series, [], 4.0, 7.0)
    assert before.stored_rate == during.stored_rate == 500.0
    assert (before.stored_from, during.stored_from) == ("database", "database")
    assert (before.visibility_lag_s, during.visibility_lag_s) == (0.05, 3.0)
    assert before.lag == ("visibility lag", 0.05)
    # A job's window where the counter counts the job's own writes: the subscribers' count instead.
    assert window(series, [], 4.0, 7.0, counter_counts_the_job=True).stored_from == "subscriber"
    plain = window(_series(), [], 1.0, 4.0)
    assert plain.stored_from == "subscriber" and plain.visibility_lag_s is None
    assert plain.lag == ("event age p99", 0.02)


def test_a_window_reads_rate_age_queue_loss_locks_and_queries_from_the_samples() -> None:
    queries = [Query(1.0, 0.01), Query(2.0, 0.02), Query(4.5, 2.5), Query(9.0, 0.01)]
    before = window(_series(), queries, 1.0, 4.0)
    during = window(_series(), queries, 4.0, 7.0)
    assert before.stored_rate == 1000.0 and during.stored_rate == pytest.approx(1000.0 / 3)
    assert (before.event_age_p99_s, during.event_age_p99_s) == (0.02, 2.0)  # the age lags the job by 2 s
    assert (before.queue_max, during.queue_max) == (10, 2000)
    assert (before.lost, during.lost) == (0, 5) and (before.lock_wait_s, during.lock_wait_s) == (0.0, 2.0)
    assert (before.queries, during.queries) == (2, 1) and during.query_p95_s == 2.5
    short = window(_series(), [], 5.2, 5.4)  # shorter than a sample period: the samples around it
    assert short.stored_rate == 0.0 and short.query_p95_s is None and short.queries == 0


def test_maintenance_records_are_read_back_exactly_as_written() -> None:
    figures = WindowFigures(start_s=1.0, end_s=4.0, stored_rate=1000.0, event_age_p99_s=0.02, queue_max=10, lost=0,
                            lock_wait_s=0.0, query_p95_s=None, queries=0)
    job = MaintenanceRecord(backend="mysql", job="backup", label="mysql_maintenance", started_s=4.0, duration_s=None,
                            lost=0, before=figures, during=figures, detail="failed", error="RuntimeError: disk full")
    results = MaintenanceResults(trials=[], jobs=[job], extraction=[])
    assert read(MaintenanceResults, json.loads(json.dumps(write(results)))) == results
    assert "bytes" not in write(results)["jobs"][0]


# --- end to end on real servers -------------------------------------------------------------------
def _run_small(tmp_path: Path, state_dir: Path, **changes: Any) -> Path:
    """scenarios/maintenance-small.toml as shipped, with `changes` over its keys (shorter waits here)."""
    document = tomllib.loads(SMALL.read_text())
    for key, value in changes.items():
        table, _, name = key.rpartition(".")
        where = document[table] if table else document
        if value is None:
            where.pop(name, None)
        else:
            where[name] = value
    return run(parse_scenario(document, SMALL), state_dir, tmp_path)


def _maintenance(run_dir: Path) -> MaintenanceResults:
    _, insertion = read_trials(run_dir / "results.json")
    assert insertion.maintenance is not None
    return insertion.maintenance


@pytest.mark.subscriber
def test_every_job_on_every_backend_while_archiving_loses_nothing_and_keeps_the_data_intact(
        tmp_path: Path, test_state_dir: Path, stack_endpoints: object) -> None:
    backends = ["timescaledb", "postgresql", "mysql"]
    # The shipped profile with 25 attributes instead of 100: a quarter of the history's rows (still 30
    # days, over a chunk and a month bound) for the jobs to reorder, drop, aggregate, optimize and back up.
    profile = tmp_path / "maintenance-devdouble-25.toml"
    profile.write_text((PROFILES / f"{PROFILE}.toml").read_text().replace("count = 100\n", "count = 25\n"))
    run_dir = _run_small(tmp_path, test_state_dir, backends=backends, **{"devices.profile": str(profile),
        "stack.memory": None, "history.days": 30, "maintenance.rate": 500, "maintenance.warmup_s": 2,
        "maintenance.gap_s": 2, "maintenance.settle_s": 0})  # the shortest windows the part allows
    results = _maintenance(run_dir)
    assert [t.backend for t in results.trials] == backends
    for trial in results.trials:
        assert trial.error is None, trial.error
        assert trial.emitted > 0 and trial.lost == 0 and trial.stored == trial.emitted and trial.rows_match
        assert trial.aggregates_equal is True
        ran = [r for r in results.jobs if r.backend == trial.backend]
        assert [r.job for r in ran] == [j for j in JOB_KINDS if j in jobs_of(trial.backend)]
        for record in ran:
            assert record.error is None, (record.job, record.error)
            assert record.duration_s is not None and record.duration_s > 0 and record.lost == 0
            assert record.before.end_s == record.started_s and record.during.start_s == record.started_s
            assert record.before.stored_rate is not None and record.before.stored_rate > 0
            # From outside, as for every kind: the database's counter and the probes' visibility lag.
            # MariaDB's counter is server-wide and counts a job's own rewrites: its job windows take ours.
            assert record.before.stored_from == "database"
            assert record.during.stored_from == ("subscriber" if trial.backend == "mysql" else "database")
            assert record.before.visibility_lag_s is not None and record.during.visibility_lag_s is not None
        backup = next(r for r in ran if r.job == "backup")
        assert backup.bytes is not None and backup.bytes > 1 << 20
        levels = next(r for r in ran if r.job == "aggregates").levels
        assert levels is not None and [x.level for x in levels] == ["1min", "10min", "1hour", "8hour", "1day"]
        assert levels[0].rows > 0
        # The history held 30 days: retention removed something older than the trial.
        assert "nothing" not in next(r for r in ran if r.job == "retention").detail
        queries = [q for q in results.extraction if q.backend == trial.backend]
        assert {(q.span, q.source) for q in queries} == {(s, src) for s in ("day", "week", "month", "year")
                                                         for src in ("raw", "aggregate")}
        assert all(q.equal and q.rows > 0 for q in queries)
    with open(run_dir / "maintenance" / "timescaledb_maintenance.csv") as timeline:
        assert timeline.readline().strip() == "t_s,stored_rate,event_age_p99_s,queue,lock_waiters,visibility_lag_s"
    nothing_left(test_state_dir, "maintenance", [t.label for t in results.trials])


@pytest.mark.subscriber
def test_a_backup_into_a_full_file_system_fails_in_one_line_and_the_trial_goes_on(
        tmp_path: Path, test_state_dir: Path, stack_endpoints: object) -> None:
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(full)], check=True)
    try:
        run_dir = _run_small(tmp_path, test_state_dir, backends=["mysql"], history=None, **{"stack.memory": None,
            "maintenance.jobs": ["backup", "optimize"], "maintenance.backup_dir": str(full), "maintenance.rate": 300,
            "maintenance.warmup_s": 1, "maintenance.gap_s": 2, "maintenance.settle_s": 0})
    finally:
        subprocess.run(["umount", str(full)], check=True)
    results = _maintenance(run_dir)
    backup, optimize = results.jobs
    assert backup.error is not None and "\n" not in backup.error and "mariadb-backup exited" in backup.error
    assert optimize.error is None and optimize.duration_s is not None  # the trial went on
    (trial,) = results.trials
    assert trial.error is None and trial.lost == 0 and trial.rows_match and trial.aggregates_equal is None
    nothing_left(test_state_dir, "maintenance", [t.label for t in results.trials])


@pytest.mark.subscriber
def test_a_capped_kinds_maintenance_trial_is_measured_from_outside_and_fails(
        tmp_path: Path, test_state_dir: Path, stack_endpoints: object) -> None:
    """A contestant that fails: the capped kind (ours in HDB++ strict mode, which publishes only HDB++'s
    statistics, as a real hdbpp-es; writes capped below the offered rate, a small queue). Its stored
    rate and visibility lag still come from outside, and the events it could not keep are lost."""
    kinds = [{"name": "capped", "binary": str(DEFAULT_BINARY),
              "lib_configuration": {"hdbpp_strict": "1", "max_events_per_s": "200", "queue_capacity": "200"}}]
    run_dir = _run_small(tmp_path, test_state_dir, backends=["timescaledb"], history=None,
                         **{"stack.memory": None, "subscribers.kinds": kinds, "maintenance.jobs": ["vacuum_analyze"],
                            "maintenance.rate": 600, "maintenance.warmup_s": 2, "maintenance.gap_s": 2,
                            "maintenance.settle_s": 0})
    results = _maintenance(run_dir)
    (trial,) = results.trials
    (job,) = results.jobs
    assert trial.error is None and job.error is None, (trial.error, job.error)
    assert trial.lost > 0 and not trial.rows_match  # it failed, and the accounting says so
    for figures in (job.before, job.during):
        assert figures.stored_from == "database"
        assert figures.stored_rate is not None and figures.stored_rate > 0  # over 2 s at least
        assert figures.visibility_lag_s is not None
        assert figures.event_age_p99_s is None  # ours only: the strict kind does not publish it
    nothing_left(test_state_dir, "maintenance", [t.label for t in results.trials])

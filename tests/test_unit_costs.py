# SPDX-License-Identifier: Apache-2.0
"""Unit costs (hdbbench.trials.costs): what one stored event cost in a trial or a saturation step.

The pure function on a synthetic series gives exact numbers; the block-layer stat reader parses the
kernel's line; the records round-trip with and without the new fields; and the session's run of
scenarios/small.toml (tests/conftest.py `small_run_dir`) carries them in every trial and step. No rate
or time is asserted: only that the figures are there and positive where the counters must move."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hdbbench.model.records import read, write
from hdbbench.model.sampling import TimeSeries, process_probe
from hdbbench.results.document import read_trials
from hdbbench.results.trials import SearchStep, ServerWrites, TrialSummary, UnitCosts
from hdbbench.trials import outside as db_side
from hdbbench.trials.costs import increase, unit_costs, without_processes
from hdbbench.trials.writes import DEVICE_WORDS, LOOP_WORDS, SECTOR_BYTES, device_stat_path, parse_block_stat
from tests.harness.synthetic import synthetic_trial


# --- the pure function --------------------------------------------------------------------------
def _series(rows: list[dict[str, float]]) -> TimeSeries:
    columns = list(dict.fromkeys(k for row in rows for k in row if k != "t_s"))
    return TimeSeries(columns=columns, rows=rows)


def _synthetic() -> tuple[TimeSeries, tuple[list[float], list[float]]]:
    """Six samples, 1 s apart: 200 events/s stored after the first second; every counter linear."""
    rows = []
    for t in range(6):
        rows.append({"t_s": float(t), "db.rows_inserted": 0.0 if t == 0 else 100.0 + 200.0 * (t - 1),
                     "proc_subscribers.cpu_s": 0.1 * t, "proc_subscribers.rss_bytes": 1000.0 + t,
                     "proc_postgres.cpu_s": 0.05 * t, "proc_postgres.rss_bytes": [5, 1, 4, 2, 3, 9][t] * 1e6,
                     "proc_postgres.write_bytes": 8192.0 * t,
                     "io_postgres.write_ops": 10.0 * t, "io_postgres.write_bytes": 4096.0 * t,
                     "log.bytes": 1000.0 + 400.0 * t, "machine.work_ms": [9, 2, 3, 2, 4, 2][t]})
    series = _series(rows)
    return series, series.column(db_side.COUNTER_COLUMN)


def test_unit_costs_of_a_synthetic_series_are_exact() -> None:
    series, counter = _synthetic()
    costs = unit_costs(series, counter, 1.0, 5.0, attributes=40, server="postgres", writes_from="device")
    assert costs is not None
    # Window: samples 1..5, 4 s, 800 events.
    assert costs.window_s == 4.0 and costs.stored_rate == 200.0 and costs.attributes == 40
    assert costs.cpu_cores == pytest.approx({"subscribers": 0.1, "postgres": 0.05})
    assert costs.cpu_us_per_event == pytest.approx({"subscribers": 500.0, "postgres": 250.0})
    assert costs.memory_bytes == {"subscribers": 1003.0, "postgres": 3e6}  # medians over samples 1..5
    assert costs.machine_work_ms == 2.0
    writes = costs.writes["postgres"]
    assert list(costs.writes) == ["postgres"]
    # Bytes from the process tree (not confined), requests from the device, log from log.bytes.
    assert writes.write_bytes_per_s == pytest.approx(8192.0)
    assert writes.write_bytes_per_event == pytest.approx(8192.0 * 4 / 800)
    assert writes.write_iops == pytest.approx(10.0) and writes.write_ios_per_event == pytest.approx(0.05)
    assert writes.log_bytes_per_s == pytest.approx(400.0) and writes.log_bytes_per_event == pytest.approx(2.0)
    assert DEVICE_WORDS in writes.source and "process tree" in writes.source


def test_a_confined_server_takes_its_bytes_from_its_loop_device() -> None:
    series, counter = _synthetic()
    costs = unit_costs(series, counter, 1.0, 5.0, attributes=40, server="postgres", writes_from="loop")
    assert costs is not None
    writes = costs.writes["postgres"]
    assert writes.write_bytes_per_s == pytest.approx(4096.0) and writes.write_iops == pytest.approx(10.0)
    assert LOOP_WORDS in writes.source and "process tree" not in writes.source


def test_missing_or_falling_counters_give_none_never_a_wrong_figure() -> None:
    series, counter = _synthetic()
    for row in series.rows:  # another host: no io_ probe, no log, no process tree
        for key in ("io_postgres.write_ops", "io_postgres.write_bytes", "log.bytes", "proc_postgres.write_bytes"):
            row.pop(key)
    series.rows[5]["proc_subscribers.cpu_s"] = 0.0  # a process that ended took its count with it
    costs = unit_costs(series, counter, 1.0, 5.0, attributes=40, server="postgres", writes_from=None)
    assert costs is not None and "subscribers" not in costs.cpu_cores
    writes = costs.writes["postgres"]
    assert (writes.write_bytes_per_s, writes.write_iops, writes.log_bytes_per_event) == (None, None, None)
    assert "not readable here" in writes.source
    assert unit_costs(series, counter, 5.0, 5.0, attributes=40) is None  # one sample: no window
    assert unit_costs(series, ([0.0, 1.0], [7.0, 7.0]), 0.0, None, attributes=40) is None  # nothing stored
    stripped = without_processes(costs)
    assert stripped is not None and stripped.cpu_cores == {} and stripped.writes == costs.writes


def test_a_probe_missing_a_sample_is_read_between_its_neighbours() -> None:
    series, _ = _synthetic()
    del series.rows[3]["log.bytes"]
    assert increase(series, "log.bytes", 1.0, 3.0) == pytest.approx(800.0)
    assert increase(series, "log.bytes", 1.0, 6.0) is None  # past the last sample


# --- the counters read here ---------------------------------------------------------------------
def test_block_stat_line_parses_writes_and_sectors() -> None:
    line = "   95014   12006  6147506   39288   270121  197834 12346642 1063012   0  397936 1117156  0 0 0 0  3621  14855\n"
    assert parse_block_stat(line) == (270121, 12346642 * SECTOR_BYTES)
    with pytest.raises(ValueError):
        parse_block_stat("1 2 3")


def test_the_device_holding_a_directory_is_found_and_read(tmp_path: Path) -> None:
    stat = device_stat_path(tmp_path)
    if stat is None:
        pytest.skip(f"{tmp_path} is on a file system without a block device (tmpfs, overlayfs)")
    ops, written = parse_block_stat(stat.read_text())
    assert ops >= 0 and written >= 0


def test_process_probe_sums_write_bytes_of_its_tree() -> None:
    found = process_probe([os.getpid()])()
    assert found["write_bytes"] >= 0 and found["cpu_s"] > 0


# --- the records --------------------------------------------------------------------------------
COSTS = UnitCosts(stored_rate=480.5, window_s=4.0, attributes=40, machine_work_ms=2.1,
                  cpu_cores={"subscribers": 0.1, "postgres": 0.05}, cpu_us_per_event={"subscribers": 208.1},
                  memory_bytes={"postgres": 3e8},
                  writes={"postgres": ServerWrites(write_bytes_per_s=1e5, write_bytes_per_event=208.1,
                                                   write_iops=12.0, write_ios_per_event=0.025,
                                                   log_bytes_per_s=None, log_bytes_per_event=None,
                                                   source="words")})


def test_records_round_trip_with_and_without_unit_costs() -> None:
    older = synthetic_trial("timescaledb", "throughput", 500.0, "throughput")
    assert "unit_costs" not in older
    trial = read(TrialSummary, older)
    assert trial.unit_costs is None and dict(write(trial)) == older
    newer = dict(older, unit_costs=write(COSTS))
    again = read(TrialSummary, newer)
    assert again.unit_costs == COSTS and dict(write(again)) == newer
    step = SearchStep(offered_rate=500.0, unit_costs=COSTS)
    assert read(SearchStep, write(step)) == step
    assert "unit_costs" not in write(SearchStep(offered_rate=500.0))


# --- the small run --------------------------------------------------------------------------------
SERVERS = {"timescaledb": "postgres", "mysql": "mariadb"}  # the small scenario's backends, their servers


@pytest.mark.subscriber
def test_the_small_runs_trials_and_steps_carry_unit_costs(small_run_dir: Path) -> None:
    trials = [t for t in insertion_trials_all(small_run_dir) if t.same_as is None]
    assert {t.backend for t in trials} == set(SERVERS)
    for t in trials:
        server = SERVERS[t.backend]
        assert t.unit_costs is not None, t.label
        costs = t.unit_costs
        assert costs.stored_rate > 0 and costs.attributes > 0, t.label
        assert costs.cpu_us_per_event["subscribers"] > 0 and costs.cpu_us_per_event[server] > 0, t.label
        writes = costs.writes[server]
        assert writes.write_bytes_per_event is not None and writes.write_bytes_per_event > 0, t.label
        assert writes.log_bytes_per_event is not None and writes.log_bytes_per_event > 0, t.label
        if t.saturation is not None:
            assert all(s.unit_costs is not None and s.unit_costs.cpu_us_per_event.get(server)
                       for s in t.saturation.steps), t.label
    assert any(t.saturation is not None for t in trials)
    series = (small_run_dir / "series").glob("*.csv")
    header = next(iter(series)).read_text().splitlines()[0].split(",")
    assert db_side.LOG_COLUMN in header and any(c.endswith(".write_bytes") for c in header)


def insertion_trials_all(run_dir: Path) -> list[TrialSummary]:
    """Every trial of the run (tests.harness.runs.insertion_trials keeps one per backend and kind)."""
    _, results = read_trials(run_dir / "results.json")
    return list(results.trials)

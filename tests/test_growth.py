# SPDX-License-Identifier: Apache-2.0
"""The growth trial (hdbbench.parts.aging.growth): the knee on synthetic series, and one short real trial on
PostgreSQL from an empty database to a small size (no memory budget: `until_bytes`), through
`hdbbench run` as a scenario asks for it, read back from results.json."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from hdbbench.model.sampling import TimeSeries
from hdbbench.parts.aging.growth import Mark, growth_record, intervals_of, knee_bytes, knee_index
from hdbbench.parts.aging.history import Confinement, confinement_of
from hdbbench.results.aging import GrowthInterval, ServerConfinement
from hdbbench.results.document import read_trials
from hdbbench.scenario.scenario import load_scenario
from tests.harness.runs import run as harness_run
from tests.harness.servers import REPO

OFFERED = 1000.0


def intervals(rates: list[float | None]) -> list[GrowthInterval]:
    """One interval per rate, the database 1 MB bigger at each."""
    return [GrowthInterval(t_s=10.0 * (i + 1), stored_rate=r, event_age_p99_s=None, queue=None, read_bytes=None,
                           database_bytes=(i + 1) * 1_000_000) for i, r in enumerate(rates)]


# --- the knee ------------------------------------------------------------------------------------
def test_a_backend_that_keeps_up_has_no_knee() -> None:
    assert knee_index([1000.0, 990.0, 1004.0, 998.0, 970.0, 1001.0], OFFERED) is None
    assert knee_bytes(intervals([1000.0] * 8), OFFERED) is None


def test_falling_behind_from_interval_k_on_is_a_knee_at_k_size() -> None:
    rates: list[float | None] = [1000.0] * 5 + [700.0, 650.0, 600.0, 640.0, 500.0]
    assert knee_index(rates, OFFERED) == 5
    assert knee_bytes(intervals(rates), OFFERED) == 6_000_000


def test_one_slow_interval_is_not_a_knee() -> None:
    assert knee_index([1000.0, 1000.0, 300.0, 1000.0, 1000.0], OFFERED) is None
    assert knee_index([1000.0] * 5 + [300.0], OFFERED) is None       # nor one slow last interval
    assert knee_index([1000.0] * 5 + [300.0, 300.0], OFFERED) is None  # nor a run shorter than the window


def test_within_the_tolerance_is_keeping_up_and_a_missing_rate_is_no_evidence() -> None:
    assert knee_index([960.0] * 6, OFFERED) is None       # 4 % below: within 5 %
    assert knee_index([940.0] * 6, OFFERED) == 0          # 6 % below from the start
    assert knee_index([1000.0, None, 1000.0, 1000.0], OFFERED) is None


def test_the_record_puts_the_knee_in_multiples_of_the_memory_limit() -> None:
    rates: list[float | None] = [1000.0] * 4 + [500.0] * 4
    record = growth_record("postgresql", "pk+2", OFFERED, 10.0, Confinement(2_000_000, "ssd"), intervals(rates), lost=0)
    assert (record.knee_bytes, record.knee_memory_ratio, record.final_bytes) == (5_000_000, 2.5, 8_000_000)


def test_intervals_from_the_series_and_the_marks() -> None:
    series = TimeSeries(columns=["db.stored_events", "sub.AttributePendingNumber"],
                        rows=[{"t_s": t, "db.stored_events": 100.0 * t, "sub.AttributePendingNumber": 3.0}
                              for t in range(0, 21)])
    marks = [Mark(0.0, 10, 5), Mark(10.2, 20, 7), Mark(20.4, 30, None)]
    found = intervals_of(series, marks, series.column("db.stored_events"))
    assert [i.stored_rate for i in found] == [100.0, 100.0]
    assert [(i.queue, i.read_bytes, i.database_bytes) for i in found] == [(3, 2, 20), (3, None, 30)]


def test_the_budget_comes_from_the_confinement_else_the_scenario() -> None:
    confined = ServerConfinement(server="postgres", memory_budget_bytes=2 ** 28, memory_limit_bytes=2 ** 28,
                                 memory_rule=None, buffers={}, storage_class="ssd", read_iops_limit=None,
                                 write_iops_limit=None, read_bps_limit=None, write_bps_limit=None)
    assert confinement_of([confined], "postgres", 5) == Confinement(2 ** 28, "ssd")
    assert confinement_of([confined], "mariadb", 5) == Confinement(5, "ram")
    assert confinement_of(None, "postgres") == Confinement(None, "ram")


# --- a real growth trial -------------------------------------------------------------------------
SCENARIO = """
name = "growth-test"
seed = 3
backends = ["postgresql"]
[devices]
profile = "{profile}"
[load]
rate = 2000
[measurements]
throughput = false
growth = {{ rate = 4000, until_bytes = "{until}", interval_s = 2, max_duration_s = 24 }}
"""


@pytest.mark.subscriber
def test_a_growth_trial_on_postgresql_records_its_intervals(test_state_dir: Path, stack_endpoints: object,
                                                             tmp_path: Path) -> None:
    path = tmp_path / "growth.toml"
    path.write_text(SCENARIO.format(profile=REPO / "devices/profiles/insertion-devdouble.toml", until="14MiB"))
    run = harness_run(path, test_state_dir, tmp_path)

    _, results = read_trials(run / "results.json")
    assert [t.kind for t in results.trials] == ["growth"]
    assert results.aging is not None and len(results.aging.growth) == 1
    record = results.aging.growth[0]
    assert (record.backend, record.offered_rate, record.memory_limit_bytes) == ("postgresql", 4000.0, None)
    assert len(record.intervals) >= 2
    sizes = [i.database_bytes for i in record.intervals]
    assert all(s is not None for s in sizes) and sizes == sorted(sizes) and sizes[-1] > sizes[0]
    assert record.final_bytes == sizes[-1]
    assert record.lost == 0 and results.trials[0].accounting.lost == 0
    assert all(i.stored_rate is not None and i.stored_rate > 0 for i in record.intervals)
    with (run / "growth" / "postgresql_growth.csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(record.intervals)


def test_the_plan_puts_the_growth_trial_last_per_backend(tmp_path: Path) -> None:
    from hdbbench.scenario.plan import RunOptions, plan_run

    path = tmp_path / "growth.toml"
    path.write_text(SCENARIO.format(profile=REPO / "devices/profiles/insertion-devdouble.toml", until="2GiB")
                    .replace("throughput = false", "throughput = true"))
    plan = plan_run(load_scenario(path), RunOptions(state_dir=tmp_path / "state", runs_root=tmp_path / "runs"))
    assert [t.trial_kind for t in plan.trials] == ["throughput", "growth"]
    grown = plan.trials[-1]
    assert grown.growth is not None and (grown.rate, grown.growth.until_bytes) == (4000.0, 2 * 2 ** 30)
    assert (grown.duration_s, grown.warmup_s) == (24.0, 2.0)
    assert any("growth at 4000 events/s from an empty database until 10× the memory budget (without one 2 GiB)"
               in line for line in plan.lines())

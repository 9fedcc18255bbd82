# SPDX-License-Identifier: Apache-2.0
"""Progress as plain lines when not on a terminal (CI logs), and the one line of a finished trial."""

from __future__ import annotations

import dataclasses
import io
import math

from rich.console import Console

from hdbbench.results.trials import (
    Accounting,
    AgeFigures,
    DatabaseBytes,
    LostByReason,
    PendingAge,
    PendingEvents,
    SaturationSearch,
    StoredRate,
    TrialSummary,
)
from hdbbench.trials import progress


def test_plain_lines_carry_the_trial_its_figures_and_time_left(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    monkeypatch.setattr(progress, "PLAIN_PERIOD_S", 0.0)
    with progress.TrialProgress(console) as bar:
        assert not bar.live
        bar.new_trial("timescaledb_throughput")
        bar("timescaledb timescaledb_throughput", 0.25, {"t_s": 1.0, "db.rows_inserted": 1000.0})
        bar("timescaledb timescaledb_throughput", 0.5,
            {"t_s": 2.0, "db.rows_inserted": 6000.0, "sub.AttributePendingNumber": 12.0, "vis.lag_s": 0.03})
    lines = out.getvalue().splitlines()
    assert lines[0] == "trial timescaledb_throughput: started"
    assert "stored 5,000/s  queue 12  lag 0.03 s" in lines[-1] and "left]" in lines[-1]


def test_a_phase_says_each_stage_and_its_share_done_with_time_left(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    monkeypatch.setattr(progress, "PLAIN_PERIOD_S", 3600.0)  # lines within the period: new stages only
    with progress.PhaseProgress(console, "disk usage") as phase:
        phase("timescaledb pk: loading", 0.0)
        phase("timescaledb pk: scalar_devdouble_ro measured", 0.1)
        phase("mysql pk: loading", 0.1)
        phase("mysql pk: scalar_devdouble_ro measured", 0.5)
    lines = out.getvalue().splitlines()
    assert lines[0] == "disk usage: started"
    assert [line.split("  [")[0].strip() for line in lines[1:3]] == ["disk usage: timescaledb pk: loading",
                                                                   "disk usage: mysql pk: loading"]
    assert "10%" in lines[2] and "left]" in lines[2]
    assert lines[3].startswith("disk usage: done in ") and len(lines) == 4


def test_the_disk_phase_is_as_far_as_its_slowest_server() -> None:
    from hdbbench.parts.side_by_side import GroupProgress

    seen: list[float] = []
    tally = GroupProgress(lambda text, done: seen.append(done), [4, 2])
    tally.tick("postgres", 0)
    tally.tick("mariadb", 1)
    tally.tick("mariadb", 1)
    assert seen == [0.0, 0.25, 0.25]


def test_a_finished_trial_is_one_line_of_its_verdicts() -> None:
    nan = math.nan
    ages = AgeFigures("steady part, read at its end", None, None, None)
    search = SaturationSearch(steps=[], last_sustainable_rate=1953.125, limited_by="subscriber",
                              ended_by=["visibility_lag", "lost"], criterion="")
    summary = TrialSummary(
        backend="mysql", label="mysql_saturation", kind="saturation", batch_size=None, offered_rate=1000.0,
        subscribers=1, lib_overrides={}, duration_s=40.0, warmup_s=0.0,
        stored_rate=StoredRate(30, 1975.0, 1900.0, 2000.0, 1970.0, 1800.0, 2010.0),
        pending_events=PendingEvents(None, None),
        pending_age_s=PendingAge(nan, nan), event_age_at_commit_s=ages, event_age_at_reception_s=ages,
        time_in_subscriber_s=ages, cpu={}, subscriber_cpu_by_thread={},
        accounting=Accounting(emitted=10_000, stored=8_500, lost=1_500, duplicates=0, per_attribute=[],
                              lost_by_reason=LostByReason(unattributed=1_500)),
        drained=True, sampling_failures={}, subscriber_final={}, database_bytes=DatabaseBytes(0, 0, 0),
        saturation=search, subscriber_kind="capped")
    assert progress.trial_line(summary) == (
        "trial mysql_saturation (capped): median stored 1,975/s; lost 1,500 (1,500 unattributed); "
        "last sustainable 1,953/s, ended by visibility_lag, lost")
    unproven = dataclasses.replace(summary, saturation=None, delivery_unproven=17, delivery_unproven_cause="a cause",
                                   stored_rate=StoredRate(0, nan, nan, nan, nan, nan, nan))
    assert progress.trial_line(unproven) == ("trial mysql_saturation (capped): no stored rate; lost 1,500 (1,500 "
                                             "unattributed); 17 attributes unproven: a cause")


# SPDX-License-Identifier: Apache-2.0
"""Progress as plain lines when not on a terminal (CI logs), and the one line of a finished trial."""

from __future__ import annotations

import io

from rich.console import Console

from hdbbench import progress


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


def test_a_finished_trial_is_one_line_of_its_verdicts() -> None:
    summary = {"label": "mysql_saturation", "subscriber_kind": "capped", "stored_rate": {"median": 1975.0},
               "accounting": {"lost": 1500, "lost_by_reason": {"unattributed": 1500}},
               "saturation": {"last_sustainable_rate": 1953.125, "ended_by": ["visibility_lag", "lost"]}}
    assert progress.trial_line(summary) == (
        "trial mysql_saturation (capped): median stored 1,975/s; lost 1,500 (1,500 unattributed); "
        "last sustainable 1,953/s, ended by visibility_lag, lost")

# SPDX-License-Identifier: Apache-2.0
"""Acceptance of subscriber kinds: the small scenario with ours and ours in strict mode run as a foreign
binary (a kind with `binary` and `lib_configuration = { hdbpp_strict = "1" }`, so it goes through the
generic path and publishes only what HDB++ defines) on all three backends.

Both kinds must store every event; the report must hold both side by side; the database's own count of
inserted rows must agree with our subscriber's RowsStoredNumber over the same stretch within 5 %; the
visibility lag (read from outside) must be reported for both. Real servers, devices and subscribers.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from hdbbench.stack.servers.endpoints import StackEndpoints
from hdbbench.subscribers.launcher import DEFAULT_BINARY
from tests.harness import REPO
from tests.harness.runs import insertion_trials, run

pytestmark = pytest.mark.subscriber

KINDS = ("hdbbench-es", "strict")
# The backends of scenarios/small.toml, which this test runs.
BACKENDS = tuple(tomllib.loads((REPO / "scenarios" / "small.toml").read_text())["backends"])


def kinds_scenario(tmp: Path) -> Path:
    """scenarios/small.toml with two kinds and, to keep the test to minutes, the throughput trial only."""
    text = (REPO / "scenarios" / "small.toml").read_text()
    text = text.split("[measurements]")[0]  # drops the measurements, extraction and disk tables
    text = text.replace('[load]', f'''[[subscribers.kinds]]
name = "hdbbench-es"

[[subscribers.kinds]]
name = "strict"
binary = "{DEFAULT_BINARY}"
lib_configuration = {{ hdbpp_strict = "1" }}

[load]''')
    text += "[measurements]\nthroughput = true\n"
    path = tmp / "small-kinds.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def kinds_run(stack_endpoints: StackEndpoints, test_state_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("kinds")
    return run(kinds_scenario(tmp), test_state_dir, tmp)


def test_both_kinds_store_every_event_on_every_backend(kinds_run: Path) -> None:
    trials = insertion_trials(kinds_run)
    assert set(trials) == {(b, k) for b in BACKENDS for k in KINDS}
    for (backend, kind), trial in trials.items():
        acc = trial.accounting
        assert acc.emitted > 0 and acc.lost == 0 and acc.duplicates == 0, (backend, kind, acc)
        assert acc.stored == acc.emitted, (backend, kind)
        assert (trial.kind, trial.subscribers) == ("throughput", 1), (backend, kind)


def test_the_strict_kind_publishes_only_hdbpp_statistics(kinds_run: Path) -> None:
    trials = insertion_trials(kinds_run)
    for backend in BACKENDS:
        ours, strict = trials[(backend, "hdbbench-es")], trials[(backend, "strict")]
        assert ours.subscriber_reported is not None and ours.subscriber_reported.published is True
        assert strict.subscriber_reported is not None and strict.subscriber_reported.published is False
        assert not any(final.get("RowsStoredNumber") is not None for final in strict.subscriber_final.values())
        assert all(final.get("AttributeMaxPendingNumber") is not None for final in strict.subscriber_final.values())


def test_database_counter_agrees_with_our_rows_stored(kinds_run: Path) -> None:
    for (backend, kind), trial in insertion_trials(kinds_run).items():
        assert trial.outside is not None and trial.outside.rows_inserted is not None, (backend, kind)
        inserted = trial.outside.rows_inserted
        assert trial.outside.stored_rate.count > 0 and trial.outside.counter
        # every kind stored every event: the counter agrees with the rows the devices' counters account for
        assert abs(inserted - trial.accounting.stored) <= 0.05 * trial.accounting.stored, (backend, kind)
        if kind == "hdbbench-es":
            assert trial.subscriber_reported is not None
            ours = trial.subscriber_reported.rows_stored
            assert ours is not None and ours > 0 and abs(inserted - ours) <= 0.05 * ours, (backend, inserted, ours)


def test_visibility_lag_is_reported_for_both_kinds(kinds_run: Path) -> None:
    for (backend, kind), trial in insertion_trials(kinds_run).items():
        assert trial.outside is not None, (backend, kind)
        lag = trial.outside.visibility_lag_s
        assert lag.count > 0, (backend, kind)
        assert lag.p50 is not None and lag.p99 is not None and lag.max is not None, (backend, kind, lag)
        assert 0 <= lag.p50 <= lag.p99 <= lag.max, (backend, kind, lag)
    header = (kinds_run / "series" / "timescaledb_strict_throughput.csv").read_text().splitlines()[0]
    assert "db.rows_inserted" in header and "vis.lag_s" in header


def test_every_kinds_throughput_trial_has_the_outside_figures(kinds_run: Path) -> None:
    trials = insertion_trials(kinds_run, "throughput")
    assert set(trials) == {(b, k) for b in BACKENDS for k in KINDS}
    for (backend, kind), trial in trials.items():
        rate = trial.stored_rate
        assert rate.count > 0 and rate.median > 0 and rate.source == "database counter", (backend, kind)
        assert trial.outside is not None, (backend, kind)
        lag = trial.outside.visibility_lag_s
        assert lag.count > 0 and lag.p50 is not None and lag.p99 is not None and 0 <= lag.p50 <= lag.p99, (backend, kind)
        assert trial.accounting.lost == 0 and trial.accounting.lost_by_reason.total() == 0, (backend, kind)
        assert trial.pending_events.high_water_mark is not None, (backend, kind)  # HDB++'s, every kind


def test_report_sets_the_kinds_side_by_side(kinds_run: Path) -> None:
    from hdbbench.report.page import write_report

    html = write_report(kinds_run).read_text()
    section = html.split("<section id='kinds'>", 1)[1].split("<section ", 1)[0]
    assert "strict (ratio to hdbbench-es)" in section and "visibility lag p99" in section
    assert "figure (ours)" in section
    assert re.search(r"\d\.\d\d×", section), "ratios to the first kind"
    for backend in BACKENDS:
        assert backend in section


def test_compare_shows_the_kinds(kinds_run: Path) -> None:
    from hdbbench.report import compare

    rows = compare.compare_rows([compare.run_figures(kinds_run), compare.run_figures(kinds_run)])
    backends = {row.backend for row in rows}
    assert {f"{b} · strict" for b in BACKENDS} <= backends and set(BACKENDS) <= backends

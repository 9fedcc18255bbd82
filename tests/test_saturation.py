# SPDX-License-Identifier: Apache-2.0
"""The saturation rules (hdbbench.trials.saturation) on series written out by hand: each rule fires on the
evidence it names and not on a subscriber that kept up; the summary reads the answer below the
lowest rate that saturated and names its rules. The rates a search chooses (hdbbench.trials.search) from synthetic
verdicts. The search itself runs end to end in tests/test_saturation_run.py."""

from __future__ import annotations

import pytest

from hdbbench.model.records import read, write
from hdbbench.model.sampling import TimeSeries
from hdbbench.results.trials import Accounting, AttributeCount, LostByReason, NotDrained
from hdbbench.trials import saturation as sat
from hdbbench.trials import search

RATE = 1000.0


def series(stored_per_s: float, seconds: int = 10, **extra: list[float]) -> TimeSeries:
    """1 Hz samples of the devices' counter (RATE/s), the database's counter and any extra columns."""
    rows = []
    for t in range(seconds + 1):
        row = {
            "t_s": float(t),
            "dev.emitted": RATE * t,
            "db.rows_inserted": stored_per_s * t,
            "dev.max_lag_s": 0.0,
        }
        row.update({name: values[t] for name, values in extra.items()})
        rows.append(row)
    return TimeSeries(columns=[c for c in rows[0] if c != "t_s"], rows=rows)


def judge(
    s: TimeSeries, resolution_s: float = 0.0, lags: list[tuple[float, float]] | None = None
) -> sat.Step:
    source = (lambda a, b: [p for p in lags if a <= p[0] <= b]) if lags is not None else None
    return sat.StepJudge(s, resolution_s, source, t0_epoch=0.0).judge(sat.Step(RATE, 0.0, 10.0))


def test_a_subscriber_that_keeps_up_saturates_no_rule() -> None:
    step = judge(series(RATE), lags=[(t / 10, 0.2) for t in range(100)])
    assert not step.saturated and step.rules == []
    assert step.stored_rate == RATE and abs(step.visibility_lag_growth_s or 1.0) < 1e-9


def test_stored_rate_below_the_emitted_rate_saturates() -> None:
    assert judge(series(RATE * 0.90)).rules == ["stored_rate"]
    assert judge(series(RATE * 0.97)).rules == []  # within the 5 % tolerance


def test_a_stale_counter_widens_the_tolerance_by_its_resolution() -> None:
    # 13 % short over a 9-s window: beyond 5 % for an exact counter, within 5 % + 1/9 for one a second stale
    assert judge(series(RATE * 0.87), resolution_s=0.0).rules == ["stored_rate"]
    assert judge(series(RATE * 0.87), resolution_s=1.0).rules == []
    assert judge(series(RATE * 0.75), resolution_s=1.0).rules == ["stored_rate"]
    # the most it can have stored over the 9-s window: a second of it may not be counted yet
    stale = judge(series(RATE * 0.75), resolution_s=1.0)
    assert stale.stored_rate is not None and stale.stored_ceiling == pytest.approx(stale.stored_rate * 9 / 8)
    exact = judge(series(RATE * 0.75), resolution_s=0.0)
    assert exact.stored_ceiling == exact.stored_rate


def test_a_growing_visibility_lag_saturates() -> None:
    growing = [(t / 10, 0.2 + 0.1 * t / 10) for t in range(100)]  # +0.1 s per s: +0.9 s over the window
    step = judge(series(RATE), lags=growing)
    assert step.rules == ["visibility_lag"] and step.visibility_lag_growth_s > sat.LAG_GROWTH_LIMIT_S
    jitter = [(t / 10, 0.2 + 0.3 * (t % 2)) for t in range(100)]  # large but not growing
    assert judge(series(RATE), lags=jitter).rules == []


def test_error_events_and_our_loss_counter_saturate() -> None:
    nok = [0.0] * 5 + [3.0] * 6
    assert judge(series(RATE, **{"sub.AttributeNokNumber": nok})).rules == ["error_events"]
    lost = [0.0] * 8 + [10.0] * 3
    assert judge(series(RATE, **{"sub.LostEventNumber": lost})).rules == ["lost"]


def test_a_step_names_the_server_work_that_rose_in_it_without_judging_by_it() -> None:
    # Counters since the server started: a checkpoint began at 6 s; no autovacuum finished in the step.
    checkpoints = [40.0] * 6 + [41.0] * 5
    vacuums = [7.0] * 11
    step = judge(series(RATE, **{"srv.checkpoints": checkpoints, "srv.autovacuums": vacuums}))
    assert step.server_work == ["checkpoints"] and step.rules == [] and not step.saturated
    # A count that only stands high from before the series began (no sample before the step) is not work in it.
    assert judge(series(RATE, **{"srv.checkpoints": [40.0] * 11})).server_work == []
    later = sat.StepJudge(series(RATE, **{"srv.checkpoints": checkpoints}), 0.0, None, 0.0).judge(sat.Step(RATE, 7.0, 10.0))
    assert later.server_work == []  # the checkpoint began before this step
    assert write(sat.summary([step], 0.0))["steps"][0]["server_work"] == ["checkpoints"]


def test_a_step_records_how_busy_the_machines_cpus_were_without_judging_by_it() -> None:
    # two CPUs, 1.5 CPU-seconds busy per second: 75 %
    busy = series(RATE, **{"machine.busy_cpu_s": [1.5 * t for t in range(11)], "machine.cpus": [2.0] * 11})
    step = judge(busy)
    assert step.machine_busy is not None and abs(step.machine_busy - 0.75) < 1e-9 and step.rules == []
    assert judge(series(RATE)).machine_busy is None  # not sampled: not recorded


def test_a_step_records_the_machines_pace_as_the_median_of_its_calibration_samples() -> None:
    # one sample slowed by an interruption: the median is the machine's pace
    work = [2.0, 2.0, 2.1, 1.9, 9.0, 2.0, 2.2, 2.0, 1.8, 2.0, 2.1]
    step = judge(series(RATE, **{"machine.work_ms": work}))
    assert step.machine_work_ms == 2.0 and step.rules == []
    assert judge(series(RATE)).machine_work_ms is None


def test_a_step_records_the_devices_cpu_per_event_they_emitted() -> None:
    # 4 ms of the devices' CPU a second at 1,000 events/s: 4 µs per event, over the window after the first second
    cpu = [0.0] + [0.004 * t for t in range(1, 11)]
    step = judge(series(RATE, **{f"{sat.DEVICES_PROBE}.cpu_s": cpu}))
    assert step.device_cpu_us == pytest.approx(4.0) and step.rules == []
    assert judge(series(RATE)).device_cpu_us is None  # not sampled: not recorded



def test_elettra_pending_rule_is_supporting_evidence() -> None:
    rising = [100.0 * (t + 1) for t in range(11)]
    step = judge(series(RATE, **{"sub.AttributeMaxPendingNumber": rising, "sub.AttributePendingNumber": rising}))
    assert step.rules == ["pending"] and step.max_pending == 1100.0


def test_loss_by_source_time_after_the_drain() -> None:
    j = sat.StepJudge(series(RATE), 0.0, None, 0.0)

    def steps() -> list[sat.Step]:
        return [j.judge(sat.Step(RATE, 10.0 * k, 10.0 * (k + 1))) for k in range(3)]

    kept = j.add_accounting(steps(), [(10_000, 10_000, 0)] * 3)
    assert [s.rules for s in kept] == [[], [], []] and [s.lost for s in kept] == [0, 0, 0]
    # a burst stamped just after the boundary read counts short in one step and over in the next: no loss
    boundary = j.add_accounting(steps(), [(10_000, 9_900, 0), (10_000, 10_100, 0), (10_000, 10_000, 0)])
    assert [s.lost for s in boundary] == [0, 0, 0] and all(s.rules == [] for s in boundary)
    # events lost in the second step stay short to the end
    lost = j.add_accounting(steps(), [(10_000, 10_000, 0), (10_000, 9_000, 2), (10_000, 10_000, 0)])
    assert [s.lost for s in lost] == [0, 1_000, 0]
    assert [s.rules for s in lost] == [[], ["lost", "error_events"], []]


def test_summary_ends_at_the_first_saturated_step_and_names_its_rules() -> None:
    steps = [sat.Step(r, 0, 1) for r in (1000.0, 1250.0, 1562.5, 1953.0)]
    steps[2].rules = ["stored_rate", "visibility_lag"]
    steps[3].rules = ["lost"]
    out = sat.summary(steps, 1.0)
    assert out.last_sustainable_rate == 1250.0 and out.limited_by == "subscriber"
    assert out.ended_by == ["stored_rate", "visibility_lag"]
    assert [s.saturated for s in out.steps] == [False, False, True, True]
    behind = [sat.Step(1000.0, 0, 1), sat.Step(1250.0, 0, 1, source_behind=True)]
    out = sat.summary(behind, 0.0)
    assert out.last_sustainable_rate == 1000.0 and out.limited_by == "source"
    assert sat.summary([sat.Step(1000.0, 0, 1)], 0.0).limited_by == "none (last step reached)"


def test_a_search_is_recorded_with_the_keys_readers_of_older_runs_know() -> None:
    j = sat.StepJudge(series(RATE), 0.0, None, 0.0)
    steps = j.add_accounting([j.judge(sat.Step(RATE, 0.0, 10.0))], [(10_000, 9_000, 2)])
    written = write(sat.summary(steps, 0.0))
    step = written["steps"][0]
    assert step["saturated"] is True and step["errors"] == step["error_events"] == 2 and step["lost"] == 1_000
    assert list(step)[:3] == ["offered_rate", "start_s", "end_s"]
    assert list(step)[-3:] == ["rules", "saturated", "errors"]
    assert written["lost"] == 1_000 and written["error_events"] == 2 and written["ended_by"] == ["lost", "error_events"]
    assert read(sat.SaturationSearch, written) == sat.summary(steps, 0.0)


def test_step_bounds_split_at_the_instants_the_devices_were_read() -> None:
    s = series(RATE, seconds=20)
    for row in s.rows:
        row["dev.read_epoch"] = 100.0 + row["t_s"] + 0.05  # read 50 ms after each sample's nominal time
    s.columns.append("dev.read_epoch")
    j = sat.StepJudge(s, 0.0, None, t0_epoch=100.0)
    steps = [sat.Step(RATE, 0.0, 10.0), sat.Step(RATE, 10.0, 20.0)]
    bounds = j.step_bounds(steps, load_started_epoch=99.5, total=20_500)
    assert bounds == [(99.5, 110.05, 10_000), (110.05, float("inf"), 10_500)]


def test_loss_is_split_by_reason_and_adds_up() -> None:
    from hdbbench.trials.figures import loss_by_reason

    rows = [AttributeCount(name, 100, 100 - lost, lost, 0) for name, lost in (("a", 70), ("b", 30), ("c", 0))]
    accounting = Accounting(emitted=300, stored=200, lost=100, duplicates=0, per_attribute=rows)
    missed = {"b": {"Missed some events! Zmq queue has reached HWM?": 2}, "c": {"Read failed": 1}}
    # ours: its own loss counter, the rest never reached it
    ours = loss_by_reason(accounting, {"d": {"LostEventNumber": 60, "AttributePendingNumber": 0}}, missed, True)
    assert ours.lost_by_reason == LostByReason(in_subscriber=60, event_delivery=40) and ours.lost_in_subscriber == 60
    assert ours.error_events == 3 and ours.missed_event_errors == 2 and ours.attributes_with_missed_events == 1
    # another kind: Tango said it missed events of b; the rest it does not say
    foreign = loss_by_reason(accounting, {"d": {"AttributePendingNumber": 0}}, missed, True)
    assert foreign.lost_by_reason.items() == [("event_delivery", 30), ("unattributed", 70)]
    assert foreign.lost_in_subscriber is None and foreign.not_drained is None
    # a trial that did not drain: what its queue still held, first
    stuck = loss_by_reason(accounting, {"d": {"AttributePendingNumber": 25}}, {}, False)
    assert stuck.lost_by_reason.items() == [("left_in_subscriber_queue", 25), ("unattributed", 75)]
    assert stuck.not_drained == NotDrained(left_in_subscriber_queue=25, not_stored=100)
    for split in (ours, foreign, stuck):
        assert split.lost_by_reason.total() == 100
        assert (split.emitted, split.stored, split.per_attribute) == (300, 200, rows)  # the counts are kept
    assert write(foreign)["lost_by_reason"] == {"event_delivery": 30, "unattributed": 70}  # no reason without events


def test_a_counter_published_in_flushes_rises_over_the_stretch_its_rows_arrived_in() -> None:
    from hdbbench.trials.outside import FlushTracker

    class Reader:  # only the resolution is read: the points are the flushes as the tracker saw them
        resolution_s = 1.0

    tracker = FlushTracker(Reader())  # type: ignore[arg-type]
    # busy at 1,000 rows/s, flushed every 1-1.5 s from t=10 to t=14.5; idle; the session-end flush at 30
    tracker.points = [(0.0, 0), (10.0, 0), (11.0, 1000), (12.5, 2500), (13.5, 3500), (14.5, 4500), (30.0, 5000)]
    assert tracker.value_at(11.75) == 1750.0          # spread over the busy gap
    assert tracker.value_at(10.0) == 0.0 and tracker.value_at(5.0) == 0.0
    # after the last busy flush the rows of the last half second arrived at the pause's start
    assert tracker.value_at(15.5) == 5000.0 and tracker.value_at(20.0) == 5000.0
    # a pause that ends with work resuming: the rows came just before the flush that ended it
    tracker.points = [(0.0, 0), (5.0, 0), (20.0, 800), (21.0, 1800), (22.0, 2800)]
    assert tracker.value_at(18.0) == 0.0 and tracker.value_at(19.5) == 400.0 and tracker.value_at(21.5) == 2300.0


def _searched(plan: search.SearchPlan, limit: float, flukes: dict[int, str] | None = None
              ) -> list[tuple[float, search.Verdict]]:
    """The steps a search takes against a subscriber that keeps up to `limit` (`flukes`: step index ->
    verdict instead); it stores `limit` when offered more, which is beyond doubt far enough above."""
    tried: list[tuple[float, search.Verdict]] = []
    while (rate := search.next_rate(plan, tried)) is not None:
        far = plan.mode == "bisect" and rate >= limit * search.overload_ratio(plan)
        verdict: search.Verdict = "pass" if rate <= limit else "overload" if far else "saturated"
        tried.append((rate, (flukes or {}).get(len(tried), verdict)))
    return tried


BISECT = search.SearchPlan("bisect", start_rate=12000.0, resolution=0.05, max_rate=160000.0, max_steps=20)


def test_a_bisect_search_brackets_by_doubling_then_bisects_to_its_resolution() -> None:
    for limit in (37661.0, 34237.0, 66719.0, 12500.0):
        tried = _searched(BISECT, limit)
        rates = [r for r, _ in tried]
        assert rates[:2] == [12000.0, 24000.0], rates
        found = search.answer(tried)
        assert found is not None and limit / 1.05 <= found <= limit, (limit, found, tried)
        # the answer and the lowest failing rate above it were each offered twice
        bound = min(r for r, v in tried if v == "saturated")
        assert bound / found <= 1.05 and rates.count(found) == 2 and rates.count(bound) == 2, tried
        assert len(tried) < 14, tried  # the stepped search took 14 steps to 37,661


def test_a_bisect_search_ends_at_its_max_rate_and_halves_below_its_start() -> None:
    tried = _searched(BISECT, 1e9)
    assert [r for r, _ in tried][-2:] == [160000.0, 160000.0] and search.answer(tried) == 160000.0
    low = _searched(BISECT, 5000.0)
    assert low[0] == (12000.0, "overload") and low[1][0] == 6000.0
    assert search.answer(low) is not None and 5000 / 1.05 <= (search.answer(low) or 0) <= 5000


def test_a_bisect_search_repeats_a_saturated_step_at_once_and_rises_on_when_it_passes() -> None:
    # one unlucky step at 48,000 (a checkpoint in it) against a limit of 66,719: repeated, it passes
    plain = _searched(BISECT, 66719.0)
    fluke = _searched(BISECT, 66719.0, {2: "saturated"})
    rates = [r for r, _ in fluke]
    assert rates[:5] == [12000.0, 24000.0, 48000.0, 48000.0, 96000.0], fluke
    assert search.answer(fluke) == search.answer(plain)
    # a step far above what was stored is saturated beyond doubt: the doubling's 96,000 is not repeated
    assert rates.count(96000.0) == 1 and search.overload_ratio(BISECT) == 1.05 ** 2


def test_a_confirming_repeat_that_fails_is_repeated_and_two_failures_move_the_bisection_below() -> None:
    plain = _searched(BISECT, 37661.0)
    candidate = search.answer(plain)
    repeat = [i for i, (r, _) in enumerate(plain) if r == candidate][1]  # the answer's confirmation
    # failing once, the candidate is offered a third time; passing then, it is no answer, and the
    # search offers one resolution below it (the stepped search's answer is the step below such a rate)
    once = _searched(BISECT, 37661.0, {repeat: "saturated"})
    assert [r for r, _ in once].count(candidate) == 3, once
    found = search.answer(once)
    assert found == pytest.approx(candidate / 1.05) and all(v == "pass" for r, v in once if r == found), once
    assert [r for r, _ in once].count(found) == 2, once  # confirmed by a repeat
    # failing twice in a row, it bounds the search, which bisects below it and confirms a new answer
    twice = _searched(BISECT, 37661.0, {repeat: "saturated", repeat + 1: "saturated"})
    found = search.answer(twice)
    assert found is not None and found < candidate, twice
    assert candidate / found <= 1.05 + 1e-9 and [r for r, _ in twice].count(found) == 2, twice
    assert all(v == "pass" for r, v in twice if r == found), twice


def test_a_bisect_search_confirms_its_candidate_as_soon_as_a_rate_above_it_fails() -> None:
    # 48,000 fails beyond doubt against a limit of 37,661: 24,000 is offered again at once, before the
    # bisection (confirmed at the end, it met whatever pace the machine had by then)
    tried = _searched(BISECT, 37661.0)
    rates = [r for r, _ in tried]
    assert rates[:4] == [12000.0, 24000.0, 48000.0, 24000.0], tried
    # in the bisection, a midpoint that passed is confirmed as soon as the next one above it fails
    for k in range(4, len(tried) - 1):
        rate, verdict = tried[k]
        failed_next = tried[k + 1][1] != "pass" and tried[k + 1][0] > rate
        candidate = rate == search.answer(tried[:k + 2])
        if verdict == "pass" and failed_next and rates.count(rate) == 1 and candidate:
            raise AssertionError(f"{rate} was not confirmed after {tried[k + 1]}: {tried}")
    found = search.answer(tried)
    assert found is not None and rates.count(found) == 2 and 37661.0 / 1.05 <= found <= 37661.0, tried
    # a rate that passed and is superseded by a higher pass is not confirmed: no step is wasted on it
    assert rates.count(12000.0) == 1, tried


def test_a_step_saturated_far_below_a_rate_that_passed_is_repeated_not_taken_as_beyond_doubt() -> None:
    plan = search.SearchPlan("bisect", start_rate=40000.0, resolution=0.10)

    def step(offered: float, stored: float) -> sat.Step:
        out = sat.Step(offered, 0.0, 8.0)
        out.stored_rate = out.stored_ceiling = stored
        out.rules = ["stored_rate"] if stored < offered * 0.95 else []  # saturated: any rule fired
        return out

    # a TimescaleDB search of 2026-11-27: 80,000 passed, then after the doubling's overload it stored 60,404
    steps = [step(40000.0, 40349.0), step(80000.0, 79976.0), step(160000.0, 58132.0), step(80000.0, 60404.0)]
    assert [v for _, v in sat.verdicts(steps, plan)] == ["pass", "pass", "overload", "saturated"]
    # so the search repeats it, as any saturated step, instead of bisecting below a rate that passed
    assert search.next_rate(plan, sat.verdicts(steps, plan)) == 80000.0
    # a higher rate that passed counts too; a lower one does not
    above, below = step(90000.0, 90000.0), step(60000.0, 60000.0)
    assert [v for _, v in sat.verdicts([above, step(80000.0, 50000.0)], plan)] == ["pass", "saturated"]
    assert [v for _, v in sat.verdicts([below, step(80000.0, 50000.0)], plan)] == ["pass", "overload"]


def test_the_answer_is_read_from_the_recomputed_verdicts() -> None:
    steps: list[tuple[float, search.Verdict]] = [(10.0, "pass"), (20.0, "pass"), (40.0, "saturated"),
                                                  (28.0, "pass"), (34.0, "saturated"), (28.0, "pass"),
                                                  (34.0, "saturated")]
    assert search.answer(steps) == 28.0
    # after the drain a step of 28 lost events: 28 is no longer sustainable, 20 is the answer
    assert search.answer([*steps[:5], (28.0, "saturated"), steps[6]]) == 20.0
    # a rate above a confirmed-saturated one never answers, a source-behind step is no verdict
    assert search.answer([(10.0, "pass"), (20.0, "saturated"), (20.0, "saturated"), (30.0, "pass")]) == 10.0
    assert search.answer([(10.0, "pass"), (20.0, "source"), (20.0, "pass")]) == 20.0


def test_a_stepped_search_rises_by_its_step_and_repeats_the_rate_that_saturated() -> None:
    plan = search.SearchPlan("step", start_rate=1000.0, step=0.25, max_steps=8)
    rising = [1000.0 * 1.25 ** k for k in range(4)]
    tried = _searched(plan, 2000.0)
    assert [r for r, _ in tried] == rising + [rising[-1] * 1.25] * 2
    assert search.answer(tried) == rising[-1]
    assert len(_searched(plan, 1e9)) == 8 and plan.precision == 0.25
    # a saturated step whose repeat passes was one unlucky step: the search rises on, and that rate is no answer
    fluke = _searched(plan, 2000.0, {1: "saturated"})
    assert [r for r, _ in fluke][:4] == [1000.0, 1250.0, 1250.0, 1562.5] and search.answer(fluke) == rising[-1]
    # a rate the devices could not offer ends it at once
    assert search.next_rate(plan, [(1000.0, "pass"), (1250.0, "source")]) is None


def test_a_bisect_summary_records_its_mode_resolution_and_answer() -> None:
    plan = search.SearchPlan("bisect", start_rate=RATE, resolution=0.05)
    steps = [sat.Step(r, 0.0, 8.0) for r in (1000.0, 2000.0, 1414.0, 1414.0, 2000.0)]
    for step in steps:
        step.rules = ["stored_rate"] if step.offered_rate == 2000.0 else []
    record = sat.summary(steps, 0.0, plan)
    assert (record.mode, record.resolution, record.last_sustainable_rate) == ("bisect", 0.05, 1414.0)
    assert record.limited_by == "subscriber" and record.ended_by == ["stored_rate"]
    assert sat.summary(steps[:1], 0.0, search.SearchPlan("step", RATE, step=0.1)).resolution == 0.1
    older = {k: v for k, v in write(record).items() if k not in ("mode", "resolution")}
    again = read(type(record), older)  # a results.json of before the bisect search still reads
    assert again.mode is None and again.resolution is None and write(again) == older


def test_a_steps_pending_rule_reads_only_its_own_samples() -> None:
    # the queue's high-water mark rose through seconds 0..7 (an earlier saturated step), then stays;
    # the queue itself grew then and is quiet in the later step
    peak = [1000.0 * min(t, 7) + 1 for t in range(21)]
    queue = [1000.0 * t + 1 if t <= 7 else 0.0 for t in range(21)]
    s = series(RATE, seconds=20, **{"sub.AttributeMaxPendingNumber": peak, "sub.AttributePendingNumber": queue})
    judge_ = sat.StepJudge(s, 0.0, None, 0.0)
    assert judge_.judge(sat.Step(RATE, 0.0, 8.0)).rules == ["pending"]
    assert judge_.judge(sat.Step(RATE, 12.0, 20.0)).rules == []  # the repeat does not inherit the growth


def test_a_bisect_steps_queue_growing_under_an_earlier_peak_saturates() -> None:
    # An earlier saturated step left AttributeMaxPendingNumber at 100,000; this step's queue grows
    # to 9,000 (found in #31: read from the high-water mark, the rule could no longer fire).
    s = series(RATE, seconds=20, **{"sub.AttributeMaxPendingNumber": [100_000.0] * 21,
                                    "sub.AttributePendingNumber": [0.0] * 12 + [1000.0 * k for k in range(1, 10)]})
    step = sat.StepJudge(s, 0.0, None, 0.0).judge(sat.Step(RATE, 12.0, 20.0))
    assert step.rules == ["pending"] and step.max_pending == 9000.0
    calm = series(RATE, seconds=20, **{"sub.AttributeMaxPendingNumber": [100_000.0] * 21,
                                       "sub.AttributePendingNumber": [0.0] * 12 + [400.0, 900.0] * 4 + [400.0]})
    assert sat.StepJudge(calm, 0.0, None, 0.0).judge(sat.Step(RATE, 12.0, 20.0)).rules == []  # a batch filling and committing


def test_a_bisect_step_is_saturated_beyond_doubt_when_it_lost_events_or_stored_far_less() -> None:
    bisect = search.SearchPlan("bisect", start_rate=40000.0, resolution=0.10)
    stepped = search.SearchPlan("step", start_rate=12000.0)

    def step(offered: float, stored: float, rules: list[str]) -> sat.Step:
        out = sat.Step(offered, 0.0, 8.0)
        out.stored_rate, out.stored_ceiling, out.rules = stored, stored, rules
        return out

    far = step(160000.0, 63469.0, ["stored_rate"])          # a measured doubling step
    near = step(87241.0, 80681.0, ["pending"])              # a measured step near the limit
    lost = step(90000.0, 88000.0, ["lost"])
    above = step(122000.0, 100000.0, ["stored_rate"])       # just over two resolutions above
    under = step(120000.0, 100000.0, ["stored_rate"])       # just under
    assert [sat.beyond_doubt(s, bisect) for s in (far, near, lost, above, under)] == [True, False, True, True, False]
    assert not sat.beyond_doubt(step(160000.0, 60000.0, []), bisect)  # a passing step is no overload
    assert [v for _, v in sat.verdicts([far, near], bisect)] == ["overload", "saturated"]
    # the stepped search repeats every saturated step, as Elettra's does
    assert [v for _, v in sat.verdicts([far, near], stepped)] == ["saturated", "saturated"]
    assert [v for _, v in sat.verdicts([far, near])] == ["saturated", "saturated"]
    # a counter that may be a second stale could hide a quarter of a 4-s window's rows
    stale = step(160000.0, 100000.0, ["stored_rate"])
    stale.stored_ceiling = 100000.0 * 4 / 3
    assert sat.beyond_doubt(step(160000.0, 100000.0, ["stored_rate"]), bisect) and not sat.beyond_doubt(stale, bisect)

# SPDX-License-Identifier: Apache-2.0
"""The report and compare: ranking and words on synthetic results, every section on a synthetic run
directory with all four results files, a real (trimmed) run of the small scenario, offline HTML, and a
render in headless Chromium when it is installed."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from hdbbench.model.errors import ConfigError
from hdbbench.model.records import read
from hdbbench.parts.disk import reference
from hdbbench.report import compare, data, plan, ranking
from hdbbench.report import text as report_text
from hdbbench.report.page import write_report
from hdbbench.report.text import Spread
from hdbbench.results.disk import DiskResults
from hdbbench.results.document import FORMAT_VERSION
from hdbbench.results.sizing import ProjectedGroup, Projection
from hdbbench.scenario.scenario import parse_scenario
from tests.harness.synthetic import DISK, MEDIANS, SECTIONS, make_run, projections, sections_of, write_json


def assert_offline(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<script" not in page.lower() and "<link" not in page.lower() and "@import" not in page
    assert "@font-face" not in page and "url(http" not in page
    # the only absolute URLs left are XML namespace names, which are never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {"http://www.w3.org/2000/svg",
                                                                "http://www.w3.org/1999/xlink"}


def render_in_chromium(html_file: Path, tmp_path: Path) -> Path:
    browser = shutil.which("chromium")
    if browser is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs it)")
    png = tmp_path / "report.png"
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'chrome'}",
           "--window-size=1200,3000", f"--screenshot={png}", html_file.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert png.exists() and png.stat().st_size > 10_000, done.stderr[-2000:]
    assert "Uncaught" not in done.stderr and "ERR_" not in done.stderr, done.stderr[-2000:]
    return png


@pytest.fixture(scope="module")
def synthetic_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    run = make_run(tmp_path_factory.mktemp("report"))
    path = write_report(run)
    return path, path.read_text()


def test_every_section_has_figures_and_words(synthetic_report: tuple[Path, str]) -> None:
    _, page = synthetic_report
    found = sections_of(page)
    for key in SECTIONS:
        assert key in found, key
        if key not in ("loss", "environment"):
            assert "<svg" in found[key], f"{key} has no figure"
        if key != "environment":
            assert "class='finding'" in found[key] and "Recommendation" in found[key], key
    assert "class='missing'" not in page
    assert "Test CPU" in found["environment"] and "nvme0n1 (non-rotational)" in found["environment"]


def test_report_is_self_contained(synthetic_report: tuple[Path, str]) -> None:
    assert_offline(synthetic_report[1])


def test_words_agree_with_numbers(synthetic_report: tuple[Path, str]) -> None:
    found = sections_of(synthetic_report[1])
    fastest = max(MEDIANS, key=lambda b: MEDIANS[b])
    assert f"{fastest} had the highest median stored rate, 1,900 events/s." in found["throughput"]
    assert "timescaledb / mysql = 1.58×" in found["throughput"] and "significant: the p1..p99 ranges do not" in \
        found["throughput"]
    assert "No event was lost" in found["throughput"]
    assert "timescaledb committed events youngest" in found["lag"]
    assert "Flattest (best figure of merit): timescaledb." in found["extraction"]
    assert "Where disk is the constraint, prefer timescaledb pk+2 (smallest marginal" in found["disk"]
    assert "mysql: 90% of seconds" in found["sustained"] and "NOT stable" in found["sustained"]
    assert "With the balanced weights, timescaledb ranks first" in found["ranking"]


def test_disk_section_has_its_plots_summary_and_folded_table_in_csv(synthetic_report: tuple[Path, str]) -> None:
    path, page = synthetic_report
    disk = sections_of(page)["disk"]
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", disk)
    assert len(captions) == 2 and "per scalar type" in captions[0] and "against element count" in captions[1]
    summary = re.search(r"<table>.*?</table>", disk).group(0)  # the first table: one row per backend/variant
    assert "devdouble spectrum ×1,000" in summary and "fixed (all tables)" in summary and "slack (all tables)" in summary
    assert "<td>timescaledb pk+2</td><td>90</td><td>81</td><td>72</td><td>108</td><td>9,000</td>" in summary
    assert summary.count("<tr>") == 1 + len(DISK)
    folded = re.search(r"<details><summary>(All .*?)</summary>(.*?)</details>", disk)  # the cases table folds itself
    assert folded and "All 19 cases (1 flagged)" in folded.group(1) and "href='disk-cases.csv'" in folded.group(1)
    with open(path.parent / "disk-cases.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 19 and folded.group(2).count("<tr>") == 1 + 19
    spectrum = next(r for r in rows if r["backend"] == "mysql" and r["elements"] == "1000")
    assert float(spectrum["marginal_bytes_per_event"]) == pytest.approx(90.0 * 100 * 1.5)
    assert [r["fit_ok"] for r in rows].count("no") == 1


def test_a_flagged_case_is_shown_flagged_and_not_used(synthetic_report: tuple[Path, str]) -> None:
    disk = sections_of(synthetic_report[1])["disk"]
    assert "FLAGGED: not a line: 15.0 % off at 1000 events" in disk
    assert "⚠ mysql pk+2, devenum scalar ro: its sizes do not fit a line" in disk
    assert "<pattern" in disk.split("<figcaption>")[0]  # the flagged bar is drawn hatched
    # five scalar types, the flagged one wins nothing: its 750 B/event is not a figure
    assert "Smallest marginal per scalar type: timescaledb pk+2 on 4 of 5." in disk


def test_disk_section_sets_the_published_reference_beside_ours(synthetic_report: tuple[Path, str]) -> None:
    disk = sections_of(synthetic_report[1])["disk"]
    assert "<td>TimescaleDB (with 2 indexes)</td><td>pk</td><td>164</td><td>timescaledb pk+2</td><td>90</td>" \
           "<td>0.55×</td><td>yes</td>" in disk
    assert "timescaledb pk+2: 90 B/event against 164 (pk order) / 194 (time order) B/row for TimescaleDB (with 2 " \
           "indexes), 0.55× / 0.47×: more than 30% apart (45% below the pk-order figure, 53% below the time-order " \
           "figure). What differs: " + reference.REASONS["TimescaleDB"] in disk
    assert "ours are within 30% in 0 of 2 comparisons" in disk
    assert "⚠ mysql pk,myrocks was not measured: MyRocks: not loaded" in disk


def test_sizing_section_plots_the_plan_with_parts_logs_and_replicas(synthetic_report: tuple[Path, str]) -> None:
    sizing = sections_of(synthetic_report[1])["sizing"]
    assert "<svg" in sizing and "Projected disk for test-facility" in sizing
    head = re.search(r"<thead>(.*?)</thead>", sizing).group(1)
    for column in ("chunks / partitions per table", "logs kept", "replicas", "total × replicas"):
        assert column in head, column
    tib = 2 ** 40
    total = (1e9 * 730 + 1e9 * 0.5 * 7) * 2
    assert "<td>timescaledb pk+2</td>" in sizing and "<td>27–53</td>" in sizing and "<td>not partitioned</td>" in sizing
    assert "<td>×2</td>" in sizing and f"<td>{total / tib:.3g}\u00a0TiB</td>" in sizing
    assert "For test-facility, the smallest projection is timescaledb pk+2" in sizing
    assert "timescaledb pk+2 is smaller than mysql pk+2 by" in sizing and "mysql pk+2 needs 1.60× it" in sizing
    assert "<details><summary>Per inventory group (6 rows)</summary>" in sizing


def test_missing_sections_say_so(tmp_path: Path) -> None:
    run = make_run(tmp_path, with_others=False)
    found = sections_of(write_report(run).read_text())
    for key, words in (("extraction", "extraction.json is not in this run directory"),
                       ("disk", "disk.json is not in this run directory"),
                       ("sizing", "sizing.json is not in this run directory")):
        assert "class='missing'" in found[key] and words in found[key], key


def test_parts_the_scenario_left_out_get_no_section(tmp_path: Path) -> None:
    """A scenario that says it has no extraction and no disk part (as an insertion-only or faults-only
    scenario does) gets no 'missing' sections for them; a scenario that asked for them does."""
    run = make_run(tmp_path, with_others=False)
    doc = json.loads((run / "results.json").read_text())
    doc["scenario"] |= {"extraction": None, "disk": None}
    write_json(run / "results.json", doc)
    found = sections_of(write_report(run).read_text())
    assert not {"extraction", "disk", "sizing"} & set(found), sorted(found)
    doc["scenario"] |= {"extraction": {"query_set": "q.toml"}, "disk": {"events": 10, "inventory": None}}
    write_json(run / "results.json", doc)
    found = sections_of(write_report(run).read_text())
    assert {"extraction", "disk"} <= set(found) and "sizing" not in found, sorted(found)


def test_a_run_of_an_older_format_is_refused_in_one_line(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    old = json.loads((run / "disk.json").read_text()) | {"format_version": 1}
    write_json(run / "disk.json", old)
    with pytest.raises(ConfigError) as caught:
        write_report(run)
    message = str(caught.value)
    assert message.startswith(f"{run / 'disk.json'}: results format 1, this hdbbench reads format {FORMAT_VERSION}")
    assert "\n" not in message
    assert message.endswith(f"run `hdbbench migrate {run}` to convert")
    assert not (run / "report.html").exists()
    with pytest.raises(ConfigError, match="results format 1"):
        compare.run_figures(run)


def test_report_renders_in_headless_chromium(synthetic_report: tuple[Path, str], tmp_path: Path) -> None:
    render_in_chromium(synthetic_report[0], tmp_path)


# --- ranking, words and compare on synthetic numbers ---------------------------------------------
def test_ranking_normalises_to_the_best_and_weights_change_the_winner() -> None:
    table = {"a": {"stored_median": 2000.0, "event_age_p99": 0.4},
             "b": {"stored_median": 1000.0, "event_age_p99": 0.1}}
    r = ranking.rank(table, {"stored_median": 1, "event_age_p99": 1})
    assert r.normalised["a"] == {"stored_median": 1.0, "event_age_p99": 0.25}
    assert r.normalised["b"] == {"stored_median": 0.5, "event_age_p99": 1.0}
    assert r.order == ("b", "a") and r.scores["b"] == pytest.approx(0.75)
    sets = ranking.rank_across_sets(table)
    assert sets["throughput-first"].order[0] == "a" and sets["latency-first"].order[0] == "b"
    assert "disk-first" not in sets  # no disk figures: that set would repeat "balanced"
    words = report_text.ranking({k: v.order for k, v in sets.items()}, "balanced")
    assert "The winner changes with the weights" in " ".join(words.sentences)


def test_ranking_negative_slopes_and_missing_figures() -> None:
    col = ranking.normalise({"a": -2.0, "b": 30.0, "c": None}, higher_is_better=True)
    assert col == {"a": 0.0, "b": 1.0, "c": None}
    r = ranking.rank({"a": {"batch_slope": -2.0}, "b": {"batch_slope": 30.0}, "c": {}}, {"batch_slope": 1})
    assert r.scores["c"] == 0.0 and r.order[0] == "b"


def test_weights_are_validated() -> None:
    assert ranking.parse_weights("saturation_rate=2, event_age_p99=1") == {"saturation_rate": 2.0,
                                                                          "event_age_p99": 1.0}
    for bad, message in (("speed=1", "unknown criterion 'speed'"), ("stored_median", "is not name=weight"),
                         ("stored_median=-1", ">= 0"), ("stored_median=0", "at least one weight")):
        with pytest.raises(ConfigError, match=message):
            ranking.parse_weights(bad)


def test_scenario_report_table(tmp_path: Path) -> None:
    doc = {"name": "x", "report": {"weights": {"saturation_rate": 2, "bytes_per_event": 1}}}
    scenario = parse_scenario(doc, tmp_path / "x.toml")
    assert scenario.to_dict()["report"] == {"weights": {"saturation_rate": 2.0, "bytes_per_event": 1.0}}
    with pytest.raises(ConfigError, match=r"\[report\] weights: names an unknown criterion 'speed'"):
        parse_scenario({"name": "x", "report": {"weights": {"speed": 1}}}, tmp_path / "x.toml")
    with pytest.raises(ConfigError, match=r"\[report\] colour: unknown key"):
        parse_scenario({"name": "x", "report": {"colour": "red"}}, tmp_path / "x.toml")


def test_throughput_words_call_overlap_not_significant() -> None:
    spreads = {"a": Spread(1010, 900, 1100, 30), "b": Spread(1000, 950, 1050, 5)}
    finding = report_text.throughput(spreads, {"a": 2000, "b": 2000}, {"a": 0, "b": 3})
    text = " ".join(finding.sentences)
    assert text.startswith("a had the highest median") and "not significant" in text
    assert "Events were LOST: b 3." in text and "b" in finding.recommendation
    assert any("only 5 per-second samples" in w for w in finding.warnings)


def test_the_rate_plot_shows_the_seconds_the_table_counted() -> None:
    # A counter published in flushes reads the load's last second low; the recorded distribution
    # (the table) ends before it, and the box plot must show the same seconds, not that outlier.
    rates = [(float(t), 5000.0) for t in range(1, 18)] + [(18.0, 3100.0)]
    shown = data.recorded_window(rates, warmup_s=2.0, count=16)
    assert shown == [5000.0] * 16
    assert data.recorded_window(rates, warmup_s=2.0, count=17)[-1] == 3100.0


def test_loss_words_tell_a_search_overload_from_a_loss_at_a_sustainable_rate() -> None:
    rows = [("ts_throughput", 90_000, 90_000, 0, 0), ("ts_saturation", 3_000_000, 2_931_000, 69_000, 0)]
    overload = report_text.loss(rows, overload={"ts_saturation": 69_000})
    assert "all in steps above the limit" in " ".join(overload.sentences)
    assert overload.recommendation.startswith("No event was lost at a rate found sustainable")
    # 200 of them lost in a step that passed: the claim fails, and the words say how much was overload.
    mixed = report_text.loss(rows, overload={"ts_saturation": 68_800})
    assert "68,800 of them in steps above the limit" in " ".join(mixed.sentences)
    assert mixed.recommendation.startswith("A no-loss claim fails")
    assert report_text.loss(rows).recommendation.startswith("A no-loss claim fails")


def test_saturation_words_on_ties_and_unsaturated() -> None:
    finding = report_text.saturation({"a": 550.0, "b": 550.0}, {"a": 550.0, "b": 550.0}, {"a": False, "b": False})
    assert "does not separate them" in " ".join(finding.sentences)
    assert "a and b (tied)" in finding.recommendation and "did not saturate" in finding.warnings[0]
    # A leader that never saturated gave a floor: the words must not call it the most to plan with.
    assert "limit is higher" in finding.recommendation and "at most 550" not in finding.recommendation
    limited = report_text.saturation({"a": 800.0, "b": 500.0}, {"a": 880.0, "b": 550.0}, {"a": True, "b": False})
    assert limited.recommendation.startswith("Plan with at most 800 events/s per subscriber on a")


def test_saturated_steps_that_met_the_servers_background_work_are_named() -> None:
    steps = [(False, ["checkpoints"]), (True, ["checkpoints", "autovacuums"]), (True, []), (True, ["checkpoints"])]
    words = report_text.server_work_met("timescaledb", steps)
    assert words is not None and words.startswith("timescaledb: 2 of its 3 saturated steps met")
    assert "(checkpoints in 2, autovacuums in 1), and 1 of its 1 passing steps did." in words
    assert report_text.server_work_met("mysql", [(True, []), (False, ["log_waits"])]) is None


def test_a_search_ended_with_the_machines_cpus_all_busy_is_flagged() -> None:
    # (offered, saturated, machine busy): the answer 1,000; 1,200 saturated twice, once at 96 %
    steps = [(1000.0, False, 0.70), (1400.0, True, 0.99), (1200.0, True, 0.96), (1200.0, True, 0.85),
             (1000.0, False, 0.72)]
    words = report_text.machine_limit_met("mysql", steps, 1000.0)
    assert words is not None and words.startswith("mysql: at 1,200 events/s, the rate that ended its search")
    assert "were 96% busy" in words and "--cpus" in words
    assert report_text.machine_limit_met("mysql", [(1000.0, False, 0.99), (1200.0, True, 0.80)], 1000.0) is None
    assert report_text.machine_limit_met("mysql", [(1000.0, False, None), (1200.0, True, None)], 1000.0) is None


def test_a_search_ended_on_a_slower_machine_says_so() -> None:
    # (offered rate, saturated, CPU ms of the fixed work): the bound, 1,200, ran at 2.6 ms against 2.0
    steps = [(1000.0, False, 2.0), (1400.0, True, 2.1), (1200.0, True, 2.6), (1000.0, False, 2.1)]
    words = report_text.machine_pace_varied("postgresql", steps, 1000.0)
    assert words is not None and words.startswith("postgresql: at 1,200 events/s, the rate that ended its search")
    assert "at 77% of the pace" in words and "2.60 ms" in words
    steady = [(1000.0, False, 2.0), (1200.0, True, 2.2), (1000.0, False, 2.1)]  # 10 %: within the machine's noise
    assert report_text.machine_pace_varied("postgresql", steady, 1000.0) is None
    assert report_text.machine_pace_varied("postgresql", [(1000.0, False, None), (1200.0, True, None)], 1000.0) is None


def test_compare_verdicts_follow_the_stated_rules(tmp_path: Path) -> None:
    wide, narrow_far = Spread(1000, 900, 1100, 30), Spread(1500, 1450, 1550, 30)
    assert compare.verdict(compare.Figure(1000, wide), compare.Figure(1050, Spread(1050, 1000, 1090, 30))) == \
        compare.NOT_SIGNIFICANT
    assert compare.verdict(compare.Figure(1000, wide), compare.Figure(1500, narrow_far)) == compare.SIGNIFICANT
    assert compare.verdict(compare.Figure(1000, step=0.1), compare.Figure(1100, step=0.1)) == compare.NOT_SIGNIFICANT
    assert compare.verdict(compare.Figure(1000, step=0.1), compare.Figure(1331, step=0.1)) == compare.SIGNIFICANT
    assert compare.verdict(compare.Figure(0.1), compare.Figure(0.2)) == compare.NO_SPREAD
    first, second = make_run(tmp_path / "one"), make_run(tmp_path / "two")
    page = compare.write_html([first, second], tmp_path / "compare.html").read_text()
    assert_offline(page)
    assert "<svg" in page and "1.00×, not significant" in page and "Test CPU" in page


def test_the_step_table_shows_the_devices_cpu_per_event(synthetic_report: tuple[Path, str]) -> None:
    _, page = synthetic_report
    saturation = page.split("<section id='saturation'>", 1)[1].split("</section>", 1)[0]
    assert "<th>devices&#x27; CPU per event (µs)</th>" in saturation
    assert "<td>4.25</td>" in saturation and "<td>3.5</td>" in saturation
    # the pace at each limit: the median over the steps within 25 % of the answer (mysql: 1,100, all
    # four steps; timescaledb: 1,331, the three from 1,100)
    assert "as the devices&#x27; CPU per event in the steps within 25% of the answer" in saturation
    assert "timescaledb 3.75 µs" in saturation and "mysql 3.88 µs" in saturation


def test_the_search_shows_the_rows_stored_before_each_step(synthetic_report: tuple[Path, str]) -> None:
    _, page = synthetic_report
    saturation = page.split("<section id='saturation'>", 1)[1].split("</section>", 1)[0]
    assert "<th>rows stored before</th>" in saturation
    # 8 s a step: timescaledb stored 8,000, 8,800, 9,680 and 10,648 rows; its answer 1,331 keeps the
    # steps from 1,100 in its band, mysql's 1,100 all four (from the first step's 0 rows)
    assert "<td>16,800</td>" in saturation
    assert "within 25% of the answer: timescaledb 8,000 to 26,480, postgresql" in saturation
    assert "mysql 0 to 26,400. Once its tables and indexes outgrow the server&#x27;s memory" in saturation


def test_compare_warns_when_the_devices_spent_more_cpu_per_event_at_the_same_rates() -> None:
    # two runs of 2026-11-27 at 11:18 and 11:34: the devices at 40k and 80k, µs per event
    fast = {"timescaledb": {40000.0: 3.78, 80000.0: 3.32, 160000.0: 3.4}}
    slow = {"timescaledb": {40000.0: 6.38, 80000.0: 4.45, 113137.0: 4.0}, "mysql": {40000.0: 8.7}}
    (words,) = compare.pace_warnings([fast, slow], ["fast", "slow"])
    assert words.startswith("timescaledb: in slow the devices spent 1.51× the first run's CPU per event")
    assert "40,000, 80,000 events/s" in words and "the machine ran slower" in words
    close = {"timescaledb": {40000.0: 3.9, 80000.0: 3.5}}  # within 15 %: no warning
    assert compare.pace_warnings([fast, close], ["fast", "close"]) == []
    far = {"timescaledb": {90000.0: 9.0}}  # no rate near the first run's
    assert compare.pace_warnings([fast, far], ["fast", "other"]) == []
    # a stepped search's rates (12k, +10 %) against a bisect search's: matched within 5 %
    stepped = {"timescaledb": {37661.0: 9.0, 41427.0: 5.4, 80730.0: 4.9, 88803.0: 4.6}}
    (words,) = compare.pace_warnings([fast, stepped], ["fast", "stepped"])
    assert "1.45× the first run's CPU per event at the same or nearby (within 5 %) offered rates" in words
    assert "(41,427, 80,730 events/s)" in words, words  # 37,661 is 6 % from 40k, 88,803 11 % from 80k


def test_compare_sets_limits_met_at_another_pace_in_proportion_to_it() -> None:
    # measured 2026-11-27: the stepped search (first) and the bisect search of `./run.sh bench`
    pace = compare.LimitPace
    stepped = {"postgresql": pace(73391.0, 4.12, 0.10), "mysql": pace(130016.0, 3.60, 0.10),
               "timescaledb": pace(80730.0, 3.66, 0.10)}
    bench = {"postgresql": pace(56080.0, 5.51, 0.10), "mysql": pace(60000.0, 4.30, 0.10),
             "timescaledb": pace(80000.0, 3.88, 0.10)}
    pg, mysql = compare.paced_limits([stepped, bench], ["stepped", "bench"])
    # 0.76× the limit at 1.34× the devices' CPU per event: 1.02× in proportion, within 10 %
    assert pg.startswith("postgresql: bench's search met its limit (0.76× the first run's) at another pace")
    assert "it is 1.02× the first run's, within the 10% resolution: no difference beyond the machine's" in pg
    # 0.46× at 1.19×: 0.55× in proportion, a real difference (timescaledb: the same pace, no sentence)
    assert "it is 0.55× the first run's, beyond the resolution" in mysql
    unknown = [{"postgresql": pace(73391.0, 4.12, None)}, {"postgresql": pace(56080.0, 5.51, None)}]
    (words,) = compare.paced_limits(unknown, ["first", "bench"])
    assert words.endswith("and the searches state no resolution to judge it by.")


# --- a real run: the small scenario, trimmed to two backends --------------------------------------
@pytest.fixture(scope="module")
def real_report(real_run_dir: Path) -> tuple[Path, str]:
    path = write_report(real_run_dir)
    return path, path.read_text()


@pytest.fixture(scope="module")
def real_run_dir(small_run_dir: Path) -> Path:
    """The session's run of scenarios/small.toml (tests/conftest.py), shared with tests/test_run.py."""
    return small_run_dir


@pytest.mark.subscriber
def test_real_run_report_holds_its_sections(real_report: tuple[Path, str], tmp_path: Path) -> None:
    path, page = real_report
    found = sections_of(page)
    for key in ("throughput", "lag", "batch", "saturation", "sustained", "cpu", "loss", "ranking"):
        assert ("<svg" in found[key] or key == "loss") and "Recommendation" in found[key], key
    for key in ("subscribers", "extraction", "disk", "sizing"):  # the small scenario runs every part
        assert "<svg" in found[key] and "class='missing'" not in found[key], key
    assert "unit costs (" in found["cpu"]  # hdbbench.report.costs: every trial's and step's
    disk = data.load_file(path.parent, data.FILES["disk"]).results(DiskResults)
    assert disk is not None
    cases = disk.cases
    with open(path.parent / "disk-cases.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == len(cases)
    assert f"All {len(cases)} cases" in found["disk"] and "per scalar type" in found["disk"]
    assert "chunks / partitions per table" in found["sizing"] and "total × replicas" in found["sizing"]
    assert_offline(page)
    render_in_chromium(path, tmp_path)


@pytest.mark.subscriber
def test_real_run_words_agree_with_results(real_report: tuple[Path, str]) -> None:
    path, page = real_report
    doc = json.loads((path.parent / "results.json").read_text())
    main = {t["backend"]: t for t in doc["results"]["trials"] if t["kind"] == "throughput"}
    top = sorted(main, key=lambda b: (-main[b]["stored_rate"]["median"], b))[0]
    found = sections_of(page)
    assert f"{top} had the highest median stored rate" in found["throughput"]
    lost = sum(t["accounting"]["lost"] for t in doc["results"]["trials"])
    assert ("Zero events lost" in found["loss"]) == (lost == 0)
    age = {b: t["event_age_at_commit_s"]["p99"] for b, t in main.items()}
    youngest = sorted(age, key=lambda b: (age[b], b))[0]
    assert f"{youngest} committed events youngest" in found["lag"]


def test_plan_words_when_every_projection_leaves_a_group_out() -> None:
    records = [read(Projection, r) for r in projections()]
    records = [replace(r, complete=False,  # "states" unmeasured everywhere
                       groups=[r.groups[0], replace(r.groups[1], bytes_per_event=None)]) for r in records]
    finding = plan.plan_finding(records, "x")
    words = " ".join(finding.sentences)
    assert "No projection is complete" in words and "the smallest projection is timescaledb pk+2" in words
    assert finding.warnings[0] == ("Incomplete: states not measured for timescaledb pk+2, postgresql pk+2, "
                                   "mysql pk+2; those totals are too small.")


def test_plan_words_say_when_arrays_decide_the_total() -> None:
    """A backend smaller on scalars (what size validate checks at scale) can be larger in total when it
    stores one row per array element: the words say so instead of leaving the two rankings to clash."""
    records = [read(Projection, r) for r in projections()]
    mysql = next(r for r in records if r.backend == "mysql")
    scalar = sum(g.bytes_at_retention or 0.0 for g in mysql.groups)
    # mysql: the smallest scalars, and arrays that make it the largest in total
    groups = [replace(g, bytes_at_retention=(g.bytes_at_retention or 0.0) * 0.4) for g in mysql.groups]
    spectra = ProjectedGroup(label="orbit", events_per_day=1e5, bytes_per_event=8000.0,
                             source="fit over [100, 1000] elements", bytes_per_day=None, retention_days=730.0,
                             bytes_at_retention=scalar * 2.0, log_bytes_per_day={}, share_at_retention=None)
    records = [r if r is not mysql else replace(r, groups=[*groups, spectra], total_bytes=None,
                                                bytes_at_retention=scalar * 0.4 + scalar * 2.0) for r in records]
    words = " ".join(plan.plan_finding(records, "x").sentences)
    assert "The scalar groups alone: mysql pk+2" in words and "(mysql smallest)" in words
    assert "The arrays decide the total" in words
    plain = " ".join(plan.plan_finding([read(Projection, r) for r in projections()], "x").sentences)
    assert "scalar groups alone" not in plain  # no arrays: nothing to explain


def test_ranking_weighs_disk_by_the_scalar_devdouble_marginal(synthetic_report: tuple[Path, str]) -> None:
    # Not an average over every table (spectra would decide it), nor a small table's fixed overhead.
    from hdbbench.report import criteria

    path, _ = synthetic_report
    figures = criteria.disk_criteria(path.parent)
    assert figures == {b: pytest.approx(1.5 * d) for b, d in DISK.items()}

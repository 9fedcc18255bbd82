# SPDX-License-Identifier: Apache-2.0
"""CPU placement: CPU lists as taskset takes them, refusals before anything starts, and a real run
whose processes run on the CPUs they were given (read back from the kernel)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from hdbbench.model.errors import ConfigError
from hdbbench.model.records import read
from hdbbench.results.document import load_results
from hdbbench.scenario.scenario import load_scenario
from hdbbench.stack.placement import Placement, format_cpus, machine_cpus, parse_cli, parse_cpu_list, pin
from hdbbench.stack.stack import Stack
from tests.harness import REPO, eventually
from tests.harness.runs import scenario_document, write_scenario

TINY = scenario_document(["timescaledb"], name="placed", seed=3, load={"rate": 400, "duration_s": 5, "warmup_s": 1},
                         measurements={"throughput": True})


@pytest.mark.parametrize("text, cpus", [("0", {0}), ("0-3", {0, 1, 2, 3}), ("0,2,5-7", {0, 2, 5, 6, 7}),
                                        ("0-7:2", {0, 2, 4, 6}), (" 1 ", {1})])
def test_cpu_lists_read_as_taskset_reads_them(text: str, cpus: set[int]) -> None:
    assert parse_cpu_list(text) == cpus
    assert parse_cpu_list(format_cpus(cpus)) == cpus


@pytest.mark.parametrize("text", ["", "a", "3-1", "0-", "-1", "0,,1", "1-4:0"])
def test_a_malformed_cpu_list_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_cpu_list(text)


@pytest.mark.parametrize("cpus, problem", [
    ('devices = "0-"', "devices: '0-' is not a CPU"),
    ('devices = "4096"', "devices: CPU 4096 is not on this machine"),
    ('devises = "0"', "devises: unknown group; the groups are devices, subscribers, databases, tango, controller; "
                      "did you mean 'devices'?"),
    ("devices = 0", "devices: must be a string"),
])
def test_a_bad_placement_is_refused_in_one_line_naming_file_and_key(tmp_path: Path, cpus: str, problem: str) -> None:
    path = write_scenario(tmp_path / "placed.toml", TINY, f"[placement.cpus]\n{cpus}\n")
    with pytest.raises(ConfigError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}:") and "[placement.cpus]" in message
    assert problem in message


def test_cli_placement_continues_cpu_lists_and_overrides_the_scenario(tmp_path: Path) -> None:
    scenario = load_scenario(write_scenario(tmp_path / "placed.toml", TINY,
                                            '[placement.cpus]\ndevices = "1"\ncontroller = "0"\n'))
    cli = parse_cli(["devices=0,subscribers=0,1", "databases=1"])
    merged = scenario.placement.merged(cli)
    assert merged.to_dict() == {"devices": "0", "subscribers": "0-1", "databases": "1", "controller": "0"}
    assert merged.of("tango") == machine_cpus()  # a group not named runs on every CPU
    for bad in (["devices=0,devices=1"], ["0"], ["devices=9999"], ["tang=0"]):
        with pytest.raises(ConfigError, match=r"^--cpus: "):
            parse_cli(bad)


def test_pinning_reaches_children_and_threads_and_children_inherit(tmp_path: Path) -> None:
    # A parent with a thread and a child that forks a grandchild once the pinning is done (the test
    # says so with a file); the 60 s sleeps are the processes' lives, ended by the test.
    pinned = tmp_path / "pinned"
    script = ("import os, sys, threading, time\n"
              "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
              "child = os.fork()\n"
              "if child == 0:\n"
              "    while not os.path.exists(sys.argv[1]): time.sleep(0.01)\n"
              "    os.fork(); time.sleep(60)\n"
              "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(pinned)])
    try:
        root = psutil.Process(proc.pid)
        eventually(lambda: len(root.children()) == 1 and root.num_threads() == 2, 10, "the child and the thread")
        target = {min(machine_cpus())}
        assert pin([proc.pid], target) >= 3  # main thread, its thread, the child
        pinned.touch()
        eventually(lambda: len(root.children(recursive=True)) == 2, 10, "the grandchild forked after pinning")
        family = [root, *root.children(recursive=True)]
        assert len(family) == 3
        for member in family:
            for tid in os.listdir(f"/proc/{member.pid}/task"):
                assert os.sched_getaffinity(int(tid)) == target
    finally:
        for member in psutil.Process(proc.pid).children(recursive=True):
            member.kill()
        proc.kill()
        proc.wait()


@pytest.mark.subscriber
@pytest.mark.skipif(len(machine_cpus()) < 2, reason="placement on separate CPUs needs two")
def test_a_run_with_placement_records_each_group_on_its_cpus(test_stack: Stack, stack_endpoints: object,
                                                             test_state_dir: Path, tmp_path: Path) -> None:
    low, high = sorted(machine_cpus())[:2]
    # the file asks for one placement, --cpus overrides all but the controller's
    path = write_scenario(tmp_path / "placed.toml", TINY,
                          f'[placement.cpus]\ndevices = "{high}"\nsubscribers = "{low}"\n'
                          f'databases = "{low}"\ntango = "{high}"\ncontroller = "{low}"\n')
    runs = tmp_path / "runs"
    cli = subprocess.run(
        [sys.executable, "-m", "hdbbench", "run", str(path), "--runs", str(runs), "--state-dir", str(test_state_dir),
         "--cpus", f"devices={low},subscribers={high}", "--cpus", f"databases={high},tango={low}"],
        capture_output=True, text=True, cwd=REPO, timeout=600, check=False)
    assert cli.returncode == 0, cli.stderr[-3000:]
    run_dir = next(runs.iterdir())
    trial = load_results(run_dir / "results.json")["results"]["trials"][0]
    record = trial["placement"]
    wanted = {"devices": str(low), "subscribers": str(high), "databases": str(high), "tango": str(low),
              "controller": str(low)}
    assert record["requested"] == wanted
    for group, cpus in wanted.items():
        processes = record["observed"][group]["processes"]
        assert processes, group
        assert all(p["cpus"] == cpus and p["thread_cpus"] == cpus for p in processes), (group, processes)
        assert record["observed"][group]["cpus"] == cpus
    # PostgreSQL forked a backend per subscriber connection: observed too, inheriting the postmaster's CPUs
    assert len(record["observed"]["databases"]["processes"]) > 2
    path_figures = record["archiving_path"]
    assert path_figures["cores"] == str(high) and path_figures["core_count"] == 1
    assert path_figures["us_per_event_per_core"] == pytest.approx(path_figures["us_per_event"])
    report = (run_dir / "report.html").read_text()
    assert "CPU placement" in report and "µs per event per core" in report
    # the reused stack's servers get every CPU back after the run
    servers = test_stack.status()["servers"]
    for name in ("postgres", "mariadb", "tango"):
        if servers.get(name, {}).get("pid"):
            assert os.sched_getaffinity(servers[name]["pid"]) == set(machine_cpus()), name


def test_a_bad_cpu_option_is_refused_before_anything_starts(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    path = write_scenario(tmp_path / "placed.toml", TINY)
    cli = subprocess.run([sys.executable, "-m", "hdbbench", "run", str(path), "--runs", str(runs),
                          "--state-dir", str(tmp_path / "state"), "--cpus", "devices=0,subscribers=4096"],
                         capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert cli.returncode == 2
    assert cli.stderr.strip().splitlines() == [
        f"hdbbench: error: --cpus: subscribers: CPU 4096 is not on this machine "
        f"(its CPUs: {format_cpus(machine_cpus())})"]
    assert not runs.exists() and not (tmp_path / "state").exists()


def test_without_placement_nothing_is_pinned() -> None:
    assert not Placement() and Placement().to_dict() == {}


def _record(requested: dict[str, str], observed: dict[str, str]) -> dict[str, object]:
    return {"requested": requested, "machine_cpus": "0-1",
            "observed": {g: {"cpus": c, "processes": [{"pid": 1, "name": g, "cpus": c, "thread_cpus": c}]}
                         for g, c in observed.items()},
            "archiving_path": {"cores": "1", "core_count": 1, "us_per_event": 40.0, "us_per_event_per_core": 40.0,
                               "utilisation_per_core": 0.5}}


def test_the_report_shows_the_placement_and_a_group_off_its_cpus(tmp_path: Path) -> None:
    from hdbbench.report.data import Insertion
    from hdbbench.report.placement import placement_section
    from hdbbench.report.render import render_page
    from hdbbench.results.trials import PlacementRecord

    wanted = {"devices": "0", "subscribers": "1", "databases": "1"}
    good = _throughput("timescaledb", read(PlacementRecord, _record(wanted, wanted)))
    bad = _throughput("mysql", read(PlacementRecord, _record(wanted, {**wanted, "databases": "0-1"})))
    section = placement_section(Insertion([good, bad], ["timescaledb", "mysql"], tmp_path, 0.0))
    assert section.missing is None and section.finding is not None
    words = " ".join(section.finding.sentences)
    assert "databases (mysql: 0-1 instead of 1)" in words
    page = render_page("t", [section], [])
    assert "µs per event per core" in page and "50%" in page and "timescaledb: 1, mysql: 0-1" in page
    empty = placement_section(Insertion([_throughput("mysql", None)], ["mysql"], tmp_path, 0.0))
    assert empty.missing is not None


def _throughput(backend: str, placement: Any) -> Any:
    """A throughput trial with nothing but its placement (the placement section reads no other figure)."""
    import math

    from hdbbench.results.trials import (
        Accounting,
        AgeFigures,
        DatabaseBytes,
        PendingAge,
        PendingEvents,
        StoredRate,
        TrialSummary,
    )

    nan, ages = math.nan, AgeFigures("", None, None, None)
    return TrialSummary(
        backend=backend, label=f"{backend}_throughput", kind="throughput", batch_size=None, offered_rate=1.0,
        subscribers=1, lib_overrides={}, duration_s=1.0, warmup_s=0.0,
        stored_rate=StoredRate(0, nan, nan, nan, nan, nan, nan), pending_events=PendingEvents(None, None),
        pending_age_s=PendingAge(nan, nan), event_age_at_commit_s=ages, event_age_at_reception_s=ages,
        time_in_subscriber_s=ages, cpu={}, subscriber_cpu_by_thread={},
        accounting=Accounting(emitted=0, stored=0, lost=0, duplicates=0, per_attribute=[]), drained=True,
        sampling_failures={}, subscriber_final={}, database_bytes=DatabaseBytes(0, 0, 0), placement=placement,
        subscriber_kind="hdbbench-es")

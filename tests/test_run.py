# SPDX-License-Identifier: Apache-2.0
"""`hdbbench run`: the small scenario end to end on every backend, refusals, and Ctrl-C."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from hdbbench.model.records import read, write
from hdbbench.results.disk import CaseSize
from hdbbench.results.document import load_results, read_trials
from hdbbench.results.extraction import QuerySummary
from hdbbench.results.sizing import Projection
from hdbbench.results.trials import TrialSummary
from hdbbench.stack.servers.endpoints import StackEndpoints
from tests.harness import REPO, eventually
from tests.harness.signals import default_sigint, sigint_ignored

pytestmark = pytest.mark.subscriber

SMALL_BACKENDS_LINE = next(line for line in (REPO / "scenarios" / "small.toml").read_text().splitlines()
                           if line.startswith("backends = "))

TRIAL_KEYS = {"stored_rate", "pending_events", "pending_age_s", "event_age_at_commit_s", "cpu", "accounting",
              "database_bytes"}


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:  # exited (or a zombie) meanwhile
        return ""


@pytest.fixture(scope="module")
def small_run(small_run_dir: Path) -> dict:
    return {"path": small_run_dir, "doc": load_results(small_run_dir / "results.json")}


def test_small_scenario_holds_every_measurement(small_run: dict) -> None:
    doc = small_run["doc"]
    assert json.loads((small_run["path"] / "status.json").read_text())["state"] == "completed"
    assert doc["scenario"]["seed"] == 7 and doc["environment"]["cores"] >= 1
    trials = doc["results"]["trials"]
    labels = {t["label"] for t in trials}
    for backend in doc["scenario"]["backends"]:
        for kind in ("throughput", "batch256", "batch2048", "subs2", "saturation", "sustained"):
            assert f"{backend}_{kind}" in labels
    for trial in trials:
        assert TRIAL_KEYS <= set(trial), trial["label"]
        assert trial["stored_rate"]["count"] > 0, trial["label"]
        assert trial["event_age_at_commit_s"]["p99"] is not None
        assert "subscribers" in trial["cpu"] and trial["cpu"]["subscribers"]["us_per_event"] > 0
        assert (small_run["path"] / "series" / f"{trial['label']}.csv").exists()
    assert all("sustained_share" in t for t in trials if t["kind"] == "sustained")
    for part, kind in (("extraction.json", "extraction"), ("disk.json", "disk"), ("sizing.json", "disk-plan")):
        assert load_results(small_run["path"] / part, kind)["kind"] == kind, part
    # the producers write the records the report reads (hdbbench.results.document)
    summary = load_results(small_run["path"] / "extraction.json")["results"]["summary"]
    assert summary and all(_same_json(write(read(QuerySummary, r)), r) for r in summary)
    cases = load_results(small_run["path"] / "disk.json")["results"]["cases"]
    assert cases and all(read(CaseSize, r).events > 0 and _same_json(write(read(CaseSize, r)), r) for r in cases)
    projections = load_results(small_run["path"] / "sizing.json")["results"]["projections"]
    assert projections and all(_same_json(write(read(Projection, r)), r) for r in projections)
    # one run directory: the parts write beside results.json, with no run directory of their own inside
    assert not [p for p in small_run["path"].iterdir() if p.is_dir() and (p / "status.json").exists()]
    assert (small_run["path"] / "extraction-queries.csv").exists() and (small_run["path"] / "disk-sizes.csv").exists()
    saturation = [t for t in trials if t["kind"] == "saturation"]
    assert all(t["saturation"]["steps"] for t in saturation)


def test_every_trial_says_what_it_measured_and_reads_back_as_written(small_run: dict) -> None:
    """Kind, batch size, subscriber count and subscriber kind come from the trial's settings (the label
    only names its series); the typed record writes back exactly what the file holds."""
    _, results = read_trials(small_run["path"] / "results.json")
    for backend in small_run["doc"]["scenario"]["backends"]:
        mine = [t for t in results.trials if t.backend == backend]
        assert [t.kind for t in mine] == ["throughput", "batch_sweep", "batch_sweep", "subscriber_sweep",
                                          "saturation", "sustained"], backend
        assert [t.batch_size for t in mine] == [1000, 256, 2048, 1000, 1000, 1000], backend
        assert [t.subscribers for t in mine] == [1, 1, 1, 2, 1, 1], backend
        assert {t.subscriber_kind for t in mine} == {"hdbbench-es"}
        assert [t.saturation is not None for t in mine] == [t.kind == "saturation" for t in mine]
    for written, typed in zip(small_run["doc"]["results"]["trials"], results.trials):
        assert _same_json(write(read(TrialSummary, written)), written) and typed.label == written["label"]


def _same_json(a: object, b: object) -> bool:
    """Equal as written to JSON (where NaN equals NaN)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_the_series_are_recorded_as_openmetrics_that_prometheus_loads(small_run: dict, tmp_path: Path) -> None:
    """metrics.om holds every trial that ran (a trial standing for another has no samples of its
    own); Debian's promtool loads it as Prometheus history, each sample as series/<trial>.csv has it."""
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    if not os.access(promtool, os.X_OK):
        pytest.skip(f"promtool not installed ({promtool}): run scripts/setup.sh")
    run_dir: Path = small_run["path"]
    assert (run_dir / "metrics.om").read_text().endswith("\n# EOF\n")
    database = tmp_path / "prometheus"
    subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(run_dir / "metrics.om"), str(database)],
                   check=True, capture_output=True, timeout=300)
    (database / "wal").mkdir(exist_ok=True)  # `tsdb dump` opens the head too
    dumped = subprocess.run([promtool, "tsdb", "dump", "--match", "hdbbench_rows_stored_number", str(database)],
                            check=True, capture_output=True, text=True, timeout=300).stdout
    samples: dict[str, list[float]] = {}
    for line in dumped.splitlines():
        labels, value, _ = line.rsplit(" ", 2)
        trial = labels.split('trial="', 1)[1].split('"', 1)[0]
        samples.setdefault(trial, []).append(float(value))
    ran = [t["label"] for t in small_run["doc"]["results"]["trials"] if not t.get("same_as")]
    assert sorted(samples) == sorted(ran)
    for trial in ran:
        with open(run_dir / "series" / f"{trial}.csv", newline="") as rows:
            stored = [float(row["sub.RowsStoredNumber"]) for row in csv.DictReader(rows) if row["sub.RowsStoredNumber"]]
        assert samples[trial] == stored, trial


def test_loss_accounting_adds_up(small_run: dict) -> None:
    for trial in small_run["doc"]["results"]["trials"]:
        acc = trial["accounting"]
        assert acc["emitted"] > 0, trial["label"]
        assert acc["emitted"] == acc["stored"] + acc["lost"] - acc["duplicates"]
        assert acc["lost"] == 0 and acc["duplicates"] == 0, (trial["label"], acc["lost"], acc["duplicates"])
        assert sum(a["emitted"] for a in acc["per_attribute"]) == acc["emitted"]
        assert len(acc["per_attribute"]) == 100
        # Every attribute delivered an event through Tango before the load (hdbbench.subscribers.delivery).
        assert trial["delivery_unproven"] == 0, trial["label"]


@pytest.mark.parametrize(("edit", "message"), [
    ((SMALL_BACKENDS_LINE, 'backends = ["cassandra"]'), "unknown backend 'cassandra'"),
    (('name = "small"\n', ""), "name: is missing"),
])
def test_broken_scenario_is_refused_before_anything_starts(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    scenario = tmp_path / "broken.toml"
    scenario.write_text((REPO / "scenarios" / "small.toml").read_text().replace(*edit))
    state = tmp_path / "state"
    result = subprocess.run([sys.executable, "-m", "hdbbench", "run", str(scenario), "--state-dir", str(state),
                             "--runs", str(tmp_path / "runs")], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 2 and message in result.stderr
    assert not state.exists() and not (tmp_path / "runs").exists()


def test_ctrl_c_leaves_no_process_and_an_interrupted_run(stack_endpoints: StackEndpoints, test_state_dir: Path,
                                                          tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    env = {**os.environ, "HDBBENCH_STATE_DIR": str(test_state_dir)}
    with sigint_ignored():
        cli = subprocess.Popen([sys.executable, "-m", "hdbbench", "run", str(REPO / "scenarios" / "small.toml"),
                                "--runs", str(runs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=REPO, env=env, preexec_fn=default_sigint)

    def children_once_a_subscriber_runs() -> list[psutil.Process]:
        children = psutil.Process(cli.pid).children(recursive=True)
        return children if any("hdbbench-es" in _cmdline(p) for p in children) else []

    # interrupt once the subscriber of the first trial runs
    children = eventually(children_once_a_subscriber_runs, 180, "the run starts a subscriber", interval_s=0.2)
    cli.send_signal(signal.SIGINT)
    _, stderr = cli.communicate(timeout=120)
    assert cli.returncode == 130, stderr
    _, alive = psutil.wait_procs(children, timeout=20)
    assert alive == [], f"left running: {[p.cmdline() for p in alive]}"
    (run_dir,) = runs.iterdir()
    assert json.loads((run_dir / "status.json").read_text())["state"] == "interrupted"

# SPDX-License-Identifier: Apache-2.0
"""A synthetic run directory for report tests: insertion trials of three backends in the shapes
hdbbench writes them (TrialSummary), the extraction, disk and sizing results beside them, and the
sections a report page has; `run_with`: the report's sections of such a run with more results in it.
Shared by tests/test_report.py, tests/test_migration.py and the report section tests."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from hdbbench.model.records import read, write
from hdbbench.parts.disk import reference
from hdbbench.report.page import write_report
from hdbbench.results.disk import CaseSize, TableBytes
from hdbbench.results.document import results_document
from hdbbench.results.extraction import QuerySummary, TimeStats
from hdbbench.results.sizing import Projection
from hdbbench.results.trials import TrialSummary

MEDIANS = {"timescaledb": 1900.0, "postgresql": 1500.0, "mysql": 1200.0}  # stored events/s, by backend
BACKENDS = tuple(MEDIANS)  # the backends of the synthetic results


# --- synthetic results -------------------------------------------------------------------------
def synthetic_trial(backend: str, suffix: str, median: float, kind: str, batch_size: int = 1000,
           **extra: Any) -> dict[str, Any]:
    """One trial as hdbbench.trials.insertion writes it (a TrialSummary), labelled <backend>_<suffix>."""
    ages = {"p50": 100 / median, "p99": 300 / median, "max": 500 / median, "window": "steady part, read at its end"}
    figures: dict[str, Any] = dict(
        backend=backend, label=f"{backend}_{suffix}", kind=kind, batch_size=batch_size, subscriber_kind="hdbbench-es",
        offered_rate=2000.0, subscribers=1, lib_overrides={"batch_size": str(batch_size)}, duration_s=12.0,
        warmup_s=2.0,
        stored_rate={"count": 30, "median": median, "p1": median * 0.97, "p99": median * 1.02,
                     "mean": median * 0.99, "min": median * 0.9, "max": median * 1.03},
        pending_events={"max": 5000 / median * 100, "p99": 40.0},
        pending_age_s={"max": 0.2, "p99": 0.1},
        event_age_at_commit_s=ages, event_age_at_reception_s=ages, time_in_subscriber_s=ages,
        cpu={"subscribers": {"cores": 0.1, "us_per_event": 20.0},
             "postgres": {"cores": 0.1, "us_per_event": 30.0 if backend != "mysql" else 0.0},
             "mariadb": {"cores": 0.1, "us_per_event": 25.0 if backend == "mysql" else 0.0},
             "devices": {"cores": 0.1, "us_per_event": 50.0}},
        subscriber_cpu_by_thread={},
        accounting={"emitted": 1000, "stored": 1000, "lost": 0, "duplicates": 0, "per_attribute": []},
        drained=True, sampling_failures={}, subscriber_final={},
        database_bytes={"before": 0, "after": 1000, "growth": 1000},
        placement={"requested": {}, "machine_cpus": "0-1", "observed": {
            g: {"cpus": "0-1", "processes": [{"pid": 1, "name": g, "cpus": "0-1", "thread_cpus": "0-1"}]}
            for g in ("devices", "subscribers", "databases", "tango", "controller")},
            "archiving_path": {"cores": "0-1", "core_count": 2, "us_per_event": 50.0,
                               "us_per_event_per_core": 25.0, "utilisation_per_core": 0.1}},
    )
    return dict(write(read(TrialSummary, figures | extra)))


def backend_trials(backend: str) -> list[dict[str, Any]]:
    m = MEDIANS[backend]
    steps = [{"offered_rate": 1000.0 * 1.1 ** k, "stored_median": min(1000.0 * 1.1 ** k, m), "saturated": False,
              "errors": 0, "device_cpu_us": 4.25 - 0.25 * k,
              "stored_events": round(8 * min(1000.0 * 1.1 ** k, m))} for k in range(4)]
    last = max(s["offered_rate"] for s in steps if s["offered_rate"] <= m)
    for s in steps:
        s["saturated"] = s["offered_rate"] > m
    search = {"steps": steps, "last_sustainable_rate": last, "limited_by": "subscriber", "criterion": "Elettra"}
    return [
        synthetic_trial(backend, "throughput", m, "throughput", sustained_share=1.0),
        *(synthetic_trial(backend, f"batch{n}", m * share, "batch_sweep", n)
          for n, share in ((256, 0.7), (1024, 0.85), (4096, 1.0))),
        synthetic_trial(backend, "subs1", m, "subscriber_sweep"),
        synthetic_trial(backend, "subs2", m * 1.8, "subscriber_sweep", subscribers=2),
        synthetic_trial(backend, "saturation", m, "saturation", saturation=search),
        synthetic_trial(backend, "sustained", m, "sustained", sustained_share=0.995 if backend != "mysql" else 0.9),
    ]


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1))


def make_run(root: Path, with_others: bool = True) -> Path:
    run = root / "20260101T000000Z-synthetic"
    (run / "series").mkdir(parents=True)
    scenario = {"name": "synthetic", "seed": 1, "backends": list(BACKENDS), "warmup_s": 2.0, "profile": "relaxed",
                "measurements": {"saturation": {"step": 0.1}}}
    env = {"hostname": "h", "cpu_model": "Test CPU", "cores": 8, "memory_bytes": 2 ** 34, "kernel": "6.1",
           "disk": {"device": "nvme0n1", "type": "non-rotational"}, "packages": {"numpy": "2"},
           "servers": {"postgres": "PostgreSQL 15"}, "settings": {"profile": "relaxed"}}
    trials = [t for b in BACKENDS for t in backend_trials(b)]
    write_json(run / "scenario.json", scenario)
    write_json(run / "environment.json", env)
    write_json(run / "status.json", {"state": "completed", "started": "x", "ended": "y"})
    write_json(run / "results.json", write(results_document("insertion", scenario, env, {"trials": trials})))
    for t in trials:
        with open(run / "series" / f"{t['label']}.csv", "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["t_s", "sub.RowsStoredNumber", "sub.PendingEventNumber", "sub.PendingEventAge"])
            for k in range(12):
                writer.writerow([k, k * t["stored_rate"]["median"], 10 + k % 3, 0.05])
    if with_others:
        write_others(run, scenario, env)
    return run


def write_others(run: Path, scenario: dict[str, Any], env: dict[str, Any]) -> None:
    """extraction.json, disk.json and sizing.json in the shapes their producers write (hdbbench.results.kinds)."""
    def times(p95: float) -> TimeStats:
        return TimeStats(100, p95 / 2, p95, p95 * 1.5)

    summary = [QuerySummary(b, "pk+2", "clustered" if cl else "unclustered", "random", float(i),
                            "cold" if cold else "warm", times(base * i / 3600), times(base * i / 7200), 1000.0, None)
               for b, base in (("timescaledb", 0.01), ("postgresql", 0.02), ("mysql", 0.04))
               for i in (3600, 86400, 604800) for cold in (True, False) for cl in (True, False)]
    extraction = {"cold_mode": "server restarted", "os_cache_dropped": True, "loads": [], "clustering": [],
                  "validation": {"status": "skipped", "queries": 0, "checksums": {}}, "summary": write(summary),
                  "fits": [], "queries": []}
    write_json(run / "extraction.json", write(results_document("extraction", scenario, env, extraction)))
    cases = disk_cases()
    write_json(run / "disk.json", write(results_document("disk", scenario, env, {
        "cases": cases, "fits": [], "reference": write(reference.compare([read(CaseSize, c) for c in cases])),
        "variants": [{"backend": "mysql", "variant": "pk,myrocks", "unavailable": "MyRocks: not loaded"}],
        "inventory_runs": [], "raw_bytes": "8 + 4 + 1 + value bytes"})))
    write_json(run / "sizing.json", write(results_document("disk-plan", {"inventory": {"name": "test-facility"}}, env,
                                                       {"projections": projections(), "checks": []})))


DISK = {"timescaledb": 60.0, "postgresql": 70.0, "mysql": 90.0}   # data bytes per event of scalar devdouble


def disk_case(backend: str, type_: str, data_bytes: float, fmt: str = "scalar", elements: int = 1,
              fit_ok: bool = True) -> dict[str, Any]:
    """One case as `size measure` writes it (hdbbench.results.disk.CaseSize): its marginal, and the fit's figures."""
    table, events, marginal = f"att_{fmt}_{type_}_ro", 10000, data_bytes * 1.5
    empty = TableBytes(table=table, data_bytes=0, index_bytes=8192, toast_bytes=0, free_bytes=0, total_bytes=8192,
                       allocated_bytes=None, engine="heap", parts=1, disk_bytes=8192)
    full = TableBytes(table=table, data_bytes=int(data_bytes * events), index_bytes=int(data_bytes / 2 * events),
                      toast_bytes=0, free_bytes=0, total_bytes=int(marginal * events), allocated_bytes=None,
                      engine="heap", parts=1, disk_bytes=int(marginal * events))
    raw = 13.0 + 8 * elements
    case = CaseSize(
        backend=backend, variant="pk+2", case_label=f"{fmt}_{type_}_ro", case_type=type_, case_format=fmt,
        case_write="ro", case_elements=elements, case_dim_x=elements, case_dim_y=0, case_events=events,
        case_attributes=10, case_period_s=1.0, case_string_chars=20, case_span=100.0, case_sizes=[100, 1000, 10000],
        table=table, engine="heap", parts=1, events=events, rows=events, raw_bytes=int(raw * events), before=empty,
        after=full, sizes=[], bytes_per_event=marginal, marginal_bytes_per_event=marginal, fixed_bytes=65536.0,
        fit_r2=0.9999, fit_max_residual=0.004 if fit_ok else 0.15, fit_sizes=[100, 1000, 10000], fit_span=100.0,
        fit_linear=fit_ok, fit_ok=fit_ok, fit_note="" if fit_ok else "not a line: 15.0 % off at 1000 events",
        average_bytes_per_event=marginal + 6553.6, data_per_event=data_bytes, index_per_event=data_bytes / 2,
        toast_per_event=0.0, slack_bytes=8 * 2 ** 20, free_per_event=0.0, allocated_blocks=False,
        total_per_event=marginal, raw_per_event=raw, ratio_disk_to_raw=marginal / raw, overhead_per_event=marginal - raw,
        data_per_row=data_bytes, documented_min_row_bytes=None, row_overhead_bytes=None, log_bytes={"wal": None},
        log_per_event={"wal": None})
    return dict(write(case))


def disk_cases() -> list[dict[str, Any]]:
    cases = [disk_case(b, t, d * k) for b, d in DISK.items()
             for t, k in (("devdouble", 1.0), ("devlong", 0.9), ("devboolean", 0.8), ("devstring", 1.2))]
    cases += [disk_case(b, "devdouble", d * n / 10, "spectrum", n) for b, d in DISK.items() for n in (100, 1000)]
    cases.append(disk_case("mysql", "devenum", 500.0, fit_ok=False))   # off a line: shown flagged, never used
    return cases


def projections() -> list[dict[str, Any]]:
    """Projection records as hdbbench.parts.disk.sizing.project writes them: groups with their parts, logs, replicas."""
    out = []
    for backend, per_day in (("timescaledb", 1e9), ("postgresql", 1.2e9), ("mysql", 1.6e9)):
        groups = [{"label": label, "events_per_day": 1e7, "bytes_per_event": per_day * share / 1e7,
                   "source": "marginal over 3 sizes, 100-10000 events", "bytes_per_day": per_day * share,
                   "retention_days": 730.0, "bytes_at_retention": per_day * share * 730, "log_bytes_per_day": {},
                   "parts_at_retention": parts if backend != "postgresql" else None, "share_at_retention": share}
                  for label, share, parts in (("readbacks", 0.75, 53), ("states", 0.25, 27))]
        logs = per_day * 0.5 * 7
        at_retention = per_day * 730
        out.append(dict(write(Projection(backend, "pk+2", True, per_day, per_day * 30.44, per_day * 365, at_retention,
                                         {"wal": per_day * 0.5}, groups, 2.0, 7.0, logs,  # type: ignore[arg-type]
                                         (at_retention + logs) * 2))))
    return out


def run_with(root: Path, files: dict[str, str] | None = None, **results: Any) -> dict[str, str]:
    """The sections of the report of a synthetic run (insertion trials only) with `results` added to
    its results.json (records as `hdbbench.model.records.write` writes them; None: left out) and `files` (text, by their path in
    the run directory) written into it."""
    run = make_run(root, with_others=False)
    document = json.loads((run / "results.json").read_text())
    for key, value in results.items():
        if value is not None:
            document["results"][key] = json.loads(json.dumps(write(value)))
    (run / "results.json").write_text(json.dumps(document))
    for name, text in (files or {}).items():
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_text(text)
    return sections_of(write_report(run).read_text())


# --- offline and section checks ------------------------------------------------------------------
SECTIONS = ("throughput", "lag", "batch", "subscribers", "saturation", "sustained", "cpu", "loss", "extraction",
            "disk", "sizing", "ranking", "environment")


def sections_of(page: str) -> dict[str, str]:
    parts = re.split(r"<section id='([a-z]+)'>", page)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}

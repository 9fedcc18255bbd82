# SPDX-License-Identifier: Apache-2.0
"""Faults under load: the [faults] table, the accounting by reason, the records, and `hdbbench run` of
tiny faults scenarios on real servers (TimescaleDB: a database stop and a subscriber kill; MariaDB: a
table lock), with the report's faults section. Holds are 3 s and rates low, to keep the file short."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.model.errors import ConfigError
from hdbbench.model.records import write
from hdbbench.parts.faults.accounting import (
    DROPPED,
    KillSnapshot,
    account,
    caught_up_s,
    recovery_s,
    write_stall,
)
from hdbbench.parts.faults.part import CLUSTER_FAULTS, FAULT_KINDS, FaultsPart
from hdbbench.parts.faults.results import RESULTS_KIND
from hdbbench.results.document import RunDirectory, RunPart, read_kind, results_document
from hdbbench.results.faults import FaultsResults, FaultTrial
from hdbbench.scenario.plan import RunOptions, plan_run
from hdbbench.scenario.scenario import load_scenario, parse_scenario
from hdbbench.stack.servers.registry import SERVER_KINDS
from tests.harness import REPO
from tests.harness.runs import fault_trials, nothing_left, part_scenario, run

A, B = "tango://h:1/sim/insert/1/a", "tango://h:1/sim/insert/1/b"


# --- the [faults] table ---------------------------------------------------------------------------
def test_an_empty_faults_table_runs_every_fault_with_the_documented_defaults() -> None:
    scenario = parse_scenario(part_scenario("faults", {}), Path("t.toml"))
    assert scenario.faults == FaultsPart()
    assert scenario.faults.kinds == FAULT_KINDS and len(FAULT_KINDS) == 7
    assert (scenario.faults.spool_mode, scenario.faults.spool_sync_ms, scenario.faults.hold_s) == ("write_ahead", 100, 20)
    assert parse_scenario({"name": "t"}, Path("t.toml")).faults is None


def test_the_shipped_faults_scenario_has_faults_only_on_every_backend() -> None:
    scenario = load_scenario(REPO / "scenarios" / "faults.toml")
    assert scenario.faults is not None and set(scenario.faults.kinds) == set(FAULT_KINDS)
    assert set(scenario.backends) == set(DEFAULT_BACKENDS)
    assert not scenario.measurements.throughput and scenario.to_dict()["faults"]["hold_s"] == 20


def test_spool_full_gets_a_small_queue_so_memory_overflows_into_the_spool() -> None:
    part = FaultsPart(queue_capacity=5000, spool_full_queue_capacity=50, spool_mode="overflow", spool_sync_ms=7)
    assert part.lib_overrides("spool_full", "/s") == {"spool_mode": "overflow", "spool_sync_ms": "7", "spool_dir": "/s",
                                                       "spool_limit_mb": "1024", "queue_capacity": "50"}
    assert part.lib_overrides("table_lock", "/s")["queue_capacity"] == "5000"


@pytest.mark.parametrize(("faults", "words"), [
    ({"kinds": ["database_stopp"]}, "[faults] kinds: names an unknown fault 'database_stopp'; did you mean 'database_stop'?"),
    ({"hold": 3}, "[faults] hold: unknown key; did you mean 'hold_s'?"),
    ({"spool_sync_ms": -1}, "[faults] spool_sync_ms: must be >= 0, got -1"),
    ({"queue_capacity": 0}, "[faults] queue_capacity: must be >= 1, got 0"),
])
def test_a_bad_faults_key_is_refused_in_one_line_naming_it(faults: dict, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_scenario(part_scenario("faults", faults), Path("t.toml"))
    assert str(caught.value) == f"t.toml: {words}"


# --- the accounting by reason --------------------------------------------------------------------
def test_a_database_fault_that_lost_events_has_them_unattributed_unless_the_subscriber_counted_them() -> None:
    loss = account("database_stop", {A: 10, B: 10}, {A: 10, B: 7}, {})
    assert (loss.emitted, loss.stored, loss.lost, loss.lost_by_reason) == (20, 17, 3, {"unattributed": 3})
    counted = account("spool_full", {A: 10, B: 10}, {A: 6, B: 7}, {"spool_full": 5, "queue_full": 0})
    assert counted.lost_by_reason == {"spool_full": 5, "unattributed": 2}
    assert account("table_lock", {A: 5}, {A: 5}, {}).lost_by_reason == {}


def test_a_subscriber_kill_splits_its_loss_at_the_kill_by_the_events_timestamps() -> None:
    # At the kill A had emitted 10 and 8 were stored: 2 were in memory. After it, 6 more were emitted
    # and 2 stored: 4 emitted while it was down (the devices emitted 5 until it subscribed again).
    snapshot = KillSnapshot(at=100.0, emitted={A: 10}, stored_before={A: 8}, attributes=frozenset({A}),
                            emitted_until_resubscribed=5)
    loss = account("subscriber_kill", {A: 16}, {A: 10}, {}, snapshot)
    assert loss.lost == 6
    assert loss.lost_by_reason == {"in_subscriber_memory_at_crash": 2, "emitted_while_subscriber_down": 4}
    # More lost after the kill than was emitted until it subscribed again: the excess has no reason.
    early = KillSnapshot(100.0, {A: 10}, {A: 10}, frozenset({A}), emitted_until_resubscribed=1)
    assert account("subscriber_kill", {A: 16}, {A: 12}, {}, early).lost_by_reason == {
        "emitted_while_subscriber_down": 1, "unattributed": 3}


def test_a_device_kill_counts_only_the_killed_servers_attributes() -> None:
    snapshot = KillSnapshot(100.0, {A: 10, B: 10}, {A: 9, B: 10}, frozenset({A}))
    loss = account("device_kill", {A: 15, B: 20}, {A: 12, B: 18}, {}, snapshot)
    assert loss.lost == 5
    assert loss.lost_by_reason == {"in_flight_at_device_crash": 1, "emitted_before_resubscription": 2,
                                   "unattributed": 2}
    assert sum(loss.lost_by_reason.values()) == loss.lost


@pytest.mark.parametrize("fault", ["failover", "primary_host_isolated"])
@pytest.mark.parametrize(("synchronous", "counted", "before_crash"), [
    (False, {}, {"not_replicated_at_failover": 3}),          # asynchronous: the old primary's unreplicated commits
    (True, {}, {"dropped_by_subscriber_at_failover": 3}),    # synchronous, another kind: it dropped them
    (True, {DROPPED: 2}, {"dropped_by_subscriber_at_failover": 2, "unattributed": 1}),  # ours: what it counted
    (None, {}, {"unattributed": 3}),                          # replication mode not known: nobody is blamed
])
def test_a_failover_blames_replication_only_where_it_can_lose_rows(
        fault: str, synchronous: bool | None, counted: dict[str, int], before_crash: dict[str, int]) -> None:
    # At the crash (or the cut of the primary's host) A had emitted 10 and 7 are stored of them: 3 are
    # missing. After it, 6 emitted and 5 stored: the one missing has no reason.
    snapshot = KillSnapshot(100.0, {A: 10}, {A: 7}, frozenset({A}))
    loss = account(fault, {A: 16}, {A: 12}, counted, snapshot, synchronous)
    expected = dict(before_crash)
    expected["unattributed"] = expected.get("unattributed", 0) + 1
    assert loss.lost_by_reason == expected and sum(loss.lost_by_reason.values()) == loss.lost == 4
    assert account(fault, {A: 16}, {A: 16}, counted, snapshot, synchronous).lost_by_reason == {}


def test_in_synchronous_mode_no_loss_is_ever_put_down_to_replication() -> None:
    snapshot = KillSnapshot(100.0, {A: 10}, {A: 0}, frozenset({A}))
    for counted in ({}, {DROPPED: 0}, {DROPPED: 10}):
        assert "not_replicated_at_failover" not in account("failover", {A: 10}, {}, counted, snapshot, True).lost_by_reason


ON_CLUSTER = {"servers": {"postgres": "patroni"}}


def test_a_clusters_faults_are_run_only_when_named_on_a_backend_the_cluster_serves() -> None:
    assert not set(CLUSTER_FAULTS) & set(FaultsPart().kinds)
    scenario = parse_scenario(part_scenario("faults", {"kinds": list(CLUSTER_FAULTS)}, stack=ON_CLUSTER),
                              Path("t.toml"))
    assert scenario.faults is not None and scenario.faults.kinds == CLUSTER_FAULTS
    assert scenario.to_dict()["stack_servers"] == {"postgres": "patroni"}
    plan = plan_run(scenario, RunOptions(state_dir=Path("/nonexistent/state")))
    # The cluster is started in PostgreSQL's place, and no PostgreSQL beside it.
    assert plan.stack.components == ("tango", "patroni", "local")
    assert dict(plan.stack.serving) == {"postgres": "patroni"}


@pytest.mark.parametrize(("stack", "backends", "kinds", "words"), [
    (ON_CLUSTER, ["timescaledb"], ["failover"], None),
    ({}, ["timescaledb"], ["failover"],
     "[faults] kinds: failover: backend timescaledb runs on the stack's PostgreSQL, which has no fault 'failover' "
     "(its server faults: stop, kill, fill); give [stack] servers = { postgres = \"patroni\" }"),
    (ON_CLUSTER, ["timescaledb"], ["database_kill"],
     "[faults] kinds: database_kill: backend timescaledb runs on the stack's Patroni cluster, which has no fault "
     "'kill' (its server faults: switchover, failover, primary_host_isolated, replica_lost)"),
    ({"servers": {"mariadb": "patroni"}}, ["mysql"], ["table_lock"],
     "[stack] servers: mariadb = 'patroni': the Patroni cluster cannot serve as the MariaDB (no other kind can)"),
    ({"servers": {"postgres": "patroin"}}, ["timescaledb"], ["table_lock"],
     "[stack] servers: postgres = 'patroin': not a server kind (known: " + ", ".join(k.name for k in SERVER_KINDS) + ")"),
    ({"servers": {"postgres": "mariadb"}}, ["timescaledb"], ["table_lock"],
     "[stack] servers: postgres = 'mariadb': the MariaDB cannot serve as the PostgreSQL (only patroni can)"),
])
def test_a_backend_on_a_kind_that_cannot_do_the_fault_is_refused_in_one_line(
        stack: dict, backends: list[str], kinds: list[str], words: str | None) -> None:
    document = part_scenario("faults", {"kinds": kinds}, stack=stack, backends=backends)
    if words is None:
        parse_scenario(document, Path("t.toml"))
        return
    with pytest.raises(ConfigError) as caught:
        parse_scenario(document, Path("t.toml"))
    assert str(caught.value) == f"t.toml: {words}"


def test_reads_from_a_replica_are_asked_for_backends_on_a_cluster_only() -> None:
    scenario = load_scenario(REPO / "scenarios" / "ha-replica.toml")
    assert scenario.replica_reads is not None and scenario.replica_reads.readers == 2
    assert scenario.to_dict()["replica_reads"]["query_set"].endswith("query_sets/default.toml")
    plan = plan_run(scenario, RunOptions(state_dir=Path("/nonexistent/state")))
    assert plan.replica_reads is not None and plan.replica_reads.backends == ("timescaledb",)
    document = {"name": "t", "backends": ["timescaledb"], "replica_reads": {"query_set": "query_sets/small.toml"}}
    with pytest.raises(ConfigError) as caught:
        parse_scenario(document, Path("t.toml"))
    assert str(caught.value) == ("t.toml: [replica_reads]: backend timescaledb runs on the stack's PostgreSQL, which "
                                 "has no standby to read from; give [stack] servers = { postgres = \"patroni\" }")
    with pytest.raises(ConfigError, match=r"\[replica_reads\] readers: must be >= 1, got 0"):
        parse_scenario({**document, "stack": ON_CLUSTER, "replica_reads": {"readers": 0}}, Path("t.toml"))


def test_the_shipped_ha_scenario_runs_the_clusters_faults_on_timescaledb_there() -> None:
    scenario = load_scenario(REPO / "scenarios" / "ha.toml")
    assert scenario.faults is not None and scenario.faults.kinds == CLUSTER_FAULTS
    assert scenario.backends == ("timescaledb",) and dict(scenario.stack_servers) == {"postgres": "patroni"}
    assert scenario.profile == "durable" and not scenario.measurements.throughput


def test_the_write_stall_is_the_longest_stretch_without_a_stored_row_and_catching_up_follows_it() -> None:
    times = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0]
    emitted = [100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0]
    # Before the fault (began 11.5) the back-log is 10 rows; nothing stored from 12 to 15; 20 lost in all.
    stored = [90.0, 190.0, 290.0, 290.0, 290.0, 290.0, 500.0, 750.0, 870.0]
    assert write_stall(times, stored, began=11.5, until=18.0) == 4.0
    # Back-log − loss at 16: 180, at 17: 30 (> 10 + 100 at 16, <= from 17 on): caught up 5.5 s after the begin.
    assert caught_up_s(times, stored, emitted, began=11.5, lost=20, rate=100.0) == pytest.approx(5.5)
    assert caught_up_s(times[:7], stored[:7], emitted[:7], began=11.5, lost=20, rate=100.0) is None
    # Archiving that never stopped: the stall is the sampling period, and it never fell behind.
    steady = [t * 100 - 5 for t in times]
    assert write_stall(times, steady, began=11.5, until=18.0) == 1.0
    assert caught_up_s(times, steady, [t * 100 for t in times], began=11.5, lost=0, rate=100.0) == pytest.approx(0.5)
    assert write_stall(times, [5.0] * 9, began=11.5, until=18.0) is None


def test_recovery_is_measured_from_the_end_to_the_first_sample_holding_what_will_be_stored() -> None:
    times = [10.0, 11.0, 12.0, 13.0, 14.0]
    emitted = [100.0, 200.0, 300.0, 400.0, 500.0]
    stored = [100.0, 100.0, 150.0, 290.0, 480.0]
    # Emitted at 11.5: 250; 10 lost in all: recovered once 240 rows are stored, at 13.0.
    assert recovery_s(times, stored, emitted, ended=11.5, lost=10) == pytest.approx(1.5)
    assert recovery_s(times, stored, emitted, ended=11.5, lost=0) == pytest.approx(1.5)
    assert recovery_s(times, [0.0] * 5, emitted, ended=11.5, lost=0) is None
    assert recovery_s(times, stored, emitted, ended=9.0, lost=0) is None


def test_fault_records_are_read_back_exactly_as_written(tmp_path: Path) -> None:
    trial = FaultTrial(backend="mysql", kind="hdbbench-es", fault="subscriber_kill", label="mysql_fault_subscriber_kill",
                       rate=50.0, hold_s=3.0, spool_mode="write_ahead", spool_sync_ms=0, queue_capacity=100,
                       emitted=10, stored=8, lost=2, lost_by_reason={"emitted_while_subscriber_down": 2},
                       recovery_s=1.5, marks={"began": 1.0, "ended": 4.0}, drained=True)
    run = RunDirectory.create(tmp_path, "records")
    RunPart(run, "faults").write_json("results.json", results_document(RESULTS_KIND, {}, {}, FaultsResults(trials=[trial])))
    assert read_kind(run.path / "faults.json", FaultsResults).results.trials == [trial]
    assert trial.problems() == []
    assert FaultTrial(**{**write(trial), "fault": "database_kill"}).problems() == [
        "database_kill on mysql (hdbbench-es) lost 2 events: a database fault must lose none"]


# --- end to end on real servers ------------------------------------------------------------------
def _run(tmp_path: Path, state_dir: Path, backend: str, kinds: list[str]) -> Path:
    faults = {"kinds": kinds, "rate": 100, "warmup_s": 2, "hold_s": 3, "recover_timeout_s": 30,
              "drain_timeout_s": 30, "spool_mode": "write_ahead", "spool_sync_ms": 0}
    document = part_scenario("faults", faults, [backend], name=f"faults-{backend}")
    return run(parse_scenario(document, tmp_path / "s.toml"), state_dir, tmp_path)


@pytest.mark.subscriber
def test_database_stop_loses_nothing_and_a_subscriber_kill_has_a_reason_for_every_loss(
        tmp_path: Path, test_state_dir: Path, stack_endpoints: object) -> None:
    from hdbbench.report.page import write_report

    run_dir = _run(tmp_path, test_state_dir, "timescaledb", ["database_stop", "subscriber_kill"])
    trials = fault_trials(run_dir)
    stop, kill = trials["database_stop"], trials["subscriber_kill"]
    assert stop.error is None and kill.error is None, (stop.error, kill.error)
    assert stop.emitted > 0 and stop.lost == 0 and stop.stored == stop.emitted
    assert stop.marks["began"] < stop.marks["ended"] and stop.recovery_s is not None
    assert kill.lost == kill.emitted - kill.stored
    assert sum(kill.lost_by_reason.values()) == kill.lost and kill.lost_by_reason.get("unattributed", 0) == 0
    assert kill.lost_by_reason.get("emitted_while_subscriber_down", 0) > 0  # it really was down
    assert kill.peak_memory_bytes and kill.spool_mode == "write_ahead"
    with open(run_dir / "faults-table.csv", newline="") as table:
        rows = list(csv.DictReader(table))
    assert [(r["fault"], r["lost"]) for r in rows] == [("database_stop", "0"), ("subscriber_kill", str(kill.lost))]
    page = write_report(run_dir).read_text()
    assert "<section id='faults'><h2>Faults under load</h2>" in page and "The fault table (2 trials)" in page
    # A faults-only run keeps the run directory's layout and asks for no insertion section.
    assert (run_dir / "results.json").exists() and "No insertion results" not in page
    nothing_left(test_state_dir, "faults", [t.label for t in trials.values()])


@pytest.mark.subscriber
def test_a_table_lock_on_mariadb_loses_nothing(tmp_path: Path, test_state_dir: Path, stack_endpoints: object) -> None:
    run_dir = _run(tmp_path, test_state_dir, "mysql", ["table_lock"])
    lock = fault_trials(run_dir)["table_lock"]
    assert lock.error is None, lock.error
    assert lock.emitted > 0 and lock.lost == 0 and lock.problems() == []
    nothing_left(test_state_dir, "faults", [lock.label])

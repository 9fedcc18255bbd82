# SPDX-License-Identifier: Apache-2.0
"""The database tier a facility runs: a Patroni cluster on three hosts, a switchover and a failover
while hdbbench-es archives into it (issue #30).

A stack of a Tango database and the `patroni` kind: three PostgreSQL+TimescaleDB members, each on a
host of its own (a network namespace with an address of 198.19.0.0/16), managed by Patroni with a
three-member etcd: in synchronous mode, reached by libpq's multi-host connection string
(target_session_attrs=read-write), then in asynchronous mode, reached through HAProxy (Patroni's REST
health checks). One subscriber archives a device's 4 attributes into a fresh HDB++ database on it,
with its write-ahead log (`spool_mode=write_ahead`). While the
device emits: a switchover (Patroni's REST API moves the primary to the synchronous standby), then a
failover (the primary's node crashes: its Patroni and PostgreSQL SIGKILLed; a standby takes over once
the leader key expires), and the crashed member rejoins: the faults part's `switchover` and `failover`
injectors (hdbbench.parts.faults.cluster); on the synchronous cluster then the primary's host is cut off
the network (`primary_host_isolated`) and put back, and the old primary rejoins as a replica. Then, with
synchronous replication and the write-ahead log, every event the device emitted is stored, once; with
asynchronous replication every loss has its reason (none unattributed). A standby then holds the same
rows (reads from a replica). On the asynchronous cluster a trial of the faults part (primary_host_isolated)
runs and is recorded as the others are.

At the end (pass or fail) the stack goes down, and nothing of it is left: no process in or of the
namespaces, no namespace, no link in this network namespace, no member home. A session that died
leaves a state directory `ha-<pid>` (in the test state directory) whose cluster the next one takes down first.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psutil
import pytest

from hdbbench.backends import Backend, get_backend
from hdbbench.model.errors import SchemaError
from hdbbench.parts.faults import accounting as acc
from hdbbench.parts.faults.cluster import Failover, PrimaryHostIsolated, ReplicaLost, Switchover
from hdbbench.parts.faults.factory import make_injector
from hdbbench.parts.faults.injectors import FaultTarget
from hdbbench.report.page import write_report
from hdbbench.results.document import read_kind
from hdbbench.results.faults import FaultsResults
from hdbbench.results.replica import ReplicaResults
from hdbbench.run.runner import run_scenario
from hdbbench.scenario.plan import RunOptions
from hdbbench.scenario.scenario import parse_scenario
from hdbbench.stack.servers import homes, netns
from hdbbench.stack.servers.endpoints import ClusterEndpoint, StackEndpoints
from hdbbench.stack.servers.patroni import PATRONI, PatroniCluster
from hdbbench.stack.stack import Stack
from tests.harness import REPO, eventually, seen
from tests.harness.composed import Harness, Sims, profile_toml
from tests.harness.devices import emitted_grew
from tests.harness.servers import TEST_SETTINGS, TEST_STATE_DIR, skip_without_namespaces, stack_config
from tests.harness.signals import default_sigint, sigint_ignored

pytestmark = [pytest.mark.ha, pytest.mark.subscriber, pytest.mark.timeout(600)]

BACKEND = "timescaledb"
RATE_HZ = 20.0      # per attribute: 4 attributes, 80 events/s
BETWEEN = 200       # events emitted, and rows stored, before and after each fault


def _skip_unless_possible() -> None:
    skip_without_namespaces("network namespaces and veth links", [
        *[(shutil.which(binary) is not None, f"{binary} is not installed (Debian package etcd-server; run ./run.sh setup)")
          for binary in ("etcd", "setpriv")],
        (os.access(PATRONI, os.X_OK), f"Patroni is not installed in {PATRONI.parents[1]} (run ./run.sh setup)")])


def _stale_sessions() -> None:
    """Clusters of earlier sessions that died (the pid in their state directory's name is gone)."""
    for state in TEST_STATE_DIR.glob("ha-*"):
        pid = state.name.split("-")[-1]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            Stack(stack_config(state, components=("tango", "patroni"))).down()
            shutil.rmtree(state, ignore_errors=True)


def _left_behind(cluster: PatroniCluster, pids: set[int]) -> list[str]:
    """What is left of the cluster on this machine."""
    left = [f"namespace {n}" for n in netns.namespaces() if n.startswith(f"{cluster.network.tag}-")]
    left += [f"process {p}" for p in pids if psutil.pid_exists(p)
             and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    if netns._ip("link", "show", cluster.network.link, check=False).returncode == 0:
        left.append(f"link {cluster.network.link}")
    left += [f"home {cluster.home(m)}" for m in cluster.members if cluster.home(m).exists()]
    if homes.home_path(cluster.state_dir, "").exists():
        left.append(f"homes {homes.home_path(cluster.state_dir, '')}")
    return left


def _postgres_runs(cluster: PatroniCluster) -> bool:
    for pid in cluster.network.pids():
        try:
            if psutil.Process(pid).name() == "postgres":
                return True
        except psutil.Error:
            pass
    return False


def test_ctrl_c_during_the_cluster_start_leaves_nothing(tmp_path: Path) -> None:
    """`stack up --only tango --only patroni` interrupted once PostgreSQL runs on a member (Patroni
    bootstrapping the cluster): the namespaces, the link, the processes and the homes all go, as for
    the other servers."""
    _skip_unless_possible()
    state = tmp_path / "state"
    cluster = PatroniCluster(state)
    with sigint_ignored():
        up = subprocess.Popen([sys.executable, "-m", "hdbbench", "stack", "up", "--state-dir", str(state),
                               "--only", "tango", "--only", "patroni"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO,
                              preexec_fn=default_sigint)
    try:
        eventually(lambda: _postgres_runs(cluster) or up.poll() is not None, 120, "PostgreSQL started on a member")
        pids = set(cluster.network.pids())
        assert pids, "nothing runs on the member hosts"
        up.send_signal(signal.SIGINT)
        _, stderr = up.communicate(timeout=180)
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        cluster.down()  # a failed test must not leave the cluster either
    assert up.returncode == 130, stderr
    assert "interrupted" in stderr
    assert _left_behind(cluster, pids) == []


@pytest.fixture(scope="module", params=[("on", "libpq"), ("off", "haproxy")],
                ids=["synchronous-libpq", "asynchronous-haproxy"])
def ha_stack(request: pytest.FixtureRequest) -> Iterator[tuple[Stack, StackEndpoints]]:
    """The stack with the cluster in synchronous_mode on, reached by libpq's multi-host connection
    string, then in synchronous_mode off, reached through HAProxy (one after the other)."""
    _skip_unless_possible()
    _stale_sessions()
    state = TEST_STATE_DIR / f"ha-{os.getpid()}"
    mode, router = request.param
    settings = {**TEST_SETTINGS, "patroni": {"synchronous_mode": mode, "router": router}}
    # The cluster in PostgreSQL's place, as a scenario's `[stack] servers` puts it.
    stack = Stack(stack_config(state, components=("tango", "postgres"), settings=settings,
                               serving={"postgres": "patroni"}))
    cluster = stack.server("patroni")
    assert isinstance(cluster, PatroniCluster)
    seen_pids: set[int] = set()
    passed, failed_before = False, request.session.testsfailed
    try:
        endpoints = stack.up()
        seen_pids |= set(cluster.network.pids())
        yield stack, endpoints
        seen_pids |= set(cluster.network.pids())
        passed = request.session.testsfailed == failed_before
    finally:
        stack.down()
        if passed:  # else the logs stay (<state>/patroni/<member>/*.log) until the next session's sweep
            shutil.rmtree(state, ignore_errors=True)
        left = _left_behind(cluster, seen_pids)
        assert not left, f"left behind: {left}"


@pytest.fixture
def cluster(ha_stack: tuple[Stack, StackEndpoints]) -> PatroniCluster:
    server = ha_stack[0].server("patroni")
    assert isinstance(server, PatroniCluster)
    return server


def _by_attribute(db: Backend, since: Any) -> dict[str, int] | None:
    """Rows per attribute, or None while the cluster has no primary (between a crash and a promotion)."""
    try:
        return db.count_rows_by_attribute(since)
    except SchemaError:
        return None


def _stored(db: Backend, since: Any) -> int:
    got = eventually(lambda: _by_attribute(db, since), 120, "a primary to read the rows from")
    return sum(got.values())


def _archiving_on(db: Backend, since: Any, what: str) -> None:
    """Rows keep coming: `BETWEEN` more stored than now (the subscriber found the primary again)."""
    before = _stored(db, since)
    eventually(lambda: (lambda got: seen(got is not None and sum(got.values()) >= before + BETWEEN, got))(
        _by_attribute(db, since)), 120,
               f"{what}: {BETWEEN} more rows stored")


def test_switchover_and_failover_under_load(ha_stack: tuple[Stack, StackEndpoints], cluster: PatroniCluster,
                                            tmp_path: Path) -> None:
    """Synchronous (with the primary's host isolated too): nothing lost. Asynchronous: whatever is lost
    was stamped before the crash of the primary (committed there, never replicated), and the accounting
    says so; nothing unattributed."""
    stack, endpoints = ha_stack
    endpoint = endpoints["patroni"]
    assert isinstance(endpoint, ClusterEndpoint)
    if cluster.router == "haproxy":  # one address: HAProxy's, on this machine's side of the bridge
        assert endpoint.hosts == (cluster.network.here,)
    else:
        assert endpoint.hosts == tuple(cluster.address_of(m) for m in cluster.members)
    assert cluster.is_ready()
    assert stack.settings_in_force()["patroni"]["synchronous_mode"] == ("on" if cluster.synchronous else "off")

    with Harness(endpoints, tmp_path) as h:
        db = h.database(BACKEND, prefix="ha", endpoint=endpoint)
        sims: Sims = h.devices(profile_toml(tmp_path, "ha", RATE_HZ))
        lib = h.lib(db, spool_dir=str(tmp_path / "spool"), spool_mode="write_ahead", spool_sync_ms=0,
                    reconnect_min_ms=100, reconnect_max_ms=1000)
        assert any(line.startswith("connect_string=") and f"host='{endpoint.host}'" in line for line in lib), lib
        es = h.subscriber(97, None, sims.names, lib=lib)
        since = h.archiving(es, db, sims)
        sim = sims.proxy()
        sim.Start()
        _archiving_on(db, since, "before the faults")

        target = FaultTarget(state_dir=stack.state_dir, backend=BACKEND, database=db.database, tables=())
        # Switchover: Patroni moves the primary to a standby (the synchronous one in synchronous mode).
        switchover = make_injector("switchover", target)
        assert isinstance(switchover, Switchover)
        candidate = cluster.switchover_candidate()
        switchover.arm()
        switchover.begin()
        assert switchover.primary_after == candidate != switchover.primary_before
        _archiving_on(db, since, "after the switchover")
        # Whole again: in synchronous mode Patroni promotes only the synchronous standby it recorded, so
        # a crash before the new primary has one would leave no member to promote.
        switchover.end()
        switchover.disarm()
        assert switchover.marks["began"] <= switchover.marks["promoted"] <= switchover.marks["back"]

        # Failover: the primary's node crashes; a standby takes over once the leader key expires; the
        # crashed member rejoins as a replica. The devices' counters are read at the crash.
        failover = make_injector("failover", target)
        assert isinstance(failover, Failover)
        at_crash: dict[str, Any] = {}
        failover.at_crash = lambda: at_crash.update(at=time.time(), emitted=sims.emitted())
        failover.arm()
        failover.begin()
        assert failover.primary_after not in (None, failover.primary_before)
        _archiving_on(db, since, "after the failover")
        failover.end()
        failover.disarm()
        assert cluster.is_ready() and {"down", "promoted", "back"} <= set(failover.marks)
        if cluster.synchronous:  # asynchronous: a trial of the faults part below (its loss accounted alone)
            _isolate_the_primary(target, cluster, db, since)

        emitted_grew(sim, BETWEEN)
        sim.Stop()
        emitted = sims.emitted()
        # Drained: the subscriber holds nothing, and the rows stay as they are.
        eventually(lambda: seen(int(es.PendingEventNumber) == 0, es.PendingEventNumber), 120, "queue drained")
        stored = eventually(lambda: _by_attribute(db, since), 120, "the rows")
        after_crash = eventually(lambda: _by_attribute(db, _utc(at_crash["at"])), 120, "the rows after the crash")
        assert int(es.LostEventNumber) == 0
        assert all(stored.get(n, 0) <= emitted[n] for n in sims.names), ("duplicates", stored, emitted)

        # Reads from a standby: it holds every row the primary has, once it has replayed them.
        replica = cluster.replica_endpoint()
        assert replica is not None
        with closing(replica.connect(db.database)) as conn:
            assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        on_replica = get_backend(BACKEND, replica, db.database)
        eventually(lambda: (lambda got: seen(got == stored, (got, stored)))(_by_attribute(on_replica, since)), 60,
                   "the standby holds the primary's rows")

    loss = _failover_loss(sims.names, emitted, stored, after_crash, at_crash, {}, cluster.synchronous)
    assert "unattributed" not in loss.lost_by_reason, loss
    assert sum(loss.lost_by_reason.values()) == loss.lost
    if cluster.synchronous:
        assert loss.lost == 0 and stored == {n: emitted[n] for n in sims.names}, loss


def _isolate_the_primary(target: FaultTarget, cluster: PatroniCluster, db: Backend, since: Any) -> None:
    """The primary's host cut off the network while archiving: a standby takes over, archiving goes
    on; the host put back, the old primary rejoins as a replica."""
    isolated = make_injector("primary_host_isolated", target)
    assert isinstance(isolated, PrimaryHostIsolated)
    isolated.arm()
    isolated.begin()
    assert isolated.primary_after not in (None, isolated.primary_before)
    _archiving_on(db, since, "with the primary's host isolated")
    isolated.end()
    isolated.disarm()
    assert {"down", "promoted", "ended", "back"} <= set(isolated.marks)
    _a_replica(cluster, str(isolated.primary_before))


def _a_replica(cluster: PatroniCluster, member: str) -> None:
    """`member` is back as a replica: Patroni says so, and its PostgreSQL is in recovery."""
    assert cluster.is_ready() and cluster.leader() != member
    roles = {m["name"]: (m.get("role"), m.get("state")) for m in (cluster.cluster() or {}).get("members", [])}
    assert roles.get(member, (None, None))[0] in ("replica", "sync_standby") and roles[member][1] == "streaming", roles
    with closing(cluster.direct_endpoint().member(cluster.address_of(member)).connect()) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)


def test_a_lost_replica_loses_nothing_with_synchronous_mode(
        ha_stack: tuple[Stack, StackEndpoints], cluster: PatroniCluster, tmp_path: Path) -> None:
    """The synchronous standby's node crashes: another member becomes synchronous standby, archiving
    goes on; the lost one comes back. Nothing lost. On the synchronous cluster only (the module's time)."""
    if not cluster.synchronous:
        pytest.skip("run on the synchronous cluster only (the module's time)")
    stack, endpoints = ha_stack
    with Harness(endpoints, tmp_path) as h:
        db = h.database(BACKEND, prefix="ha", endpoint=endpoints["patroni"])
        sims: Sims = h.devices(profile_toml(tmp_path, "hapart", RATE_HZ))
        lib = h.lib(db, spool_dir=str(tmp_path / "spool"), spool_mode="write_ahead", spool_sync_ms=0,
                    reconnect_min_ms=100, reconnect_max_ms=1000)
        es = h.subscriber(98, None, sims.names, lib=lib)
        since = h.archiving(es, db, sims)
        sim = sims.proxy()
        sim.Start()
        _archiving_on(db, since, "before the faults")
        target = FaultTarget(state_dir=stack.state_dir, backend=BACKEND, database=db.database, tables=())

        lost = make_injector("replica_lost", target)
        assert isinstance(lost, ReplicaLost)
        lost.arm()
        lost.begin()
        _archiving_on(db, since, "without the lost replica")
        lost.end()
        lost.disarm()
        assert {"down", "promoted", "back"} <= set(lost.marks)

        emitted_grew(sim, BETWEEN)
        sim.Stop()
        emitted = sims.emitted()
        eventually(lambda: (lambda got: seen(got == {n: emitted[n] for n in sims.names}, (got, emitted)))(
            _by_attribute(db, since)), 120, "every emitted event stored, once")
        assert int(es.LostEventNumber) == 0


def test_a_subscriber_that_drops_its_batch_at_a_failover_is_blamed_not_replication(
        ha_stack: tuple[Stack, StackEndpoints], cluster: PatroniCluster, tmp_path: Path) -> None:
    """A contestant that fails on purpose: ours with `drop_batch_on_lost_connection=1` and no spool,
    batches of 2 s, so that the batch it writes when the primary is gone is dropped. With synchronous
    replication no committed row is lost in a failover, so its loss is put down to it (its own count
    of rejected rows), never to replication. On the synchronous cluster only (the module's time)."""
    if not cluster.synchronous:
        pytest.skip("run on the synchronous cluster only (the module's time)")
    stack, endpoints = ha_stack
    with Harness(endpoints, tmp_path) as h:
        db = h.database(BACKEND, prefix="ha", endpoint=endpoints["patroni"])
        sims: Sims = h.devices(profile_toml(tmp_path, "hadrop", RATE_HZ))
        lib = h.lib(db, drop_batch_on_lost_connection=1, flush_interval_ms=2000, reconnect_min_ms=100,
                    reconnect_max_ms=1000)
        es = h.subscriber(95, None, sims.names, lib=lib)
        since = h.archiving(es, db, sims)
        sim = sims.proxy()
        sim.Start()
        _archiving_on(db, since, "before the failover")
        target = FaultTarget(state_dir=stack.state_dir, backend=BACKEND, database=db.database, tables=())
        failover = make_injector("failover", target)
        assert isinstance(failover, Failover)
        at_crash: dict[str, Any] = {}
        failover.at_crash = lambda: at_crash.update(at=time.time(), emitted=sims.emitted())
        failover.arm()
        failover.begin()
        _archiving_on(db, since, "after the failover")
        failover.end()
        failover.disarm()
        emitted_grew(sim, BETWEEN)
        sim.Stop()
        emitted = sims.emitted()
        eventually(lambda: seen(int(es.PendingEventNumber) == 0, es.PendingEventNumber), 120, "queue drained")
        stored = eventually(lambda: _by_attribute(db, since), 120, "the rows")
        after_crash = eventually(lambda: _by_attribute(db, _utc(at_crash["at"])), 120, "the rows after the crash")
        dropped = int(es.DbErrorNumber)

    loss = _failover_loss(sims.names, emitted, stored, after_crash, at_crash, {acc.DROPPED: dropped},
                          cluster.synchronous)
    assert dropped > 0 and loss.lost > 0, (dropped, loss)  # it did drop a batch, and events are missing
    assert "not_replicated_at_failover" not in loss.lost_by_reason, loss
    assert loss.lost_by_reason.get("dropped_by_subscriber_at_failover") == min(loss.lost, dropped), loss


def _failover_loss(names: list[str], emitted: dict[str, int], stored: dict[str, int], after_crash: dict[str, int],
                   at_crash: dict[str, Any], counted: dict[str, int], synchronous: bool) -> acc.Loss:
    """The failover's loss by reason, split at the crash as the faults part splits it."""
    snapshot = acc.KillSnapshot(at_crash["at"], at_crash["emitted"],
                                {n: stored.get(n, 0) - after_crash.get(n, 0) for n in names}, frozenset(names))
    return acc.account("failover", {n: emitted[n] for n in names}, stored, counted, snapshot, synchronous)


def _utc(seconds: float) -> Any:
    return datetime.fromtimestamp(seconds, timezone.utc)


def test_a_scenario_runs_the_faults_part_and_replica_reads_on_the_cluster_and_reports_them(ha_stack: tuple[Stack, StackEndpoints],
                                                                        cluster: PatroniCluster, tmp_path: Path) -> None:
    """`hdbbench run` of a scenario whose timescaledb is on the cluster (`[stack] servers = { postgres =
    "patroni" }`), on the stack the module runs (a run reuses a stack that is up, and leaves it up): a
    primary_host_isolated trial of the faults part (a failover by a cut link; the crash is above) is
    recorded as the other faults' are (the loss by reason adds up, none unattributed, no duplicate), with
    the window in which nothing was stored, the catch-up and the replication lag, the cluster whole after
    it (the old primary back as a replica), and the report's fault table shows them. Then reads from a
    standby beside archiving ([replica_reads], the small query set): the queries ran there without an
    error, and both stretches (without and with the reader) stored rows and have an event age; the
    report has their section. On the asynchronous cluster only (the module's time; the synchronous case
    is above)."""
    if cluster.synchronous:
        pytest.skip("run on the asynchronous cluster only (the module's time)")
    stack, endpoints = ha_stack
    assert endpoints["postgres"] == endpoints["patroni"]  # the fixture's stack has the cluster in PostgreSQL's place
    document = {"name": "ha-test", "backends": [BACKEND], "stack": {"profile": "relaxed", "servers": {"postgres": "patroni"}},
                "devices": {"profile": "devices/profiles/insertion-devdouble.toml"},
                "subscribers": {"lib_configuration": {"batch_size": "100"}}, "measurements": {"throughput": False},
                "faults": {"kinds": ["primary_host_isolated"], "rate": 4 * RATE_HZ, "warmup_s": 3, "hold_s": 3,
                           "recover_timeout_s": 60, "drain_timeout_s": 60, "spool_sync_ms": 0},
                # Reads from a standby beside archiving, after the failover: the small query set's few
                # thousand events, a short stretch without and with one reader.
                "replica_reads": {"query_set": "query_sets/small.toml", "rate": 4 * RATE_HZ, "warmup_s": 2,
                                  "duration_s": 5, "readers": 1}}
    scenario = parse_scenario(document, tmp_path / "ha-test.toml")
    # A run reuses a stack only when it is ready: a member still rejoining after the failover above
    # would make the run start a cluster of its own (and take it down at its end).
    eventually(cluster.is_ready, 180, "the cluster whole again before the run")
    # The settings the module's cluster runs with: another router or mode would restart it.
    overrides = {"patroni": {"synchronous_mode": "off", "router": cluster.router}}
    run_dir = run_scenario(scenario, RunOptions(state_dir=stack.state_dir, runs_root=tmp_path / "runs",
                                                settings_overrides=overrides))
    trials = read_kind(run_dir / "faults.json", FaultsResults).results.trials
    assert [t.fault for t in trials] == ["primary_host_isolated"]
    record = trials[0]
    assert record.error is None, record.error
    assert record.emitted > 0 and record.stored > 0
    assert {"down", "promoted", "back"} <= set(record.marks)
    assert "unattributed" not in record.lost_by_reason, record.lost_by_reason
    assert sum(record.lost_by_reason.values()) == record.lost and record.duplicates == 0
    # The primary was gone until a standby was promoted (Patroni's ttl): the window covers some of it.
    assert record.write_stall_s is not None and record.write_stall_s > 1.0
    assert record.caught_up_s is not None and record.lag_bytes_max is not None and record.lag_bytes_at_begin is not None
    reads = read_kind(run_dir / "replica.json", ReplicaResults).results.trials[0]
    assert reads.error is None, reads.error
    assert reads.loaded_rows > 0 and sum(q.runs for q in reads.queries) > 0
    assert not [q for q in reads.queries if q.errors], reads.queries
    for stretch in (reads.without, reads.with_readers):
        assert (stretch["stored_rate_p50"] or 0) > 0 and stretch["age_p99_s"] is not None, stretch
    report = write_report(run_dir).read_text()
    assert "replication lag max / at begin" in report and "nothing stored (s)" in report
    assert "Reads from a replica" in report
    assert cluster.is_ready() and stack.status()["all_ready"]  # the run left the module's stack up

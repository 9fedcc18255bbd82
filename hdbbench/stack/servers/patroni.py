# SPDX-License-Identifier: Apache-2.0
"""A Patroni cluster of PostgreSQL 15 + TimescaleDB on three hosts: the database tier of a facility
that runs HDB++ on a replicated cluster (ESRF: TimescaleDB on three nodes managed by Patroni).

Each member is a host of its own (a network namespace, hdbbench.stack.servers.netns) running an etcd
member and a Patroni daemon, which runs PostgreSQL; the three etcd members are Patroni's consensus
store. Patroni bootstraps the first member with initdb, the others clone it with pg_basebackup and
stream from it; with `synchronous_mode` on, the primary commits only once a synchronous standby has
the WAL, so a failover loses no commit that a client saw. Clients reach the primary by a libpq
multi-host connection string (`ClusterEndpoint`, target_session_attrs=read-write), or, with the setting
`router = haproxy`, through HAProxy (hdbbench.stack.servers.haproxy); `replica_endpoint` for reads.

Inside its namespace each member has its address to itself, so every member uses the well-known
ports (PostgreSQL 5432, Patroni REST 8008, etcd 2379/2380). PostgreSQL has no Unix socket (members
share this machine's file system, and /run/postgresql would be one socket for three servers).

Everything runs as the account `postgres` (PostgreSQL refuses root; etcd and Patroni need nothing
more), with data in the members' homes under /var/tmp/hdbbench-<uid>/ (hdbbench.stack.servers.homes).
`down` stops Patroni (which stops its PostgreSQL), then etcd, kills whatever is left in the
namespaces, removes them and the homes: nothing is left behind, also after a failure or Ctrl-C in
`up`. It needs root (namespaces).
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shutil
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psutil

from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.stack.servers import homes, process
from hdbbench.stack.servers.base import ServerStatus
from hdbbench.stack.servers.endpoints import ClusterEndpoint, PostgresEndpoint
from hdbbench.stack.servers.haproxy import PRIMARY_PORT, REPLICA_PORT, PrimaryRouter
from hdbbench.stack.servers.netns import HostNetwork, process_ids, sweep_stale, tag_of
from hdbbench.stack.servers.ports import LOOPBACK
from hdbbench.stack.servers.postgres import AUTOVACUUM, PG_BINDIR, SUPERUSER
from hdbbench.stack.servers.process import ProcessRecord, RunAs

MEMBERS = ("m1", "m2", "m3")
# Patroni from PyPI, pinned in scripts/patroni-requirements.txt and installed by scripts/setup.sh in a
# virtualenv the members' account can read (Debian's 3.0.2 races in its demotion: docs/ha.md).
PATRONI = homes.HOMES_ROOT / f"hdbbench-{os.geteuid()}" / "patroni" / "bin" / "patroni"
PG_PORT, REST_PORT, ETCD_CLIENT_PORT, ETCD_PEER_PORT = 5432, 8008, 2379, 2380
REPLICATOR = "replicator"
SCOPE = "hdbbench"
ACCOUNT = "postgres"

# Settings every member must share (Patroni keeps them in etcd and applies them to all).
CLUSTER_PARAMETERS: dict[str, Any] = {
    "max_connections": 100,
    "max_worker_processes": 16,
    "max_wal_senders": 10,
    "max_replication_slots": 10,
    "wal_level": "replica",
    "hot_standby": "on",
    "wal_keep_size": "256MB",
    "max_wal_size": "1GB",
    # A peer cut off the network sends no reset: replication connections notice by these timeouts (and
    # a primary's shutdown, which waits for its WAL senders, does not wait the default minute).
    "wal_sender_timeout": "10s",
    "wal_receiver_timeout": "10s",
}
# Each member's own: small buffers, as three servers share a 2-core machine with the rest of a run.
MEMBER_PARAMETERS: dict[str, Any] = {
    "shared_buffers": "256MB",
    "work_mem": "16MB",
    "unix_socket_directories": "",
    "shared_preload_libraries": "timescaledb",
    "timescaledb.telemetry_level": "off",
    "timescaledb.max_background_workers": 4,
    "timezone": "UTC",
    "log_timezone": "UTC",
    "jit": "off",
    **AUTOVACUUM,  # as the private servers': tables in their vacuum cycle from the start
    "password_encryption": "scram-sha-256",
    # PostgreSQL's own log in <data>/log: Patroni does not pass its output on.
    "logging_collector": "on",
    "log_directory": "log",
}
# Patroni's timing: a dead primary's leader key expires after `ttl` s, then a replica takes over.
# Short (a failover in about 20 s) but within Patroni's rule loop_wait + 2 * retry_timeout <= ttl.
TIMING = {"ttl": 20, "loop_wait": 2, "retry_timeout": 5}
# In synchronous mode a primary cut off the network never finishes a fast shutdown (a session's exit waits
# for its unreachable standby: docs/ha.md, "The primary's host isolated"); Patroni ends a stop that lasts
# longer by an immediate shutdown (synchronous mode only). A clean stop takes a second or two here.
PRIMARY_STOP_TIMEOUT_S = 10


# The settings profiles (hdbbench.stack.settings; `--set patroni.synchronous_mode=off`): durable runs
# synchronous replication (a commit waits for a standby's WAL flush: a failover loses no acknowledged
# commit), relaxed asynchronous (faster; a failover can lose what the standbys had not received).
# The other keys are the members' PostgreSQL parameters.
# `router`: how clients reach the primary: "libpq" (a multi-host connection string) or "haproxy"
# (one address, HAProxy checking Patroni's REST API; hdbbench.stack.servers.haproxy).
PROFILES = {
    "durable": {"synchronous_mode": "on", "router": "libpq", "synchronous_commit": "on"},
    "relaxed": {"synchronous_mode": "off", "router": "libpq", "synchronous_commit": "on"},
}
ROUTERS = ("libpq", "haproxy")
CLUSTER_KEYS = ("synchronous_mode", "router")  # the cluster's own settings; the others are PostgreSQL's


def _on(value: str | bool | None, default: bool) -> bool:
    if value is None:
        return default
    return value if isinstance(value, bool) else value.strip().lower() in ("on", "true", "1", "yes")


class PatroniCluster:
    """The cluster as the stack sees one server (up, down, running, status, meta)."""

    name = "patroni"
    stop_signal = signal.SIGTERM
    ready_timeout_s = 180.0

    def __init__(self, state_dir: Path, settings: Mapping[str, str] | None = None, *, attached: bool = False,
                 keep_running: bool = False, address: str = LOOPBACK, members: tuple[str, ...] = MEMBERS) -> None:
        self.state_dir = Path(state_dir)
        self.dir = self.state_dir / self.name
        self.settings = dict(settings or {})
        self._meta_path = self.dir / "server.json"
        # Without settings (a fault's or `down`'s view of a running cluster): the mode it runs in.
        self.synchronous = _on(self.settings.get("synchronous_mode"), bool(self.meta().get("synchronous", True)))
        self.router = str(self.settings.get("router") or self.meta().get("router") or ROUTERS[0])
        if self.router not in ROUTERS:
            raise ConfigError(f"patroni.router: {self.router!r} is not one of {', '.join(ROUTERS)}")
        self.attached = attached
        self.address = address  # unused: the members have addresses of their own
        self.members = members
        self.network = HostNetwork(tag_of(self.state_dir), members)
        self.run_as = RunAs.for_server(ACCOUNT)
        self.haproxy = PrimaryRouter(self.dir, attached)
        self._answered: str | None = None  # the member whose REST API answered last (cluster())

    # --- records ----------------------------------------------------------------------------------
    def address_of(self, member: str) -> str:
        return self.network.address(member)

    def _record_path(self, member: str, what: str) -> Path:
        return self.dir / member / f"{what}.json"

    def record(self, member: str = "", what: str = "patroni") -> ProcessRecord | None:
        return ProcessRecord.load(self._record_path(member or self.members[0], what))

    def meta(self) -> dict[str, Any]:
        try:
            data = json.loads(self._meta_path.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_meta(self, meta: dict[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        homes.write_file(self._meta_path, json.dumps(meta, indent=2), 0o600)  # passwords: owner only

    def running(self) -> bool:
        return any(rec is not None and rec.alive() for rec in self._records()) or self.haproxy.running()

    def _records(self) -> list[ProcessRecord | None]:
        return [ProcessRecord.load(self._record_path(m, w)) for m in self.members for w in ("patroni", "etcd")]

    def home(self, member: str) -> Path:
        return homes.home_path(self.state_dir, f"{self.name}-{member}")

    # --- the endpoint and the cluster's state -----------------------------------------------------
    def endpoint(self, meta: dict[str, Any] | None = None) -> ClusterEndpoint:
        """How clients reach the primary: the members by libpq, or HAProxy's primary address."""
        direct = self.direct_endpoint(meta)
        if self.router == "haproxy":
            return dataclasses.replace(direct, hosts=(self.network.here,), port=PRIMARY_PORT)
        return direct

    def direct_endpoint(self, meta: dict[str, Any] | None = None) -> ClusterEndpoint:
        """Every member by libpq's multi-host connection string (whatever the router)."""
        meta = meta if meta is not None else self.meta()
        return ClusterEndpoint(hosts=tuple(self.address_of(m) for m in self.members), port=PG_PORT,
                               user=SUPERUSER, password=meta.get("password", ""), rest_port=REST_PORT)

    def replica_endpoint(self) -> PostgresEndpoint | None:
        """A standby for reads: HAProxy's replica address, or a replica member; None without one."""
        direct = self.direct_endpoint()
        if self.router == "haproxy":
            return PostgresEndpoint(host=self.network.here, port=REPLICA_PORT, user=direct.user,
                                    password=direct.password)
        standby = next((m["name"] for m in (self.cluster() or {}).get("members", [])
                        if m.get("role") != "leader" and m.get("state") in ("running", "streaming")), None)
        return direct.member(self.address_of(standby)) if standby else None

    def rest(self, member: str, path: str, method: str = "GET", body: dict[str, Any] | None = None,
             timeout_s: float = 5.0) -> tuple[int, Any]:
        """One call of a member's Patroni REST API: (HTTP status, the JSON or text it answered)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://{self.address_of(member)}:{REST_PORT}{path}", data=data,
                                         method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as answer:
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        text = raw.decode(errors="replace")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def cluster(self) -> dict[str, Any] | None:
        """Patroni's view of the cluster (GET /cluster of the first member that answers; the one that
        answered last asked first, so that polling does not wait for a cut-off member's time-out)."""
        for member in sorted(self.members, key=lambda m: m != self._answered):
            try:
                status, answer = self.rest(member, "/cluster", timeout_s=2)
            except OSError:
                continue
            if status == 200 and isinstance(answer, dict):
                self._answered = member
                return answer
        return None

    def leader(self) -> str | None:
        """The member that is primary now, by Patroni's view."""
        view = self.cluster() or {}
        return next((m["name"] for m in view.get("members", []) if m.get("role") == "leader"
                     and m.get("state") == "running"), None)

    def switchover_candidate(self) -> str | None:
        """The member a switchover promotes: the synchronous standby in synchronous mode (the only one
        Patroni accepts then), else the replica with the least lag."""
        members = [m for m in (self.cluster() or {}).get("members", []) if m.get("state") in ("running", "streaming")]
        role = "sync_standby" if self.synchronous else None
        standbys = [m for m in members if (m.get("role") == role if role else m.get("role") != "leader")]
        if not standbys:
            return None
        return str(min(standbys, key=lambda m: m.get("lag") if isinstance(m.get("lag"), int) else 1 << 62)["name"])

    def lag_bytes(self) -> int | None:
        """The largest replication lag of a standby, in bytes of WAL, as Patroni reports it."""
        lags = [m["lag"] for m in (self.cluster() or {}).get("members", []) if isinstance(m.get("lag"), int)]
        return max(lags) if lags else None

    def own_roles(self) -> dict[str, str]:
        """Each running member's role by its own Patroni (GET /patroni): "primary", or "replica" once
        it streams (the others are left out)."""
        roles = {}
        for member in self.members:
            try:
                status, answer = self.rest(member, "/patroni", timeout_s=2)
            except OSError:
                continue
            if status == 200 and isinstance(answer, dict) and answer.get("state") == "running" and (
                    answer.get("role") == "primary" or answer.get("replication_state") == "streaming"):
                roles[member] = str(answer.get("role"))
        return roles

    def is_ready(self, expect: int | None = None) -> bool:
        """A running leader, `expect` (all) members running, a synchronous standby in synchronous mode,
        every member (all of them) agreeing by its own Patroni (one primary, the others streaming),
        and the primary taking a read-write session."""
        view = self.cluster()
        if view is None:
            return False
        members = view.get("members", [])
        running = [m for m in members if m.get("state") in ("running", "streaming")]
        if len(running) < (expect if expect is not None else len(self.members)):
            return False
        leader = next((m["name"] for m in running if m.get("role") == "leader"), None)
        if leader is None:
            return False
        if self.synchronous and not any(m.get("role") == "sync_standby" for m in running):
            return False
        # The member that answered may be one just back on the network, its view stale: ask each.
        if expect is None and self.own_roles() != {m: "primary" if m == leader else "replica" for m in self.members}:
            return False
        # deferred: the PostgreSQL driver loads only where a PostgreSQL server is used
        import psycopg

        # The primary takes a read-write session, directly and, once HAProxy runs, through it too.
        ways = [self.direct_endpoint()] + ([self.endpoint()] if self.haproxy.running() else [])
        try:
            for endpoint in ways:
                with endpoint.connect(connect_timeout=3) as conn:
                    row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
                    if row is None or row[0]:
                        return False
        except psycopg.Error:
            return False
        return True

    # --- life cycle -------------------------------------------------------------------------------
    def up(self) -> ClusterEndpoint:
        """Start the cluster (or reuse it when it runs and is ready); return its endpoint."""
        meta = self.meta()
        if self.running() and meta.get("synchronous") == self.synchronous and meta.get("router") == self.router \
                and self.is_ready():
            return self.endpoint(meta)
        if not os.access(PATRONI, os.X_OK):
            raise ServerError(f"Patroni is not installed in {PATRONI.parents[1]}: run ./run.sh setup "
                              "(scripts/patroni-requirements.txt)")
        self.down()
        sweep_stale()  # the namespaces of clusters whose state directory is gone (a crashed command's)
        meta = {"password": secrets.token_urlsafe(18), "replication_password": secrets.token_urlsafe(18),
                "synchronous": self.synchronous, "members": {m: self.address_of(m) for m in self.members},
                "namespaces": [self.network.ns(m) for m in self.members], "settings": self.settings,
                "router": self.router}
        self._save_meta(meta)
        try:
            self.network.up()
            for member in self.members:
                self._prepare(member, meta)
            for member in self.members:
                self._spawn(member, "etcd", self._etcd_command(member))
            for member in self.members:  # the first bootstraps; the others wait for its leader key
                self._spawn(member, "patroni", [str(PATRONI), str(self.home(member) / "patroni.yml")])
            self._wait_ready()
            if self.router == "haproxy":
                self.haproxy.start(self.network.here, {m: self.address_of(m) for m in self.members},
                                   PG_PORT, REST_PORT)
                self._wait_ready()
        except BaseException:
            self.down()
            raise
        meta["version"] = self.version()
        self._save_meta(meta)
        return self.endpoint(meta)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.is_ready():
                return
            dead = [(m, w) for m in self.members for w in ("etcd", "patroni")
                    if not ((rec := ProcessRecord.load(self._record_path(m, w))) and rec.alive())]
            if self.haproxy.record_path.exists() and not self.haproxy.running():
                raise ServerError(f"HAProxy exited during start-up: {process.last_log_line(self.haproxy.log_path)} "
                                  f"(log: {self.haproxy.log_path})")
            if dead:
                log = self._log(*dead[0])
                raise ServerError(f"Patroni cluster: {', '.join(f'{m} {w}' for m, w in dead)} exited during start-up: "
                                  f"{process.last_log_line(log)} (log: {log})")
            time.sleep(1.0)
        raise ServerError(f"Patroni cluster not ready after {self.ready_timeout_s:.0f} s: {self.cluster()} "
                          f"(logs: {self.dir}/<member>/patroni.log)")

    def _log(self, member: str, what: str) -> Path:
        return self.dir / member / f"{what}.log"

    def _prepare(self, member: str, meta: dict[str, Any]) -> None:
        (self.dir / member).mkdir(parents=True, exist_ok=True)
        home = homes.make_home(self.state_dir, f"{self.name}-{member}", self.run_as.uid, self.run_as.gid)
        homes.write_file(home / "patroni.yml", json.dumps(self._patroni_config(member, meta, home), indent=2),
                         0o600, self.run_as.uid, self.run_as.gid)

    def _spawn(self, member: str, what: str, argv: list[str]) -> None:
        """Run `argv` on the member's host as the server account. `ip netns exec` needs root, so the
        account is taken after it (setpriv), not before as process.spawn would."""
        ids = [f"--reuid={self.run_as.uid}", f"--regid={self.run_as.gid}", "--clear-groups"]
        home = self.home(member)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(home)}
        _, rec = process.spawn([*self.network.exec_argv(member), "setpriv", *ids, "--", *argv],
                               log_path=self._log(member, what), attached=self.attached, env=env, cwd=home)
        rec.save(self._record_path(member, what))

    def _etcd_command(self, member: str) -> list[str]:
        address = self.address_of(member)
        peers = ",".join(f"{m}=http://{self.address_of(m)}:{ETCD_PEER_PORT}" for m in self.members)
        return ["etcd", "--name", member, "--data-dir", str(self.home(member) / "etcd"),
                "--listen-client-urls", f"http://{address}:{ETCD_CLIENT_PORT}",
                "--advertise-client-urls", f"http://{address}:{ETCD_CLIENT_PORT}",
                "--listen-peer-urls", f"http://{address}:{ETCD_PEER_PORT}",
                "--initial-advertise-peer-urls", f"http://{address}:{ETCD_PEER_PORT}",
                "--initial-cluster", peers, "--initial-cluster-state", "new",
                "--initial-cluster-token", self.network.tag]

    def _patroni_config(self, member: str, meta: dict[str, Any], home: Path) -> dict[str, Any]:
        """Patroni's configuration (YAML; JSON is YAML)."""
        address, subnet = self.address_of(member), str(self.network.subnet)
        superuser = {"username": SUPERUSER, "password": meta["password"]}
        return {
            "scope": SCOPE, "name": member, "namespace": f"/{self.network.tag}/",
            "log": {"level": "INFO"},
            "restapi": {"listen": f"{address}:{REST_PORT}", "connect_address": f"{address}:{REST_PORT}"},
            "etcd3": {"hosts": [f"{self.address_of(m)}:{ETCD_CLIENT_PORT}" for m in self.members]},
            "bootstrap": {
                "dcs": {**TIMING, "maximum_lag_on_failover": 1048576, "synchronous_mode": self.synchronous,
                        "primary_stop_timeout": PRIMARY_STOP_TIMEOUT_S,
                        "postgresql": {"use_pg_rewind": True, "use_slots": True, "parameters": CLUSTER_PARAMETERS}},
                "initdb": [{"encoding": "UTF8"}, {"locale": "C"}, {"auth-host": "scram-sha-256"}],
            },
            "postgresql": {
                "listen": f"{address}:{PG_PORT}", "connect_address": f"{address}:{PG_PORT}",
                "data_dir": str(home / "data"), "bin_dir": str(PG_BINDIR), "pgpass": str(home / "pgpass"),
                # A member that cannot rejoin by pg_rewind after a failover clones the primary anew.
                "remove_data_directory_on_rewind_failure": True,
                "remove_data_directory_on_diverged_timelines": True,
                "authentication": {"superuser": superuser, "rewind": superuser,
                                   "replication": {"username": REPLICATOR, "password": meta["replication_password"]}},
                "parameters": {**MEMBER_PARAMETERS,
                               **{k: v for k, v in self.settings.items() if k not in CLUSTER_KEYS}},
                # Clients of the cluster's /24 only: the members and this host's side of the bridge.
                "pg_hba": [f"host all all {subnet} scram-sha-256",
                           f"host replication {REPLICATOR} {subnet} scram-sha-256"],
            },
        }

    def version(self) -> str | None:
        try:
            with self.endpoint().connect(connect_timeout=3) as conn:
                server = conn.execute("SHOW server_version").fetchone()
                ts = conn.execute(
                    "SELECT default_version FROM pg_available_extensions WHERE name = 'timescaledb'").fetchone()
        except Exception:  # noqa: BLE001 - a version is a fact to record, not a condition
            return None
        mode = "synchronous" if self.synchronous else "asynchronous"
        return (f"Patroni cluster of {len(self.members)} ({mode} replication): PostgreSQL "
                f"{server[0] if server else '?'}; TimescaleDB {ts[0] if ts else 'not installed'}")

    def stop_member(self, member: str, what: str = "patroni", sig: int = signal.SIGTERM) -> None:
        rec = ProcessRecord.load(self._record_path(member, what))
        if rec is not None:
            process.stop(rec, sig=sig)

    def crash_member(self, member: str, killed: Callable[[], None] | None = None) -> list[int]:
        """SIGKILL the member's Patroni and every PostgreSQL process of it, as a crash of that node
        would (its etcd member stays: the consensus keeps its three voters); `killed` is called the
        moment the signals are sent, before waiting for the processes to go; return the pids killed."""
        keep = ProcessRecord.load(self._record_path(member, "etcd"))
        keep_pid = keep.pid if keep is not None and keep.alive() else None
        pids = [int(p) for p in process_ids(self.network.ns(member)) if int(p) != keep_pid]
        procs = []
        for pid in pids:
            try:
                proc = psutil.Process(pid)
                proc.kill()
                procs.append(proc)
            except psutil.Error:
                pass
        if killed is not None:
            killed()
        psutil.wait_procs(procs, timeout=10)
        return pids

    def isolate_member(self, member: str, cut: Callable[[], None] | None = None) -> None:
        """Cut the member's host off the network (HostNetwork.cut): its processes run on, unreachable;
        `cut` is called the moment the link is down."""
        self.network.cut(member)
        if cut is not None:
            cut()

    def reconnect_member(self, member: str) -> None:
        """Put an isolated member's host back on the network."""
        self.network.mend(member)

    def sync_standby(self) -> str | None:
        view = self.cluster() or {}
        return next((m["name"] for m in view.get("members", []) if m.get("role") == "sync_standby"), None)

    def start_member(self, member: str) -> None:
        """Start a member's Patroni again (after a fault stopped it): it rejoins as a replica."""
        rec = ProcessRecord.load(self._record_path(member, "patroni"))
        if rec is None or not rec.alive():
            self._spawn(member, "patroni", [str(PATRONI), str(self.home(member) / "patroni.yml")])

    def down(self) -> bool:
        """Stop Patroni (and so PostgreSQL), then etcd, kill what is left on the hosts, remove the
        namespaces and the members' homes; True when something was stopped or removed."""
        stopped = self.haproxy.stop()  # its clients first
        for what in ("patroni", "etcd"):
            for member in self.members:
                path = self._record_path(member, what)
                rec = ProcessRecord.load(path)
                if rec is not None and rec.alive():
                    process.stop(rec, sig=signal.SIGTERM, timeout_s=30)
                    stopped = True
                path.unlink(missing_ok=True)
        stopped = self.network.down() or stopped
        for member in self.members:
            home = self.home(member)
            if home.is_dir() and os.lstat(home).st_uid == self.run_as.uid:
                shutil.rmtree(home)
                stopped = True
        base = homes.home_path(self.state_dir, "")
        if base.is_dir() and {p.name for p in base.iterdir()} <= {homes.STATE_DIR_MARKER}:
            homes.remove_homes(self.state_dir)  # only the marker left: the cluster was its one home
        return stopped

    def settings_in_force(self) -> dict[str, str]:
        return dict(self.meta().get("settings") or {})

    def status(self) -> ServerStatus:
        meta = self.meta()
        alive = self.running()
        ready = bool(alive and self.is_ready())
        leader = self.leader() if alive else None
        return ServerStatus(
            name=self.name, running=alive, ready=ready, pid=None, port=PG_PORT if alive else None,
            version=meta.get("version"), log=str(self.dir), data=str(self.home(leader)) if leader else None,
            endpoint=self.endpoint(meta).to_dict() if ready else None,
            address=",".join(self.address_of(m) for m in self.members),
        )

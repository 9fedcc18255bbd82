# SPDX-License-Identifier: Apache-2.0
"""Faults of a replicated database tier: the primary of the stack's Patroni cluster moves.

- `switchover`: Patroni moves the primary to a standby on request (its REST API, as `patronictl
  switchover` does): the old primary stops cleanly after its standby has caught up. begin returns once
  the new primary runs ("promoted"); end waits until the cluster is whole again ("back": every member
  running, a synchronous standby in synchronous mode).
- `failover`: the primary's node crashes: its Patroni and every PostgreSQL process are SIGKILLed
  ("down"); once the leader key expires (Patroni's ttl) a standby is promoted ("promoted"; in
  synchronous mode only the synchronous standby may be). end starts the crashed member's Patroni again,
  which rejoins as a replica (pg_rewind, or a new clone), and waits until the cluster is whole
  ("back"). disarm does the same if end never ran, so a trial leaves three members.
- `primary_host_isolated`: the primary's host is cut off the network (its link down) while its
  processes run on ("down"); its Patroni demotes it, and once the leader key expires a standby is
  promoted ("promoted"); end puts the host back, and it rejoins as a replica ("back").
- `replica_lost`: a standby's node crashes (the synchronous standby in synchronous mode; "down"), and
  in synchronous mode Patroni names another member synchronous standby ("promoted"); end starts the
  lost member again ("back").

Each takes the cluster from the stack in the target's state directory: the first server kind with the
fault among its `faults` (hdbbench.stack.servers.registry). `primary_before` and `primary_after` name the
members; `lag_bytes_at_begin` is the largest replication lag Patroni reported just before the fault
(with asynchronous replication, what a failover can lose); `lag_sample` reads it for the trial's 1 Hz
samples (hdbbench.parts.faults.run).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from hdbbench.backends import Backend, get_backend
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.parts.faults.injectors import FaultTarget, _Injector
from hdbbench.stack.servers.registry import SERVER_KINDS, ServerArgs

PROMOTION_TIMEOUT_S = 120.0  # a leader key expires after ttl (20 s), then a standby promotes in seconds
WHOLE_TIMEOUT_S = 180.0      # a crashed member rejoining may clone the primary anew


def stack_cluster(target: FaultTarget, fault: str) -> Any:
    """The stack's private cluster that supports `fault` (a PatroniCluster), running."""
    for server in SERVER_KINDS:
        if fault in server.faults:
            cluster = server.private(ServerArgs(target.state_dir))
            if cluster.running():
                return cluster
    raise ConfigError(f"fault {fault} needs a replicated cluster in the stack of {target.state_dir} "
                      f"(stack up --only patroni); none runs there")


def _until(check: Callable[[], Any], timeout_s: float, what: str, observe: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.5)
    raise ServerError(f"{what}: not within {timeout_s:.0f} s; the cluster: {observe()}")


class ClusterFault(_Injector):
    """A fault of the stack's cluster: its replication lag is read at the begin and can be sampled."""

    server_fault: str | None = None  # the cluster's fault (ServerKind.faults) it needs, when not its name

    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        self.cluster = stack_cluster(target, self.server_fault or self.name)
        self.lag_bytes_at_begin: int | None = None

    def _began(self) -> None:
        # Read before the fault acts: during it a member's lag may be unknown (its node is down).
        self.lag_bytes_at_begin = self.cluster.lag_bytes()
        self._mark("began")

    def on_any_member(self, backend: Backend) -> Backend:
        """The backend's database on the first member that answers, a standby while no primary runs:
        what the cluster holds when the primary cannot be asked (the trial's stored count then)."""
        endpoint = dataclasses.replace(self.cluster.direct_endpoint(), target_session_attrs="any")
        return get_backend(backend.name, endpoint, backend.database)

    def lag_sample(self) -> dict[str, float]:
        """The largest replication lag now, in bytes, for a Sampler probe ({} while none is known)."""
        lag = self.cluster.lag_bytes()
        return {"bytes": float(lag)} if lag is not None else {}


class _PrimaryMoves(ClusterFault):
    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        self.primary_before: str | None = None
        self.primary_after: str | None = None

    def _start(self) -> str:
        self._began()
        leader = self.cluster.leader()
        if leader is None:
            raise ServerError(f"{self.name}: the cluster has no primary: {self.cluster.cluster()}")
        self.primary_before = leader
        return str(leader)

    def _promoted(self, old: str) -> None:
        def moved() -> str | None:
            now = self.cluster.leader()
            return now if now not in (None, old) else None

        self.primary_after = _until(moved, PROMOTION_TIMEOUT_S, f"{self.name}: a primary other than {old}",
                                    self.cluster.cluster)
        self._mark("promoted")

    def _whole(self) -> None:
        _until(self.cluster.is_ready, WHOLE_TIMEOUT_S, f"{self.name}: every member back", self.cluster.cluster)
        self._mark("back")


class Switchover(_PrimaryMoves):
    name = "switchover"

    def begin(self) -> None:
        old = self._start()
        candidate = self.cluster.switchover_candidate()
        status, answer = self.cluster.rest(old, "/switchover", "POST", {"leader": old, "candidate": candidate},
                                           timeout_s=60)
        if status != 200:
            raise ServerError(f"switchover from {old} to {candidate} refused: HTTP {status} {answer}")
        self._promoted(old)

    def end(self) -> None:
        self._mark("ended")
        self._whole()


class Failover(_PrimaryMoves):
    name = "failover"

    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        self._crashed: str | None = None
        # Called the moment the SIGKILLs are sent: the devices' counters for the accounting (a
        # KillSnapshot). Not before: an event stamped between the count and the crash could be
        # committed on the old primary, and lost with it, yet counted as emitted after the crash.
        self.at_crash: Callable[[], None] | None = None

    def begin(self) -> None:
        old = self._start()
        self._crashed = old
        self._take_down(old)
        self._mark("down")
        self._promoted(old)

    def end(self) -> None:
        self._mark("ended")
        self._rejoin()

    def _take_down(self, member: str) -> None:
        self.cluster.crash_member(member, self.at_crash)

    def _bring_back(self, member: str) -> None:
        self.cluster.start_member(member)

    def _rejoin(self) -> None:
        crashed, self._crashed = self._crashed, None
        if crashed is not None:
            self._bring_back(crashed)
            self._whole()

    def disarm(self) -> None:
        self._rejoin()  # end never ran: the crashed member comes back
        super().disarm()


class PrimaryHostIsolated(Failover):
    """The primary's host is cut off the network (its cable pulled: HostNetwork.cut) while its processes
    run on. Its Patroni can no longer renew the leader key and demotes its PostgreSQL ("DCS is not
    accessible"); once the key expires a standby is promoted ("promoted"), as in a failover. end puts
    the host back on the network, where its Patroni finds the new leader and rejoins as a replica
    (pg_rewind of what it committed alone, or a new clone; "back").
    Its loss is accounted as a failover's, split at the cut (`at_crash` is called the moment the link
    is down)."""

    name = "primary_host_isolated"

    def _take_down(self, member: str) -> None:
        self.cluster.isolate_member(member, self.at_crash)

    def _bring_back(self, member: str) -> None:
        self.cluster.reconnect_member(member)


class ReplicaLost(ClusterFault):
    """A standby's node crashes (the synchronous one in synchronous mode: Patroni then names another
    member synchronous standby, and commits wait for it meanwhile); end starts it again."""

    name = "replica_lost"

    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        self.lost: str | None = None
        self._down: str | None = None

    def begin(self) -> None:
        self._began()
        standby = self.cluster.sync_standby() if self.cluster.synchronous else self.cluster.switchover_candidate()
        if standby is None:
            raise ServerError(f"replica_lost: the cluster has no standby: {self.cluster.cluster()}")
        self.lost = self._down = str(standby)
        self.cluster.crash_member(self.lost)
        self._mark("down")
        if self.cluster.synchronous:  # another standby takes its place
            _until(lambda: self.cluster.sync_standby() not in (None, self.lost), PROMOTION_TIMEOUT_S,
                   "replica_lost: another synchronous standby", self.cluster.cluster)
            self._mark("promoted")

    def end(self) -> None:
        self._mark("ended")
        self._restart()

    def _restart(self) -> None:
        down, self._down = self._down, None
        if down is not None:
            self.cluster.start_member(down)
            _until(self.cluster.is_ready, WHOLE_TIMEOUT_S, "replica_lost: every member back", self.cluster.cluster)
            self._mark("back")

    def disarm(self) -> None:
        self._restart()
        super().disarm()


INJECTORS = {cls.name: cls for cls in (Switchover, Failover, PrimaryHostIsolated, ReplicaLost)}

# SPDX-License-Identifier: Apache-2.0
"""The ``[faults]`` table of a scenario: which faults run under load, and how.

Every key has a default, so ``[faults]`` alone runs every fault kind. The subscriber settings of the
fault trials (spool mode, sync period, queue capacity) are LibConfiguration keys of our subscriber;
a subscriber kind without them ignores them, as HDB++ ignores unknown keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hdbbench.backends.registry import backend_class, server_of
from hdbbench.model.tomlfile import suggestion
from hdbbench.results.faults import DATABASE_FAULTS as DATABASE_FAULTS
from hdbbench.stack.servers.registry import SERVER_KINDS, kind
from hdbbench.subscribers.kinds import SubscriberKind

if TYPE_CHECKING:
    from hdbbench.model.tomlfile import Table
    from hdbbench.stack.servers.registry import ServerKind

# Database faults must lose nothing (DATABASE_FAULTS, with the records they are judged on); the process and
# filesystem faults lose what their reason says.
PROCESS_FAULTS = ("subscriber_kill", "device_kill")
FAULT_KINDS = ("database_stop", "database_kill", "table_lock", "subscriber_kill", "device_kill",
               "spool_full", "database_full")
# A replicated cluster's faults (hdbbench.parts.faults.cluster): only when named, on a stack with a cluster.
CLUSTER_FAULTS = ("switchover", "failover", "primary_host_isolated", "replica_lost")
# What a fault does to the backend's server: the ability its server kind must list (ServerKind.faults).
SERVER_ABILITY = {"database_stop": "stop", "database_kill": "kill", "database_full": "fill",
                  **{k: k for k in CLUSTER_FAULTS}}
# Faults done to the backend's tables rather than its server: the backend's TableFaults ability.
TABLE_FAULTS = ("table_lock", "database_full")
SPOOL_MODES = ("overflow", "write_ahead")
# device_kill's target: the server the subscribers connect to last (where Tango's event consumer drops
# subscriptions past its limit, reference §1c) or first.
DEVICE_TARGETS = ("last", "first")
MAX_HOLD_S = 3600.0
MIN_TMPFS_MB = 4


@dataclass(frozen=True)
class FaultsPart:
    """``[faults]``: one trial per backend, subscriber kind and fault kind (hdbbench.parts.faults.run)."""

    kinds: tuple[str, ...] = FAULT_KINDS
    rate: float = 200.0                 # events/s offered during each trial
    warmup_s: float = 5.0               # load before the fault begins
    hold_s: float = 20.0                # how long the fault lasts
    recover_timeout_s: float = 60.0     # after the fault's end, until the back-log is stored
    drain_timeout_s: float = 60.0       # after the load stops, until the queues are empty
    tmpfs_mb: int = 64                  # size of the tmpfs of spool_full and database_full
    spool_mode: str = "write_ahead"     # our subscriber's spool: overflow | write_ahead
    spool_sync_ms: int = 100            # write_ahead: fsync period (0: every event)
    spool_limit_mb: int = 1024          # the spool's own limit (the tmpfs of spool_full is smaller)
    queue_capacity: int = 100_000       # events the subscriber holds in memory
    spool_full_queue_capacity: int = 100  # spool_full: memory overflows into the full spool at once
    device: str = "last"                # device_kill: the server connected last or first (DEVICE_TARGETS)

    def lib_overrides(self, kind: str, spool_dir: str) -> dict[str, str]:
        """Our subscriber's LibConfiguration keys for the trial of fault `kind`."""
        capacity = self.spool_full_queue_capacity if kind == "spool_full" else self.queue_capacity
        return {"spool_mode": self.spool_mode, "spool_sync_ms": str(self.spool_sync_ms),
                "spool_dir": spool_dir, "spool_limit_mb": str(self.spool_limit_mb),
                "queue_capacity": str(capacity)}


def server_fault_problem(kinds: tuple[str, ...], backends: tuple[str, ...], serving: dict[str, str]) -> str | None:
    """Why a fault of `kinds` cannot be done to a backend's server (None: each can), with `serving` the
    scenario's [stack] servers (kind -> the kind in its place)."""
    for backend in backends:
        role = server_of(backend) or ""
        server = kind(serving.get(role, role))
        for fault in kinds:
            if fault in TABLE_FAULTS and backend_class(backend).faults() is None:
                return f"{fault}: backend {backend} has no table faults (a held table lock, tables that fill)"
            ability = SERVER_ABILITY.get(fault)
            if ability is not None and ability not in server.faults:
                hint = (f"; give [stack] servers = {{ {role} = \"{k.name}\" }}" if (k := _stand_in(role, ability))
                        else "")
                return (f"{fault}: backend {backend} runs on the stack's {server.label}, which has no fault "
                        f"{ability!r} (its server faults: {', '.join(server.faults) or 'none'}){hint}")
    return None


def _stand_in(role: str, ability: str) -> ServerKind | None:
    return next((k for k in SERVER_KINDS if k.serves == role and ability in k.faults), None)


def parse_faults(reader: Table) -> FaultsPart:
    """``[faults]`` checked completely; ConfigError "file:line: [faults] key: problem" otherwise."""
    kinds = tuple(reader.list_of("kinds", str, list(FAULT_KINDS), non_empty=True))
    known = FAULT_KINDS + CLUSTER_FAULTS
    for fault in kinds:
        if fault not in known:
            raise reader.fail("kinds", f"names an unknown fault {fault!r}" + suggestion(fault, known))
    if twice := next((k for k in kinds if kinds.count(k) > 1), None):
        raise reader.fail("kinds", f"names {twice!r} twice")
    part = FaultsPart(
        kinds=kinds,
        rate=reader.number("rate", FaultsPart.rate, positive=True, maximum=1_000_000),
        warmup_s=reader.number("warmup_s", FaultsPart.warmup_s, minimum=0.0, maximum=MAX_HOLD_S),
        hold_s=reader.number("hold_s", FaultsPart.hold_s, positive=True, maximum=MAX_HOLD_S),
        recover_timeout_s=reader.number("recover_timeout_s", FaultsPart.recover_timeout_s, positive=True,
                                        maximum=MAX_HOLD_S),
        drain_timeout_s=reader.number("drain_timeout_s", FaultsPart.drain_timeout_s, positive=True,
                                      maximum=MAX_HOLD_S),
        tmpfs_mb=reader.integer("tmpfs_mb", FaultsPart.tmpfs_mb, minimum=MIN_TMPFS_MB, maximum=65536),
        spool_mode=reader.choice("spool_mode", SPOOL_MODES, FaultsPart.spool_mode),
        spool_sync_ms=reader.integer("spool_sync_ms", FaultsPart.spool_sync_ms, minimum=0, maximum=60_000),
        spool_limit_mb=reader.integer("spool_limit_mb", FaultsPart.spool_limit_mb, minimum=1),
        queue_capacity=reader.integer("queue_capacity", FaultsPart.queue_capacity, minimum=1),
        spool_full_queue_capacity=reader.integer("spool_full_queue_capacity", FaultsPart.spool_full_queue_capacity,
                                                 minimum=1),
        device=reader.choice("device", DEVICE_TARGETS, FaultsPart.device),
    )
    reader.finish()
    return part


@dataclass(frozen=True)
class FaultTrialPlan:
    """One trial of the faults part: a fault on a backend with a subscriber kind."""

    backend: str
    kind: SubscriberKind
    fault: str
    label: str
    schema_variant: str
    subscribers: int
    # The scenario's LibConfiguration lines with the kind's over them; the part's spool and queue
    # keys are added by the trial (the spool's directory is the trial's own).
    lib_overrides: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FaultsPlan:
    part: FaultsPart
    trials: tuple[FaultTrialPlan, ...]

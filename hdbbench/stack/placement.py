# SPDX-License-Identifier: Apache-2.0
"""CPU placement on one machine: each component group pinned to CPUs by process affinity.

A scenario's ``[placement.cpus]`` (or ``hdbbench run --cpus devices=0,subscribers=1``) gives each
group a CPU list as taskset takes it ("0", "0-3", "0,2,5-7", "0-7:2"):

    [placement.cpus]
    devices = "0"        # the simulated device servers
    subscribers = "1"    # the HDB++ event subscribers
    databases = "1"      # PostgreSQL and MariaDB
    tango = "0"          # the Tango database server
    controller = "0"     # hdbbench itself (sampling, steering the devices)

Affinity (sched_setaffinity) needs no cgroup delegation and is inherited: a PostgreSQL backend
forked for a new connection takes its postmaster's, a thread takes its creator's. A running server
(the stack may be reused) is pinned with every existing child process and thread. With a placement,
a group it does not name runs on every CPU of the machine (set explicitly: a child of a pinned
controller would otherwise inherit the controller's CPUs). Without one, nothing is touched.

Every trial records the affinity each sampled process has, read back with sched_getaffinity
(`observe`), so the results show the placement that was in force, not the wish.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psutil

from hdbbench.model.errors import ConfigError
from hdbbench.model.sampling import process_family
from hdbbench.model.tomlfile import suggestion

# The stack's servers are in the group their registry entry names (hdbbench.stack.servers.registry).
GROUPS = ("devices", "subscribers", "databases", "tango", "controller")
# The groups that store what the devices send: the archiving path.
ARCHIVING_PATH = ("subscribers", "databases")
_PART = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$")


# The CPUs hdbbench may use: its own affinity when it started (before it pins itself as the controller).
_MACHINE_CPUS = frozenset(os.sched_getaffinity(0))


def machine_cpus() -> frozenset[int]:
    """The CPUs this machine lets hdbbench use."""
    return _MACHINE_CPUS


def format_cpus(cpus: Iterable[int]) -> str:
    """A CPU set as a short taskset list: {0, 1, 2, 5} -> "0-2,5"."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def parse_cpu_list(text: str) -> frozenset[int]:
    """A taskset CPU list ("0", "0-3", "0,2,5-7", "0-7:2"); ValueError saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("must be a CPU list such as \"0\", \"0-3\" or \"0,2,5-7\"")
    cpus: set[int] = set()
    for part in text.replace(" ", "").split(","):
        match = _PART.match(part)
        if not match:
            raise ValueError(f"{part!r} is not a CPU, a range a-b or a strided range a-b:s")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        stride = int(match.group(3)) if match.group(3) is not None else 1
        if last < first or stride < 1:
            raise ValueError(f"{part!r} is an empty range")
        cpus.update(range(first, last + 1, stride))
    return frozenset(cpus)


@dataclass(frozen=True)
class Placement:
    """The CPUs of each named group (groups: GROUPS); a group not named runs on every CPU."""

    cpus: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.cpus)

    def of(self, group: str) -> frozenset[int]:
        """The CPUs the group is to run on (every CPU when the placement does not name it)."""
        return frozenset(dict(self.cpus).get(group, machine_cpus()))

    def merged(self, other: Placement) -> Placement:
        """This placement with `other`'s groups replacing the same groups."""
        both = {**dict(self.cpus), **dict(other.cpus)}
        return Placement(tuple((g, both[g]) for g in GROUPS if g in both))

    def to_dict(self) -> dict[str, str]:
        return {group: format_cpus(cpus) for group, cpus in self.cpus}


def placement_from(values: Mapping[str, Any], where: Callable[[str | None, str], ConfigError]) -> Placement:
    """A placement from {group: CPU list}; `where(key, problem)` makes the one-line error."""
    available = machine_cpus()
    cpus: dict[str, tuple[int, ...]] = {}
    for group, text in values.items():
        if group not in GROUPS:
            raise where(group, f"unknown group; the groups are {', '.join(GROUPS)}" + suggestion(group, GROUPS))
        try:
            chosen = parse_cpu_list(text)
        except ValueError as exc:
            raise where(group, str(exc)) from None
        missing = sorted(chosen - available)
        if missing:
            raise where(group, f"CPU {format_cpus(missing)} is not on this machine "
                               f"(its CPUs: {format_cpus(available)})")
        cpus[group] = tuple(sorted(chosen))
    return Placement(tuple((g, cpus[g]) for g in GROUPS if g in cpus))


def parse_cli(options: Sequence[str]) -> Placement:
    """``--cpus devices=0,subscribers=1-3,databases=1,3``: a token without '=' continues the CPU list
    of the group before it. ConfigError "--cpus: <group>: <problem>" otherwise."""
    values: dict[str, str] = {}
    for option in options:
        group = None
        for token in option.split(","):
            name, sep, cpus = token.partition("=")
            if sep:
                group = name.strip()
                if group in values:
                    raise ConfigError(f"--cpus: {group}: given twice")
                values[group] = cpus
            elif group is None:
                raise ConfigError(f"--cpus: {option!r} must be GROUP=CPUS[,GROUP=CPUS...], "
                                  f"groups: {', '.join(GROUPS)}")
            else:
                values[group] += "," + token
    return placement_from(values, lambda key, problem: ConfigError(f"--cpus: {key}: {problem}"))


# --- applying and observing ------------------------------------------------------------------------
def _threads(proc: psutil.Process) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{proc.pid}/task")]
    except OSError:
        return []


def pin(pids: Iterable[int], cpus: Iterable[int]) -> int:
    """Set the affinity of the processes, their descendants and every thread of them; the count of
    threads set. A process or thread that ended meanwhile is skipped."""
    chosen = set(cpus)
    count = 0
    for proc in process_family(pids):
        for tid in _threads(proc):
            try:
                os.sched_setaffinity(tid, chosen)
                count += 1
            except ProcessLookupError:
                continue
            except OSError as exc:
                raise ConfigError(f"cannot set the CPU affinity of {proc.name()} (pid {proc.pid}): "
                                  f"{exc.strerror}") from None
    return count


def observe(pids: Iterable[int]) -> list[dict[str, Any]]:
    """Each process's affinity as the kernel reports it now (sched_getaffinity), and the union over
    its threads (equal to it when every thread has the process's CPUs)."""
    out = []
    for proc in process_family(pids):
        try:
            cpus = os.sched_getaffinity(proc.pid)
            name = proc.name()
        except (OSError, psutil.Error):
            continue
        threads: set[int] = set()
        for tid in _threads(proc):
            try:
                threads |= os.sched_getaffinity(tid)
            except OSError:
                continue
        out.append({"pid": proc.pid, "name": name, "cpus": format_cpus(cpus),
                    "thread_cpus": format_cpus(threads or cpus)})
    return out


def _own_threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return []


def _affinity(tid: int) -> set[int]:
    try:
        return set(os.sched_getaffinity(tid))
    except OSError:
        return set()


def _pin_own_threads(cpus: Iterable[int]) -> None:
    """Every thread of this process (Tango's client threads too); threads started later inherit it."""
    chosen = set(cpus)
    for tid in _own_threads():
        try:
            os.sched_setaffinity(tid, chosen)
        except ProcessLookupError:
            continue


class PlacementControl:
    """A run's placement: pins groups as their processes appear and observes each trial's processes.

    `pids` gives the processes of each group known to the run (the stack's servers, the device
    servers, the controller); a trial adds its subscribers. Pinned running servers of a stack the run
    did not start get every CPU back at the end (`release`)."""

    def __init__(self, placement: Placement, pids: Mapping[str, Callable[[], Sequence[int]]]) -> None:
        self.placement = placement
        self.pids = dict(pids)
        self._controller_before: set[int] | None = None

    def apply(self, group: str, pids: Sequence[int] | None = None) -> None:
        """Pin the group (its known processes, or `pids`) when a placement is given."""
        if not self.placement:
            return
        cpus = self.placement.of(group)
        if group == "controller":
            self._controller_before = os.sched_getaffinity(0)
            _pin_own_threads(cpus)  # not its children: the servers it started are groups of their own
            return
        pin(pids if pids is not None else self.pids.get(group, lambda: [])(), cpus)

    def release(self, groups: Iterable[str]) -> None:
        """Every CPU back for the groups (servers that outlive the run) and the controller. Idempotent."""
        if not self.placement:
            return
        for group in groups:
            pin(self.pids.get(group, lambda: [])(), machine_cpus())
        if self._controller_before is not None:
            _pin_own_threads(self._controller_before)
            self._controller_before = None

    def observe(self, extra: Mapping[str, Sequence[int]]) -> dict[str, Any]:
        """The trial record: requested CPUs and, per group, each process's observed affinity."""
        groups: dict[str, Any] = {}
        sources = {**{g: p() for g, p in self.pids.items() if g != "controller"}, **extra}
        for group in GROUPS:
            if group == "controller":
                threads = _own_threads()
                union = set().union(*(_affinity(t) for t in threads)) if threads else set()
                processes = [{"pid": os.getpid(), "name": "hdbbench", "cpus": format_cpus(os.sched_getaffinity(0)),
                              "thread_cpus": format_cpus(union or os.sched_getaffinity(0))}]
            elif group in sources:
                processes = observe(sources[group])
            else:
                continue
            union = sorted({c for p in processes for c in parse_cpu_list(p["thread_cpus"])}) if processes else []
            groups[group] = {"cpus": format_cpus(union), "processes": processes}
        return {"requested": self.placement.to_dict(), "observed": groups,
                "machine_cpus": format_cpus(machine_cpus())}


def archiving_path_per_core(cpu: Mapping[str, Any], record: Mapping[str, Any],
                            server: str | None) -> dict[str, Any] | None:
    """The archiving path's CPU (the subscribers + the trial's database `server`) over the cores it
    ran on (as observed): µs per stored event per core and the share of those cores it kept busy."""
    observed = record.get("observed") or {}
    cores: set[int] = set()
    for group in ARCHIVING_PATH:
        if observed.get(group, {}).get("cpus"):
            cores |= parse_cpu_list(observed[group]["cpus"])
    parts = [(name, figures) for name, figures in cpu.items() if name in ("subscribers", server)]
    if not cores or not parts:
        return None
    us = sum(float(f.get("us_per_event") or 0.0) for _, f in parts)
    busy = sum(float(f.get("cores") or 0.0) for _, f in parts)
    return {"cores": format_cpus(cores), "core_count": len(cores), "us_per_event": us,
            "us_per_event_per_core": us / len(cores), "utilisation_per_core": busy / len(cores)}

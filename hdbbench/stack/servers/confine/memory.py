# SPDX-License-Identifier: Apache-2.0
"""A memory budget per database server: a v1 memory cgroup the server's processes run in.

``/sys/fs/cgroup/memory/hdbbench/<digest of the state dir>-<server>``; ``memory.limit_in_bytes`` is the
budget. Under v1 the group is charged with its processes' anonymous and shared memory (PostgreSQL's
shared_buffers, InnoDB's buffer pool) *and* the page cache they fault in, so the budget caps the
server's cache of the data too. The server's first process joins the group before it execs
(hdbbench.stack.servers.process.spawn), so every child it forks is in it as well.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from pathlib import Path

from hdbbench.model.errors import ServerError
from hdbbench.stack.servers.confine import cgroup


def base() -> Path | None:
    root = cgroup.controller("memory")
    return root / cgroup.GROUP if root else None


def path(state_dir: Path, server: str) -> Path | None:
    parent = base()
    return parent / cgroup.group_name(state_dir, server) if parent else None


def create(state_dir: Path, server: str, budget: int | None) -> Path:
    """Create (or reuse) the server's group with `budget` bytes as its limit (None: no limit, the group
    only keeps track of the server's processes); return the group."""
    group = path(state_dir, server)
    if group is None:
        raise ServerError("the memory cgroup controller is not mounted")
    group.mkdir(parents=True, exist_ok=True)
    set_limit(state_dir, server, budget)  # a reused group may hold a running member: reclaimed first
    return group


def set_limit(state_dir: Path, server: str, budget: int | None, tries: int = 5) -> None:
    """Write the group's limit (None: none) on a running server. Lowering it makes the kernel reclaim
    the group's page cache first; when that is not enough at once (EBUSY: pages still being written
    back), the cache is dropped and the write tried again. ServerError when the server's own memory
    stays above the budget."""
    group = path(state_dir, server)
    if group is None or not group.is_dir():
        raise ServerError(f"the {server} server has no memory group")
    for attempt in range(tries):
        try:
            cgroup.write(group / "memory.limit_in_bytes", str(budget) if budget else "-1")
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or attempt == tries - 1:
                raise ServerError(f"cannot set the memory limit of {group} to {budget} bytes: {exc.strerror} "
                                  f"(in use: {usage(state_dir, server)} bytes, {_breakdown(group)})") from None
            drop_cache(state_dir, server)
            time.sleep(0.5)


def _breakdown(group: Path) -> str:
    """What the group's memory is (memory.stat): the server's own, shared, and file cache."""
    try:
        stat = dict(line.split() for line in (group / "memory.stat").read_text().splitlines())
    except (OSError, ValueError):
        return "memory.stat unreadable"
    return ", ".join(f"{key} {int(stat[key]) >> 20} MiB" for key in ("rss", "shmem", "cache", "dirty", "writeback")
                     if key in stat)


def procs_file(state_dir: Path, server: str) -> Path | None:
    """The file a process writes its pid to to join the group (None: no group)."""
    group = path(state_dir, server)
    return group / "cgroup.procs" if group is not None and group.is_dir() else None


def limit(state_dir: Path, server: str) -> int | None:
    """The limit in force, read back from the kernel (None: no group)."""
    group = path(state_dir, server)
    return cgroup.read_int(group / "memory.limit_in_bytes") if group is not None else None


def members(state_dir: Path, server: str) -> list[int]:
    group = path(state_dir, server)
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()] if group else []
    except OSError:
        return []


def kill_members(state_dir: Path, server: str, timeout_s: float = 15.0) -> list[int]:
    """SIGKILL what is left in the server's group after it was stopped (a bootstrap a Ctrl-C left
    running, a backend that did not exit) and wait until the group is empty; return the pids killed."""
    killed = members(state_dir, server)
    for pid in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout_s
    while members(state_dir, server) and time.monotonic() < deadline:
        time.sleep(0.05)
    return killed


def usage(state_dir: Path, server: str) -> int | None:
    group = path(state_dir, server)
    return cgroup.read_int(group / "memory.usage_in_bytes") if group is not None else None


def oom_kills(state_dir: Path, server: str) -> int | None:
    """How many of the group's processes the kernel's OOM killer has killed (`oom_kill` of
    memory.oom_control); None: no group."""
    group = path(state_dir, server)
    try:
        lines = (group / "memory.oom_control").read_text().splitlines() if group is not None else []
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    return None


def drop_cache(state_dir: Path, server: str) -> bool:
    """Reclaim what the server's group may give back (its page cache) without stopping the server, so
    that a measurement can start cold. False when the server has no group. Memory in use (shared
    buffers, the buffer pool) stays: the kernel gives up on it after a few tries (EBUSY), which is fine."""
    group = path(state_dir, server)
    if group is None or not group.is_dir():
        return False
    try:
        cgroup.write(group / "memory.force_empty", "0")
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise
    return True


def remove(state_dir: Path, server: str) -> bool:
    """Remove the group (its processes must be gone); True when it was there."""
    group = path(state_dir, server)
    if group is None or not group.is_dir():
        return False
    try:
        group.rmdir()  # its remaining charges move to the parent
    except OSError as exc:
        raise ServerError(f"cannot remove memory cgroup {group}: {exc.strerror} (processes left: "
                          f"{members(state_dir, server)})") from None
    _remove_parent()
    return True


def _remove_parent() -> None:
    """The shared parent group goes with the last server's group (another stack may still use it)."""
    parent = base()
    if parent is not None:
        try:
            parent.rmdir()
        except OSError:
            pass


def leftover_groups(digest: str) -> list[Path]:
    parent = base()
    if parent is None or not parent.is_dir():
        return []
    return sorted(p for p in parent.iterdir() if p.is_dir() and p.name.startswith(f"{digest}-"))


def join(procs: Path) -> None:
    """Move the calling process into a group (in a child before exec: as root, before dropping to the
    server's account, which may not write the file)."""
    cgroup.write(procs, str(os.getpid()))

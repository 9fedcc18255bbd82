# SPDX-License-Identifier: Apache-2.0
"""Naming and checking the kernel controllers the confinement uses (cgroup v1 here).

A group is named after the state directory (the digest hdbbench.stack.servers.homes uses for the homes) and
the server kind, so that two stacks never share one and `stack up` can find the leftovers of its own
crashed commands. Everything here needs root: a normal user (even with passwordless sudo) is refused
before anything starts (hdbbench.stack.servers.confine.refusal).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP = "hdbbench"  # our parent group under each controller's root


def digest(state_dir: Path) -> str:
    """The state directory's digest, as hdbbench.stack.servers.homes names its homes."""
    return hashlib.sha256(str(Path(state_dir).resolve()).encode()).hexdigest()[:16]


def controller(name: str) -> Path | None:
    """The mount point of a v1 controller (e.g. "memory", "blkio"), None when it is not mounted."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "cgroup" and name in fields[3].split(","):
            return Path(fields[1])
    return None


def group_name(state_dir: Path, server: str) -> str:
    return f"{digest(state_dir)}-{server}"


def write(path: Path, value: str) -> None:
    """Write a control file; the kernel's refusal (EINVAL, EBUSY) comes back as OSError."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None

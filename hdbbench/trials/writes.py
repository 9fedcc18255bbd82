# SPDX-License-Identifier: Apache-2.0
"""A database server's write requests and bytes at the block layer, read from outside it.

Sampled at 1 Hz into a trial's series as ``io_<server>.write_ops`` and ``io_<server>.write_bytes``
(cumulative: their differences over a window are what the window wrote), from one of two counters:

* the server's own **loop device**, where the stack confined its storage
  (hdbbench.stack.servers.confine.io_counters): exactly its writes;
* else the **block device holding its data directory**: st_dev of the data directory →
  /sys/dev/block/MAJ:MIN/stat, fields 5 (writes completed) and 7 (sectors written), a partition's
  stat file laid out as a disk's. That counter is device-wide: every other writer on the device
  (the other server, the harness's files, the system) counts too.

A server this host cannot read (on another host, an external URL, a data directory on a file system
without a block device, such as tmpfs or overlayfs) has neither: its probe records nothing, and its
unit costs carry None for them. Nothing here ever fails a trial.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from hdbbench.stack.servers.confine import io_counters

SECTOR_BYTES = 512  # /sys/block/*/stat counts 512-byte sectors whatever the device's own sector size
IO_PROBE_PREFIX = "io_"  # the sampler's name of a server's probe: io_<server>
Where = Literal["loop", "device"]

# The counters' words, for the unit costs' `source` (hdbbench.trials.costs).
LOOP_WORDS = "its own loop device (its storage confined)"
DEVICE_WORDS = "the device holding its data (other writers included)"


def parse_block_stat(text: str) -> tuple[int, int]:
    """(write requests completed, bytes written) of a /sys/block/<dev>/stat (or a partition's) line:
    fields 5 and 7 (sectors) of the kernel's Documentation/block/stat.rst."""
    fields = text.split()
    if len(fields) < 7:
        raise ValueError(f"a block stat line has at least 7 fields, not {len(fields)}: {text!r}")
    return int(fields[4]), int(fields[6]) * SECTOR_BYTES


def device_stat_path(path: Path) -> Path | None:
    """The stat file of the block device (or partition) holding `path`; None when the file system has
    none (a major number 0: tmpfs, overlayfs, NFS) or `path` cannot be read."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return None
    if os.major(dev) == 0:
        return None
    stat = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat")
    return stat if stat.exists() else None


class ServerWritesProbe:
    """One server's write counter (see the module docstring), chosen once when the trial starts."""

    def __init__(self, stack_dir: Path | None, server: str) -> None:
        self.stack_dir = stack_dir
        self.server = server
        self.where: Where | None = None
        self._stat: Path | None = None
        if stack_dir is None:
            return
        if self._loop() is not None:
            self.where = "loop"
        else:
            # The stack's <server>/data, or the home it links to (hdbbench.stack.servers.base.data_dir):
            # os.stat follows the link.
            self._stat = device_stat_path(Path(stack_dir) / server / "data")
            self.where = "device" if self._stat is not None else None

    def _loop(self) -> tuple[int, int] | None:
        try:
            counters = io_counters(Path(self.stack_dir or "."), self.server)
        except Exception:  # noqa: BLE001 - no image, a device gone: not confined, never a failed trial
            return None
        if counters is None:
            return None
        return int(counters.write_ops), int(counters.write_bytes)

    def read(self) -> tuple[int, int] | None:
        """(write requests, bytes written), cumulative; None when unreadable now."""
        if self.where == "loop":
            return self._loop()
        if self.where == "device" and self._stat is not None:
            try:
                return parse_block_stat(self._stat.read_text())
            except (OSError, ValueError):
                return None
        return None

    def probe(self) -> dict[str, float]:
        found = self.read()
        return {} if found is None else {"write_ops": float(found[0]), "write_bytes": float(found[1])}

    @property
    def words(self) -> str | None:
        return LOOP_WORDS if self.where == "loop" else DEVICE_WORDS if self.where == "device" else None


def write_probes(stack_dir: Path | None, servers: Mapping[str, object]) -> dict[str, ServerWritesProbe]:
    """A probe per server that has a counter here, by server name (those without one left out)."""
    probes = {name: ServerWritesProbe(stack_dir, name) for name in servers}
    return {name: p for name, p in probes.items() if p.where is not None}

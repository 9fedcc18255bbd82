# SPDX-License-Identifier: Apache-2.0
"""What the devices emitted during a fault trial, also across a device server's kill and restart, and
the subscribers' peak memory — both read from outside, so the same for every subscriber kind."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hdbbench.load.offered import LoadTarget


class Emission:
    """The devices' per-attribute emitted counters. A killed server's counts are frozen at the kill
    (`freeze`) and added to those of its restarted process, which counts from 0 again."""

    def __init__(self, load: LoadTarget) -> None:
        self.load = load
        self.offsets: dict[str, int] = {}     # per attribute: counted by a process that was killed
        self.down: set[str] = set()           # devices whose server is killed (lower case)

    def freeze(self, devices: Iterable[str], counts: Mapping[str, int]) -> None:
        """The server of `devices` is about to be killed: keep their attributes' counts."""
        self.down = {d.lower() for d in devices}
        prefixes = tuple(f"tango://{self.load.tango_host}/{d}/".lower() for d in self.down)
        self.offsets = {a: n for a, n in counts.items() if a.startswith(prefixes)}

    def per_attribute(self) -> dict[str, int]:
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        counts = dict(self.offsets)
        for device in self.load.devices:
            try:
                proxy = tango.DeviceProxy(f"tango://{self.load.tango_host}/{device}")
                proxy.set_timeout_millis(3000)
                names = proxy.read_attribute("GeneratedAttributes").value
                emitted = proxy.read_attribute("EventsEmittedList").value
            except tango.DevFailed:
                if device.lower() in self.down:
                    continue  # killed: its frozen counts stand
                raise
            for name, count in zip(names if names is not None else [], emitted if emitted is not None else []):
                key = f"tango://{self.load.tango_host}/{device}/{name}".lower()
                counts[key] = counts.get(key, 0) + int(count) if device.lower() in self.down else int(count)
        return counts

    def total(self) -> int:
        return sum(self.per_attribute().values())


def peak_memory_bytes(pids: Iterable[int]) -> int:
    """The largest VmHWM (peak resident memory) among the processes; 0 when none can be read."""
    peak = 0
    for pid in pids:
        peak = max(peak, _vm_hwm(Path(f"/proc/{pid}/status")))
    return peak


def _vm_hwm(status: Path) -> int:
    try:
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return 0


def numbers(statistics: Mapping[str, Any]) -> dict[str, float]:
    """The numeric statistics of a subscriber (None and text left out)."""
    return {k: float(v) for k, v in statistics.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}

# SPDX-License-Identifier: Apache-2.0
"""The two process faults, with the injectors' protocol (arm, begin, end, disarm; `marks`).

``subscriber_kill``: SIGKILL the (first) subscriber; `end` starts the same instance with the same
configuration, re-assigns by AttributeAdd what it does not find in its AttributeList property (a
real hdbpp-es keeps its attributes there) and is back when AttributeStartedNumber equals its count.
``device_kill``: SIGKILL the device server the subscribers connect to last (or first: ``[faults]
device``); `end` starts the same instance again (same registration, so the same devices and seeds),
gives its attributes the rates they had (a facility's mix: each its own, scaled alike) and starts its
devices; back when it is exported and emitting. Each calls `before_kill` just before the signal, so
the run can sample the devices' counters at that instant (the accounting by reason needs them).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from hdbbench.load import devices
from hdbbench.load.devices import load_fleet
from hdbbench.load.offered import LoadTarget
from hdbbench.model.errors import ServerError
from hdbbench.stack.servers.process import ProcessRecord
from hdbbench.subscribers import statistics as st
from hdbbench.subscribers.launcher import SubscriberFleet, SubscriberSpec

GONE_TIMEOUT_S = 10.0
BACK_TIMEOUT_S = 90.0
# Our subscriber's counters of the killed process, kept for the accounting (a foreign kind reads None).
_COUNTERS = (st.ROWS_STORED_NUMBER, st.DUPLICATE_ROW_NUMBER, st.LOST_EVENT_NUMBER, st.LOST_QUEUE_FULL_NUMBER,
             st.LOST_SPOOL_FULL_NUMBER, st.MEMORY_QUEUE_CAPACITY, st.MEMORY_QUEUE_MAX_NUMBER,
             st.WAL_REPLAYED_NUMBER, st.WAL_UNLOGGED_NUMBER)


def _kill(pid: int, create_time: float) -> None:
    """SIGKILL one process (the recorded one, not a reuse of its pid) and wait until it is gone."""
    proc = ProcessRecord(pid, create_time, []).process()
    if proc is None:
        raise ServerError(f"process {pid} to kill is not running")
    os.kill(pid, signal.SIGKILL)
    psutil.wait_procs([proc], timeout=GONE_TIMEOUT_S)


class SubscriberKill:
    """SIGKILL the subscriber of `spec` and start it again (see the module docstring)."""

    name = "subscriber_kill"

    def __init__(self, fleet: SubscriberFleet, spec: SubscriberSpec, before_kill: Callable[[], None]) -> None:
        self.fleet, self.spec, self.before_kill = fleet, spec, before_kill
        self.marks: dict[str, float] = {}
        self.statistics_before: dict[str, Any] = {}  # the killed process's last statistics
        self.readded = 0                             # attributes it had to be given again

    def arm(self) -> None:
        """Nothing to prepare: the subscriber runs."""

    def begin(self) -> None:
        record = ProcessRecord.load(self.fleet.dir / self.spec.label / "process.json")
        if record is None or record.process() is None:
            raise ServerError(f"subscriber {self.spec.device} is not running: nothing to kill")
        self.statistics_before = self.fleet.statistics(self.spec.device, _COUNTERS)
        self.before_kill()
        self.marks["began"] = time.time()
        _kill(record.pid, record.create_time)
        self.marks["killed"] = time.time()

    def end(self) -> None:
        self.marks["ended"] = time.time()
        self.fleet.restart(self.spec)
        self.marks["restarted"] = time.time()
        have = {name.lower() for name in self.fleet.proxy(self.spec.device).read_attribute(st.ATTRIBUTE_LIST).value
                or ()}
        missing = [a for a in self.spec.attributes if a.lower() not in have]
        for attribute in missing:
            self.fleet.add_attribute(self.spec.device, attribute)
        self.readded = len(missing)
        self.fleet.wait_started({self.spec.device: len(self.spec.attributes)}, BACK_TIMEOUT_S)
        self.marks["back"] = time.time()

    def disarm(self) -> None:
        """The trial stops its subscribers itself."""


class DeviceKill:
    """SIGKILL one device server of the fleet in `devices_dir` and start it again (module docstring)."""

    name = "device_kill"

    def __init__(self, devices_dir: Path, load: LoadTarget, rate: float, which: str,
                 before_kill: Callable[[], None]) -> None:
        self.devices_dir, self.load, self.rate, self.which = devices_dir, load, rate, which
        self.before_kill = before_kill
        self.marks: dict[str, float] = {}
        self.instance = ""
        self.devices: tuple[str, ...] = ()  # the killed server's devices
        self.slowest_period_s = 0.0         # of its attributes after the restart (their TargetRateList)

    def arm(self) -> None:
        """The target: the server of the load's last device (the subscribers assign attributes in the
        load's order, so they connect to that server last) or of its first."""
        fleet = load_fleet(self.devices_dir)
        device = (self.load.devices[-1] if self.which == "last" else self.load.devices[0]) if self.load.devices else ""
        record = next((r for r in fleet.servers if device in r.devices), None) if fleet else None
        if record is None:
            raise ServerError(f"no device server of {device or 'the load'} recorded in {self.devices_dir}: "
                              "nothing to kill")
        self.instance, self.devices = record.instance, record.devices

    def begin(self) -> None:
        fleet = load_fleet(self.devices_dir)
        record = next((r for r in fleet.servers if r.instance == self.instance), None) if fleet else None
        if record is None:
            raise ServerError(f"device server {self.instance!r} is not recorded in {self.devices_dir}")
        self.before_kill()
        self.marks["began"] = time.time()
        _kill(record.pid, record.create_time)
        self.marks["killed"] = time.time()

    def end(self) -> None:
        self.marks["ended"] = time.time()
        devices.restart(self.devices_dir, self.instance, tie_to_parent=True)
        self.marks["restarted"] = time.time()
        # Fresh proxies: they look the restarted devices up at their new ports.
        proxies = {device: self._proxy(device) for device in self.devices}
        self.load.set_rate(self.rate, only=proxies)
        for proxy in proxies.values():
            proxy.command_inout("Start")
        rates = [float(r) for p in proxies.values() for r in p.read_attribute("TargetRateList").value]
        self.slowest_period_s = 1.0 / min(rates) if rates and min(rates) > 0 else 0.0
        deadline = time.monotonic() + BACK_TIMEOUT_S
        while sum(int(p.read_attribute("EventsEmittedTotal").value) for p in proxies.values()) == 0:
            if time.monotonic() > deadline:
                raise ServerError(f"device server {self.instance} restarted but emits nothing")
            time.sleep(0.1)
        self.marks["back"] = time.time()

    def disarm(self) -> None:
        """The run stops the device servers itself."""

    def _proxy(self, device: str) -> Any:
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        proxy = tango.DeviceProxy(f"tango://{self.load.tango_host}/{device}")
        proxy.set_timeout_millis(10_000)
        return proxy


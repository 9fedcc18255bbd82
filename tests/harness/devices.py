# SPDX-License-Identifier: Apache-2.0
"""Simulated devices seen from a Tango client: archive events collected, the digest of a received
event (to compare with the emitter's prediction), the Tango database, and waiting on what a device
emitted (an amount of load, never a length of time)."""

from __future__ import annotations

import threading
from typing import Any

from hdbbench.load import emitter as em
from tests.harness.waiting import eventually, seen


class EventCollector:
    """Archive-event callback: events per lower-case attribute name, in arrival order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: dict[str, list[Any]] = {}

    def push_event(self, ev: Any) -> None:
        with self.lock:
            self.events.setdefault(ev.attr_name.rsplit("/", 1)[-1].lower(), []).append(ev)

    def clear(self) -> None:
        with self.lock:
            self.events.clear()

    def count(self, name: str) -> int:
        with self.lock:
            return len(self.events.get(name.lower(), []))

    def get(self, name: str) -> list[Any]:
        with self.lock:
            return list(self.events.get(name.lower(), []))

    def counts(self) -> dict[str, int]:
        with self.lock:
            return {name: len(events) for name, events in self.events.items()}


def received_digest(spec: em.AttrSpec, ev: Any) -> int:
    """The digest of a received event, as `hdbbench.load.emitter.event_digest` computes the emitted one."""
    if ev.err:
        return em.event_digest(spec.type, spec.format, None, em.INVALID, ev.errors[0].reason)
    av = ev.attr_value
    value = av.value
    if spec.kind == "state" and spec.format == "SCALAR" and value is not None:
        value = int(value)
    if spec.kind == "encoded" and value is not None:
        value = (value[0], bytes(value[1]))
    return em.event_digest(spec.type, spec.format, value, int(av.quality), None)


def tango_database(tango_host: str) -> Any:
    """The Tango database at `tango_host` (host:port)."""
    import tango

    host, _, port = tango_host.rpartition(":")
    return tango.Database(host, int(port))


def emitted_grew(sim: Any, by: int, timeout_s: float = 60.0) -> None:
    """Wait until the device (a proxy) emitted `by` more events: the load a test needs, as an amount."""
    start = int(sim.EventsEmittedTotal)
    eventually(lambda: seen(int(sim.EventsEmittedTotal) >= start + by, sim.EventsEmittedTotal), timeout_s,
               f"{by} more events emitted")

# SPDX-License-Identifier: Apache-2.0
"""The offered load: the simulated devices (hdbbench.load.devices) that push the events every trial
archives, and how a trial steers them through their Tango commands (rates, start, stop, rewind) and
reads what they emitted."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hdbbench.model.errors import ConfigError


def spread(attributes: Sequence[str], count: int) -> list[tuple[str, ...]]:
    """The attributes dealt round-robin over `count` subscribers."""
    return [tuple(attributes[n::count]) for n in range(count)]


@dataclass
class LoadTarget:
    """The simulated devices that produce the load, and how to steer them."""

    tango_host: str
    devices: Sequence[str]
    attributes: Sequence[str]           # full tango:// names of the push-mode attributes
    device_pids: Callable[[], Sequence[int]]
    engine: str = "python"              # the devices' generator engine (hdbbench.load.devices.ENGINES)
    # Devices whose attributes keep their own rates (a facility's mix): device -> [(rate, names)]; the
    # offered total then scales every rate alike. None: one rate for every attribute.
    rate_mix: Mapping[str, Sequence[tuple[float, Sequence[str]]]] | None = None
    # The attributes of each subscriber, as a facility's archivers have them (an inventory's
    # [[archivers]]); None: dealt round-robin.
    assignment: Sequence[Sequence[str]] | None = None
    _proxies: list[Any] | None = field(default=None, init=False, repr=False, compare=False)

    def deal(self, count: int) -> list[tuple[str, ...]]:
        """The attributes of each of `count` subscribers: the assignment where there is one (its
        archiver count must be `count`), else round-robin."""
        if self.assignment is None:
            return spread(self.attributes, count)
        if len(self.assignment) != count:
            raise ConfigError(f"the inventory assigns its attributes to {len(self.assignment)} archivers; "
                              f"a trial of {count} subscriber(s) cannot use that assignment")
        return [tuple(names) for names in self.assignment]

    def proxies(self) -> list[Any]:
        """One proxy per device, made once: the sampler reads the devices every second, and making a
        proxy asks the Tango database (16 servers: 16 lookups a second). A proxy reconnects by itself
        to a device server that was restarted."""
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        if self._proxies is None:
            out = []
            for device in self.devices:
                proxy = tango.DeviceProxy(f"tango://{self.tango_host}/{device}")
                proxy.set_timeout_millis(10_000)
                out.append(proxy)
            self._proxies = out
        return self._proxies

    def prepare(self, total_rate: float) -> None:
        """Stop, rewind to event 0, and set every attribute's rate so the total is `total_rate`."""
        for proxy in self.proxies():
            proxy.command_inout("Stop")
            proxy.command_inout("Reset")
        self.set_rate(total_rate)

    def set_rate(self, total_rate: float, only: Mapping[str, Any] | None = None) -> None:
        """Every attribute's rate so the total is `total_rate`. `only`: just these devices, through these
        proxies (a restarted server's devices get the rates they had, in the mix or not)."""
        pairs = list(only.items()) if only is not None else list(zip(self.devices, self.proxies()))
        if not self.rate_mix:
            for _, proxy in pairs:
                proxy.command_inout("SetRate", total_rate / max(1, len(self.attributes)))
            return
        natural = sum(rate * len(names) for mix in self.rate_mix.values() for rate, names in mix)
        factor = total_rate / natural if natural else 0.0
        for device, proxy in pairs:
            for rate, names in self.rate_mix.get(device, ()):
                proxy.command_inout("SetAttributeRate", ([rate * factor], list(names)))

    def start(self) -> None:
        for proxy in self.proxies():
            proxy.command_inout("Start")

    def stop(self) -> None:
        for proxy in self.proxies():
            proxy.command_inout("Stop")

    def emitted_total(self) -> float:
        return float(sum(int(p.read_attribute("EventsEmittedTotal").value) for p in self.proxies()))

    def max_lag_s(self) -> float:
        """How far the devices' pushing is behind their schedule (the source's own limit)."""
        return max((float(p.read_attribute("MaxLag").value) for p in self.proxies()), default=0.0)

    def emitted_per_attribute(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for device, proxy in zip(self.devices, self.proxies()):
            names = proxy.read_attribute("GeneratedAttributes").value
            emitted = proxy.read_attribute("EventsEmittedList").value
            for name, count in zip(names if names is not None else [], emitted if emitted is not None else []):
                counts[f"tango://{self.tango_host}/{device}/{name}".lower()] = int(count)
        return counts

# SPDX-License-Identifier: Apache-2.0
"""Fleet planning: the device names, servers and contents a profile asks for.
"""

from __future__ import annotations

from dataclasses import dataclass

from hdbbench.load import emitter as em
from hdbbench.load.devices.profile import Profile
from hdbbench.model.errors import ConfigError


@dataclass(frozen=True)
class DevicePlan:
    name: str
    server: str                        # instance name: the server is HdbBenchSim/<server>
    seed: int
    specs: tuple[em.AttrSpec, ...]
    timestamps: str = "schedule"
    phases: str = "aligned"

    def spec(self, attribute: str) -> em.AttrSpec:
        for s in self.specs:
            if s.name.lower() == attribute.lower():
                return s
        raise KeyError(attribute)


def plan_fleet(profile: Profile, servers: int | None = None, devices_per_server: int | None = None,
               seed: int | None = None) -> list[DevicePlan]:
    """Device names and contents: every device carries the profile's attribute mix."""
    n_srv = servers or profile.servers
    n_dev = devices_per_server or profile.devices_per_server
    if n_srv < 1 or n_dev < 1:
        raise ConfigError("servers and devices per server must be >= 1")
    base = profile.seed if seed is None else seed
    return [DevicePlan(f"{profile.device_prefix}/s{si:02d}d{di:03d}", f"{profile.name}-s{si:02d}", base,
                       profile.attributes, profile.timestamps, profile.phases)
            for si in range(n_srv) for di in range(n_dev)]


@dataclass(frozen=True)
class DevicesPlan:
    """The simulated device servers and the engine that serves them."""

    engine: str                            # "cpp" or "python", settled ("auto" resolved here)
    source: str                            # the profile or the inventory they come from (the fleet records it)
    devices: tuple[DevicePlan, ...]        # every device: name, server instance, seed, attributes, phases
    scale: float | None = None             # an inventory's scale; None for a profile
    # An inventory's archivers: each one's attributes as "device/attribute" (None: dealt round-robin).
    assignment: tuple[tuple[str, ...], ...] | None = None

    @property
    def keep_rate_mix(self) -> bool:
        """An inventory's attributes keep their own rates when the offered total changes."""
        return self.scale is not None

    @property
    def servers(self) -> tuple[str, ...]:
        """The server instances, in the order they start."""
        return tuple(dict.fromkeys(d.server for d in self.devices))

    @property
    def attributes(self) -> int:
        """The code-pushed attributes: those the trials offer their load on."""
        return sum(1 for d in self.devices for s in d.specs if s.mode == "push")

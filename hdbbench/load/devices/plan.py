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

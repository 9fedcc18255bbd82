# SPDX-License-Identifier: Apache-2.0
"""What a fleet leaves under its state directory: the server processes (pid + psutil create_time, so a
recycled pid is never mistaken for ours), the device plans, and the attributes of running devices.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from hdbbench.load import emitter as em
from hdbbench.load.devices.plan import DevicePlan
from hdbbench.model.errors import ConfigError
from hdbbench.stack.servers.ports import LOOPBACK
from hdbbench.stack.servers.process import ProcessRecord

DEFAULT_STATE_DIR = Path(".hdbbench/devices")
SERVER_CLASS = "HdbBenchSim"
STATE_FILE = "fleet.json"


@dataclass(frozen=True)
class ServerRecord:
    instance: str
    pid: int
    create_time: float
    orb_port: int
    event_port: int
    heartbeat_port: int
    log: str
    devices: tuple[str, ...]
    server_class: str = SERVER_CLASS
    address: str = LOOPBACK  # where the server binds (its host's address)

    @property
    def server(self) -> str:
        return f"{self.server_class}/{self.instance}"

    def process(self) -> psutil.Process | None:
        """The live process, or None if it exited or the pid now belongs to another process."""
        return ProcessRecord(self.pid, self.create_time, []).process()


@dataclass
class Fleet:
    tango_host: str
    profile: str
    state_dir: Path
    devices: dict[str, DevicePlan]
    servers: list[ServerRecord] = field(default_factory=list)
    engine: str = "python"

    def device_url(self, device: str) -> str:
        return f"tango://{self.tango_host}/{device}"

    def to_json(self) -> str:
        return json.dumps({
            "tango_host": self.tango_host, "profile": self.profile, "engine": self.engine,
            "devices": {n: {"server": d.server, "seed": d.seed, "attributes": [s.to_json() for s in d.specs],
                            "timestamps": d.timestamps, "phases": d.phases}
                        for n, d in self.devices.items()},
            "servers": [asdict(s) for s in self.servers]}, indent=1)

    def save(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_dir / (STATE_FILE + ".tmp")
        tmp.write_text(self.to_json())
        os.replace(tmp, self.state_dir / STATE_FILE)


def load_fleet(state_dir: str | Path = DEFAULT_STATE_DIR) -> Fleet | None:
    """The fleet recorded in state_dir, or None if nothing is recorded."""
    path = Path(state_dir) / STATE_FILE
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    devices = {n: DevicePlan(n, d["server"], d["seed"], tuple(em.AttrSpec.from_json(s) for s in d["attributes"]),
                             d.get("timestamps", "schedule"), d.get("phases", "aligned"))
               for n, d in data["devices"].items()}
    servers = [ServerRecord(**{**s, "devices": tuple(s["devices"])}) for s in data["servers"]]
    return Fleet(data["tango_host"], data["profile"], Path(state_dir), devices, servers, data.get("engine", "python"))


def fleet_dir(state_dir: str | Path) -> Path:
    """Where the devices started beside the stack of state_dir are recorded."""
    return Path(state_dir) / "devices"


def running_attributes(state_dir: str | Path = DEFAULT_STATE_DIR) -> list[str]:
    """Full names (tango://host:port/device/attribute) of every attribute of the running devices
    recorded in state_dir; refused in one line when none runs."""
    fleet = load_fleet(state_dir)
    running = {device for rec in (fleet.servers if fleet else []) if rec.process() for device in rec.devices}
    if fleet is None or not running:
        raise ConfigError(f"no simulated devices run from {Path(state_dir)} (start them: hdbbench devices up)")
    return [f"tango://{fleet.tango_host}/{name}/{spec.name}".lower()
            for name, plan in fleet.devices.items() if name in running for spec in plan.specs]

# SPDX-License-Identifier: Apache-2.0
"""Launcher of simulated device servers: profiles, registration, processes, clean-up.

Two engines serve a profile with the same Tango interface and the same seeded events: ``python``
(devices/HdbBenchSim.py, every mode) and ``cpp`` (HdbBenchGen, devices/gen/, code-pushed attributes,
a fraction of the CPU per event). Both get the same device properties.

A *profile* (TOML, see devices/profiles/) describes an attribute mix; `load_profile` validates it
completely (unknown type, negative rate, empty image, a name Tango rejects ...) and raises
`ConfigError` naming ``file:line`` before anything is registered or started. `up` registers the
servers and devices in the Tango database (``Database.add_server``, the attribute specs as the
``Attributes`` device property), starts one process per server bound to one address, loopback by default (ORB endpoint and
ZeroMQ event/heartbeat ports pinned below the kernel's ephemeral range), waits until every device
answers, and records each process (pid + psutil create_time, so a recycled pid is never mistaken for
ours) under the state directory. `down` stops them (SIGTERM, then SIGKILL after a timeout).
Children can be tied to the parent (PR_SET_PDEATHSIG) and are stopped if `up` fails or is interrupted.

Modules
-------
    profile   `Profile` and `load_profile` (the TOML attribute mix, validated)
    plan      `DevicePlan` and `plan_fleet` (device names, servers, contents)
    records   `ServerRecord`, `Fleet` and what a fleet records under its state directory
    launcher  engines, registration, `up`/`status`/`down`, `running_fleet`

Every public name is re-exported here: ``from hdbbench import devices; devices.up(...)``.
"""

from __future__ import annotations

from hdbbench.load.devices.launcher import (
    DEFAULT_PORT_RANGE,
    ENGINE_CLASSES,
    ENGINES,
    GEN_BINARY,
    SERVER_SCRIPT,
    ServerStatus,
    check_engine,
    cpp_engine_built,
    down,
    gen_binary,
    pick_ports,
    register,
    resolve_engine,
    restart,
    running_fleet,
    status,
    up,
    up_plans,
)
from hdbbench.load.devices.plan import DevicePlan, plan_fleet
from hdbbench.load.devices.profile import (
    MAX_ATTRIBUTES,
    MAX_RATE_HZ,
    PROFILES_DIR,
    REPO_ROOT,
    RESERVED_NAMES,
    Profile,
    load_profile,
)
from hdbbench.load.devices.records import (
    DEFAULT_STATE_DIR,
    SERVER_CLASS,
    STATE_FILE,
    Fleet,
    ServerRecord,
    fleet_dir,
    load_fleet,
    running_attributes,
)

__all__ = [
    "DEFAULT_PORT_RANGE", "DEFAULT_STATE_DIR", "ENGINES", "ENGINE_CLASSES", "GEN_BINARY",
    "MAX_ATTRIBUTES", "MAX_RATE_HZ", "PROFILES_DIR", "REPO_ROOT", "RESERVED_NAMES", "SERVER_CLASS",
    "SERVER_SCRIPT", "STATE_FILE", "DevicePlan", "Fleet", "Profile", "ServerRecord", "ServerStatus",
    "check_engine", "cpp_engine_built", "down", "fleet_dir", "gen_binary", "load_fleet", "load_profile",
    "pick_ports", "plan_fleet", "register", "resolve_engine", "restart", "running_attributes", "running_fleet",
    "status", "up", "up_plans",
]

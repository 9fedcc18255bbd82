# SPDX-License-Identifier: Apache-2.0
"""The launcher of simulated device servers: engines, registration, processes, status and clean-up.

`up` registers the servers and devices in the Tango database (``Database.add_server``, the attribute
specs as the ``Attributes`` device property), starts one process per server bound to one address,
loopback by default (ORB endpoint and ZeroMQ event/heartbeat ports pinned below the kernel's ephemeral
range), waits until every device answers, and records each process under the state directory.
`down` stops them (SIGTERM, then SIGKILL after a timeout). Children can be tied to the parent
(PR_SET_PDEATHSIG) and are stopped if `up` fails or is interrupted.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from hdbbench.load.devices.plan import DevicePlan, plan_fleet
from hdbbench.load.devices.profile import REPO_ROOT, Profile, load_profile
from hdbbench.load.devices.records import DEFAULT_STATE_DIR, Fleet, ServerRecord, load_fleet
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.stack.servers import process
from hdbbench.stack.servers.ports import LOOPBACK, check_address, port_is_free

SERVER_SCRIPT = REPO_ROOT / "devices" / "HdbBenchSim.py"
GEN_BINARY = REPO_ROOT / "build" / "devices" / "gen" / "HdbBenchGen"
# The two generator engines: the same Tango interface and properties, the same events for the same seed.
ENGINE_CLASSES = {"python": "HdbBenchSim", "cpp": "HdbBenchGen"}
ENGINES = tuple(ENGINE_CLASSES)
# Ports for servers: below the ephemeral range (32768-60999) and above the usual fixed services.
DEFAULT_PORT_RANGE = (24000, 32000)


def pick_ports(n: int, port_range: tuple[int, int] = DEFAULT_PORT_RANGE, taken: set[int] | None = None,
               host: str = LOOPBACK) -> list[int]:
    """n free ports of host in port_range (never the ephemeral range), in random order."""
    lo, hi = port_range
    if hi > 32768:
        raise ConfigError(f"port range {lo}-{hi} reaches the ephemeral range (32768-60999)")
    taken = taken if taken is not None else set()
    out: list[int] = []
    for port in random.sample(range(lo, hi), hi - lo):
        if port not in taken and port_is_free(port, host):
            out.append(port)
            taken.add(port)
            if len(out) == n:
                return out
    raise ServerError(f"no {n} free ports in {lo}-{hi}")


def gen_binary() -> Path:
    """The C++ generator server: $HDBBENCH_GEN_BINARY, else the build tree's."""
    return Path(os.environ.get("HDBBENCH_GEN_BINARY", str(GEN_BINARY)))


def cpp_engine_built() -> bool:
    return gen_binary().is_file() and os.access(gen_binary(), os.X_OK)


def resolve_engine(engine: str | None, profile: str | Path | None = None) -> str:
    """"cpp" or "python" as asked; None or "auto": the C++ engine when it is built and serves the
    profile (no poll-mode attribute), else Python."""
    if engine in (None, "auto"):
        polled = profile is not None and any(a.mode == "poll" for a in load_profile(profile).attributes)
        return "cpp" if cpp_engine_built() and not polled else "python"
    if engine not in ENGINES:
        raise ConfigError(f"device engine must be one of auto, {', '.join(ENGINES)}, got {engine!r}")
    return engine


def check_engine(profile: Profile, engine: str, push_threads: int = 1) -> None:
    """Refuse, naming the profile and attribute, what the engine cannot serve."""
    if engine not in ENGINES:
        raise ConfigError(f"device engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine != "cpp":
        return
    if not cpp_engine_built():
        raise ConfigError(f"device engine 'cpp': {gen_binary()} is not built (run: cmake --build build)")
    if not 1 <= push_threads <= 64:
        raise ConfigError(f"device engine 'cpp': push threads must be in 1..64, got {push_threads}")
    polled = [a.name for a in profile.attributes if a.mode == "poll"]
    if polled:
        raise ConfigError(f"{profile.path}: device engine 'cpp' serves code-pushed attributes only; "
                          f"attribute {polled[0]!r} has mode = 'poll' (use the python engine)")


def _tango_db(tango_host: str) -> Any:
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    host, _, port = tango_host.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"TANGO_HOST must be host:port, got {tango_host!r}")
    try:
        return tango.Database(host, int(port))
    except tango.DevFailed as exc:
        raise ServerError(f"cannot reach the Tango database {tango_host}: {exc.args[0].desc.strip()}") from None


def register(tango_host: str, plans: Sequence[DevicePlan], auto_start: bool = False, engine: str = "python",
             push_threads: int = 1) -> None:
    """(Re-)register the servers and devices of the plans, with their properties.

    Both engines read the same properties; the C++ one also PushThreads (pushing threads per device).
    """
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    db = _tango_db(tango_host)
    server_class = ENGINE_CLASSES[engine]
    by_server: dict[str, list[DevicePlan]] = {}
    for p in plans:
        by_server.setdefault(p.server, []).append(p)
    existing = {s for cls in ENGINE_CLASSES.values() for s in db.get_server_list(f"{cls}/*")}
    for inst, devs in by_server.items():
        server = f"{server_class}/{inst}"
        for stale in (f"{cls}/{inst}" for cls in ENGINE_CLASSES.values()):
            if stale in existing:
                db.delete_server(stale)  # a fresh registration: no stale devices or properties, either engine
        infos = []
        for d in devs:
            info = tango.DbDevInfo()
            info.name, info._class, info.server = d.name, server_class, server
            infos.append(info)
        db.add_server(server, infos, with_dserver=True)
        for d in devs:
            props = {"Attributes": [s.to_json() for s in d.specs], "Seed": [str(d.seed)],
                     "AutoStart": [str(auto_start).lower()], "Timestamps": [d.timestamps],
                     "Phases": [d.phases]}
            if engine == "cpp":
                props["PushThreads"] = [str(push_threads)]
            db.put_device_property(d.name, props)


def _log_tail(path: str, lines: int = 15) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _start_server(fleet: Fleet, instance: str, devices: tuple[str, ...], tie_to_parent: bool,
                  taken: set[int], port_range: tuple[int, int], address: str = LOOPBACK) -> ServerRecord:
    """Start one server process of the fleet's engine, bound to address."""
    orb, ev, hb = pick_ports(3, port_range, taken, host=address)
    logs = fleet.state_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{instance}.log"
    env = dict(os.environ, TANGO_HOST=fleet.tango_host, TANGO_ZMQ_EVENT_PORT=str(ev),
               TANGO_ZMQ_HEARTBEAT_PORT=str(hb), PYTHONUNBUFFERED="1")
    # The publisher side drops past its high-water mark too (1,000 by default); with aligned phases a
    # simulator pushes every attribute of a rate at the same instant, so give a burst room. An explicit
    # setting wins.
    env.setdefault("TANGO_DS_EVENT_BUFFER_HWM", "100000")
    program = [str(gen_binary())] if fleet.engine == "cpp" else [sys.executable, str(SERVER_SCRIPT)]
    cmd = [*program, instance, "-ORBendPoint", f"giop:tcp:{address}:{orb}"]
    _, record = process.spawn(cmd, log_path=log, attached=tie_to_parent, env=env, cwd=REPO_ROOT)
    # Also as the stack's process records (<stack>/devices/<instance>/process.json): `stack down`
    # stops every recorded process of its state directory, devices first, without knowing devices.
    _process_file(fleet.state_dir, instance).parent.mkdir(parents=True, exist_ok=True)
    record.save(_process_file(fleet.state_dir, instance))
    return ServerRecord(instance, record.pid, record.create_time, orb, ev, hb, str(log), devices,
                        ENGINE_CLASSES[fleet.engine], address)


def _wait_exported(fleet: Fleet, timeout_s: float) -> None:
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    deadline = time.monotonic() + timeout_s
    for rec in fleet.servers:
        for dev in rec.devices:
            while True:
                if rec.process() is None:
                    raise ServerError(f"server {rec.server} exited during start-up; log {rec.log}:\n"
                                      f"{_log_tail(rec.log)}")
                try:
                    proxy = tango.DeviceProxy(fleet.device_url(dev))
                    proxy.set_timeout_millis(3000)
                    proxy.ping()
                    break
                except tango.DevFailed:
                    if time.monotonic() > deadline:
                        raise ServerError(f"device {dev} not exported after {timeout_s:.0f} s; log {rec.log}:\n"
                                          f"{_log_tail(rec.log)}") from None
                    time.sleep(0.2)


def up(tango_host: str, profile: str | Path, *, servers: int | None = None,
       devices_per_server: int | None = None, seed: int | None = None,
       state_dir: str | Path = DEFAULT_STATE_DIR, tie_to_parent: bool = False, auto_start: bool = False,
       timeout_s: float = 60.0, port_range: tuple[int, int] = DEFAULT_PORT_RANGE, engine: str = "python",
       push_threads: int = 1, address: str = LOOPBACK, only_servers: Sequence[str] | None = None) -> Fleet:
    """Validate the profile, register, start every server and wait until every device answers.

    `engine`: "python" (HdbBenchSim) or "cpp" (HdbBenchGen, code-pushed attributes only; see
    `resolve_engine`). On any failure or interruption the servers started so far are stopped before
    re-raising. `address`: where the servers bind (this host's address; hdbbench.stack.servers.ports).
    `only_servers`: the server instances of the plan this host starts (the others run on other hosts).
    """
    prof = load_profile(profile)  # first: a broken profile is refused before anything starts
    check_engine(prof, engine, push_threads)
    address = check_address(address, "device servers' address")
    plans = plan_fleet(prof, servers, devices_per_server, seed)
    if only_servers is not None:
        plans = [p for p in plans if p.server in set(only_servers)]
    return up_plans(tango_host, plans, str(prof.path), state_dir=state_dir, tie_to_parent=tie_to_parent,
                    auto_start=auto_start, timeout_s=timeout_s, port_range=port_range, engine=engine,
                    push_threads=push_threads, address=address)


def up_plans(tango_host: str, plans: Sequence[DevicePlan], source: str, *,
             state_dir: str | Path = DEFAULT_STATE_DIR, tie_to_parent: bool = False, auto_start: bool = False,
             timeout_s: float = 60.0, port_range: tuple[int, int] = DEFAULT_PORT_RANGE, engine: str = "python",
             push_threads: int = 1, address: str = LOOPBACK) -> Fleet:
    """`up` for devices planned already (checked for the engine by the caller); `source` names where
    they come from (a profile, an inventory) in the fleet's record; `address` as checked by `up`."""
    state = Path(state_dir)
    previous = load_fleet(state)
    if previous and any(r.process() for r in previous.servers):
        raise ServerError(f"devices already up from {state} ({previous.profile}); run down first")
    fleet = Fleet(tango_host, source, state, {p.name: p for p in plans}, engine=engine)
    try:
        register(tango_host, plans, auto_start, engine, push_threads)
        taken: set[int] = set()
        for inst in dict.fromkeys(p.server for p in plans):
            devs = tuple(p.name for p in plans if p.server == inst)
            fleet.servers.append(_start_server(fleet, inst, devs, tie_to_parent, taken, port_range, address))
            fleet.save()  # recorded at once: `down` can stop what a failed `up` left
        _wait_exported(fleet, timeout_s)
    except BaseException:
        _stop(fleet.servers, timeout_s=10.0)
        fleet.servers.clear()
        fleet.save()
        raise
    return fleet


def restart(state_dir: str | Path, instance: str, *, tie_to_parent: bool = True, timeout_s: float = 60.0,
            port_range: tuple[int, int] = DEFAULT_PORT_RANGE) -> ServerRecord:
    """Start the recorded server `instance` again (after it died): the same registration, so the same
    devices, seeds and attributes; new ports. Returns when its devices answer; its devices wait for
    Start, as after `up`."""
    fleet = load_fleet(state_dir)
    old = next((r for r in fleet.servers if r.instance == instance), None) if fleet else None
    if fleet is None or old is None:
        raise ServerError(f"no server {instance!r} recorded in {state_dir}")
    if old.process() is not None:
        raise ServerError(f"server {old.server} still runs (pid {old.pid})")
    taken = {port for r in fleet.servers for port in (r.orb_port, r.event_port, r.heartbeat_port)}
    record = _start_server(fleet, instance, old.devices, tie_to_parent, taken, port_range, old.address)
    fleet.servers[fleet.servers.index(old)] = record
    fleet.save()
    _wait_exported(Fleet(fleet.tango_host, fleet.profile, fleet.state_dir, fleet.devices, [record], fleet.engine),
                   timeout_s)
    return record


@dataclass(frozen=True)
class ServerStatus:
    record: ServerRecord
    alive: bool
    devices_answering: int | None     # None when not checked

    def line(self) -> str:
        ans = "" if self.devices_answering is None else f", {self.devices_answering}/{len(self.record.devices)} answering"
        return (f"{self.record.server}: {'running' if self.alive else 'not running'} (pid {self.record.pid}, "
                f"orb {self.record.orb_port}{ans})")


def status(state_dir: str | Path = DEFAULT_STATE_DIR, ping: bool = True) -> list[ServerStatus]:
    """Whether each recorded server still runs (pid and create_time match) and its devices answer."""
    fleet = load_fleet(state_dir)
    if fleet is None:
        return []
    out = []
    for rec in fleet.servers:
        alive = rec.process() is not None
        answering = _count_answering(fleet, rec) if ping and alive else None
        out.append(ServerStatus(rec, alive, answering))
    return out


def _count_answering(fleet: Fleet, rec: ServerRecord) -> int:
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    n = 0
    for dev in rec.devices:
        try:
            proxy = tango.DeviceProxy(fleet.device_url(dev))
            proxy.set_timeout_millis(2000)
            proxy.ping()
            n += 1
        except tango.DevFailed:
            pass
    return n


def _process_file(state_dir: Path, instance: str) -> Path:
    return state_dir / instance / "process.json"


def _stop(records: Sequence[ServerRecord], timeout_s: float) -> list[str]:
    """SIGTERM every live recorded process, SIGKILL what is left after timeout_s."""
    procs = {}
    for rec in records:
        proc = rec.process()
        if proc is None:
            continue
        try:
            proc.send_signal(signal.SIGTERM)
            procs[proc] = rec
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(list(procs), timeout=timeout_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)
    return [procs[p].server for p in procs]


def down(state_dir: str | Path = DEFAULT_STATE_DIR, timeout_s: float = 10.0, unregister: bool = False) -> list[str]:
    """Stop every recorded server; return the servers that were running. Idempotent."""
    fleet = load_fleet(state_dir)
    if fleet is None:
        return []
    stopped = _stop(fleet.servers, timeout_s)
    for rec in fleet.servers:
        _process_file(fleet.state_dir, rec.instance).unlink(missing_ok=True)
    if unregister:
        try:
            db = _tango_db(fleet.tango_host)
            for rec in fleet.servers:
                db.delete_server(rec.server)
        except Exception:  # noqa: BLE001 - the processes are down; a missing database is not our problem
            pass
    fleet.servers.clear()
    fleet.save()
    return stopped


@contextmanager
def running_fleet(tango_host: str, profile: str | Path, *, state_dir: str | Path = DEFAULT_STATE_DIR,
                  tie_to_parent: bool = True, **kwargs: Any) -> Iterator[Fleet]:
    """`up` on entry, `down` on exit (also on exceptions and KeyboardInterrupt)."""
    fleet = up(tango_host, profile, state_dir=state_dir, tie_to_parent=tie_to_parent, **kwargs)
    try:
        yield fleet
    finally:
        down(state_dir)

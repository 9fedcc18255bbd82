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
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import psutil

from hdbbench import emitter as em
from hdbbench.errors import ConfigError, ServerError
from hdbbench.servers import process
from hdbbench.servers.ports import LOOPBACK, check_address, port_is_free
from hdbbench.servers.process import ProcessRecord
from hdbbench.tomlfile import Table, kind_name, read_document

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_SCRIPT = REPO_ROOT / "devices" / "HdbBenchSim.py"
GEN_BINARY = REPO_ROOT / "build" / "devices" / "gen" / "HdbBenchGen"
PROFILES_DIR = REPO_ROOT / "devices" / "profiles"
DEFAULT_STATE_DIR = Path(".hdbbench/devices")
SERVER_CLASS = "HdbBenchSim"
# The two generator engines: the same Tango interface and properties, the same events for the same seed.
ENGINE_CLASSES = {"python": "HdbBenchSim", "cpp": "HdbBenchGen"}
ENGINES = tuple(ENGINE_CLASSES)
STATE_FILE = "fleet.json"
# Ports for servers: below the ephemeral range (32768-60999) and above the usual fixed services.
DEFAULT_PORT_RANGE = (24000, 32000)

# Names the device itself uses; a generated attribute must not take them (Tango is case-insensitive).
RESERVED_NAMES = frozenset(n.lower() for n in (
    "State", "Status", "Running", "EmitterSeed", "GeneratedAttributes", "EventsEmittedList",
    "ErrorsEmittedList", "ChecksumList", "AchievedRateList", "TargetRateList", "EventsEmittedTotal",
    "AchievedRate", "MaxLag", "PushFailures", "Statistics"))
_ATTR_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
_DEVICE_PREFIX = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SPEC_FIELDS = {f.name for f in fields(em.AttrSpec)}
_ALIASES = {"ro": "READ", "rw": "READ_WRITE", "read": "READ", "read_write": "READ_WRITE"}
MAX_ATTRIBUTES = 100_000    # per profile: a larger fleet is surely a typo (and would not fit in memory)
MAX_RATE_HZ = 1e6           # per attribute: an archive event every microsecond


# ------------------------------------------------------------------------------------- profiles


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    path: Path
    seed: int
    servers: int
    devices_per_server: int
    device_prefix: str
    attributes: tuple[em.AttrSpec, ...]
    timestamps: str = "schedule"       # source timestamps: em.TIMESTAMP_MODES


def _canonical(field_name: str, value: Any) -> Any:
    """Accept case-insensitive spellings of enumerated fields."""
    if field_name == "type" and isinstance(value, str):
        low = {t.lower(): t for t in em.TYPES} | {t.lower()[3:]: t for t in em.TYPES}
        return low.get(value.lower(), value)
    if field_name in ("format",) and isinstance(value, str):
        return value.upper()
    if field_name == "write" and isinstance(value, str):
        return _ALIASES.get(value.lower(), value)
    if field_name == "labels" and isinstance(value, list):
        return tuple(value)
    return value


def _spec_from(entry: Mapping[str, Any], defaults: Mapping[str, Any]) -> em.AttrSpec:
    merged = {k: _canonical(k, v) for k, v in {**defaults, **entry}.items()}
    _check_field_types(merged)
    try:
        spec = em.validate_spec(em.AttrSpec(**merged))
    except TypeError as exc:  # a wrongly typed field: dataclass or math error
        raise em.SpecError(str(exc)) from None
    if spec.rate_hz > MAX_RATE_HZ:
        raise em.SpecError(f"rate_hz must be <= {MAX_RATE_HZ:g}, got {spec.rate_hz:g}")
    return spec


def _check_field_types(merged: Mapping[str, Any]) -> None:
    """A field of the wrong type is named with its key (not as a math error deep in validation)."""
    for f in fields(em.AttrSpec):
        if f.name not in merged or merged[f.name] is None:
            continue
        value, wanted = merged[f.name], _FIELD_KINDS.get(str(f.type).split(" |")[0])
        if wanted and (isinstance(value, bool) and bool not in wanted or not isinstance(value, wanted)):
            shown = tuple(list if k is tuple else k for k in wanted)
            raise em.SpecError(f"{f.name} must be {kind_name(shown)}, got {value!r}")
        if isinstance(value, float) and value != value:
            raise em.SpecError(f"{f.name} must be a number, got nan")


_FIELD_KINDS: dict[str, tuple[type, ...]] = {
    "str": (str,), "float": (int, float), "int": (int,), "tuple[str, ...]": (tuple,)}


def _expand_attribute(entry: dict[str, Any], defaults: Mapping[str, Any]) -> list[em.AttrSpec]:
    count = entry.pop("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_ATTRIBUTES:
        raise em.SpecError(f"count must be an integer from 1 to {MAX_ATTRIBUTES}, got {count!r}")
    base = _spec_from(entry, defaults)
    if count == 1:
        return [base]
    width = len(str(count - 1))
    return [em.replace_spec(base, name=f"{base.name}_{i:0{width}d}") for i in range(count)]


def _expand_matrix(entry: dict[str, Any], defaults: Mapping[str, Any]) -> list[em.AttrSpec]:
    """Every type x format x write type of the lists ("all" = every one Tango allows)."""
    def pick(key: str, universe: Sequence[str], field_name: str) -> list[str]:
        val = entry.pop(key, "all")
        vals = list(universe) if val == "all" else [_canonical(field_name, v) for v in val]
        for v in vals:
            if v not in universe:
                raise em.SpecError(f"{key}: unknown {field_name} {v!r}")
        return vals

    types = pick("types", list(em.TYPES), "type")
    formats = pick("formats", em.FORMATS, "format")
    writes = pick("writes", em.WRITE_TYPES, "write")
    prefix = entry.pop("name_prefix", "")
    per_type = entry.pop("per_type", {})
    out = []
    for t in types:
        for f in formats:
            if em.TYPES[t].kind == "encoded" and f != "SCALAR":
                continue  # Tango allows DevEncoded only as SCALAR
            for w in writes:
                name = f"{prefix}{t[3:].lower()}_{f.lower()}_{'rw' if w == 'READ_WRITE' else 'ro'}"
                fields_ = {**entry, **per_type.get(t, {}), "type": t, "format": f, "write": w, "name": name}
                if f == "SCALAR":
                    fields_.pop("dim_y", None)
                out.append(_spec_from(fields_, defaults))
    return out


_ENTRY_KEYS = {  # the keys an entry of each kind may give
    "attribute": _SPEC_FIELDS | {"count"},
    "matrix": _SPEC_FIELDS - {"type", "format", "write", "name"}
    | {"types", "formats", "writes", "name_prefix", "per_type"},
}


def load_profile(path: str | Path) -> Profile:
    """Read and validate a profile; raise ConfigError "file:line: entry: problem" on the first problem."""
    path = Path(path)
    top = read_document(path, "device profile").root()
    head = top.table("profile")
    name = head.string("name", path.stem)
    if not _PROFILE_NAME.match(name):
        raise head.fail("name", f"{name!r} must be lower-case letters, digits and '-' (≤ 48)")
    seed = head.integer("seed", 1, minimum=0)
    servers = head.count("servers", 1)
    per_server = head.count("devices_per_server", 1)
    timestamps = head.choice("timestamps", em.TIMESTAMP_MODES, "schedule")
    prefix = head.string("device_prefix", f"sim/{name}")
    if not _DEVICE_PREFIX.match(prefix):
        raise head.fail("device_prefix", f"{prefix!r} must be 'domain/family'")
    description = head.string("description", "")
    head.finish()
    defaults_table = top.table("defaults")
    defaults_table.known(*(_SPEC_FIELDS - {"name"}))
    defaults_table.finish()
    defaults = dict(defaults_table.values)
    specs: list[tuple[em.AttrSpec, Table]] = []
    for kind, expand in (("attribute", _expand_attribute), ("matrix", _expand_matrix)):
        for entry in top.tables(kind):
            entry.known(*_ENTRY_KEYS[kind])
            entry.finish()
            if kind == "attribute":
                _check_attribute_name(entry)
            try:
                expanded = expand(dict(entry.values), defaults)
            except em.SpecError as exc:
                raise entry.fail(None, str(exc), at=_field_in(str(exc))) from None
            specs += [(s, entry) for s in expanded]
            if len(specs) > MAX_ATTRIBUTES:
                raise entry.fail(None, f"the profile defines more than {MAX_ATTRIBUTES} attributes", at="count")
    top.finish()
    if not specs:
        raise top.fail(None, "the profile defines no [[attribute]] or [[matrix]] entry")
    _check_names(specs)
    return Profile(name, description, path, seed, servers, per_server, prefix, tuple(s for s, _ in specs), timestamps)


def _check_attribute_name(entry: Table) -> None:
    name = entry.string("name")
    if not _ATTR_NAME.match(name):
        raise entry.fail(None, f"{name!r} is not a valid Tango attribute name "
                               "(a letter, then letters, digits or '_', at most 64)", at="name")


def _field_in(message: str) -> str | None:
    """The key a SpecError message is about (its line is the one to show), if it names one."""
    m = re.search(r"\b(" + "|".join(sorted(_SPEC_FIELDS | {"count", "types", "formats", "writes"},
                                            key=len, reverse=True)) + r")\b", message)
    return m.group(1) if m else None


def _check_names(specs: list[tuple[em.AttrSpec, Table]]) -> None:
    seen: dict[str, str] = {}
    for spec, entry in specs:
        low = spec.name.lower()
        if not _ATTR_NAME.match(spec.name):
            raise entry.fail(None, f"{spec.name!r} is not a valid Tango attribute name")
        if low in RESERVED_NAMES:
            raise entry.fail(None, f"{spec.name!r} is reserved by the device", at="name")
        if low in seen:
            raise entry.fail(None, f"attribute {spec.name!r} also defined by {seen[low]} (names are case-insensitive)",
                             at="name")
        seen[low] = entry.label


# ------------------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class DevicePlan:
    name: str
    server: str                        # instance name: the server is HdbBenchSim/<server>
    seed: int
    specs: tuple[em.AttrSpec, ...]
    timestamps: str = "schedule"

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
                       profile.attributes, profile.timestamps)
            for si in range(n_srv) for di in range(n_dev)]


# ------------------------------------------------------------------------------------- processes


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
                            "timestamps": d.timestamps}
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
                             d.get("timestamps", "schedule"))
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
                     "AutoStart": [str(auto_start).lower()], "Timestamps": [d.timestamps]}
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
    # The publisher side drops past its high-water mark too (1,000 by default); a simulator pushes
    # every attribute at the same instant, so give a burst room. An explicit setting wins.
    env.setdefault("TANGO_DS_EVENT_BUFFER_HWM", "100000")
    program = [str(gen_binary())] if fleet.engine == "cpp" else [sys.executable, str(SERVER_SCRIPT)]
    cmd = [*program, instance, "-ORBendPoint", f"giop:tcp:{address}:{orb}"]
    _, record = process.spawn(cmd, log_path=log, attached=tie_to_parent, env=env, cwd=REPO_ROOT)
    return ServerRecord(instance, record.pid, record.create_time, orb, ev, hb, str(log), devices,
                        ENGINE_CLASSES[fleet.engine], address)


def _wait_exported(fleet: Fleet, timeout_s: float) -> None:
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
    re-raising. `address`: where the servers bind (this host's address; hdbbench.servers.ports).
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

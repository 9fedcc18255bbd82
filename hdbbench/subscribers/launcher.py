# SPDX-License-Identifier: Apache-2.0
"""Registering, starting, driving and reading HDB++ event subscribers — through Tango only.

Everything here talks to a subscriber the way HDB++ tools do: device properties (LibConfiguration)
set in the Tango database, the commands of class HdbEventSubscriber and its attributes. Attributes
are assigned as the configuration manager hdbpp-cm assigns them: each subscriber starts with an
empty AttributeList and gets its attributes by AttributeAdd, one call per attribute, name only (the
subscriber creates their att_conf rows and appends them to its AttributeList itself). So a real
hdbpp-es is driven by the same code: give its binary (``binary=``); the server name is the binary's
file name, as Tango makes it.

Subscriber n is the device ``archiving/hdbbench-es/<n>`` of server ``<binary name>/<n>``; its
process record lives in ``<state_dir>/subscribers/<n>/``. Subscribers of a group (the CLI groups
them by backend) are numbered within it: ``archiving/hdbbench-es/<group>-<n>``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.backends.registry import lib_configuration as backend_lines
from hdbbench.model.errors import ServerError
from hdbbench.model.paths import REPO
from hdbbench.stack.servers import process
from hdbbench.stack.servers.ports import LOOPBACK, check_address, pick_free_port
from hdbbench.stack.servers.process import ProcessRecord
from hdbbench.subscribers import statistics as stats

Progress = Callable[[str, float, dict[str, float]], None]  # (phase, fraction done, latest figures)

# HDBBENCH_SUBSCRIBER_BINARY points at another build (e.g. build-asan/subscriber/hdbbench-es).
DEFAULT_BINARY = Path(os.environ.get("HDBBENCH_SUBSCRIBER_BINARY") or REPO / "build" / "subscriber" / "hdbbench-es")
CLASS_NAME = "HdbEventSubscriber"
DEVICE_PREFIX = "archiving/hdbbench-es"
EVENT_BUFFER_HWM = 100_000  # events ZeroMQ may buffer per subscriber before it drops

# The HDB++ scalar statistics every HdbEventSubscriber has (reference §1), read for statistics.
HDBPP_STATISTICS = tuple(name for name in stats.HDBPP if name in stats.SCALARS)
STARTED_TIMEOUT_S = 90.0
PORT_RACE_ATTEMPTS = 3  # starts of a subscriber whose port another program bound first
# The device property of the configured attributes has the name of the attribute that lists them.
ATTRIBUTE_LIST_PROPERTY = stats.ATTRIBUTE_LIST


def lib_configuration(backend: str, database: str, endpoints: Mapping[str, Any], *,
                      overrides: Mapping[str, str] | None = None) -> list[str]:
    """LibConfiguration lines (HDB++ keys) for one of our backends on the stack's `endpoints` (a
    StackEndpoints: the backend's server kind is looked up there), plus overrides such as batch_size.
    Each backend knows its keys (hdbbench.backends.registry)."""
    return backend_lines(backend, database, endpoints, overrides)


@dataclass(frozen=True)
class SubscriberSpec:
    """One subscriber: `attributes` are assigned by AttributeAdd once it runs (never written into
    its AttributeList property); `properties` are device properties set before it starts."""

    instance: int
    lib_configuration: tuple[str, ...]
    attributes: tuple[str, ...] = ()
    properties: Mapping[str, Sequence[str]] = field(default_factory=dict)
    group: str = ""  # subscribers of several groups (e.g. one per backend) run side by side

    @property
    def label(self) -> str:
        """The server instance name, the device's last member and the state subdirectory."""
        return f"{self.group}-{self.instance}" if self.group else str(self.instance)

    @property
    def device(self) -> str:
        return f"{DEVICE_PREFIX}/{self.label}"


class SubscriberFleet:
    """N subscriber processes registered in one Tango database."""

    def __init__(self, tango_host: str, state_dir: Path, *, binary: Path = DEFAULT_BINARY,
                 attached: bool = True, address: str = LOOPBACK, env: Mapping[str, str] | None = None) -> None:
        self.tango_host = tango_host
        self.address = check_address(address, "subscribers' address")  # where the subscribers bind
        self.dir = Path(state_dir).resolve() / "subscribers"
        self.binary = Path(binary)
        self.attached = attached
        self.env = dict(env or {})  # added to each subscriber's environment (e.g. LD_LIBRARY_PATH)
        host, _, port = tango_host.rpartition(":")
        self._db_address = (host, int(port))
        self._attribute_names: dict[str, frozenset[str]] = {}  # per device: what it publishes
        self._taken_ports: set[int] = set()  # free when picked, bound by someone else before the subscriber
        self._log_starts: dict[str, int] = {}  # per subscriber: its log's length when it was last started

    @property
    def server_name(self) -> str:
        return self.binary.name

    def _database(self) -> Any:
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        return tango.Database(*self._db_address)

    def register(self, spec: SubscriberSpec) -> None:
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        db = self._database()
        info = tango.DbDevInfo()
        info.name, info._class, info.server = spec.device, CLASS_NAME, f"{self.server_name}/{spec.label}"
        db.add_server(info.server, info, with_dserver=True)
        # An empty AttributeList: attributes come by AttributeAdd (see the module docstring).
        props: dict[str, Sequence[str]] = {"LibConfiguration": list(spec.lib_configuration),
                                           ATTRIBUTE_LIST_PROPERTY: []}
        props.update(spec.properties)
        db.put_device_property(spec.device, {k: list(v) for k, v in props.items()})

    def up(self, specs: Iterable[SubscriberSpec], ready_timeout_s: float = 60.0,
           started_timeout_s: float = STARTED_TIMEOUT_S, progress: Progress | None = None) -> list[str]:
        """Register and start each subscriber, assign its attributes by AttributeAdd; return when every
        device answers and says (AttributeStartedNumber) that its attributes run."""
        if not self.binary.is_file():
            hint = " (run ./run.sh setup)" if self.binary == DEFAULT_BINARY else ""
            raise ServerError(f"subscriber binary not found: {self.binary}{hint}")
        if not os.access(self.binary, os.X_OK):
            raise ServerError(f"subscriber binary is not executable: {self.binary}")
        specs = list(specs)
        for spec in specs:
            self.register(spec)
            self._start(spec)
        for spec in specs:
            self._ready(spec, ready_timeout_s)
        for spec in specs:
            self.add_attributes(spec.device, spec.attributes)
        self.wait_started({spec.device: len(spec.attributes) for spec in specs}, started_timeout_s, progress)
        return [spec.device for spec in specs]

    def restart(self, spec: SubscriberSpec, ready_timeout_s: float = 60.0) -> None:
        """Start a registered subscriber's process again (after it died) with its device properties as
        they are: it finds its attributes in its AttributeList property, as hdbpp-es does."""
        self._start(spec)
        self._ready(spec, ready_timeout_s)

    def _ready(self, spec: SubscriberSpec, timeout_s: float) -> None:
        """Wait for the started subscriber. A port is picked free but bound by the subscriber a moment
        later: another program (another hdbbench session's subscriber, on a shared machine) may bind it
        in between, and omniORB then exits at start. The subscriber starts again on other ports."""
        for attempt in range(PORT_RACE_ATTEMPTS):
            try:
                self._wait_ready(spec.device, timeout_s)
                return
            except ServerError:
                taken = self._port_taken(spec)
                if taken is None or attempt == PORT_RACE_ATTEMPTS - 1:
                    raise
                self._taken_ports.add(taken)
                self._start(spec)

    def _port_taken(self, spec: SubscriberSpec) -> int | None:
        """The port omniORB could not bind, from the subscriber's log (None: it exited for another reason)."""
        log = self.dir / spec.label / "subscriber.log"
        if not log.is_file():
            return None
        with open(log, "rb") as f:  # this start's lines only: the log is appended to
            f.seek(self._log_starts.get(spec.label, 0))
            text = f.read().decode(errors="replace")
        found = re.search(r"Failed to bind to address \S+ port (\d+)", text)
        return int(found.group(1)) if found else None

    def wait_started(self, expected: Mapping[str, int], timeout_s: float = STARTED_TIMEOUT_S,
                     progress: Progress | None = None) -> None:
        """Wait until each device's AttributeStartedNumber reaches its expected count."""
        deadline = time.monotonic() + timeout_s
        wanted = sum(expected.values())
        while True:
            seen = {device: self._started(device) for device in expected}
            if all(seen[device] >= n for device, n in expected.items()):
                return
            if gone := self.exited(expected):
                raise ServerError(self.exited_message(gone[0]))
            if time.monotonic() > deadline:
                short = {d: f"{seen[d]} of {n}" for d, n in expected.items() if seen[d] < n}
                states = {d: self._state_line(d) for d in short}
                raise ServerError(f"subscribers did not start their attributes within {timeout_s:.0f} s: "
                                  f"AttributeStartedNumber {short}; state {states}")
            if progress is not None:
                started = sum(seen.values())
                progress("subscribing", started / max(1, wanted), {"started": float(started)})
            time.sleep(0.1)

    def _started(self, device: str) -> int:
        """The attributes started and subscribed: AttributeStartedNumber less the length of
        AttributePendingList (started, not subscribed yet: AttributeAdd returns at once and the
        subscription follows; an event pushed before it is lost). 0 while the device does not answer
        (a process that ended is noticed by the caller and said in one line)."""
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        try:
            figures = self.statistics(device, (stats.ATTRIBUTE_PENDING_LIST,))
        except tango.DevFailed:
            return 0
        waiting = figures.get(stats.ATTRIBUTE_PENDING_LIST)
        return int(figures.get(stats.ATTRIBUTE_STARTED_NUMBER) or 0) - len(waiting if waiting is not None else ())

    def _state_line(self, device: str) -> str:
        try:
            proxy = self.proxy(device)
            return f"{proxy.state()}: {proxy.status().strip().splitlines()[0]}"
        except Exception as exc:  # noqa: BLE001 - only describes a failure already being reported
            return f"unreadable ({exc})"

    def _start(self, spec: SubscriberSpec) -> None:
        self._attribute_names.pop(spec.device, None)  # a new process may publish other attributes
        home = self.dir / spec.label
        home.mkdir(parents=True, exist_ok=True)
        record_path = home / "process.json"
        old = ProcessRecord.load(record_path)
        if old is not None and old.alive():
            process.stop(old)
        log = home / "subscriber.log"
        self._log_starts[spec.label] = log.stat().st_size if log.is_file() else 0
        avoid = frozenset(self._taken_ports)
        orb_port = pick_free_port(24000 + 10 * spec.instance, host=self.address, avoid=avoid)
        event_port = pick_free_port(orb_port + 1, host=self.address, avoid=avoid)
        # The kind's variables (a library path, ...) cannot move the subscriber off our Tango host and ports.
        env = {**os.environ, **self.env, "TANGO_HOST": self.tango_host, "TANGO_ZMQ_EVENT_PORT": str(event_port),
               "TANGO_ZMQ_HEARTBEAT_PORT": str(pick_free_port(event_port + 1, host=self.address, avoid=avoid))}
        # ZeroMQ drops events past its receive high-water mark (1,000 by default): a subscriber that
        # stores in batches needs room for a burst. An explicit setting in the environment wins.
        env.setdefault("TANGO_EVENT_BUFFER_HWM", str(EVENT_BUFFER_HWM))
        _, record = process.spawn(
            [str(self.binary), spec.label, "-ORBendPoint", f"giop:tcp:{self.address}:{orb_port}"],
            log_path=home / "subscriber.log", attached=self.attached, env=env, cwd=home,
        )
        record.save(record_path)

    def _wait_ready(self, device: str, timeout_s: float) -> None:
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        deadline = time.monotonic() + timeout_s
        last = "not exported"
        while time.monotonic() < deadline:
            instance = device.rsplit("/", 1)[1]
            record = ProcessRecord.load(self.dir / instance / "process.json")
            if record is None or not record.alive():
                raise ServerError(self.exited_message(device))
            try:
                proxy = self.proxy(device)
                proxy.ping()
                return
            except tango.DevFailed as exc:
                last = exc.args[0].desc.strip().splitlines()[0] if exc.args else str(exc)
            time.sleep(0.2)
        raise ServerError(f"subscriber {device} not ready after {timeout_s:.0f} s: {last}")

    def exited_message(self, device: str) -> str:
        """One line: the subscriber's process ended, with the tail of its log (a real hdbpp-es exits when
        its LibConfiguration's `libname` is missing or does not load)."""
        log = self.dir / device.rsplit("/", 1)[1] / "subscriber.log"
        return f"subscriber {device} ({self.binary.name}) exited at start: {log_tail(log)} (log: {log})"

    def exited(self, devices: Iterable[str]) -> list[str]:
        """The devices among `devices` whose subscriber process no longer runs."""
        gone = []
        for device in devices:
            record = ProcessRecord.load(self.dir / device.rsplit("/", 1)[1] / "process.json")
            if record is None or not record.alive():
                gone.append(device)
        return gone

    def proxy(self, device: str) -> Any:
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        proxy = tango.DeviceProxy(f"tango://{self.tango_host}/{device}")
        proxy.set_timeout_millis(10_000)
        return proxy

    def add_attribute(self, device: str, attribute: str) -> None:
        """Through the HDB++ command, so a real hdbpp-es is driven alike."""
        self.add_attributes(device, [attribute])

    def add_attributes(self, device: str, attributes: Iterable[str]) -> None:
        """AttributeAdd for each, one command per attribute (as hdbpp-es takes them) on one proxy (a
        proxy costs a few ms to make: 0.7 s of each trial's 200 attributes)."""
        proxy = self.proxy(device)
        for attribute in attributes:
            proxy.command_inout("AttributeAdd", [attribute])

    def reset_statistics(self, device: str) -> bool:
        """HDB++'s ResetStatistics command (hdbpp-es has it too): the windowed figures (event ages,
        AttributeMaxPendingNumber, frequencies) start again from now. False when the device has no such
        command; the figures then also cover what came before."""
        proxy = self.proxy(device)
        if "resetstatistics" not in {c.lower() for c in proxy.get_command_list()}:
            return False
        proxy.command_inout("ResetStatistics")
        return True

    def statistics(self, device: str, extra: Sequence[str] = ()) -> dict[str, Any]:
        """The HDB++ statistics attributes (and any extra ones), read in one call. An attribute the
        subscriber does not have (a real hdbpp-es or a strict one lacks ours) reads as None."""
        proxy = self.proxy(device)
        names = list(dict.fromkeys([*HDBPP_STATISTICS, *extra]))  # Tango refuses a name read twice
        available = self._attributes_of(device, proxy)
        values: dict[str, Any] = {name: None for name in names}
        present = [name for name in names if name.lower() in available]
        for reply in proxy.read_attributes(present) if present else ():
            values[reply.name] = None if reply.has_failed else reply.value
        values["State"] = str(proxy.state())
        return values

    def _attributes_of(self, device: str, proxy: Any) -> frozenset[str]:
        if device not in self._attribute_names:
            self._attribute_names[device] = frozenset(name.lower() for name in proxy.get_attribute_list())
        return self._attribute_names[device]

    def pids(self) -> list[int]:
        found = []
        for record_path in sorted(self.dir.glob("*/process.json")):
            record = ProcessRecord.load(record_path)
            if record is not None and record.alive():
                found.append(record.pid)
        return found

    def _records(self, group: str = "") -> list[Path]:
        return sorted(self.dir.glob(f"{group}-*/process.json" if group else "*/process.json"))

    def running(self, group: str = "") -> list[str]:
        """The devices of the subscribers that run (of one group when given)."""
        return [f"{DEVICE_PREFIX}/{path.parent.name}" for path in self._records(group)
                if (record := ProcessRecord.load(path)) is not None and record.alive()]

    def down(self, group: str = "") -> int:
        """Stop every subscriber process (of one group when given); return how many ran."""
        stopped = 0
        for record_path in self._records(group):
            record = ProcessRecord.load(record_path)
            if record is not None and record.alive():
                process.stop(record)
                stopped += 1
            record_path.unlink(missing_ok=True)
        return stopped


def log_tail(log_path: Path, lines: int = 3) -> str:
    """The last non-empty lines of a log as one line ("a | b | c"), or what is wrong with the log."""
    try:
        text = [ln.strip() for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    return " | ".join(line[:200] for line in text[-lines:]) if text else "empty log"

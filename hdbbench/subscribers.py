# SPDX-License-Identifier: Apache-2.0
"""Registering, starting, driving and reading HDB++ event subscribers — through Tango only.

Everything here talks to a subscriber the way HDB++ tools do: device properties (LibConfiguration,
AttributeList) set in the Tango database, the commands of class HdbEventSubscriber (AttributeAdd,
Start, Stop, ...) and its attributes. So a real hdbpp-es is driven by the same code: give its binary
(``binary=``); the server name is the binary's file name, as Tango makes it.

Subscriber n is the device ``archiving/hdbbench-es/<n>`` of server ``<binary name>/<n>``; its
process record lives in ``<state_dir>/subscribers/<n>/``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.errors import ServerError
from hdbbench.servers import process
from hdbbench.servers.endpoints import MariaDBEndpoint, PostgresEndpoint
from hdbbench.servers.ports import pick_free_port
from hdbbench.servers.process import ProcessRecord

REPO = Path(__file__).resolve().parent.parent
# HDBBENCH_SUBSCRIBER_BINARY points at another build (e.g. build-asan/subscriber/hdbbench-es).
DEFAULT_BINARY = Path(os.environ.get("HDBBENCH_SUBSCRIBER_BINARY") or REPO / "build" / "subscriber" / "hdbbench-es")
CLASS_NAME = "HdbEventSubscriber"
DEVICE_PREFIX = "archiving/hdbbench-es"
EVENT_BUFFER_HWM = 100_000  # events ZeroMQ may buffer per subscriber before it drops

# The HDB++ attributes every HdbEventSubscriber has (reference §1), read for statistics.
HDBPP_STATISTICS = (
    "AttributeNumber", "AttributeOkNumber", "AttributeNokNumber", "AttributePendingNumber",
    "AttributeMaxPendingNumber", "AttributeStartedNumber", "AttributeStoppedNumber", "AttributePausedNumber",
    "AttributeMaxStoreTime", "AttributeMinStoreTime", "AttributeMaxProcessingTime", "AttributeMinProcessingTime",
    "AttributeRecordFreq", "AttributeFailureFreq", "StatisticsResetTime",
)


def lib_configuration(backend: str, database: str, *, postgres: PostgresEndpoint | None = None,
                      mariadb: MariaDBEndpoint | None = None,
                      overrides: Mapping[str, str] | None = None) -> list[str]:
    """LibConfiguration lines (HDB++ keys) for one of our backends, plus overrides such as batch_size.
    Each backend knows its keys (hdbbench.backends.registry)."""
    from hdbbench.backends.registry import lib_configuration as backend_lines

    return backend_lines(backend, database, {"postgres": postgres, "mariadb": mariadb}, overrides)


@dataclass(frozen=True)
class SubscriberSpec:
    instance: int
    lib_configuration: tuple[str, ...]
    attributes: tuple[str, ...] = ()
    properties: Mapping[str, Sequence[str]] = field(default_factory=dict)

    @property
    def device(self) -> str:
        return f"{DEVICE_PREFIX}/{self.instance}"


class SubscriberFleet:
    """N subscriber processes registered in one Tango database."""

    def __init__(self, tango_host: str, state_dir: Path, *, binary: Path = DEFAULT_BINARY,
                 attached: bool = True) -> None:
        self.tango_host = tango_host
        self.dir = Path(state_dir).resolve() / "subscribers"
        self.binary = Path(binary)
        self.attached = attached
        host, _, port = tango_host.rpartition(":")
        self._db_address = (host, int(port))

    @property
    def server_name(self) -> str:
        return self.binary.name

    def _database(self) -> Any:
        import tango

        return tango.Database(*self._db_address)

    def register(self, spec: SubscriberSpec) -> None:
        import tango

        db = self._database()
        info = tango.DbDevInfo()
        info.name, info._class, info.server = spec.device, CLASS_NAME, f"{self.server_name}/{spec.instance}"
        db.add_server(info.server, info, with_dserver=True)
        props: dict[str, Sequence[str]] = {"LibConfiguration": list(spec.lib_configuration),
                                           "AttributeList": list(spec.attributes)}
        props.update(spec.properties)
        db.put_device_property(spec.device, {k: list(v) for k, v in props.items()})

    def up(self, specs: Iterable[SubscriberSpec], ready_timeout_s: float = 60.0) -> list[str]:
        """Register and start each subscriber; return when every device answers."""
        if not self.binary.exists():
            raise ServerError(f"subscriber binary not found: {self.binary} (run ./run.sh setup)")
        devices = []
        for spec in specs:
            self.register(spec)
            self._start(spec)
            devices.append(spec.device)
        for device in devices:
            self._wait_ready(device, ready_timeout_s)
        return devices

    def _start(self, spec: SubscriberSpec) -> None:
        home = self.dir / str(spec.instance)
        home.mkdir(parents=True, exist_ok=True)
        record_path = home / "process.json"
        old = ProcessRecord.load(record_path)
        if old is not None and old.alive():
            process.stop(old)
        orb_port = pick_free_port(24000 + 10 * spec.instance)
        event_port = pick_free_port(orb_port + 1)
        env = {**os.environ, "TANGO_HOST": self.tango_host, "TANGO_ZMQ_EVENT_PORT": str(event_port),
               "TANGO_ZMQ_HEARTBEAT_PORT": str(pick_free_port(event_port + 1))}
        # ZeroMQ drops events past its receive high-water mark (1,000 by default): a subscriber that
        # stores in batches needs room for a burst. An explicit setting in the environment wins.
        env.setdefault("TANGO_EVENT_BUFFER_HWM", str(EVENT_BUFFER_HWM))
        _, record = process.spawn(
            [str(self.binary), str(spec.instance), "-ORBendPoint", f"giop:tcp:127.0.0.1:{orb_port}"],
            log_path=home / "subscriber.log", attached=self.attached, env=env, cwd=home,
        )
        record.save(record_path)

    def _wait_ready(self, device: str, timeout_s: float) -> None:
        import tango

        deadline = time.monotonic() + timeout_s
        last = "not exported"
        while time.monotonic() < deadline:
            instance = device.rsplit("/", 1)[1]
            record = ProcessRecord.load(self.dir / instance / "process.json")
            if record is None or not record.alive():
                log = self.dir / instance / "subscriber.log"
                raise ServerError(f"subscriber {device} exited: {process.last_log_line(log)} (log: {log})")
            try:
                proxy = self.proxy(device)
                proxy.ping()
                return
            except tango.DevFailed as exc:
                last = exc.args[0].desc.strip().splitlines()[0] if exc.args else str(exc)
            time.sleep(0.2)
        raise ServerError(f"subscriber {device} not ready after {timeout_s:.0f} s: {last}")

    def proxy(self, device: str) -> Any:
        import tango

        proxy = tango.DeviceProxy(f"tango://{self.tango_host}/{device}")
        proxy.set_timeout_millis(10_000)
        return proxy

    def add_attribute(self, device: str, attribute: str) -> None:
        """Through the HDB++ command, so a real hdbpp-es is driven alike."""
        self.proxy(device).command_inout("AttributeAdd", [attribute])

    def statistics(self, device: str, extra: Sequence[str] = ()) -> dict[str, Any]:
        """The HDB++ statistics attributes (and any extra ones), read in one call."""
        proxy = self.proxy(device)
        names = [*HDBPP_STATISTICS, *extra]
        values: dict[str, Any] = {}
        for reply in proxy.read_attributes(names):
            values[reply.name] = None if reply.has_failed else reply.value
        values["State"] = str(proxy.state())
        return values

    def pids(self) -> list[int]:
        found = []
        for record_path in sorted(self.dir.glob("*/process.json")):
            record = ProcessRecord.load(record_path)
            if record is not None and record.alive():
                found.append(record.pid)
        return found

    def down(self) -> int:
        """Stop every subscriber process; return how many ran."""
        stopped = 0
        for record_path in sorted(self.dir.glob("*/process.json")):
            record = ProcessRecord.load(record_path)
            if record is not None and record.alive():
                process.stop(record)
                stopped += 1
            record_path.unlink(missing_ok=True)
        return stopped

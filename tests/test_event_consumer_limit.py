# SPDX-License-Identifier: Apache-2.0
"""Tango's event consumer limit (hdbpp-reference.md §1c) and hdbbench-es's way round it.

cppTango's event consumer receives all events of a process on one ZeroMQ SUB socket whose send
high-water mark is 10,000. When it connects to one more device server, libzmq first replays every
topic already subscribed into the new connection's queue; what exceeds the mark is dropped, and so
are the new subscriptions to that server until the queue drains: those events are never delivered,
though the subscription reported no error. hdbbench-es sets the mark itself (LibConfiguration
`event_sub_send_hwm`, 0 = unlimited by default).

The mechanism at a small scale: attributes over three device servers, subscribed server after server
by one subscriber whose mark (`LOW_HWM`) is below the topics already subscribed when the later servers
are connected. The subscription that follows the connection in the same step is then always dropped:
it is the configuration event of the first attribute of each later server (hdbbench-es subscribes an
attribute's configuration event before its archive event). On this machine the queue drains within
milliseconds, before the next subscription, so archive events are lost only now and then at this
scale (in a facility, with thousands of topics queued, for whole device servers). Each path is proven,
not waited for: configuration events by changing every attribute's description until its row is
stored (att_parameter), archive events by `hdbbench.delivery.confirm`. With the low mark some
configuration events stay unproven, never on the first server; with 0 none, and none of either kind,
also after the last device server is killed and started again.
"""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hdbbench import delivery
from hdbbench.insertion import LoadTarget
from hdbbench.subscribers import SubscriberFleet, SubscriberSpec, lib_configuration
from tests.harness import sql_rows
from tests.test_subscriber import BINARY, db_connect, new_database

pytestmark = [
    pytest.mark.skipif(not BINARY.exists(),
                       reason=f"hdbbench-es not built ({BINARY} missing): run cmake --build build"),
]

SERVERS = 3
ATTRIBUTES_PER_SERVER = 100
# Two topics per attribute: the second server is connected with 200 topics subscribed, the third
# with 400; a mark of 50 is exceeded both times.
LOW_HWM = 50
ATTEMPT_WAIT_S = 1.0   # between two rounds of configuration changes (as delivery.confirm's bursts)
PATIENCE = 4           # rounds in a row that prove nothing more: the rest is lost

PROFILE = f"""
[profile]
name = "hwm"
description = "scalar doubles over {SERVERS} servers for the event consumer limit tests"
seed = 11
servers = {SERVERS}
devices_per_server = 1
device_prefix = "sim/hwm"
timestamps = "push"

[defaults]
type = "DevDouble"
format = "SCALAR"
rate_hz = 0.1
p_warning = 0.0
p_alarm = 0.0
p_invalid = 0.0
p_error = 0.0

[[attribute]]
name = "v"
count = {ATTRIBUTES_PER_SERVER}
"""


@dataclass
class Devices:
    tango_host: str
    state_dir: Path
    devices: list[str]           # one per server, in server order
    instances: list[str]         # server instance names, in the same order
    attributes: list[str]        # full names, lower case, server after server

    def load(self) -> LoadTarget:
        return LoadTarget(self.tango_host, self.devices, self.attributes, device_pids=lambda: [])

    def per_server(self, attributes: set[str]) -> list[int]:
        return [sum(1 for a in attributes if f"/{d}/" in a) for d in self.devices]


@pytest.fixture(scope="module")
def sims(stack_endpoints: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Devices]:
    from hdbbench import devices

    if stack_endpoints.tango is None or stack_endpoints.get("postgres") is None:
        pytest.skip("the test stack needs Tango and PostgreSQL")
    tango_host = stack_endpoints.tango.tango_host
    tmp = tmp_path_factory.mktemp("hwm")
    profile = tmp / "hwm.toml"
    profile.write_text(PROFILE)
    state_dir = tmp / "devices"
    try:
        fleet = devices.up(tango_host, profile, state_dir=state_dir, tie_to_parent=True)
        plans = sorted(fleet.devices.values(), key=lambda p: p.server)
        names = [f"tango://{tango_host}/{p.name}/{s.name}".lower() for p in plans for s in p.specs]
        yield Devices(tango_host, state_dir, [p.name for p in plans], [p.server for p in plans], names)
    finally:
        devices.down(state_dir)


@dataclass
class Archiver:
    """One running subscriber and the connection to its own database."""

    fleet: SubscriberFleet
    device: str
    conn: Any
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


StartArchiver = Callable[[int, "int | None"], Archiver]  # (instance, event_sub_send_hwm or None: default)


@pytest.fixture
def start_archiver(stack_endpoints: Any, sims: Devices, tmp_path: Path) -> Iterator[StartArchiver]:
    """Starts subscribers (each on a fresh TimescaleDB database); all are stopped and dropped at the end."""
    fleet = SubscriberFleet(sims.tango_host, tmp_path, binary=BINARY, attached=True)
    databases: list[Any] = []
    conns: list[Any] = []

    def start(instance: int, hwm: int | None) -> Archiver:
        db = new_database(stack_endpoints, "timescaledb")
        databases.append(db)
        overrides = {"flush_interval_ms": "50"} | ({} if hwm is None else {"event_sub_send_hwm": str(hwm)})
        lib = lib_configuration("timescaledb", db.database, stack_endpoints,
                                overrides=overrides)
        # Added one by one in server order: each later server is connected with the earlier ones'
        # topics subscribed.
        (device,) = fleet.up([SubscriberSpec(instance, tuple(lib), tuple(sims.attributes))])
        conns.append(db_connect(stack_endpoints, "timescaledb", db.database))
        return Archiver(fleet, device, conns[-1], fleet.dir / str(instance) / "subscriber.log")

    try:
        yield start
    finally:
        fleet.down()
        for conn in conns:
            conn.close()
        for db in databases:
            try:
                db.drop_schema()
            except Exception:  # noqa: BLE001 - best effort clean-up
                pass


def confirm_configuration(archiver: Archiver, sims: Devices) -> set[str]:
    """Prove each attribute's configuration event path: give the attributes whose path is not proven
    yet a new description (the device server pushes a configuration event, the subscriber stores an
    att_parameter row) until its row is stored, or PATIENCE rounds in a row prove none more; return
    the attributes still unproven."""
    import tango

    proxies = {d: tango.DeviceProxy(f"tango://{sims.tango_host}/{d}") for d in sims.devices}
    token = f"hwm-{uuid.uuid4().hex[:8]}"
    waiting = set(sims.attributes)
    idle = 0
    for attempt in range(1000):
        if not waiting or idle >= PATIENCE:
            break
        for device, proxy in proxies.items():
            names = [a.rsplit("/", 1)[1] for a in sorted(waiting) if f"/{device}/" in a]
            if not names:
                continue
            configs = proxy.get_attribute_config(names)
            for c in configs:
                c.description = f"{token}-{attempt}"
            proxy.set_attribute_config(configs)
        time.sleep(ATTEMPT_WAIT_S)
        rows = sql_rows(archiver.conn, "timescaledb", "SELECT DISTINCT c.att_name FROM att_parameter p "
                        "JOIN att_conf c USING (att_conf_id) WHERE p.description LIKE {}", (f"{token}-%",))
        stored = {name for (name,) in rows}
        still = waiting - stored
        idle = idle + 1 if len(still) == len(waiting) else 0
        waiting = still
    return waiting


def test_low_limit_loses_subscriptions_unlimited_none(sims: Devices, start_archiver: StartArchiver) -> None:
    low = start_archiver(81, LOW_HWM)
    assert f"ZMQ_SNDHWM 10000 -> {LOW_HWM}" in low.log_text()
    lost = confirm_configuration(low, sims)
    counts = sims.per_server(lost)
    # The first server is connected with nothing subscribed: nothing replayed, nothing lost. Each later
    # one loses at least the subscription sent with its connection: the configuration event of its
    # first attribute (the registry subscribes in name order).
    firsts = {min(a for a in sims.attributes if f"/{d}/" in a) for d in sims.devices[1:]}
    assert counts[0] == 0 and firsts <= lost, (counts, sorted(lost))
    low.fleet.down()

    unlimited = start_archiver(82, None)  # the default: 0, unlimited
    assert "ZMQ_SNDHWM 10000 -> 0" in unlimited.log_text()
    assert confirm_configuration(unlimited, sims) == set()
    assert delivery.confirm(unlimited.fleet, [unlimited.device], sims.load()) == set()


def test_every_attribute_resumes_after_a_server_restart(sims: Devices, start_archiver: StartArchiver) -> None:
    from hdbbench import devices

    es = start_archiver(83, 0)
    assert delivery.confirm(es.fleet, [es.device], sims.load()) == set()

    last = sims.instances[-1]
    record = next(r for r in devices.load_fleet(sims.state_dir).servers if r.instance == last)
    proc = record.process()
    assert proc is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    devices.restart(sims.state_dir, last, tie_to_parent=True)
    # Tango's keep-alive thread notices the missing heartbeat and subscribes again (it checks every
    # 10 s): the bursts go on until each attribute's count grows again, which proves its path anew.
    lost = delivery.confirm(es.fleet, [es.device], sims.load(), timeout_s=90.0, patience=90)
    assert lost == set(), sims.per_server(lost)
    assert confirm_configuration(es, sims) == set()

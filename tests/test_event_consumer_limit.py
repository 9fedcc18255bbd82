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
stored (att_parameter), archive events by `hdbbench.subscribers.delivery.confirm`. With the low mark some
configuration events stay unproven, never on the first server; with 0 none, and none of either kind,
also after the last device server is killed and started again.
"""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.subscribers import delivery
from tests.harness.composed import Harness, Sims
from tests.harness.databases import sql

pytestmark = pytest.mark.subscriber

BACKEND = "timescaledb"
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


@pytest.fixture(scope="module")
def sims(module_harness: Harness) -> Sims:
    """SERVERS device servers of one device each; their attributes server after server."""
    profile = module_harness.root / "hwm.toml"
    profile.write_text(PROFILE)
    return module_harness.devices(profile)


def per_server(sims: Sims, attributes: set[str]) -> list[int]:
    return [sum(1 for a in attributes if f"/{d}/" in a) for d in sims.devices]


Archiver = tuple[Any, Backend]  # a running subscriber's proxy and its own database
StartArchiver = Callable[[int, "int | None"], Archiver]  # (instance, event_sub_send_hwm or None: default)


@pytest.fixture
def start_archiver(harness: Harness, sims: Sims) -> Iterator[StartArchiver]:
    """Starts subscribers (each on a fresh database), all stopped and dropped after the test."""

    def start(instance: int, hwm: int | None) -> Archiver:
        db = harness.database(BACKEND, prefix="hwm")
        overrides: dict[str, Any] = {"flush_interval_ms": 50} | ({} if hwm is None else {"event_sub_send_hwm": hwm})
        # Added one by one in server order: each later server is connected with the earlier ones'
        # topics subscribed.
        return harness.subscriber(instance, db, sims.names, **overrides), db

    yield start


def log_text(harness: Harness, es: Any) -> str:
    return (harness.fleet.dir / es.dev_name().rsplit("/", 1)[1] / "subscriber.log").read_text(errors="replace")


def confirm_configuration(archiver: Archiver, sims: Sims) -> set[str]:
    """Prove each attribute's configuration event path: give the attributes whose path is not proven
    yet a new description (the device server pushes a configuration event, the subscriber stores an
    att_parameter row) until its row is stored, or PATIENCE rounds in a row prove none more; return
    the attributes still unproven."""
    import tango

    _, db = archiver
    proxies = {d: tango.DeviceProxy(f"tango://{sims.tango_host}/{d}") for d in sims.devices}
    token = f"hwm-{uuid.uuid4().hex[:8]}"
    waiting = set(sims.names)
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
        # A round's wait, as delivery.confirm's: an attribute is proven by its row, and the rest is
        # concluded lost only after PATIENCE rounds prove none more (a dropped subscription never
        # delivers, so no observation can end the wait sooner).
        time.sleep(ATTEMPT_WAIT_S)
        rows = sql(db, "SELECT DISTINCT c.att_name FROM att_parameter p "
                       "JOIN att_conf c USING (att_conf_id) WHERE p.description LIKE {}", (f"{token}-%",))
        stored = {name for (name,) in rows}
        still = waiting - stored
        idle = idle + 1 if len(still) == len(waiting) else 0
        waiting = still
    return waiting


def test_low_limit_loses_subscriptions_unlimited_none(harness: Harness, sims: Sims,
                                                      start_archiver: StartArchiver) -> None:
    low = start_archiver(81, LOW_HWM)
    assert f"ZMQ_SNDHWM 10000 -> {LOW_HWM}" in log_text(harness, low[0])
    lost = confirm_configuration(low, sims)
    counts = per_server(sims, lost)
    # The first server is connected with nothing subscribed: nothing replayed, nothing lost. Each later
    # one loses at least the subscription sent with its connection: the configuration event of its
    # first attribute (the registry subscribes in name order).
    firsts = {min(a for a in sims.names if f"/{d}/" in a) for d in sims.devices[1:]}
    assert counts[0] == 0 and firsts <= lost, (counts, sorted(lost))
    harness.fleet.down()

    unlimited = start_archiver(82, None)  # the default: 0, unlimited
    assert "ZMQ_SNDHWM 10000 -> 0" in log_text(harness, unlimited[0])
    assert confirm_configuration(unlimited, sims) == set()
    assert delivery.confirm(harness.fleet, [unlimited[0].dev_name()], sims.load()) == set()


def test_every_attribute_resumes_after_a_server_restart(harness: Harness, sims: Sims,
                                                        start_archiver: StartArchiver) -> None:
    from hdbbench.load import devices

    es, db = start_archiver(83, 0)
    assert delivery.confirm(harness.fleet, [es.dev_name()], sims.load()) == set()

    last = sims.instances[-1]
    fleet = devices.load_fleet(sims.state_dir)
    assert fleet is not None
    record = next(r for r in fleet.servers if r.instance == last)
    proc = record.process()
    assert proc is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    devices.restart(sims.state_dir, last, tie_to_parent=True)
    # Tango's keep-alive thread notices the missing heartbeat and subscribes again (it checks every
    # 10 s): the bursts go on until each attribute's count grows again, which proves its path anew.
    lost = delivery.confirm(harness.fleet, [es.dev_name()], sims.load(), timeout_s=90.0, patience=90)
    assert lost == set(), per_server(sims, lost)
    assert confirm_configuration((es, db), sims) == set()

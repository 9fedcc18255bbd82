# SPDX-License-Identifier: Apache-2.0
"""hdbbench-es in write-ahead mode survives a SIGKILL with a backlog; a lock timeout is not a bad row.

A table lock held by the test stalls the subscriber's writer (a slow database) while 4 attributes
emit; the device stops, every event has reached the subscriber (its per-attribute event counts stay
still), and the subscriber is SIGKILLed with its backlog in memory. With spool_sync_ms=0 every
received event was in the write-ahead log before the callback returned, so after the lock is
released and the subscriber is started again with the same configuration, every emitted event is
stored, once, in order, and WalReplayedNumber says the log gave them back.

A lock timeout of the database (PostgreSQL 55P03, the subscriber's session has lock_timeout set) while
the test holds the lock keeps the batch for a retry: nothing is rejected (DbErrorNumber 0), nothing lost.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hdbbench import emitter as em
from hdbbench.subscribers import SubscriberFleet, SubscriberSpec, lib_configuration
from tests.harness import eventually, row_counts, seen, sql_rows
from tests.test_subscriber import BINARY
from tests.test_subscriber_outage import _profile, _subscribed

pytestmark = [
    pytest.mark.skipif(not BINARY.exists(), reason=f"hdbbench-es not built ({BINARY} missing): run cmake --build build"),
]


def _still(es: Any, wait_s: float = 1.0) -> Any:
    """The per-attribute received counts, once they did not move for wait_s (Tango delivered all)."""
    before = [int(x) for x in es.AttributeEventNumberList]
    time.sleep(wait_s)
    after = [int(x) for x in es.AttributeEventNumberList]
    return seen(before == after, after)


def _kill(pid: int) -> None:
    import psutil

    proc = psutil.Process(pid)
    os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=30)


@dataclass
class Rig:
    """A fresh TimescaleDB schema, one simulated device of 4 attributes (held), and a subscriber fleet."""

    tango_host: str
    database: str
    device: str
    plan: Any
    names: list[str]
    fleet: SubscriberFleet


@pytest.fixture
def rig(stack_endpoints: Any, tmp_path: Path) -> Iterator[Rig]:
    from hdbbench import devices
    from hdbbench.backends import backend_for_stack

    tango_host = stack_endpoints.tango.tango_host
    backend = backend_for_stack("timescaledb", stack_endpoints, f"es_wal_{uuid.uuid4().hex[:6]}")
    backend.create_schema()
    sims = devices.up(tango_host, _profile(tmp_path, "eswal", 50.0), state_dir=tmp_path / "dev",
                      tie_to_parent=True)
    fleet = SubscriberFleet(tango_host, tmp_path, binary=BINARY, attached=True)
    try:
        device, plan = next(iter(sims.devices.items()))
        names = [f"tango://{tango_host}/{device}/{s.name}".lower() for s in plan.specs]
        yield Rig(tango_host, backend.database, device, plan, names, fleet)
    finally:
        fleet.down()
        devices.down(tmp_path / "dev")


def _archiving(rig: Rig, es: Any, conn: Any) -> None:
    """Wait until the subscriber runs every attribute and stored its initial values."""
    eventually(lambda: _subscribed(es, len(rig.names)), 60, "subscribed")
    eventually(lambda: (lambda got: seen(len(got) == len(rig.names), got))(row_counts(conn, "timescaledb")),
               30, "initial rows")
    time.sleep(2.0)  # let the ZeroMQ subscription filters settle (slow joiner) before the first push


def _emitted(rig: Rig, sim: Any) -> dict[str, int]:
    return dict(zip((f"tango://{rig.tango_host}/{rig.device}/{a}".lower() for a in sim.GeneratedAttributes),
                    (int(x) for x in sim.EventsEmittedList)))


def test_sigkill_with_backlog_loses_nothing_in_write_ahead_mode(rig: Rig, stack_endpoints: Any,
                                                                tmp_path: Path) -> None:
    import tango

    names, fleet = rig.names, rig.fleet
    conn = locker = None
    try:
        lib = lib_configuration("timescaledb", rig.database, stack_endpoints, overrides={
            "queue_capacity": "100000", "batch_size": "50", "spool_dir": str(tmp_path / "spool"),
            "spool_mode": "write_ahead", "spool_sync_ms": "0", "flush_interval_ms": "20",
            "reconnect_min_ms": "100", "reconnect_max_ms": "500"})
        spec = SubscriberSpec(93, tuple(lib), tuple(names))
        (dev_es,) = fleet.up([spec])
        es = fleet.proxy(dev_es)
        assert int(es.SpoolMode) == 1 and int(es.MemoryQueueCapacity) == 100000
        conn = stack_endpoints["postgres"].connect(rig.database)
        conn.autocommit = True
        _archiving(rig, es, conn)

        # A slow database: the writer waits for the table while events pile up in the subscriber.
        locker = stack_endpoints["postgres"].connect(rig.database)
        locker.autocommit = False
        locker.cursor().execute("LOCK TABLE att_scalar_devdouble IN ACCESS EXCLUSIVE MODE")
        sim = tango.DeviceProxy(f"tango://{rig.tango_host}/{rig.device}")
        sim.Start()
        time.sleep(3.0)
        sim.Stop()
        eventually(lambda: _still(es), 30, "every emitted event received")
        backlog = int(es.PendingEventNumber)
        assert backlog > 100, f"no backlog to lose: {backlog}"
        emitted = _emitted(rig, sim)
        _kill(fleet.pids()[0])
        locker.rollback()  # the database is fast again
        locker.close()
        locker = None
        (dev_es,) = fleet.up([spec])
        es = fleet.proxy(dev_es)
        assert int(es.WalReplayedNumber) >= backlog
        want = {n: emitted[n] + 1 for n in names}
        eventually(lambda: (lambda got: seen(all(got.get(n, 0) >= want[n] for n in names), (got, want)))(
            row_counts(conn, "timescaledb")), 60, "after the restart: 1 initial + every emitted event stored")
        dup = sql_rows(conn, "timescaledb", "SELECT count(*) - count(DISTINCT (att_conf_id, data_time)) "
                                            "FROM att_scalar_devdouble")[0][0]
        assert dup == 0
        for name, attr in zip(names, rig.plan.specs):
            stored = [r[0] for r in sql_rows(conn, "timescaledb",
                                             "SELECT value_r FROM att_scalar_devdouble d JOIN att_conf c USING "
                                             "(att_conf_id) WHERE c.att_name = {} ORDER BY data_time", (name,))][1:]
            n = emitted[name]
            predicted = em.predict_events(rig.plan.seed, rig.device, attr, 0, n)
            assert stored[:n] == [e.value for e in predicted], name
        assert int(es.LostEventNumber) == 0 and int(es.WalUnloggedNumber) == 0
    finally:
        if locker is not None:
            locker.close()
        if conn is not None:
            conn.close()


def test_lock_timeout_is_retried_not_rejected(rig: Rig, stack_endpoints: Any) -> None:
    import tango

    conn = locker = None
    try:
        lines = dict(line.split("=", 1) for line in lib_configuration(
            "timescaledb", rig.database, stack_endpoints, overrides={
                "batch_size": "50", "flush_interval_ms": "20", "reconnect_min_ms": "100", "reconnect_max_ms": "300"}))
        lines["connect_string"] += " options='-c lock_timeout=200'"
        spec = SubscriberSpec(94, tuple(f"{k}={v}" for k, v in lines.items()), tuple(rig.names))
        (dev_es,) = rig.fleet.up([spec])
        es = rig.fleet.proxy(dev_es)
        conn = stack_endpoints["postgres"].connect(rig.database)
        conn.autocommit = True
        _archiving(rig, es, conn)
        sim = tango.DeviceProxy(f"tango://{rig.tango_host}/{rig.device}")
        locker = stack_endpoints["postgres"].connect(rig.database)
        locker.autocommit = False
        locker.cursor().execute("LOCK TABLE att_scalar_devdouble IN ACCESS EXCLUSIVE MODE")
        sim.Start()
        eventually(lambda: seen(int(es.ReconnectNumber) >= 2, (es.ReconnectNumber, es.status())), 30,
                   "the writer's lock timeouts (kept for a retry)")
        locker.rollback()
        locker.close()
        locker = None
        time.sleep(1.0)
        sim.Stop()
        emitted = _emitted(rig, sim)
        want = {n: emitted[n] + 1 for n in rig.names}
        eventually(lambda: (lambda got: seen(got == want, (got, want)))(row_counts(conn, "timescaledb")),
                   60, "every emitted event stored")
        assert int(es.DbErrorNumber) == 0 and int(es.LostEventNumber) == 0
    finally:
        if locker is not None:
            locker.close()
        if conn is not None:
            conn.close()

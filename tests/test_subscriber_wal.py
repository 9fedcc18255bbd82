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
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.load import emitter as em
from hdbbench.model.hdbtypes import AttributeInfo, TangoType
from hdbbench.subscribers.launcher import SubscriberSpec
from tests.harness import eventually, seen
from tests.harness.composed import Harness, Sims, events_received, profile_toml
from tests.harness.databases import sql
from tests.harness.devices import emitted_grew

pytestmark = pytest.mark.subscriber

BACKEND = "timescaledb"  # the lock and its timeout are PostgreSQL's (SQLSTATE 55P03, lock_timeout)
BACKLOG_EVENTS = 600     # emitted while the table is locked (3 s at 4 x 50 events/s)


def _kill(pid: int) -> None:
    import psutil

    proc = psutil.Process(pid)
    os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.fixture
def db(harness: Harness) -> Backend:
    return harness.database(BACKEND, prefix="es_wal")


@pytest.fixture
def sims(harness: Harness, tmp_path: Path) -> Sims:
    """One simulated device of 4 attributes at 50 events/s, held until the test starts it."""
    return harness.devices(profile_toml(tmp_path, "eswal", 50.0))


@pytest.fixture
def table_lock(db: Backend) -> Iterator[Any]:
    """Holds an exclusive lock on the data table (a slow database) from `lock()` until `release()`."""

    class Lock:
        conn: Any = None

        def lock(self) -> None:
            self.conn = db.endpoint.connect(db.database)
            self.conn.autocommit = False
            self.conn.cursor().execute(f"LOCK TABLE {_table(db)} IN ACCESS EXCLUSIVE MODE")

        def release(self) -> None:
            if self.conn is not None:
                with closing(self.conn):
                    self.conn.rollback()
                self.conn = None

    held = Lock()
    try:
        yield held
    finally:
        held.release()


def _table(db: Backend) -> str:
    return db.table_for(AttributeInfo("tango://h:1/a/b/c/d", TangoType.DEV_DOUBLE))


def test_sigkill_with_backlog_loses_nothing_in_write_ahead_mode(harness: Harness, db: Backend, sims: Sims,
                                                                table_lock: Any, tmp_path: Path) -> None:
    lib = harness.lib(db, queue_capacity=100000, batch_size=50, spool_dir=str(tmp_path / "spool"),
                      spool_mode="write_ahead", spool_sync_ms=0, flush_interval_ms=20,
                      reconnect_min_ms=100, reconnect_max_ms=500)
    spec = SubscriberSpec(93, lib, tuple(sims.names))
    es = harness.subscriber(spec.instance, None, sims.names, lib=lib)
    assert int(es.SpoolMode) == 1 and int(es.MemoryQueueCapacity) == 100000
    since = harness.archiving(es, db, sims)
    received_before = events_received(es)

    # A slow database: the writer waits for the table while events pile up in the subscriber.
    table_lock.lock()
    sim = sims.proxy()
    sim.Start()
    emitted_grew(sim, BACKLOG_EVENTS)
    sim.Stop()
    emitted = sims.emitted()
    # Every emitted event reached the subscriber (its per-attribute counts grew by what was emitted).
    want_received = [n + emitted[name] for n, name in zip(received_before, es.AttributeList)]
    eventually(lambda: seen(events_received(es) == want_received, (events_received(es), want_received)), 30,
               "every emitted event received")
    backlog = int(es.PendingEventNumber)
    assert backlog > 100, f"no backlog to lose: {backlog}"
    _kill(harness.fleet.pids()[0])
    table_lock.release()  # the database is fast again
    (device,) = harness.fleet.up([spec])
    es = harness.fleet.proxy(device)
    assert int(es.WalReplayedNumber) >= backlog
    eventually(lambda: (lambda got: seen(all(got.get(n, 0) >= emitted[n] for n in sims.names), (got, emitted)))(
        db.count_rows_by_attribute(since)), 60, "after the restart: every emitted event stored")
    assert sql(db, f"SELECT count(*) - count(DISTINCT (att_conf_id, data_time)) FROM {_table(db)}")[0][0] == 0
    for name, attr in zip(sims.names, sims.plan.specs):
        stored = [e.value_r for e in db.fetch_events(name) if e.data_time >= since]
        n = emitted[name]
        assert stored[:n] == [e.value for e in em.predict_events(sims.plan.seed, sims.device, attr, 0, n)], name
    assert int(es.LostEventNumber) == 0 and int(es.WalUnloggedNumber) == 0


def test_lock_timeout_is_retried_not_rejected(harness: Harness, db: Backend, sims: Sims, table_lock: Any) -> None:
    lines = dict(line.split("=", 1) for line in harness.lib(
        db, batch_size=50, flush_interval_ms=20, reconnect_min_ms=100, reconnect_max_ms=300))
    lines["connect_string"] += " options='-c lock_timeout=200'"
    es = harness.subscriber(94, None, sims.names, lib=[f"{k}={v}" for k, v in lines.items()])
    since = harness.archiving(es, db, sims)
    sim = sims.proxy()
    table_lock.lock()
    sim.Start()
    eventually(lambda: seen(int(es.ReconnectNumber) >= 2, (es.ReconnectNumber, es.status())), 30,
               "the writer's lock timeouts (kept for a retry)")
    table_lock.release()
    emitted_grew(sim, 200)  # events after the lock is released too
    sim.Stop()
    emitted = sims.emitted()
    eventually(lambda: (lambda got: seen(got == emitted, (got, emitted)))(db.count_rows_by_attribute(since)),
               60, "every emitted event stored")
    assert int(es.DbErrorNumber) == 0 and int(es.LostEventNumber) == 0

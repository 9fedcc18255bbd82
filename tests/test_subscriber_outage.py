# SPDX-License-Identifier: Apache-2.0
"""hdbbench-es under stress: a 15 s database outage, and more events than Tango can deliver.

Outage: a private PostgreSQL/TimescaleDB of the test's own (the session servers are untouched) is
stopped for 15 s while 4 attributes emit 200 events/s; the subscriber has a 500-event memory queue
(full after 2.5 s) and a disk spool (some 2,500 events). After the restart every emitted event is
stored exactly once (primary keys, and rows = 1 initial + emitted per attribute), the spool filled
and drained, and the memory queue stayed within its capacity.

Overload: the subscriber's ZeroMQ receive buffer is made tiny (TANGO_EVENT_BUFFER_HWM) and the device
bursts thousands of events at once: Tango drops events and delivers "missed events" error events
(API_MissedEvents). They are stored as HDB++ error rows without failing a batch (no DB error, no
duplicate), and the loss is visible (stored < emitted, error rows present).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.load import emitter as em
from hdbbench.model.hdbtypes import AttributeInfo, TangoType
from tests.harness import eventually, seen, unchanged
from tests.harness.composed import Harness, profile_toml
from tests.harness.databases import sql
from tests.harness.servers import endpoint_or_skip, private_stack, server_of, server_process

pytestmark = pytest.mark.subscriber

OUTAGE_BACKEND = "timescaledb"  # a server with crash-safe restarts; the session's servers are untouched
OVERLOAD_BACKEND = "postgresql"
OUTAGE_S = 15.0
RESTART_EVENTS = 400  # emitted after the restart too (2 s at 4 x 50 events/s)


def _values(db: Backend, name: str, since: Any) -> list[Any]:
    return [e.value_r for e in db.fetch_events(name) if e.data_time >= since]


def _duplicates(db: Backend, table: str) -> int:
    return int(sql(db, f"SELECT count(*) - count(DISTINCT (att_conf_id, data_time)) FROM {table}")[0][0])


def _watch_outage(es: Any, pid: int, length_s: float) -> dict[str, Any]:
    """The subscriber's figures sampled every 0.5 s while the database stays down for `length_s`:
    the outage's length is the fault under test, and the samples are its observations."""
    import psutil

    proc = psutil.Process(pid)
    during: dict[str, Any] = {"spooled": 0, "memory": 0, "rss_mb": 0.0, "disconnected": False, "alarm": False}
    deadline = time.monotonic() + length_s
    while time.monotonic() < deadline:
        r = {x.name: x.value for x in es.read_attributes(["SpooledEventNumber", "PendingEventNumber", "DbConnected"])}
        during["spooled"] = max(during["spooled"], int(r["SpooledEventNumber"]))
        during["memory"] = max(during["memory"], int(r["PendingEventNumber"]) - int(r["SpooledEventNumber"]))
        during["disconnected"] |= not r["DbConnected"]
        during["alarm"] |= str(es.state()) == "ALARM"
        during["rss_mb"] = max(during["rss_mb"], proc.memory_info().rss / 2**20)
        time.sleep(0.5)  # the sampling interval of the outage, whose length is the fault itself
    return during


def test_a_database_outage_spools_and_loses_nothing(harness: Harness, tmp_path: Path) -> None:
    h = harness
    with private_stack(components=(server_of(OUTAGE_BACKEND),)) as stack:
        endpoint = endpoint_or_skip(stack.up(), OUTAGE_BACKEND)
        db = h.database(OUTAGE_BACKEND, prefix="es_outage", endpoint=endpoint)
        sims = h.devices(profile_toml(tmp_path, "esoutage", 50.0))
        es = h.subscriber(91, db, sims.names, queue_capacity=500, batch_size=200, spool_dir=str(tmp_path / "spool"),
                          flush_interval_ms=50, reconnect_min_ms=100, reconnect_max_ms=1000)
        since = h.archiving(es, db, sims)
        sim = sims.proxy()
        sim.Start()
        eventually(lambda: (lambda got: seen(sum(got.values()) > 100, got))(db.count_rows_by_attribute(since)),
                   30, "rows flowing before the outage")

        server = server_process(stack, OUTAGE_BACKEND)
        server.down()
        during = _watch_outage(es, h.fleet.pids()[0], OUTAGE_S)
        # The restart must reuse the port the subscriber knows (the free-port check binds with
        # SO_REUSEADDR, as the server does: connections in TIME_WAIT do not make the port busy).
        assert server.up().port == endpoint.port
        restarted = int(sim.EventsEmittedTotal)
        eventually(lambda: seen(int(sim.EventsEmittedTotal) >= restarted + RESTART_EVENTS, sim.EventsEmittedTotal),
                   30, "events emitted after the restart too")
        sim.Stop()
        emitted = sims.emitted()
        assert during["disconnected"] and during["alarm"], during
        assert during["spooled"] > 1000, f"the spool did not fill: {during}"
        assert during["memory"] <= 500 + 200, f"memory queue above capacity (+ one batch): {during}"

        eventually(lambda: (lambda got: seen(got == emitted, (got, emitted)))(db.count_rows_by_attribute(since)),
                   90, "after recovery: every emitted event stored, once")
        eventually(lambda: seen(int(es.SpooledEventNumber) == 0 and int(es.PendingEventNumber) == 0,
                                (es.SpooledEventNumber, es.PendingEventNumber)), 30, "spool drained")
        assert _duplicates(db, db.table_for(_info(sims))) == 0
        # Values in order, as the seed predicts.
        stored = _values(db, sims.names[0], since)
        assert stored == [e.value for e in em.predict_events(sims.plan.seed, sims.device, sims.plan.specs[0],
                                                              0, len(stored))]
        assert es.LostEventNumber == 0 and es.DbConnected and es.ReconnectNumber >= 1
        print(f"outage: {during}, emitted {sum(emitted.values())}")


def test_overload_missed_events_are_error_rows(harness: Harness, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness
    db = h.database(OVERLOAD_BACKEND, prefix="es_over")
    # Tango's default publisher buffer (hdbbench raises it to absorb bursts): over TCP a full subscriber
    # queue pushes back on the publisher, and it is the publisher that drops at its high-water mark.
    monkeypatch.setenv("TANGO_DS_EVENT_BUFFER_HWM", "1000")
    sims = h.devices(profile_toml(tmp_path, "esover", 1.0), auto_start=True)
    monkeypatch.setenv("TANGO_EVENT_BUFFER_HWM", "10")  # the subscriber's ZeroMQ receive buffer, in events
    es = h.subscriber(92, db, sims.names)
    since = h.archiving(es, db, sims)
    sim = sims.proxy()
    table = db.table_for(_info(sims))

    def errors() -> list[tuple[Any, ...]]:
        return sql(db, f"SELECT e.error_desc, count(*) FROM {table} d "
                       "JOIN att_error_desc e USING (att_error_desc_id) GROUP BY 1")

    def idle() -> Any:
        """No new row over a second and nothing pending: the subscriber took in all Tango delivered."""
        got = unchanged(lambda: (sum(db.count_rows_by_attribute(since).values()), int(es.PendingEventNumber)))
        return seen(got and got[1] == 0, got)

    def burst_until_missed() -> Any:
        """One burst of 4 x 5000 events as fast as the device pushes; did Tango report missed events?"""
        target = int(sim.EventsEmittedTotal) + 4 * 5000
        sim.Burst(5000)
        eventually(lambda: seen(int(sim.EventsEmittedTotal) >= target, sim.EventsEmittedTotal), 60, "burst emitted")
        eventually(idle, 60, "subscriber idle after the burst (rows, pending)")
        found = errors()
        return seen(any("missed" in desc.lower() for desc, _ in found), found)

    eventually(burst_until_missed, 240, "API_MissedEvents error rows after bursts", interval_s=0)
    total = int(sim.EventsEmittedTotal)
    found = errors()
    data = sql(db, f"SELECT count(*) FROM {table} WHERE att_error_desc_id IS NULL AND data_time >= {{}}", (since,))[0][0]
    print(f"overload: emitted {total}, data rows {data}, error rows {found}")
    assert _duplicates(db, table) == 0
    assert es.DbErrorNumber == 0, "an error row failed a batch"
    assert data < total, "no event was lost: the overload did not happen"
    assert any("missed" in desc.lower() for desc, _ in found), found


def _info(sims: Any) -> AttributeInfo:
    """The attributes of the profile are all alike: read-only scalar doubles, in one table."""
    return AttributeInfo(sims.names[0], TangoType.DEV_DOUBLE)

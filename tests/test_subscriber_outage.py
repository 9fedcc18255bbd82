# SPDX-License-Identifier: Apache-2.0
"""hdbbench-es under stress: a 30 s database outage, and more events than Tango can deliver.

Outage: a private PostgreSQL/TimescaleDB of the test's own (the session servers are untouched) is
stopped for 30 s while 4 attributes emit 200 events/s; the subscriber has a 500-event memory queue
and a disk spool. After the restart every emitted event is stored exactly once (primary keys, and
rows = 1 initial + emitted per attribute), the spool filled and drained, and the memory queue stayed
within its capacity.

Overload: the subscriber's ZeroMQ receive buffer is made tiny (TANGO_EVENT_BUFFER_HWM) and the device
bursts thousands of events at once: Tango drops events and delivers "missed events" error events
(API_MissedEvents). They are stored as HDB++ error rows without failing a batch (no DB error, no
duplicate), and the loss is visible (stored < emitted, error rows present).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hdbbench import emitter as em
from hdbbench.subscribers import SubscriberFleet, SubscriberSpec, lib_configuration
from tests.conftest import REPO, test_stack_config
from tests.harness import eventually, row_counts, seen, sql_rows
from tests.test_subscriber import BINARY

pytestmark = [
    pytest.mark.skipif(not BINARY.exists(), reason=f"hdbbench-es not built ({BINARY} missing): run cmake --build build"),
]

PROFILE = """
[profile]
name = "{name}"
description = "scalar doubles for the subscriber stress tests"
seed = 7
servers = 1
devices_per_server = 1
device_prefix = "sim/{name}"

[defaults]
rate_hz = {rate}
p_alarm = 0.0
p_warning = 0.0
p_invalid = 0.0
p_error = 0.0

[[attribute]]
name = "d"
type = "DevDouble"
count = 4
"""


def _profile(tmp: Path, name: str, rate: float) -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(PROFILE.format(name=name, rate=rate))
    return path


@pytest.fixture
def private_postgres() -> Iterator[tuple[Any, Any]]:
    from hdbbench.stack import Stack

    state = REPO / ".hdbbench" / f"pytest-es-outage-{uuid.uuid4().hex[:8]}"
    stack = Stack(test_stack_config(state, components=("postgres",)))
    try:
        endpoints = stack.up()
        yield stack, endpoints.get("postgres")
    finally:
        stack.down()
        import shutil

        shutil.rmtree(state, ignore_errors=True)


def _subscribed(es: Any, n: int) -> Any:
    ev = [int(x) for x in es.AttributeEventNumberList]
    return seen(len(ev) == n and min(ev) >= 1, (es.status(), ev))


def test_outage_30s_spools_and_loses_nothing(stack_endpoints: Any, private_postgres: tuple[Any, Any],
                                             tmp_path: Path) -> None:
    import psutil
    import tango

    from hdbbench import devices
    from hdbbench.backends import get_backend

    stack, pg = private_postgres
    tango_host = stack_endpoints.tango.tango_host
    backend = get_backend("timescaledb", pg, "es_outage")
    backend.create_schema()
    sims = devices.up(tango_host, _profile(tmp_path, "esoutage", 50.0), state_dir=tmp_path / "dev", tie_to_parent=True)
    fleet = SubscriberFleet(tango_host, tmp_path, binary=BINARY, attached=True)
    try:
        device, plan = next(iter(sims.devices.items()))
        names = [f"tango://{tango_host}/{device}/{s.name}".lower() for s in plan.specs]
        lib = lib_configuration("timescaledb", "es_outage", {"postgres": pg}, overrides={
            "queue_capacity": "500", "batch_size": "200", "spool_dir": str(tmp_path / "spool"),
            "flush_interval_ms": "50", "reconnect_min_ms": "100", "reconnect_max_ms": "1000"})
        (dev_es,) = fleet.up([SubscriberSpec(91, tuple(lib), tuple(names))])
        es = fleet.proxy(dev_es)
        conn = pg.connect("es_outage")
        conn.autocommit = True
        eventually(lambda: _subscribed(es, len(names)), 60, "subscribed")
        eventually(lambda: (lambda got: seen(len(got) == len(names), got))(row_counts(conn, "timescaledb")),
                   30, "initial rows")
        time.sleep(2.0)  # let the ZeroMQ subscription filters settle (slow joiner) before the first push
        sim = tango.DeviceProxy(f"tango://{tango_host}/{device}")
        sim.Start()
        eventually(lambda: (lambda got: seen(sum(got.values()) > 100, got))(row_counts(conn, "timescaledb")),
                   30, "rows flowing before the outage")
        conn.close()

        stack.server("postgres").down()
        proc = psutil.Process(fleet.pids()[0])
        during = {"spooled": 0, "memory": 0, "rss_mb": 0.0, "disconnected": False, "alarm": False}
        deadline = time.monotonic() + 30.0  # the outage length (a scenario parameter, not an assertion)
        while time.monotonic() < deadline:
            r = {x.name: x.value for x in es.read_attributes(
                ["SpooledEventNumber", "PendingEventNumber", "DbConnected"])}
            during["spooled"] = max(during["spooled"], int(r["SpooledEventNumber"]))
            during["memory"] = max(during["memory"], int(r["PendingEventNumber"]) - int(r["SpooledEventNumber"]))
            during["disconnected"] |= not r["DbConnected"]
            during["alarm"] |= str(es.state()) == "ALARM"
            during["rss_mb"] = max(during["rss_mb"], proc.memory_info().rss / 2**20)
            time.sleep(0.5)
        # The restart must reuse the port the subscriber knows (the free-port check binds with
        # SO_REUSEADDR, as the server does: connections in TIME_WAIT do not make the port busy).
        assert stack.server("postgres").up().port == pg.port
        time.sleep(2.0)  # some events after the restart too
        sim.Stop()
        emitted = dict(zip((f"tango://{tango_host}/{device}/{a}".lower() for a in sim.GeneratedAttributes),
                           (int(x) for x in sim.EventsEmittedList)))
        assert during["disconnected"] and during["alarm"], during
        assert during["spooled"] > 1000, f"the spool did not fill: {during}"
        assert during["memory"] <= 500 + 200, f"memory queue above capacity (+ one batch): {during}"

        conn = pg.connect("es_outage")
        conn.autocommit = True
        want = {n: emitted[n] + 1 for n in names}
        eventually(lambda: (lambda got: seen(got == want, (got, want)))(row_counts(conn, "timescaledb")),
                   90, "after recovery: rows = 1 initial + emitted per attribute")
        eventually(lambda: seen(int(es.SpooledEventNumber) == 0 and int(es.PendingEventNumber) == 0,
                                (es.SpooledEventNumber, es.PendingEventNumber)), 30, "spool drained")
        dup = sql_rows(conn, "timescaledb", "SELECT count(*) - count(DISTINCT (att_conf_id, data_time)) "
                                            "FROM att_scalar_devdouble")[0][0]
        assert dup == 0
        # Values in order, as the seed predicts.
        spec = plan.specs[0]
        stored = [r[0] for r in sql_rows(conn, "timescaledb",
                                         "SELECT value_r FROM att_scalar_devdouble d JOIN att_conf c USING (att_conf_id) "
                                         "WHERE c.att_name = {} ORDER BY data_time", (names[0],))][1:]
        assert stored == [e.value for e in em.predict_events(plan.seed, device, spec, 0, len(stored))]
        assert es.LostEventNumber == 0 and es.DbConnected and es.ReconnectNumber >= 1
        conn.close()
        print(f"outage: {during}, emitted {sum(emitted.values())}")
    finally:
        fleet.down()
        devices.down(tmp_path / "dev")


def test_overload_missed_events_are_error_rows(stack_endpoints: Any, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import tango

    from hdbbench import devices
    from hdbbench.backends import backend_for_stack

    tango_host = stack_endpoints.tango.tango_host
    backend = backend_for_stack("postgresql", stack_endpoints, f"es_over_{uuid.uuid4().hex[:6]}")
    backend.create_schema()
    # Tango's default publisher buffer (hdbbench raises it to absorb bursts): over TCP a full subscriber
    # queue pushes back on the publisher, and it is the publisher that drops at its high-water mark.
    monkeypatch.setenv("TANGO_DS_EVENT_BUFFER_HWM", "1000")
    sims = devices.up(tango_host, _profile(tmp_path, "esover", 1.0), state_dir=tmp_path / "dev", tie_to_parent=True)
    monkeypatch.setenv("TANGO_EVENT_BUFFER_HWM", "10")  # the subscriber's ZeroMQ receive buffer, in events
    fleet = SubscriberFleet(tango_host, tmp_path, binary=BINARY, attached=True)
    conn = None
    try:
        device, plan = next(iter(sims.devices.items()))
        names = [f"tango://{tango_host}/{device}/{s.name}".lower() for s in plan.specs]
        lib = lib_configuration("postgresql", backend.database, stack_endpoints)
        (dev_es,) = fleet.up([SubscriberSpec(92, tuple(lib), tuple(names))])
        es = fleet.proxy(dev_es)
        eventually(lambda: _subscribed(es, len(names)), 60, "subscribed")
        sim = tango.DeviceProxy(f"tango://{tango_host}/{device}")
        conn = stack_endpoints["postgres"].connect(backend.database)
        conn.autocommit = True

        def count() -> int:
            return int(sql_rows(conn, "postgresql", "SELECT count(*) FROM att_scalar_devdouble")[0][0])

        def idle() -> Any:
            before = count()
            time.sleep(1.0)  # no new row for 1 s and nothing pending
            return seen(before == count() and int(es.PendingEventNumber) == 0, (before, es.PendingEventNumber))

        def burst_until_missed() -> Any:
            """One burst of 4 x 5000 events as fast as the device pushes; did Tango report missed events?"""
            target = int(sim.EventsEmittedTotal) + 4 * 5000
            sim.Burst(5000)
            eventually(lambda: seen(int(sim.EventsEmittedTotal) >= target, sim.EventsEmittedTotal), 60, "burst emitted")
            eventually(idle, 60, "subscriber idle after the burst")
            errors = sql_rows(conn, "postgresql", "SELECT e.error_desc, count(*) FROM att_scalar_devdouble d "
                                                  "JOIN att_error_desc e USING (att_error_desc_id) GROUP BY 1")
            return seen(any("missed" in desc.lower() for desc, _ in errors), errors)

        eventually(burst_until_missed, 240, "API_MissedEvents error rows after bursts", interval_s=0)
        total = int(sim.EventsEmittedTotal)
        errors = sql_rows(conn, "postgresql", "SELECT e.error_desc, count(*) FROM att_scalar_devdouble d "
                                              "JOIN att_error_desc e USING (att_error_desc_id) GROUP BY 1")
        data = sql_rows(conn, "postgresql", "SELECT count(*) FROM att_scalar_devdouble WHERE att_error_desc_id IS NULL")[0][0]
        dup = sql_rows(conn, "postgresql", "SELECT count(*) - count(DISTINCT (att_conf_id, data_time)) "
                                           "FROM att_scalar_devdouble")[0][0]
        print(f"overload: emitted {total}, data rows {data - len(names)}, error rows {errors}")
        assert dup == 0
        assert es.DbErrorNumber == 0, "an error row failed a batch"
        assert data - len(names) < total, "no event was lost: the overload did not happen"
        assert any("missed" in desc.lower() for desc, _ in errors), errors
    finally:
        if conn is not None:
            conn.close()
        fleet.down()
        devices.down(tmp_path / "dev")
        try:
            backend.drop_schema()
        except Exception:  # noqa: BLE001 - best effort clean-up
            pass

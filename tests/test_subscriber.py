# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the C++ event subscriber hdbbench-es on the three backends.

One module harness: the all-types simulated device (every type x format x write type, seeded) and
three subscribers started once through `hdbbench.subscribers.SubscriberFleet` — one per backend
(TimescaleDB, PostgreSQL, MariaDB), each on a fresh database created by `hdbbench.backends`. The
device runs for a few seconds; every stored row is then compared with what the seed predicts (value,
quality, error-ness, in order), and the last source timestamp with the device's. Then the HDB++
commands, then bad configurations (each its own short-lived subscriber).

Waits are bounded (`eventually`) and say what they saw; no assertion depends on timing.
The binary is `build/subscriber/hdbbench-es`, or $HDBBENCH_SUBSCRIBER_BINARY (e.g. the ASan build).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hdbbench import emitter as em
from hdbbench.subscribers import DEFAULT_BINARY, SubscriberFleet, SubscriberSpec, lib_configuration
from tests.harness import eventually, row_counts, seen, sql_rows

ROOT = Path(__file__).resolve().parents[1]
BINARY = DEFAULT_BINARY
PROFILE = ROOT / "devices" / "profiles" / "all-types.toml"
BACKENDS = ("timescaledb", "postgresql", "mysql")
INSTANCE = {"timescaledb": 71, "postgresql": 72, "mysql": 73}

pytestmark = [
    pytest.mark.skipif(not BINARY.exists(), reason=f"hdbbench-es not built ({BINARY} missing): run cmake --build build"),
]


# ------------------------------------------------------------------------------------ databases


def new_database(stack: Any, backend: str) -> Any:
    from hdbbench.backends import backend_for_stack

    b = backend_for_stack(backend, stack, f"es_{backend[:5]}_{uuid.uuid4().hex[:6]}")
    b.create_schema()
    return b


def db_connect(stack: Any, backend: str, database: str) -> Any:
    if backend == "mysql":
        return stack["mariadb"].connect(database)
    conn = stack["postgres"].connect(database)
    conn.autocommit = True
    return conn


def fetch_events(conn: Any, backend: str, att_name: str) -> list[Any]:
    if backend == "mysql":
        from hdbbench.backends.mysql import fetch_events as fetch

        events = fetch(conn, att_name)
        conn.commit()
        return events
    from hdbbench.backends.postgres import fetch_events as fetch

    return fetch(conn, att_name)


def history(conn: Any, backend: str) -> dict[str, list[str]]:
    """att_history events per attribute, in time order."""
    time_col = "time" if backend == "mysql" else "event_time"
    rows = sql_rows(conn, backend, f"SELECT c.att_name, e.event FROM att_history h JOIN att_conf c USING (att_conf_id) "
                                   f"JOIN att_history_event e USING (att_history_event_id) ORDER BY h.{time_col}")
    out: dict[str, list[str]] = {}
    for name, event in rows:
        out.setdefault(name, []).append(event)
    return out


# ------------------------------------------------------------------------------------ harness


@dataclass
class Harness:
    stack: Any
    tango_host: str
    fleet: SubscriberFleet
    device: str                       # the simulated device
    seed: int
    specs: dict[str, em.AttrSpec]     # by attribute name (device spelling)
    databases: dict[str, Any] = field(default_factory=dict)   # backend -> Backend
    conns: dict[str, Any] = field(default_factory=dict)

    def att_name(self, attr: str) -> str:
        return f"tango://{self.tango_host}/{self.device}/{attr}".lower()

    def subscriber(self, backend: str) -> str:
        return f"archiving/hdbbench-es/{INSTANCE[backend]}"

    def es(self, backend: str) -> Any:
        return self.fleet.proxy(self.subscriber(backend))

    def sim(self) -> Any:
        import tango

        return tango.DeviceProxy(f"tango://{self.tango_host}/{self.device}")

    def events_received(self, backend: str) -> list[int]:
        return [int(x) for x in self.es(backend).AttributeEventNumberList]


@pytest.fixture(scope="module")
def harness(stack_endpoints: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    from hdbbench import devices

    if stack_endpoints.get("postgres") is None or stack_endpoints.get("mariadb") is None or stack_endpoints.tango is None:
        pytest.skip("the test stack needs PostgreSQL, MariaDB and Tango")
    tmp = tmp_path_factory.mktemp("es")
    tango_host = stack_endpoints.tango.tango_host
    dbs = {b: new_database(stack_endpoints, b) for b in BACKENDS}
    fleet_state = tmp / "devices"
    sims = devices.up(tango_host, PROFILE, state_dir=fleet_state, tie_to_parent=True, auto_start=False)
    subs = SubscriberFleet(tango_host, tmp, binary=BINARY, attached=True)
    try:
        device, plan = next(iter(sims.devices.items()))
        specs = {s.name: s for s in plan.specs}
        h = Harness(stack_endpoints, tango_host, subs, device, plan.seed, specs, dbs)
        attrs = [h.att_name(a) for a in specs]
        out = []
        for backend in BACKENDS:
            lib = lib_configuration(backend, dbs[backend].database, stack_endpoints,
                                    overrides={"flush_interval_ms": "50", "spool_dir": str(tmp / f"spool-{backend}")})
            out.append(SubscriberSpec(INSTANCE[backend], tuple(lib), tuple(attrs),
                                      properties={"SubscribeRetryPeriod": ["5"],
                                                  # the age figures of the run stay in the window
                                                  "StatisticsTimeWindow": ["3600"]}))
        subs.up(out)
        for backend in BACKENDS:
            h.conns[backend] = db_connect(stack_endpoints, backend, dbs[backend].database)
        yield h
    finally:
        subs.down()
        devices.down(fleet_state)
        for conn in h.conns.values() if "h" in locals() else ():
            conn.close()
        for b in dbs.values():
            try:
                b.drop_schema()
            except Exception:  # noqa: BLE001 - best effort clean-up
                pass


def expected_stored(events: list[em.Event]) -> list[em.Event]:
    """HDB++ stores only the first error event after a good one."""
    out: list[em.Event] = []
    for e in events:
        if e.is_error and out and out[-1].is_error:
            continue
        out.append(e)
    return out


@pytest.fixture(scope="module")
def emitted(harness: Harness) -> dict[str, int]:
    """Run the device once for every backend: subscribe, emit for a few seconds, stop."""
    h = harness
    n_attrs = len(h.specs)
    for backend in BACKENDS:  # the initial event of each subscription has arrived: all subscribed
        eventually(lambda b=backend: (lambda ev: seen(len(ev) == n_attrs and min(ev) >= 1, (h.es(b).Status(), ev)))(
                   h.events_received(b)), 60, f"{backend}: every attribute subscribed")
        # ...and stored, so that the rows of the run are the initial row + the emitted events
        eventually(lambda b=backend: (lambda got: seen(len(got) == n_attrs, got))(row_counts(h.conns[b], b)),
                   60, f"{backend}: the initial row of every attribute stored")
    # ZeroMQ subscription filters reach the publisher asynchronously ("slow joiner"): let them settle,
    # or the first pushed events can be dropped before any subscriber's filter is in place.
    time.sleep(2.0)
    sim = h.sim()
    sim.Start()
    time.sleep(4.0)  # run length, not a timing assertion
    sim.Stop()
    names = list(sim.GeneratedAttributes)
    counts = dict(zip(names, (int(x) for x in sim.EventsEmittedList)))
    assert all(counts[a] > 0 for a in names if h.specs[a].mode == "push"), counts
    return counts


@pytest.mark.parametrize("backend", BACKENDS)
def test_event_age_splits_into_reception_and_time_in_subscriber(harness: Harness, emitted: dict[str, int],
                                                               backend: str) -> None:
    # Per event, age at commit = age at reception + time in the subscriber, each >= 0; the maxima are
    # exact (not bucketed), so they bound each other.
    es = harness.es(backend)
    age, reception, inside = (float(es.read_attribute(f"{prefix}Max").value)
                              for prefix in ("EventAgeAtCommit", "EventAgeAtReception", "TimeInSubscriber"))
    assert age > 0 and inside > 0, (age, reception, inside)
    assert reception <= age + 1e-6 and inside <= age + 1e-6
    assert age <= reception + inside + 1e-6
    for prefix in ("EventAgeAtCommit", "EventAgeAtReception", "TimeInSubscriber"):
        p50, p99 = (float(es.read_attribute(f"{prefix}{q}").value) for q in ("P50", "P99"))
        assert 0 <= p50 <= p99, (prefix, p50, p99)


def _expected_rows(h: Harness, attr: str, n: int) -> int:
    return 1 + len(expected_stored(list(em.predict_events(h.seed, h.device, h.specs[attr], 0, n))))


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_type_reads_back_as_emitted(harness: Harness, emitted: dict[str, int], backend: str) -> None:
    h = harness
    conn = h.conns[backend]
    push = [a for a, s in h.specs.items() if s.mode == "push"]
    want = {h.att_name(a): _expected_rows(h, a, emitted[a]) for a in push}

    def complete() -> Any:
        got = row_counts(conn, backend)
        missing = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
        return seen(not missing, missing)

    eventually(complete, 60, f"{backend}: stored rows = 1 initial + emitted events (stored, expected)")
    sim = h.sim()
    mismatches = []
    for attr in push:
        spec = h.specs[attr]
        rows = fetch_events(conn, backend, h.att_name(attr))
        first, stored = rows[0], rows[1:]
        assert first.quality == em.INVALID and first.value_r is None, (attr, first)  # read before Start
        expected = expected_stored(list(em.predict_events(h.seed, h.device, spec, 0, emitted[attr])))
        # READ_WRITE: value_w is the device's set point (the model value of its placeholder stream).
        set_point = (em.EventStream(h.seed, "placeholder", spec).raw_value(0)
                     if spec.write == "READ_WRITE" and spec.kind != "encoded" else None)
        times = [r.data_time for r in rows]
        assert times == sorted(times) and len(set(times)) == len(times), f"{attr}: data_time not strictly increasing"
        for k, (exp, got) in enumerate(zip(expected, stored)):
            if exp.is_error or got.error_desc is not None:
                if not (exp.is_error and got.error_desc and em.ERROR_DESC in got.error_desc):
                    mismatches.append((attr, k, exp, got))
                continue
            if set_point is not None and exp.quality != em.INVALID and (
                    em.event_digest(spec.type, spec.format, got.value_w, em.VALID)
                    != em.event_digest(spec.type, spec.format, set_point, em.VALID)):
                mismatches.append((attr, k, "value_w", set_point, got))
            value = got.value_r
            if exp.quality == em.INVALID:
                ok = got.quality == em.INVALID and value is None
            else:
                ok = got.quality == exp.quality and (
                    em.event_digest(spec.type, spec.format, value, got.quality)
                    == em.event_digest(spec.type, spec.format, exp.value, exp.quality))
            if not ok:
                mismatches.append((attr, k, exp, got))
        # The source timestamp: the last stored event is the device's last event, to the microsecond.
        if not expected[-1].is_error:
            reply = sim.read_attribute(attr)
            device_us = round(reply.time.totime() * 1e6)
            stored_us = round(stored[-1].data_time.timestamp() * 1e6)
            if device_us != stored_us:
                mismatches.append((attr, "timestamp", device_us, stored_us))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]}"

    # Configuration rows as HDB++ writes them.
    n = len(h.specs)
    assert sql_rows(conn, backend, "SELECT count(*) FROM att_conf")[0][0] == n
    assert sql_rows(conn, backend, "SELECT count(DISTINCT att_conf_id) FROM att_parameter")[0][0] == n
    assert sql_rows(conn, backend, "SELECT count(*) FROM att_parameter")[0][0] == n  # one per configuration event
    hist = history(conn, backend)
    assert len(hist) == n and all(ev[:2] == ["add", "start"] for ev in hist.values()), hist
    if backend == "mysql":
        kinds = dict(sql_rows(conn, backend, "SELECT c.att_name, t.data_type FROM att_conf c "
                                             "JOIN att_conf_data_type t USING (att_conf_data_type_id)"))
        assert kinds[h.att_name("double_spectrum_rw")] == "array_devdouble_rw"
        facility = sql_rows(conn, backend, "SELECT DISTINCT facility FROM att_conf")
        assert facility == [(h.tango_host.lower(),)]
        labels = sql_rows(conn, backend, "SELECT p.enum_labels FROM att_parameter p JOIN att_conf c USING (att_conf_id) "
                                         "WHERE c.att_name = {}", (h.att_name("enum_scalar_ro"),))
        assert labels and "STARTING" in labels[0][0]
    else:
        tables = {r[0] for r in sql_rows(conn, backend, "SELECT DISTINCT table_name FROM att_conf")}
        assert len(tables) == 40  # 14 types x 3 formats, DevEncoded scalar only
        label = sql_rows(conn, backend, "SELECT value_r_label FROM att_scalar_devenum WHERE value_r IS NOT NULL LIMIT 1")
        assert label and label[0][0] in ("OFF", "STARTING", "ON", "FAULT")
    es = h.es(backend)
    assert es.LostEventNumber == 0 and es.DbErrorNumber == 0 and es.DbConnected
    assert "Events OK" in es.AttributeStatus(h.att_name("double_scalar_ro"))
    assert str(es.state()) in ("ON", "ALARM"), es.status()


def _stored(h: Harness, backend: str, attr: str) -> int:
    return row_counts(h.conns[backend], backend).get(h.att_name(attr), 0)


def _burst_and_wait(h: Harness, backend: str, attrs: list[str], sentinel: str, n: int = 3) -> dict[str, int]:
    """Emit n events on attrs + the sentinel; wait until the sentinel's are stored; return counts before."""
    before = {a: _stored(h, backend, a) for a in [*attrs, sentinel]}
    h.sim().BurstAttributes([[n], [*attrs, sentinel]])
    eventually(lambda: (lambda got: seen(got >= before[sentinel] + n, got))(_stored(h, backend, sentinel)),
               30, f"{backend}: sentinel rows after a burst")
    return before


@pytest.mark.parametrize("backend", ["timescaledb", "mysql"])
def test_commands(harness: Harness, emitted: dict[str, int], backend: str) -> None:
    h = harness
    es = h.es(backend)
    conn = h.conns[backend]
    a, p, sentinel = "long_scalar_ro", "short_scalar_ro", "double_scalar_ro"
    na, np_ = h.att_name(a), h.att_name(p)

    # Stop: unsubscribed, events not stored; Pause: subscribed, events dropped.
    es.AttributeStop(na)
    es.AttributePause(np_)
    eventually(lambda: seen(na in (es.AttributeStoppedList or []) and np_ in (es.AttributePausedList or []),
                            (es.AttributeStoppedList, es.AttributePausedList)), 15, "stopped and paused lists")
    before = _burst_and_wait(h, backend, [a, p], sentinel)
    assert _stored(h, backend, a) == before[a] and _stored(h, backend, p) == before[p]
    # Start again: events flow.
    es.AttributeStart(na)
    es.AttributeStart(np_)
    eventually(lambda: seen(na in (es.AttributeStartedList or []), es.AttributeStartedList), 15, "restarted")
    eventually(lambda: (h.sim().BurstAttributes([[1], [a, p]]), _stored(h, backend, a) > before[a]
                        and _stored(h, backend, p) > before[p])[1], 40, f"{backend}: rows after AttributeStart")
    hist = history(conn, backend)
    assert "stop" in hist[na] and "pause" in hist[np_], (hist[na], hist[np_])

    # Strategy and context: RUN-only attributes stop when the context becomes SHUTDOWN.
    es.SetAttributeStrategy([na, "RUN"])
    assert es.GetAttributeStrategy(na).upper() == "RUN"
    es.write_attribute("Context", "SHUTDOWN")
    eventually(lambda: seen(na in (es.AttributeStoppedList or []), es.AttributeStoppedList), 15, "stopped by context")
    assert sentinel and h.att_name(sentinel) in (es.AttributeStartedList or [])  # ALWAYS: unaffected
    es.write_attribute("Context", "RUN")
    eventually(lambda: seen(na in (es.AttributeStartedList or []), es.AttributeStartedList), 15, "started by context")
    es.SetAttributeStrategy([na, "ALWAYS"])

    # TTL: command, attribute list and att_conf.
    es.SetAttributeTTL([na, "48"])
    assert es.GetAttributeTTL(na) == 48
    ttl_col = "att_ttl" if backend == "mysql" else "ttl"

    def ttl_in_conf() -> Any:
        got = sql_rows(conn, backend, f"SELECT {ttl_col} FROM att_conf WHERE att_name = {{}}", (na,))
        return seen(got == [(48,)], got)

    eventually(ttl_in_conf, 20, "att_conf ttl updated")
    eventually(lambda: (lambda got: seen("update_ttl" in got, got))(history(conn, backend).get(na, [])),
               20, "update_ttl history event")

    # Remove: forgotten by the subscriber, history 'remove'.
    number = es.AttributeNumber
    es.AttributeRemove(np_)
    eventually(lambda: seen(es.AttributeNumber == number - 1, es.AttributeNumber), 15, "attribute removed")
    eventually(lambda: seen(np_ not in (es.AttributeList or []), es.AttributeList), 15, "removed from AttributeList")
    eventually(lambda: (lambda got: seen("remove" in got, got))(history(conn, backend).get(np_, [])),
               20, "remove history event")
    es.AttributeAdd([np_])  # back, for the other tests
    eventually(lambda: seen(es.AttributeNumber == number, es.AttributeNumber), 15, "attribute added again")


# ------------------------------------------------------------------------------------ bad configuration


def _bad_subscriber(h: Harness, instance: int, lib: list[str], attrs: list[str]) -> Any:
    # Written into the AttributeList property (not assigned by AttributeAdd): its line parsing is under test.
    h.fleet.up([SubscriberSpec(instance, tuple(lib), properties={"AttributeList": attrs})])
    return h.fleet.proxy(f"archiving/hdbbench-es/{instance}")


def test_bad_configurations_give_state_and_status(harness: Harness) -> None:
    h = harness
    pg = h.stack.get("postgres")
    good_attr = h.att_name("double_scalar_ro")
    dbname = h.databases["postgresql"].database

    es = _bad_subscriber(h, 81, ["backend=oracle", f"connect_string={pg.conninfo(dbname)}"], [good_attr])
    eventually(lambda: seen(str(es.state()) == "FAULT", (es.state(), es.status())), 15, "unknown backend: FAULT")
    assert "oracle" in es.status().lower()

    wrong = pg.conninfo(dbname).replace(f"password='{pg.password}'", "password='wrong'")
    assert wrong != pg.conninfo(dbname)
    es = _bad_subscriber(h, 82, ["backend=postgresql", f"connect_string={wrong}"], [good_attr])
    eventually(lambda: seen(str(es.state()) == "ALARM" and "password" in es.status(), (es.state(), es.status())),
               20, "wrong password: ALARM naming the cause")
    assert not es.DbConnected

    lib = lib_configuration("postgresql", dbname, {"postgres": pg})
    unknown = f"tango://{h.tango_host}/sim/nosuch/device/nothing"
    es = _bad_subscriber(h, 83, lib, [good_attr, unknown, "this is not an attribute;strategy="])
    eventually(lambda: seen(unknown in (es.AttributeNokList or []) and str(es.state()) == "ALARM",
                            (es.state(), es.status(), es.AttributeNokList)), 30,
               "unknown attribute: in the NOK list, ALARM")
    assert "ignored" in es.status() and "this is not an attribute" in es.status()
    assert es.AttributeErrorList and any(es.AttributeErrorList)
    assert es.AttributeStatus(unknown)
    assert good_attr in (es.AttributeStartedList or [])
    for instance in (81, 82, 83):  # every one is alive: no crash on bad configuration
        h.fleet.proxy(f"archiving/hdbbench-es/{instance}").ping()


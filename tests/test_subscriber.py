# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the C++ event subscriber hdbbench-es on every backend of the registry.

One module harness (tests/harness): the all-types simulated device (every type x format x write type,
seeded) and one subscriber per backend, each on a fresh database. Each subscriber's event path is
proven (`delivery.confirm`), the device is rewound and runs until every attribute emitted a few events;
every row stored since is then compared with what the seed predicts (value, quality, error-ness, in
order), and the last source timestamp with the device's. Then the HDB++ commands, then bad
configurations (each its own short-lived subscriber).

Waits are bounded (`eventually`) and say what they saw; no assertion depends on timing.
The binary is `build/subscriber/hdbbench-es`, or $HDBBENCH_SUBSCRIBER_BINARY (e.g. the ASan build).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.backends.mysql import MySQLBackend
from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.load import emitter as em
from tests.harness import REPO, eventually, seen
from tests.harness.composed import Harness, Sims, expected_stored, last_was_error, rewound
from tests.harness.databases import sql
from tests.harness.servers import one_backend_per_server

PROFILE = REPO / "devices" / "profiles" / "all-types.toml"
INSTANCE = {backend: 71 + n for n, backend in enumerate(DEFAULT_BACKENDS)}
EVENTS_PER_ATTRIBUTE = 8  # at the profile's 2 Hz: a run of about 4 s

pytestmark = pytest.mark.subscriber


def history(db: Backend) -> dict[str, list[str]]:
    """att_history events per attribute, in time order."""
    time_col = "time" if isinstance(db, MySQLBackend) else "event_time"  # HDB++ MySQL's name for it
    rows = sql(db, f"SELECT c.att_name, e.event FROM att_history h JOIN att_conf c USING (att_conf_id) "
                   f"JOIN att_history_event e USING (att_history_event_id) ORDER BY h.{time_col}")
    out: dict[str, list[str]] = {}
    for name, event in rows:
        out.setdefault(name, []).append(event)
    return out


# ------------------------------------------------------------------------------------ the module's bed


@pytest.fixture(scope="module")
def sims(module_harness: Harness) -> Sims:
    return module_harness.devices(PROFILE)


@pytest.fixture(scope="module")
def dbs(module_harness: Harness) -> dict[str, Backend]:
    return {backend: module_harness.database(backend, prefix="es") for backend in DEFAULT_BACKENDS}


@pytest.fixture(scope="module")
def archivers(module_harness: Harness, sims: Sims, dbs: dict[str, Backend]) -> dict[str, Any]:
    """One subscriber per backend, every attribute of the device assigned."""
    h = module_harness
    return {backend: h.subscriber(INSTANCE[backend], db, sims.names, flush_interval_ms=50,
                                  spool_dir=str(h.root / f"spool-{backend}"),
                                  properties={"SubscribeRetryPeriod": ["5"],
                                              # the age figures of the run stay in the window
                                              "StatisticsTimeWindow": ["3600"]})
            for backend, db in dbs.items()}


@dataclass(frozen=True)
class Run:
    """The device's run: events emitted per attribute (device spelling), the time rows are the run's
    from, and per attribute whether the last event before it was an error (HDB++ stores only the
    first error event after a good one, so that decides whether an error event 0 is stored)."""

    counts: dict[str, int]
    since: datetime
    after_error: dict[str, bool]


@pytest.fixture(scope="module")
def emitted(module_harness: Harness, sims: Sims, dbs: dict[str, Backend], archivers: dict[str, Any]) -> Run:
    """Prove every subscriber's event path, rewind, run the device until every push attribute emitted
    EVENTS_PER_ATTRIBUTE events, stop."""
    for backend, es in archivers.items():
        module_harness.archiving(es, dbs[backend], sims, rewind=False)
    after_error = last_was_error(sims)  # every subscriber received the last of the proof bursts
    since = rewound(sims)
    sim = sims.proxy()
    sim.Start()
    push = [s.name for s in sims.plan.specs if s.mode == "push"]
    eventually(lambda: (lambda got: seen(min(got[a] for a in push) >= EVENTS_PER_ATTRIBUTE, got))(
        dict(zip(sim.GeneratedAttributes, (int(x) for x in sim.EventsEmittedList)))),
        60, f"{EVENTS_PER_ATTRIBUTE} events of every push attribute")
    sim.Stop()
    counts = dict(zip(sim.GeneratedAttributes, (int(x) for x in sim.EventsEmittedList)))
    return Run(counts, since, after_error)


@pytest.mark.parametrize("backend", DEFAULT_BACKENDS)
def test_event_age_splits_into_reception_and_time_in_subscriber(archivers: dict[str, Any], emitted: Run,
                                                               backend: str) -> None:
    # Per event, age at commit = age at reception + time in the subscriber, each >= 0; the maxima are
    # exact (not bucketed), so they bound each other.
    es = archivers[backend]
    age, reception, inside = (float(es.read_attribute(f"{prefix}Max").value)
                              for prefix in ("EventAgeAtCommit", "EventAgeAtReception", "TimeInSubscriber"))
    assert age > 0 and inside > 0, (age, reception, inside)
    assert reception <= age + 1e-6 and inside <= age + 1e-6
    assert age <= reception + inside + 1e-6
    for prefix in ("EventAgeAtCommit", "EventAgeAtReception", "TimeInSubscriber"):
        p50, p99 = (float(es.read_attribute(f"{prefix}{q}").value) for q in ("P50", "P99"))
        assert 0 <= p50 <= p99, (prefix, p50, p99)


def _predicted(sims: Sims, run: Run, attr: str) -> list[em.Event]:
    """What the subscriber stores of the run's events of `attr`, in order."""
    events = em.predict_events(sims.plan.seed, sims.device, _spec(sims, attr), 0, run.counts[attr])
    return expected_stored(list(events), run.after_error[attr])


def _spec(sims: Sims, attr: str) -> em.AttrSpec:
    return next(s for s in sims.plan.specs if s.name == attr)


def _mismatches(sims: Sims, run: Run, attr: str, rows: list[Any]) -> list[Any]:
    """Stored rows of the run against the prediction: value (digest), quality, error-ness, set point."""
    spec = _spec(sims, attr)
    # READ_WRITE: value_w is the device's set point (the model value of its placeholder stream).
    set_point = (em.EventStream(sims.plan.seed, "placeholder", spec).raw_value(0)
                 if spec.write == "READ_WRITE" and spec.kind != "encoded" else None)
    out: list[Any] = []
    for k, (exp, got) in enumerate(zip(_predicted(sims, run, attr), rows)):
        if exp.is_error or got.error_desc is not None:
            if not (exp.is_error and got.error_desc and em.ERROR_DESC in got.error_desc):
                out.append((attr, k, exp, got))
            continue
        if set_point is not None and exp.quality != em.INVALID and (
                em.event_digest(spec.type, spec.format, got.value_w, em.VALID)
                != em.event_digest(spec.type, spec.format, set_point, em.VALID)):
            out.append((attr, k, "value_w", set_point, got))
        if exp.quality == em.INVALID:
            ok = got.quality == em.INVALID and got.value_r is None
        else:
            ok = got.quality == exp.quality and (
                em.event_digest(spec.type, spec.format, got.value_r, got.quality)
                == em.event_digest(spec.type, spec.format, exp.value, exp.quality))
        if not ok:
            out.append((attr, k, exp, got))
    return out


@pytest.mark.parametrize("backend", DEFAULT_BACKENDS)
def test_every_type_reads_back_as_emitted(sims: Sims, dbs: dict[str, Backend], archivers: dict[str, Any],
                                          emitted: Run, backend: str) -> None:
    db = dbs[backend]
    push = [s.name for s in sims.plan.specs if s.mode == "push"]
    want = {sims.full_name(a): len(_predicted(sims, emitted, a)) for a in push}

    def complete() -> Any:
        got = db.count_rows_by_attribute(emitted.since)
        missing = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
        return seen(not missing, missing)

    eventually(complete, 60, f"{backend}: rows stored since the rewind = the run's events (stored, expected)")
    sim = sims.proxy()
    mismatches = []
    for attr in push:
        rows = db.fetch_events(sims.full_name(attr))
        assert rows[0].quality == em.INVALID and rows[0].value_r is None, (attr, rows[0])  # read before Start
        times = [r.data_time for r in rows]
        assert times == sorted(times) and len(set(times)) == len(times), f"{attr}: data_time not strictly increasing"
        stored = [r for r in rows if r.data_time >= emitted.since]
        mismatches += _mismatches(sims, emitted, attr, stored)
        # The source timestamp: the last stored event is the device's last event, to the microsecond.
        if not _predicted(sims, emitted, attr)[-1].is_error:
            device_us = round(sim.read_attribute(attr).time.totime() * 1e6)
            stored_us = round(stored[-1].data_time.timestamp() * 1e6)
            if device_us != stored_us:
                mismatches.append((attr, "timestamp", device_us, stored_us))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]}"
    _configuration_rows_as_hdbpp_writes_them(sims, db)
    es = archivers[backend]
    assert es.LostEventNumber == 0 and es.DbErrorNumber == 0 and es.DbConnected
    assert "Events OK" in es.AttributeStatus(sims.full_name("double_scalar_ro"))
    assert str(es.state()) in ("ON", "ALARM"), es.status()


def _configuration_rows_as_hdbpp_writes_them(sims: Sims, db: Backend) -> None:
    n = len(sims.plan.specs)
    assert sql(db, "SELECT count(*) FROM att_conf")[0][0] == n
    assert sql(db, "SELECT count(DISTINCT att_conf_id) FROM att_parameter")[0][0] == n
    assert sql(db, "SELECT count(*) FROM att_parameter")[0][0] == n  # one per configuration event
    hist = history(db)
    assert len(hist) == n and all(ev[:2] == ["add", "start"] for ev in hist.values()), hist
    # The layout of each schema (HDB++ MySQL: one table per type and write type, a facility column;
    # PostgreSQL: one table per type and format, labels of enums beside their values).
    if isinstance(db, MySQLBackend):
        kinds = dict(sql(db, "SELECT c.att_name, t.data_type FROM att_conf c "
                             "JOIN att_conf_data_type t USING (att_conf_data_type_id)"))
        assert kinds[sims.full_name("double_spectrum_rw")] == "array_devdouble_rw"
        assert sql(db, "SELECT DISTINCT facility FROM att_conf") == [(sims.tango_host.lower(),)]
        labels = sql(db, "SELECT p.enum_labels FROM att_parameter p JOIN att_conf c USING (att_conf_id) "
                         "WHERE c.att_name = {}", (sims.full_name("enum_scalar_ro"),))
        assert labels and "STARTING" in labels[0][0]
    else:
        tables = {r[0] for r in sql(db, "SELECT DISTINCT table_name FROM att_conf")}
        assert len(tables) == 40  # 14 types x 3 formats, DevEncoded scalar only
        label = sql(db, "SELECT value_r_label FROM att_scalar_devenum WHERE value_r IS NOT NULL LIMIT 1")
        assert label and label[0][0] in ("OFF", "STARTING", "ON", "FAULT")


def _stored(db: Backend, name: str) -> int:
    return db.count_rows_by_attribute().get(name, 0)


def _burst_and_wait(sims: Sims, db: Backend, attrs: list[str], sentinel: str, n: int = 3) -> dict[str, int]:
    """Emit n events on attrs + the sentinel; wait until the sentinel's are stored; return counts before."""
    before = {a: _stored(db, sims.full_name(a)) for a in [*attrs, sentinel]}
    sims.proxy().BurstAttributes([[n], [*attrs, sentinel]])
    eventually(lambda: (lambda got: seen(got >= before[sentinel] + n, got))(_stored(db, sims.full_name(sentinel))),
               30, f"{db.name}: sentinel rows after a burst")
    return before


@pytest.mark.parametrize("backend", one_backend_per_server())
def test_commands(sims: Sims, dbs: dict[str, Backend], archivers: dict[str, Any], emitted: Run,
                  backend: str) -> None:
    es, db = archivers[backend], dbs[backend]
    a, p, sentinel = "long_scalar_ro", "short_scalar_ro", "double_scalar_ro"
    na, np_ = sims.full_name(a), sims.full_name(p)

    # Stop: unsubscribed, events not stored; Pause: subscribed, events dropped.
    es.AttributeStop(na)
    es.AttributePause(np_)
    eventually(lambda: seen(na in (es.AttributeStoppedList or []) and np_ in (es.AttributePausedList or []),
                            (es.AttributeStoppedList, es.AttributePausedList)), 15, "stopped and paused lists")
    before = _burst_and_wait(sims, db, [a, p], sentinel)
    assert _stored(db, na) == before[a] and _stored(db, np_) == before[p]
    # Start again: events flow.
    es.AttributeStart(na)
    es.AttributeStart(np_)
    eventually(lambda: seen(na in (es.AttributeStartedList or []), es.AttributeStartedList), 15, "restarted")
    eventually(lambda: (sims.proxy().BurstAttributes([[1], [a, p]]), _stored(db, na) > before[a]
                        and _stored(db, np_) > before[p])[1], 40, f"{backend}: rows after AttributeStart")
    hist = history(db)
    assert "stop" in hist[na] and "pause" in hist[np_], (hist[na], hist[np_])

    # Strategy and context: RUN-only attributes stop when the context becomes SHUTDOWN.
    es.SetAttributeStrategy([na, "RUN"])
    assert es.GetAttributeStrategy(na).upper() == "RUN"
    es.write_attribute("Context", "SHUTDOWN")
    eventually(lambda: seen(na in (es.AttributeStoppedList or []), es.AttributeStoppedList), 15, "stopped by context")
    assert sims.full_name(sentinel) in (es.AttributeStartedList or [])  # ALWAYS: unaffected
    es.write_attribute("Context", "RUN")
    eventually(lambda: seen(na in (es.AttributeStartedList or []), es.AttributeStartedList), 15, "started by context")
    es.SetAttributeStrategy([na, "ALWAYS"])

    # TTL: command, attribute list and att_conf (HDB++ MySQL calls the column att_ttl).
    es.SetAttributeTTL([na, "48"])
    assert es.GetAttributeTTL(na) == 48
    ttl_col = "att_ttl" if isinstance(db, MySQLBackend) else "ttl"

    def ttl_in_conf() -> Any:
        got = sql(db, f"SELECT {ttl_col} FROM att_conf WHERE att_name = {{}}", (na,))
        return seen(got == [(48,)], got)

    eventually(ttl_in_conf, 20, "att_conf ttl updated")
    eventually(lambda: (lambda got: seen("update_ttl" in got, got))(history(db).get(na, [])),
               20, "update_ttl history event")

    # Remove: forgotten by the subscriber, history 'remove'.
    number = es.AttributeNumber
    es.AttributeRemove(np_)
    eventually(lambda: seen(es.AttributeNumber == number - 1, es.AttributeNumber), 15, "attribute removed")
    eventually(lambda: seen(np_ not in (es.AttributeList or []), es.AttributeList), 15, "removed from AttributeList")
    eventually(lambda: (lambda got: seen("remove" in got, got))(history(db).get(np_, [])),
               20, "remove history event")
    es.AttributeAdd([np_])  # back, for the other tests
    eventually(lambda: seen(es.AttributeNumber == number, es.AttributeNumber), 15, "attribute added again")


# ------------------------------------------------------------------------------------ bad configuration


def _bad_subscriber(h: Harness, instance: int, lib: list[str], attrs: list[str]) -> Any:
    # Written into the AttributeList property (not assigned by AttributeAdd): its line parsing is under test.
    return h.subscriber(instance, None, lib=lib, properties={"AttributeList": attrs})


def test_bad_configurations_give_state_and_status(module_harness: Harness, sims: Sims,
                                                  dbs: dict[str, Backend]) -> None:
    h = module_harness
    good_attr = sims.full_name("double_scalar_ro")
    # A PostgreSQL connection string with a wrong password: libpq's own key=value format.
    pg = next((db for db in dbs.values() if db.name == "postgresql"), None)
    if pg is None:
        pytest.skip("no postgresql backend in the registry")
    conninfo = pg.endpoint.conninfo(pg.database)

    es = _bad_subscriber(h, 81, ["backend=oracle", f"connect_string={conninfo}"], [good_attr])
    eventually(lambda: seen(str(es.state()) == "FAULT", (es.state(), es.status())), 15, "unknown backend: FAULT")
    assert "oracle" in es.status().lower()

    wrong = conninfo.replace(f"password='{pg.endpoint.password}'", "password='wrong'")
    assert wrong != conninfo
    es = _bad_subscriber(h, 82, ["backend=postgresql", f"connect_string={wrong}"], [good_attr])
    eventually(lambda: seen(str(es.state()) == "ALARM" and "password" in es.status(), (es.state(), es.status())),
               20, "wrong password: ALARM naming the cause")
    assert not es.DbConnected

    unknown = f"tango://{sims.tango_host}/sim/nosuch/device/nothing"
    es = _bad_subscriber(h, 83, list(h.lib(pg)), [good_attr, unknown, "this is not an attribute;strategy="])
    eventually(lambda: seen(unknown in (es.AttributeNokList or []) and str(es.state()) == "ALARM",
                            (es.state(), es.status(), es.AttributeNokList)), 30,
               "unknown attribute: in the NOK list, ALARM")
    assert "ignored" in es.status() and "this is not an attribute" in es.status()
    assert es.AttributeErrorList and any(es.AttributeErrorList)
    assert es.AttributeStatus(unknown)
    assert good_attr in (es.AttributeStartedList or [])
    for instance in (81, 82, 83):  # every one is alive: no crash on bad configuration
        h.fleet.proxy(f"archiving/hdbbench-es/{instance}").ping()

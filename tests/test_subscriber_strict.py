# SPDX-License-Identifier: Apache-2.0
"""hdbbench-es in strict mode (LibConfiguration ``hdbpp_strict=1``), and how the harness assigns attributes.

Strict mode behaves as the real hdbpp-es does: an attribute is archived only once AttributeAdd has
created its att_conf row (or the row exists already); an attribute only listed in the AttributeList
property gets its events refused with hdbpp-es's message, is NOK and puts the device in ALARM. Strict
mode also hides every attribute HDB++ does not define. The harness (SubscriberFleet) starts every
subscriber with an empty AttributeList and assigns attributes by AttributeAdd, so it needs nothing a
real hdbpp-es lacks.

Real parts: the session's Tango database and PostgreSQL/TimescaleDB, simulated devices pushing
events, the built subscriber. Waits are bounded and say what they saw.
"""

from __future__ import annotations

import pytest

from hdbbench.backends import Backend
from hdbbench.load.offered import spread
from hdbbench.subscribers import statistics as stats
from hdbbench.subscribers.launcher import SubscriberFleet, SubscriberSpec
from tests.harness import eventually, seen
from tests.harness.composed import Harness, Sims, events_received, profile_toml
from tests.harness.databases import sql

pytestmark = pytest.mark.subscriber

BACKEND = "timescaledb"
NOT_IN_DATABASE = "does not exist in the database. Unable to work with this attribute until it is added."
# The commands of class HdbEventSubscriber (reference §1) and Tango's own.
HDBPP_COMMANDS = {"AttributeAdd", "AttributeRemove", "AttributeStart", "AttributeStop", "AttributePause",
                  "Start", "Stop", "Pause", "AttributeStatus", "ResetStatistics", "SetAttributeStrategy",
                  "GetAttributeStrategy", "SetAttributeTTL", "GetAttributeTTL", "StopFaulty",
                  "Init", "State", "Status"}


@pytest.fixture(scope="module")
def db(module_harness: Harness) -> Backend:
    return module_harness.database(BACKEND, prefix="es_strict")


@pytest.fixture(scope="module")
def sims(module_harness: Harness) -> Sims:
    """One device of 4 attributes, emitting from the start."""
    return module_harness.devices(profile_toml(module_harness.root, "esstrict", 20.0), auto_start=True)


def lib(db: Backend, strict: bool) -> tuple[str, ...]:
    return Harness.lib(db, flush_interval_ms=20, **({"hdbpp_strict": 1} if strict else {}))


def attribute_list_property(fleet: SubscriberFleet, device: str) -> list[str]:
    return list(fleet._database().get_device_property(device, "AttributeList")["AttributeList"])


def conf_names(db: Backend) -> set[str]:
    return {name for (name,) in sql(db, "SELECT att_name FROM att_conf")}


def test_strict_archives_only_attributes_added_by_attribute_add(harness: Harness, db: Backend, sims: Sims) -> None:
    added, listed = sims.names[:2], sims.names[2]
    es = harness.subscriber(61, db, added, lib=lib(db, strict=True), properties={"AttributeList": [listed]})
    device = es.dev_name()

    # The added ones are archived; the listed one receives events that are all refused.
    eventually(lambda: seen(all(db.count_rows_by_attribute().get(n, 0) >= 3 for n in added), db.count_rows_by_attribute()), 30,
               "rows of the attributes added by AttributeAdd")
    eventually(lambda: seen(min(events_received(es) or [0]) >= 3 and listed in (es.AttributeNokList or [])
                            and str(es.state()) == "ALARM",
                            (str(es.state()), es.AttributeNokList, es.status())),
               30, "every attribute receives events; the AttributeList-only one is NOK, state ALARM")
    assert conf_names(db) == set(added)
    assert listed not in db.count_rows_by_attribute()
    errors = dict(zip(es.AttributeList, es.AttributeErrorList))
    assert f"This attribute [{listed}] {NOT_IN_DATABASE}" == errors[listed], errors
    assert NOT_IN_DATABASE in es.AttributeStatus(listed)
    assert NOT_IN_DATABASE in es.status()

    # AttributeAdd keeps the names in the AttributeList property, as hdbpp-es does (saved within
    # kAttributeListSaveDelay of the command: a burst of AttributeAdds costs a few writes).
    eventually(lambda: seen(set(attribute_list_property(harness.fleet, device)) == {*added, listed},
                            attribute_list_property(harness.fleet, device)), 10, "the AttributeList property")

    # Adding the listed attribute creates its att_conf row: from then on it is archived.
    es.AttributeAdd([listed])
    eventually(lambda: seen(db.count_rows_by_attribute().get(listed, 0) >= 2, db.count_rows_by_attribute()), 30, "rows of the attribute once added")
    assert conf_names(db) == {*added, listed}

    # Only what HDB++ defines is published.
    published = set(es.get_attribute_list())
    assert set(stats.HDBPP) <= published
    assert not published & set(stats.OURS), published & set(stats.OURS)
    assert {c.cmd_name for c in es.command_list_query()} <= HDBPP_COMMANDS


def test_attribute_list_alone_archives_nothing_in_strict_mode(harness: Harness, db: Backend, sims: Sims) -> None:
    """The old path of the harness (attributes written into AttributeList before start) with a
    subscriber that behaves as hdbpp-es: nothing is archived and the status says why."""
    listed = sims.names[3]
    conf_before = conf_names(db)
    es = harness.subscriber(62, db, lib=lib(db, strict=True), properties={"AttributeList": [listed]})
    eventually(lambda: seen(str(es.state()) == "ALARM" and list(es.AttributeNokList or []) == [listed]
                            and min(events_received(es) or [0]) >= 3 and NOT_IN_DATABASE in es.status(),
                            (str(es.state()), es.AttributeNokList, events_received(es), es.status())), 30,
               "events received and refused: NOK, ALARM, the reason in the status")
    assert NOT_IN_DATABASE in es.status() and listed in es.status()
    assert es.AttributeOkNumber == 0
    assert conf_names(db) == conf_before and listed not in db.count_rows_by_attribute()


def test_the_harness_assigns_attributes_by_attribute_add(harness: Harness, db: Backend, sims: Sims,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """SubscriberFleet starts subscribers with an empty AttributeList; AttributeAdd fills it."""
    fleet = harness.fleet
    at_start: dict[str, list[str]] = {}
    original = SubscriberFleet._start

    def recording_start(fleet: SubscriberFleet, spec: SubscriberSpec) -> None:
        at_start[spec.device] = attribute_list_property(fleet, spec.device)
        original(fleet, spec)

    monkeypatch.setattr(SubscriberFleet, "_start", recording_start)
    assigned = spread(sims.names, 2)
    devices = fleet.up([SubscriberSpec(63 + n, lib(db, strict=False), attrs) for n, attrs in enumerate(assigned)])
    assert at_start == {device: [] for device in devices}
    for device, attrs in zip(devices, assigned):
        eventually(lambda d=device, a=attrs: seen(sorted(attribute_list_property(fleet, d)) == sorted(a),
                                                  attribute_list_property(fleet, d)), 10, "the AttributeList property")
        es = fleet.proxy(device)
        assert sorted(es.AttributeList) == sorted(attrs) and es.AttributeStartedNumber == len(attrs)
    assert sorted(n for attrs in assigned for n in attrs) == sorted(sims.names)


def test_waiting_for_started_attributes_names_what_it_saw(harness: Harness, db: Backend) -> None:
    es = harness.subscriber(65, db, lib=lib(db, strict=True))
    with pytest.raises(Exception, match=r"AttributeStartedNumber .*0 of 3"):
        harness.fleet.wait_started({es.dev_name(): 3}, timeout_s=1.0)


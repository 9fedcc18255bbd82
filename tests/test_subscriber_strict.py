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

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from hdbbench import subscriber_statistics as stats
from hdbbench.subscribers import SubscriberFleet, SubscriberSpec, lib_configuration, spread
from tests.harness import eventually, row_counts, seen, sql_rows
from tests.test_subscriber import BINARY
from tests.test_subscriber_outage import _profile

pytestmark = [
    pytest.mark.skipif(not BINARY.exists(), reason=f"hdbbench-es not built ({BINARY} missing): run cmake --build build"),
]

NOT_IN_DATABASE = "does not exist in the database. Unable to work with this attribute until it is added."
# The commands of class HdbEventSubscriber (reference §1) and Tango's own.
HDBPP_COMMANDS = {"AttributeAdd", "AttributeRemove", "AttributeStart", "AttributeStop", "AttributePause",
                  "Start", "Stop", "Pause", "AttributeStatus", "ResetStatistics", "SetAttributeStrategy",
                  "GetAttributeStrategy", "SetAttributeTTL", "GetAttributeTTL", "StopFaulty",
                  "Init", "State", "Status"}


@dataclass
class Setup:
    stack: Any
    tango_host: str
    fleet: SubscriberFleet
    names: list[str]          # full names of the device's 4 attributes
    database: str
    conn: Any

    def lib(self, strict: bool) -> tuple[str, ...]:
        overrides = {"flush_interval_ms": "20", **({"hdbpp_strict": "1"} if strict else {})}
        return tuple(lib_configuration("timescaledb", self.database, self.stack,
                                       overrides=overrides))

    def attribute_list_property(self, device: str) -> list[str]:
        return list(self.fleet._database().get_device_property(device, "AttributeList")["AttributeList"])

    def rows(self) -> dict[str, int]:
        return row_counts(self.conn, "timescaledb")

    def conf_names(self) -> set[str]:
        return {name for (name,) in sql_rows(self.conn, "timescaledb", "SELECT att_name FROM att_conf")}


@pytest.fixture(scope="module")
def setup(stack_endpoints: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    import tango

    from hdbbench import devices
    from hdbbench.backends import backend_for_stack

    if stack_endpoints.get("postgres") is None or stack_endpoints.tango is None:
        pytest.skip("the test stack needs PostgreSQL and Tango")
    tmp = tmp_path_factory.mktemp("strict")
    tango_host = stack_endpoints.tango.tango_host
    backend = backend_for_stack("timescaledb", stack_endpoints, f"es_strict_{uuid.uuid4().hex[:6]}")
    backend.create_schema()
    sims = devices.up(tango_host, _profile(tmp, "esstrict", 20.0), state_dir=tmp / "dev", tie_to_parent=True)
    fleet = SubscriberFleet(tango_host, tmp, binary=BINARY, attached=True)
    conn = None
    try:
        device, plan = next(iter(sims.devices.items()))
        names = [f"tango://{tango_host}/{device}/{s.name}".lower() for s in plan.specs]
        tango.DeviceProxy(f"tango://{tango_host}/{device}").Start()
        conn = stack_endpoints["postgres"].connect(backend.database)
        conn.autocommit = True
        yield Setup(stack_endpoints, tango_host, fleet, names, backend.database, conn)
    finally:
        fleet.down()
        devices.down(tmp / "dev")
        if conn is not None:
            conn.close()
        backend.drop_schema()


def _events_received(es: Any) -> list[int]:
    return [int(x) for x in (es.AttributeEventNumberList if es.AttributeEventNumberList is not None else [])]


def test_strict_archives_only_attributes_added_by_attribute_add(setup: Setup) -> None:
    s = setup
    added, listed = s.names[:2], s.names[2]
    (device,) = s.fleet.up([SubscriberSpec(61, s.lib(strict=True), tuple(added),
                                           properties={"AttributeList": [listed]})])
    es = s.fleet.proxy(device)

    # The added ones are archived; the listed one receives events that are all refused.
    eventually(lambda: seen(all(s.rows().get(n, 0) >= 3 for n in added), s.rows()), 30,
               "rows of the attributes added by AttributeAdd")
    eventually(lambda: seen(min(_events_received(es) or [0]) >= 3 and listed in (es.AttributeNokList or [])
                            and str(es.state()) == "ALARM",
                            (str(es.state()), es.AttributeNokList, es.status())),
               30, "every attribute receives events; the AttributeList-only one is NOK, state ALARM")
    assert s.conf_names() == set(added)
    assert listed not in s.rows()
    errors = dict(zip(es.AttributeList, es.AttributeErrorList))
    assert f"This attribute [{listed}] {NOT_IN_DATABASE}" == errors[listed], errors
    assert NOT_IN_DATABASE in es.AttributeStatus(listed)
    assert NOT_IN_DATABASE in es.status()

    # AttributeAdd keeps the names in the AttributeList property, as hdbpp-es does.
    assert set(s.attribute_list_property(device)) == {*added, listed}

    # Adding the listed attribute creates its att_conf row: from then on it is archived.
    es.AttributeAdd([listed])
    eventually(lambda: seen(s.rows().get(listed, 0) >= 2, s.rows()), 30, "rows of the attribute once added")
    assert s.conf_names() == {*added, listed}

    # Only what HDB++ defines is published.
    published = set(es.get_attribute_list())
    assert set(stats.HDBPP) <= published
    assert not published & set(stats.OURS), published & set(stats.OURS)
    assert {c.cmd_name for c in es.command_list_query()} <= HDBPP_COMMANDS


def test_attribute_list_alone_archives_nothing_in_strict_mode(setup: Setup) -> None:
    """The old path of the harness (attributes written into AttributeList before start) with a
    subscriber that behaves as hdbpp-es: nothing is archived and the status says why."""
    s = setup
    listed = s.names[3]
    conf_before = s.conf_names()
    (device,) = s.fleet.up([SubscriberSpec(62, s.lib(strict=True), (),
                                           properties={"AttributeList": [listed]})])
    es = s.fleet.proxy(device)
    eventually(lambda: seen(str(es.state()) == "ALARM" and list(es.AttributeNokList or []) == [listed]
                            and min(_events_received(es) or [0]) >= 3 and NOT_IN_DATABASE in es.status(),
                            (str(es.state()), es.AttributeNokList, _events_received(es), es.status())), 30,
               "events received and refused: NOK, ALARM, the reason in the status")
    assert NOT_IN_DATABASE in es.status() and listed in es.status()
    assert es.AttributeOkNumber == 0
    assert s.conf_names() == conf_before and listed not in s.rows()


def test_the_harness_assigns_attributes_by_attribute_add(setup: Setup,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """SubscriberFleet starts subscribers with an empty AttributeList; AttributeAdd fills it."""
    s = setup
    at_start: dict[str, list[str]] = {}
    original = SubscriberFleet._start

    def recording_start(fleet: SubscriberFleet, spec: SubscriberSpec) -> None:
        at_start[spec.device] = s.attribute_list_property(spec.device)
        original(fleet, spec)

    monkeypatch.setattr(SubscriberFleet, "_start", recording_start)
    assigned = spread(s.names, 2)
    devices = s.fleet.up([SubscriberSpec(63 + n, s.lib(strict=False), attrs)
                          for n, attrs in enumerate(assigned)])
    assert at_start == {device: [] for device in devices}
    for device, attrs in zip(devices, assigned):
        assert sorted(s.attribute_list_property(device)) == sorted(attrs)
        es = s.fleet.proxy(device)
        assert sorted(es.AttributeList) == sorted(attrs) and es.AttributeStartedNumber == len(attrs)
    assert sorted(n for attrs in assigned for n in attrs) == sorted(s.names)


def test_waiting_for_started_attributes_names_what_it_saw(setup: Setup) -> None:
    s = setup
    (device,) = s.fleet.up([SubscriberSpec(65, s.lib(strict=True), ())])
    with pytest.raises(Exception, match=r"AttributeStartedNumber .*0 of 3"):
        s.fleet.wait_started({device: 3}, timeout_s=1.0)


# SPDX-License-Identifier: Apache-2.0
"""Property: any value of any Tango type and format goes through the subscriber's own writers
(PgWriter, MysqlWriter: C++, the code hdbbench-es stores with) into the database of every backend and
reads back equal, or as documented (schemas/README.md; tests/harness/values.py `expected`).

Records reach the writer through build/subscriber/hdbbench-es-write-records, a driver that takes
them on stdin and writes them in one batch with the LibConfiguration a subscriber gets (so also as
the event-subscriber role). The values are the ones of the bulk writers' property test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hdbbench.backends import Backend
from hdbbench.backends.registry import DEFAULT_BACKENDS, entry, lib_configuration
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Encoded, Event, Quality, TangoType, WriteType
from tests.harness.databases import fresh_backend
from tests.harness.records import ATTRIBUTES, DRIVER, Unprinted, field_text, record_line, write_through_subscriber
from tests.harness.values import PROPERTY, Clock, assert_read_back, event, expected, same_event

@pytest.fixture(scope="module", params=DEFAULT_BACKENDS)
def target(request: pytest.FixtureRequest, endpoint_of: Callable[[str], Any]) -> Iterator[tuple[str, Backend, list[str]]]:
    if not DRIVER.exists():
        pytest.skip(f"driver not built: {DRIVER}")
    name = request.param
    with fresh_backend(name, endpoint_of(name), None) as backend:
        lib = Unprinted(lib_configuration(name, backend.database, {entry(name).server: backend.endpoint}))
        yield name, backend, lib


CLOCK = Clock()


@PROPERTY
@given(data=st.data())
def test_any_value_round_trips_through_the_subscriber_writer(target: tuple[str, Backend, list[str]],
                                                            data: st.DataObject) -> None:
    name, backend, lib = target
    info = data.draw(st.sampled_from(ATTRIBUTES), label="attribute")
    events = [data.draw(event(info, CLOCK()), label=f"event {k}") for k in range(data.draw(st.integers(1, 3)))]
    result = write_through_subscriber(lib, [record_line(info, e) for e in events])
    assert result["rejected"] == 0 and result["stored"] == len(events)
    assert_read_back(backend, info, events)


def test_a_one_megabyte_unicode_string_through_the_subscriber_writer(target: tuple[str, Backend, list[str]]) -> None:
    name, backend, lib = target
    info = next(i for i in ATTRIBUTES if i.type == TangoType.DEV_STRING and i.format == AttrFormat.SCALAR
                and i.write_type == WriteType.READ)
    e = Event(info.name, CLOCK(), ("dös ✓ 𝄞 日本 '\";-- " * 60_000)[: 1 << 20], None, Quality.VALID)
    write_through_subscriber(lib, [record_line(info, e)])
    got = [g for g in backend.fetch_events(info.name) if g.data_time == e.data_time]
    assert len(got) == 1 and same_event(got[0], expected(name, info, e))


def test_the_line_format_carries_nan_and_infinities_exactly() -> None:
    info = AttributeInfo("tango://h:1/a/b/c/d", TangoType.DEV_DOUBLE, AttrFormat.SPECTRUM, WriteType.READ)
    field, dim_x, _ = field_text(info, [math.nan, math.inf, -math.inf, -0.0])
    assert dim_x == 4
    assert field == "d:4:7ff8000000000000,7ff0000000000000,fff0000000000000,8000000000000000"
    encoded = AttributeInfo("tango://h:1/a/b/c/e", TangoType.DEV_ENCODED, AttrFormat.SCALAR, WriteType.READ)
    assert field_text(encoded, Encoded("", b"\x00"))[0] == "s:2:-,00"

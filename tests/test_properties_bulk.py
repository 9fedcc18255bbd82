# SPDX-License-Identifier: Apache-2.0
"""Property: any value of any Tango type and format goes through the Python bulk writers of every
backend and reads back equal, or as documented (schemas/README.md; tests.backend_fixtures.expected:
NaN and ±Inf become NULL on MariaDB, an empty array there reads as no rows).

Values come from hypothesis: the types' extremes, NaN, ±Inf, subnormals, empty arrays and arbitrary
unicode (no NUL: a Tango string is a C string). One database per backend for the module; each example
writes a handful of events at fresh timestamps and reads back the attribute's events from then on.
Examples are derandomized so that CI sees the same values every time.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdbbench.backends import Backend
from hdbbench.hdbtypes import AttParameter, AttrFormat, AttributeInfo, Encoded, Event, Quality, TangoType, WriteType
from tests.backend_fixtures import (  # noqa: F401 - fixtures are found by name
    all_attributes,
    endpoint_for,
    expected,
    fresh_backend,
    mariadb_endpoint,
    now_ms,
    pg_endpoint,
    same_event,
)

BACKENDS = ("timescaledb", "postgresql", "mysql")
TEXT = st.text(st.characters(exclude_characters="\x00"), max_size=40)
INT_RANGES = {
    TangoType.DEV_UCHAR: (0, 2**8 - 1), TangoType.DEV_SHORT: (-(2**15), 2**15 - 1),
    TangoType.DEV_USHORT: (0, 2**16 - 1), TangoType.DEV_LONG: (-(2**31), 2**31 - 1),
    TangoType.DEV_ULONG: (0, 2**32 - 1), TangoType.DEV_LONG64: (-(2**63), 2**63 - 1),
    TangoType.DEV_ULONG64: (0, 2**64 - 1), TangoType.DEV_STATE: (0, 13), TangoType.DEV_ENUM: (0, 2**15 - 1),
}
PROPERTY = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


def element(tango_type: TangoType) -> st.SearchStrategy[Any]:
    """One value of `tango_type`, extremes included (hypothesis favours the bounds)."""
    if tango_type in INT_RANGES:
        low, high = INT_RANGES[tango_type]
        return st.integers(low, high)
    return {
        TangoType.DEV_BOOLEAN: st.booleans(),
        TangoType.DEV_FLOAT: st.floats(width=32),  # NaN, ±Inf, subnormals and the float32 extremes
        TangoType.DEV_DOUBLE: st.floats(),
        TangoType.DEV_STRING: TEXT,
        TangoType.DEV_ENCODED: st.builds(Encoded, TEXT, st.binary(max_size=64)),
    }[tango_type]


def value(info: AttributeInfo) -> st.SearchStrategy[Any]:
    """A scalar, a spectrum (possibly empty) or a rectangular image (possibly empty) of the attribute."""
    one = element(info.type)
    if info.format == AttrFormat.SCALAR:
        return one
    if info.format == AttrFormat.SPECTRUM:
        return st.lists(one, max_size=12)
    return st.one_of(st.just([]), st.integers(1, 4).flatmap(
        lambda width: st.lists(st.lists(one, min_size=width, max_size=width), min_size=1, max_size=4)))


def event(info: AttributeInfo, at: datetime) -> st.SearchStrategy[Event]:
    """A valid event (values on the sides its write type has), an INVALID one, or an error."""
    reads, writes = info.write_type != WriteType.WRITE, info.write_type != WriteType.READ
    valid = st.builds(lambda r, w, q: Event(info.name, at, r if reads else None, w if writes else None, q),
                      value(info), value(info), st.sampled_from([Quality.VALID, Quality.ALARM, Quality.WARNING]))
    invalid = st.just(Event(info.name, at, None, None, Quality.INVALID))
    error = TEXT.map(lambda text: Event(info.name, at, None, None, Quality.INVALID, "error: " + text))
    return st.one_of(valid, valid, invalid, error)


class Target:
    """A backend with every attribute registered, and fresh timestamps for each example."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.attributes = all_attributes()
        self.t0 = now_ms()
        self._ms = itertools.count(1)
        with backend.bulk_writer() as writer:
            for info in self.attributes:
                writer.register_attribute(info, self.t0 - timedelta(seconds=2))
                if info.type == TangoType.DEV_ENUM:
                    writer.write_parameter(AttParameter(info.name, self.t0 - timedelta(seconds=1), label="e",
                                                        enum_labels=("a", "b")))

    def next_time(self) -> datetime:
        return self.t0 + timedelta(milliseconds=next(self._ms))


@pytest.fixture(scope="module", params=BACKENDS)
def target(request: pytest.FixtureRequest) -> Iterator[tuple[str, Target]]:
    with fresh_backend(request.param, endpoint_for(request, request.param), None) as backend:
        yield request.param, Target(backend)


def _round_trip(name: str, target: Target, info: AttributeInfo, events: list[Event]) -> None:
    with target.backend.bulk_writer() as writer:
        writer.register_attribute(info)  # idempotent: this writer learns its att_conf_id
        assert writer.write(events) == len(events)
    since = events[0].data_time
    got = [e for e in target.backend.fetch_events(info.name) if e.data_time >= since]
    want = [expected(name, info, e) for e in events]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert same_event(g, w), f"{name}: read {g!r}, expected {w!r}"


@PROPERTY
@given(data=st.data())
def test_any_value_round_trips_through_the_bulk_writer(target: tuple[str, Target], data: st.DataObject) -> None:
    name, t = target
    info = data.draw(st.sampled_from(t.attributes), label="attribute")
    count = data.draw(st.integers(1, 3), label="events")
    events = [data.draw(event(info, t.next_time()), label=f"event {k}") for k in range(count)]
    _round_trip(name, t, info, events)


@pytest.mark.parametrize("fmt", [AttrFormat.SCALAR, AttrFormat.SPECTRUM])
def test_a_one_megabyte_unicode_string_round_trips(target: tuple[str, Target], fmt: AttrFormat) -> None:
    name, t = target
    info = next(i for i in t.attributes if i.type == TangoType.DEV_STRING and i.format == fmt
                and i.write_type == WriteType.READ)
    text = ("dös ✓ 𝄞 日本 '\";-- " * 60_000)[: 1 << 20]
    value_r = text if fmt == AttrFormat.SCALAR else [text, ""]
    _round_trip(name, t, info, [Event(info.name, t.next_time(), value_r, None, Quality.VALID)])

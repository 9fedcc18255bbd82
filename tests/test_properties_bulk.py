# SPDX-License-Identifier: Apache-2.0
"""Property: any value of any Tango type and format goes through the Python bulk writers of every
backend and reads back equal, or as documented (schemas/README.md; tests/harness/values.py `expected`:
NaN and ±Inf become NULL on MariaDB, an empty array there reads as no rows).

Values come from hypothesis: the types' extremes, NaN, ±Inf, subnormals, empty arrays and arbitrary
unicode (no NUL: a Tango string is a C string). One database per backend for the module; each example
writes a handful of events at fresh timestamps and reads back the attribute's events from then on.
Examples are derandomized so that CI sees the same values every time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hdbbench.backends import Backend
from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.model.hdbtypes import (
    AttParameter,
    AttrFormat,
    AttributeInfo,
    Event,
    Quality,
    TangoType,
    WriteType,
)
from tests.harness.databases import fresh_backend
from tests.harness.values import PROPERTY, Clock, all_attributes, assert_read_back, event

ATTRIBUTES = all_attributes()
CLOCK = Clock()  # fresh timestamps for every event of the module


def register_all(backend: Backend) -> None:
    """Every attribute registered (enums with labels) before the module's first event."""
    t0 = CLOCK()
    with backend.bulk_writer() as writer:
        for info in ATTRIBUTES:
            writer.register_attribute(info, t0 - timedelta(seconds=2))
            if info.type == TangoType.DEV_ENUM:
                writer.write_parameter(AttParameter(info.name, t0 - timedelta(seconds=1), label="e",
                                                    enum_labels=("a", "b")))


@pytest.fixture(scope="module", params=DEFAULT_BACKENDS)
def target(request: pytest.FixtureRequest, endpoint_of: Callable[[str], Any]) -> Iterator[Backend]:
    with fresh_backend(request.param, endpoint_of(request.param), None) as backend:
        register_all(backend)
        yield backend


def _round_trip(target: Backend, info: AttributeInfo, events: list[Event]) -> None:
    with target.bulk_writer() as writer:
        writer.register_attribute(info)  # idempotent: this writer learns its att_conf_id
        assert writer.write(events) == len(events)
    assert_read_back(target, info, events)


@PROPERTY
@given(data=st.data())
def test_any_value_round_trips_through_the_bulk_writer(target: Backend, data: st.DataObject) -> None:
    info = data.draw(st.sampled_from(ATTRIBUTES), label="attribute")
    count = data.draw(st.integers(1, 3), label="events")
    events = [data.draw(event(info, CLOCK()), label=f"event {k}") for k in range(count)]
    _round_trip(target, info, events)


@pytest.mark.parametrize("fmt", [AttrFormat.SCALAR, AttrFormat.SPECTRUM])
def test_a_one_megabyte_unicode_string_round_trips(target: Backend, fmt: AttrFormat) -> None:
    info = next(i for i in ATTRIBUTES if i.type == TangoType.DEV_STRING and i.format == fmt
                and i.write_type == WriteType.READ)
    text = ("dös ✓ 𝄞 日本 '\";-- " * 60_000)[: 1 << 20]
    value_r = text if fmt == AttrFormat.SCALAR else [text, ""]
    _round_trip(target, info, [Event(info.name, CLOCK(), value_r, None, Quality.VALID)])

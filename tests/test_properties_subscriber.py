# SPDX-License-Identifier: Apache-2.0
"""Property: any value of any Tango type and format goes through the subscriber's own writers
(PgWriter, MysqlWriter: C++, the code hdbbench-es stores with) into the database of every backend and
reads back equal, or as documented (schemas/README.md; tests/harness/values.py `expected`).

Records reach the writer through build/subscriber/hdbbench-es-write-records, a driver that takes
them on stdin and writes them in one batch with the LibConfiguration a subscriber gets (so also as
the event-subscriber role). The values are the ones of the bulk writers' property test.
"""

from __future__ import annotations

import json
import math
import struct
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hdbbench.backends import Backend
from hdbbench.backends.registry import DEFAULT_BACKENDS, entry, lib_configuration
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Encoded, Event, Quality, TangoType, WriteType
from tests.harness import REPO
from tests.harness.databases import fresh_backend
from tests.harness.values import PROPERTY, Clock, assert_read_back, event, expected, same_event

DRIVER = REPO / "build" / "subscriber" / "hdbbench-es-write-records"
ATTRIBUTES = [AttributeInfo(f"tango://testhost:10000/prop/{t.suffix}/{f.name.lower()}/{w.name.lower()}", t, f, w)
              for t in TangoType for f in AttrFormat for w in WriteType
              if not (t == TangoType.DEV_ENCODED and f != AttrFormat.SCALAR)]


def _hex(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return data.hex() or "-"


def _elements(info: AttributeInfo, value: Any) -> tuple[list[Any], int, int]:
    """Flattened elements and (dim_x, dim_y) of a value of the attribute."""
    if info.format == AttrFormat.SCALAR:
        return [value], 1, 0
    if info.format == AttrFormat.SPECTRUM:
        return list(value), len(value), 0
    rows = list(value)
    return [x for row in rows for x in row], (len(rows[0]) if rows else 0), len(rows)


def _field(info: AttributeInfo, value: Any) -> tuple[str, int, int]:
    if value is None:
        return "none", 0, 0
    items, dim_x, dim_y = _elements(info, value)
    if info.type == TangoType.DEV_ENCODED:
        items = [part for enc in items for part in (_hex(enc.format), _hex(enc.data))]
        return f"s:{len(items)}:{','.join(items)}", dim_x, dim_y
    if info.type == TangoType.DEV_STRING:
        text = [_hex(x) for x in items]
    elif info.type in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE):
        text = [struct.pack(">d", x).hex() for x in items]
    else:
        text = [str(int(x)) for x in items]
    cls = {TangoType.DEV_STRING: "s", TangoType.DEV_FLOAT: "d", TangoType.DEV_DOUBLE: "d",
           TangoType.DEV_ULONG64: "u"}.get(info.type, "i")
    return f"{cls}:{len(text)}:{','.join(text)}", dim_x, dim_y


def record_line(info: AttributeInfo, e: Event) -> str:
    r, xr, yr = _field(info, e.value_r)
    w, xw, yw = _field(info, e.value_w)
    kind = 1 if e.error_desc is not None else 0
    micros = int(e.data_time.timestamp() * 1_000_000)
    return " ".join(str(x) for x in (kind, int(info.type), int(info.format), int(info.write_type), int(e.quality),
                                     _hex(info.name), micros, xr, yr, xw, yw, _hex(e.error_desc or ""), r, w))


class Unprinted(list[str]):
    """LibConfiguration lines that a failing example does not print (they hold the role's password)."""

    def __repr__(self) -> str:
        return f"<{len(self)} LibConfiguration lines>"


@pytest.fixture(scope="module", params=DEFAULT_BACKENDS)
def target(request: pytest.FixtureRequest, endpoint_of: Callable[[str], Any]) -> Iterator[tuple[str, Backend, list[str]]]:
    if not DRIVER.exists():
        pytest.skip(f"driver not built: {DRIVER}")
    name = request.param
    with fresh_backend(name, endpoint_of(name), None) as backend:
        lib = Unprinted(lib_configuration(name, backend.database, {entry(name).server: backend.endpoint}))
        yield name, backend, lib


def write_through_subscriber(lib: list[str], lines: list[str]) -> dict[str, Any]:
    args = [str(DRIVER)] + [part for line in lib for part in ("--lib", line)]
    done = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr  # no record rejected
    return json.loads(done.stdout)


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
    field, dim_x, _ = _field(info, [math.nan, math.inf, -math.inf, -0.0])
    assert dim_x == 4
    assert field == "d:4:7ff8000000000000,7ff0000000000000,fff0000000000000,8000000000000000"
    encoded = AttributeInfo("tango://h:1/a/b/c/e", TangoType.DEV_ENCODED, AttrFormat.SCALAR, WriteType.READ)
    assert _field(encoded, Encoded("", b"\x00"))[0] == "s:2:-,00"

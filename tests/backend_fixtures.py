# SPDX-License-Identifier: Apache-2.0
"""Fixtures and data for backend tests: fresh databases on the stack's servers, and edge-value events.

Import the fixtures by name into a test module (pytest finds fixtures in the module namespace):
`from tests.backend_fixtures import pg_endpoint, mariadb_endpoint, fresh_backend`.
"""

from __future__ import annotations

import math
import struct
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hdbbench.backends import Backend, get_backend
from hdbbench.backends.registry import server_kind
from hdbbench.hdbtypes import AttrFormat, AttributeInfo, Encoded, Event, Quality, TangoType, WriteType
from hdbbench.servers.endpoints import MariaDBEndpoint, PostgresEndpoint, StackEndpoints

# backend -> variants created by the tests; the first one is the backend's published default.
VARIANTS: dict[str, tuple[str, ...]] = {
    "timescaledb": ("pk+2", "pk", "interval=7d", "pk+2,nofk"),
    "postgresql": ("pk+2", "pk", "pk+2,partitioned"),
    "mysql": ("pk", "pk+2", "partitioned"),
}
BACKEND_VARIANTS = [(b, v) for b, vs in VARIANTS.items() for v in vs]


def server_endpoint(stack_endpoints: StackEndpoints, kind: str) -> Any:
    """The stack's endpoint of a server kind (hdbbench.servers.registry); the test is skipped without one."""
    endpoint = stack_endpoints.get(kind)
    if endpoint is None:
        pytest.skip(f"the stack has no {kind} server")
    return endpoint


@pytest.fixture(scope="session")
def pg_endpoint(stack_endpoints: StackEndpoints) -> PostgresEndpoint:
    return server_endpoint(stack_endpoints, "postgres")


@pytest.fixture(scope="session")
def mariadb_endpoint(stack_endpoints: StackEndpoints) -> MariaDBEndpoint:
    return server_endpoint(stack_endpoints, "mariadb")


def endpoint_for(request: pytest.FixtureRequest, backend: str) -> Any:
    """The endpoint of the server kind `backend` runs on (the backend registry says which)."""
    return server_endpoint(request.getfixturevalue("stack_endpoints"), server_kind(backend).name)


def unique_db_name(backend: str) -> str:
    return f"h3test_{backend[:5]}_{uuid.uuid4().hex[:10]}"


@contextmanager
def fresh_backend(backend: str, endpoint: Any, variant: str | None) -> Iterator[Backend]:
    """A backend on a new uniquely named database with its schema; dropped afterwards, pass or fail."""
    b = get_backend(backend, endpoint, unique_db_name(backend))
    try:
        b.create_schema(variant)
        yield b
    finally:
        b.drop_schema()


# ----------------------------------------------------------------------------------- edge values


def f32(x: float) -> float:
    """The nearest float32, as a Python float (what a DevFloat can hold)."""
    return struct.unpack("f", struct.pack("f", x))[0]


NON_ASCII = "dös ✓ 𝄞 ñ 日本"
EDGE_VALUES: dict[TangoType, list[Any]] = {
    TangoType.DEV_BOOLEAN: [True, False],
    TangoType.DEV_UCHAR: [0, 255],
    TangoType.DEV_SHORT: [-(2**15), 0, 2**15 - 1],
    TangoType.DEV_USHORT: [0, 2**16 - 1],
    TangoType.DEV_LONG: [-(2**31), 0, 2**31 - 1],
    TangoType.DEV_ULONG: [0, 2**32 - 1],
    TangoType.DEV_LONG64: [-(2**63), 0, 2**63 - 1],
    TangoType.DEV_ULONG64: [0, 2**64 - 1],
    TangoType.DEV_FLOAT: [f32(1.1), math.nan, math.inf, -math.inf, f32(3.4028234663852886e38), f32(-1.17549435e-38)],
    TangoType.DEV_DOUBLE: [0.1, math.nan, math.inf, -math.inf, 1.7976931348623157e308, 5e-324, -0.0],
    TangoType.DEV_STRING: ["", NON_ASCII, "quote ' \" ; DROP TABLE att_conf; -- SELECT", "x" * 5000],
    TangoType.DEV_STATE: [0, 13],
    TangoType.DEV_ENCODED: [Encoded("jpeg", bytes(range(256))), Encoded("", b""), Encoded(NON_ASCII, b"\x00")],
    TangoType.DEV_ENUM: [0, 1, 2],
}
ENUM_LABELS = ("zero", "one", NON_ASCII)
ERROR_DESC = "Read error: 'x'; DROP TABLE att_conf; -- " + NON_ASCII


def att_name(t: TangoType, fmt: AttrFormat, wt: WriteType) -> str:
    return f"tango://testhost:10000/test/{t.suffix}/{fmt.name.lower()}/{wt.name.lower()}"


def all_attributes() -> list[AttributeInfo]:
    return [AttributeInfo(att_name(t, f, w), t, f, w) for t in TangoType for f in AttrFormat for w in WriteType]


def _sides(wt: WriteType, r: Any, w: Any) -> tuple[Any, Any]:
    """READ fills value_r, WRITE value_w, the others both (HDB++)."""
    if wt == WriteType.READ:
        return r, None
    if wt == WriteType.WRITE:
        return None, w
    return r, w


def _big(t: TangoType, n: int) -> list[Any]:
    edges = EDGE_VALUES[t][:3]  # not 10,000 copies of the 5,000-character string
    return [edges[i % len(edges)] for i in range(n)]


def events_for(info: AttributeInfo, t0: datetime, big: bool) -> list[Event]:
    """Edge-value events, an INVALID event with NULL values and an error event for one attribute.

    big adds a 10,000-element spectrum or a 100x100 image.
    """
    edges = EDGE_VALUES[info.type]
    values: list[tuple[Any, Any]] = []
    if info.format == AttrFormat.SCALAR:
        values = [(v, edges[-1 - i]) for i, v in enumerate(edges)]
    elif info.format == AttrFormat.SPECTRUM:
        values = [(list(edges), list(reversed(edges))), ([], [])]
        if big:
            values.append((_big(info.type, 10_000), _big(info.type, 3)))
    else:
        values = [([list(edges), list(reversed(edges))], [list(edges)]), ([], [])]
        if big:
            img = _big(info.type, 10_000)
            values.append(([img[k * 100 : (k + 1) * 100] for k in range(100)], [[edges[0]]]))
    events = [
        Event(info.name, t0 + timedelta(milliseconds=k), *_sides(info.write_type, r, w))
        for k, (r, w) in enumerate(values)
    ]
    n = len(events)
    events.append(Event(info.name, t0 + timedelta(milliseconds=n), None, None, Quality.INVALID))
    events.append(Event(info.name, t0 + timedelta(milliseconds=n + 1), None, None, Quality.INVALID, ERROR_DESC))
    return events


def expected(backend: str, info: AttributeInfo, e: Event) -> Event:
    """What reading `e` back from `backend` must give (the documented lossy spots of MySQL)."""
    if backend != "mysql":
        return e
    absent = e.error_desc is not None or e.quality == Quality.INVALID

    def fix(v: Any, side_exists: bool) -> Any:
        if isinstance(v, list):
            return [fix(x, True) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return None  # MariaDB has no NaN/Infinity
        if v is None and side_exists and info.format != AttrFormat.SCALAR and not absent:
            return []  # per-element layout: a missing array and an empty one are both "no rows"
        return v

    rw = info.write_type != WriteType.READ
    return Event(e.att_name, e.data_time, fix(e.value_r, True), fix(e.value_w, rw), e.quality, e.error_desc)


def same(a: Any, b: Any) -> bool:
    """Equality with NaN == NaN and exact float comparison elsewhere."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    return bool(a == b)


def same_event(a: Event, b: Event) -> bool:
    return (
        a.att_name == b.att_name and a.data_time == b.data_time and same(a.value_r, b.value_r)
        and same(a.value_w, b.value_w) and a.quality == b.quality and a.error_desc == b.error_desc
    )


def now_ms() -> datetime:
    """Now, to the millisecond, in UTC (inside every partition window the tests create)."""
    t = datetime.now(timezone.utc)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)

# SPDX-License-Identifier: Apache-2.0
"""Values for backend tests: the schema variants each backend is tested in, edge-value events, what
reading them back must give, and hypothesis strategies for any value of any Tango type and format.
"""

from __future__ import annotations

import math
import struct
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Encoded, Event, Quality, TangoType, WriteType

# backend -> variants created by the tests; the first one is the backend's published default. A
# backend not named here is tested in its default variant (None).
VARIANTS: dict[str, tuple[str | None, ...]] = {
    "timescaledb": ("pk+2", "pk", "interval=7d", "pk+2,nofk"),
    "postgresql": ("pk+2", "pk", "pk+2,partitioned"),
    "mysql": ("pk", "pk+2", "partitioned"),
}
BACKEND_VARIANTS = [(b, v) for b in DEFAULT_BACKENDS for v in VARIANTS.get(b, (None,))]


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
    """What reading `e` back from `backend` must give (the documented lossy spots of MySQL and
    ClickHouse)."""
    if backend == "clickhouse":
        return _clickhouse_expected(info, e)
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


def _clickhouse_expected(info: AttributeInfo, e: Event) -> Event:
    """ClickHouse has no NULL array: a side without a value reads back as [] unless the event has
    none, or the side is a write-only attribute's read side."""
    absent = e.error_desc is not None or e.quality == Quality.INVALID

    def fix(v: Any, side_exists: bool) -> Any:
        if isinstance(v, list):
            return [fix(x, True) for x in v]
        if v is None and side_exists and info.format != AttrFormat.SCALAR and not absent:
            return []
        return v

    return Event(e.att_name, e.data_time, fix(e.value_r, info.write_type != WriteType.WRITE),
                 fix(e.value_w, info.write_type != WriteType.READ), e.quality, e.error_desc)


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


def assert_read_back(backend: Any, info: AttributeInfo, events: list[Event]) -> None:
    """`backend` reads `info`'s events since the first of `events` back as HDB++ stores them."""
    got = [e for e in backend.fetch_events(info.name) if e.data_time >= events[0].data_time]
    want = [expected(backend.name, info, e) for e in events]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert same_event(g, w), f"{backend.name}: read {g!r}, expected {w!r}"


def now_ms() -> datetime:
    """Now, to the millisecond, in UTC (inside every partition window the tests create)."""
    t = datetime.now(timezone.utc)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


class Clock:
    """Fresh millisecond timestamps from now on, one per call: events never collide on a primary key."""

    def __init__(self) -> None:
        self.ms = int(now_ms().timestamp() * 1000)

    def __call__(self) -> datetime:
        self.ms += 1
        return datetime.fromtimestamp(self.ms / 1000, timezone.utc)


# ----------------------------------------------------------------------------------- any value


TEXT = st.text(st.characters(exclude_characters="\x00"), max_size=40)  # a Tango string is a C string
INT_RANGES = {
    TangoType.DEV_UCHAR: (0, 2**8 - 1), TangoType.DEV_SHORT: (-(2**15), 2**15 - 1),
    TangoType.DEV_USHORT: (0, 2**16 - 1), TangoType.DEV_LONG: (-(2**31), 2**31 - 1),
    TangoType.DEV_ULONG: (0, 2**32 - 1), TangoType.DEV_LONG64: (-(2**63), 2**63 - 1),
    TangoType.DEV_ULONG64: (0, 2**64 - 1), TangoType.DEV_STATE: (0, 13), TangoType.DEV_ENUM: (0, 2**15 - 1),
}
# Derandomized, so that CI sees the same values every time.
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

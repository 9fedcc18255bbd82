# SPDX-License-Identifier: Apache-2.0
"""Cases (one data table's worth of events of one type, format and write type) and their seeded
events, in bulk-writer batches; the raw bytes of an event (the denominator of the compression ratio).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from hdbbench.backends.base import Backend
from hdbbench.load.emitter import TYPES, AttrSpec, EventStream, stream_key
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import (
    AttrFormat,
    AttributeInfo,
    Event,
    TangoType,
    WriteType,
    as_encoded,
    parse_type,
)
from hdbbench.parts.disk.fit import geometric_sizes
from hdbbench.results.disk import CaseShape

RAW_FIXED_BYTES = 8 + 4 + 1  # data_time + att_conf_id + quality
VALUE_BYTES: dict[TangoType, int] = {
    TangoType.DEV_BOOLEAN: 1, TangoType.DEV_UCHAR: 1, TangoType.DEV_SHORT: 2, TangoType.DEV_USHORT: 2,
    TangoType.DEV_ENUM: 2, TangoType.DEV_LONG: 4, TangoType.DEV_ULONG: 4, TangoType.DEV_FLOAT: 4,
    TangoType.DEV_STATE: 4, TangoType.DEV_LONG64: 8, TangoType.DEV_ULONG64: 8, TangoType.DEV_DOUBLE: 8,
}
DEVICE = "disk/bench"  # emitter stream key prefix
DEFAULT_SPAN = 100.0  # default cases: largest size / smallest size
MIN_FIT_EVENTS = 10_000  # default cases: smallest size of a scalar case, at least
ARRAY_VALUES = 400_000  # default spectrum cases: elements stored per case, at most
# Default spectrum cases span less: at a hundredth of their few thousand events an index is still in
# its first page per attribute (PostgreSQL: 1 index page at 200 events of 4 attributes, 5 at 424).
ARRAY_SPAN = 4.0
BATCH_VALUES = 200_000  # array elements per bulk-writer batch (scalars: this many events)

Loader = Callable[[Backend, Sequence[AttributeInfo], Iterator[list[Event]]], int]


# ------------------------------------------------------------------------------------ cases


@dataclass(frozen=True)
class Case:
    """N events of one type/format/write type over A attributes, one event per attribute per period."""

    type: TangoType
    format: AttrFormat = AttrFormat.SCALAR
    write: WriteType = WriteType.READ
    dim_x: int = 1
    dim_y: int = 0
    events: int = 10_000
    attributes: int = 10
    period_s: float = 1.0
    string_chars: int = 20
    span: float = 1.0  # measured at sizes from events/span up to events (1: at `events` only)

    @property
    def sizes(self) -> tuple[int, ...]:
        """The cumulative event counts the case is measured at (see disk.fit)."""
        return geometric_sizes(self.events, self.span, min(self.attributes, self.events))

    @property
    def elements(self) -> int:
        if self.format == AttrFormat.SCALAR:
            return 1
        return self.dim_x * (self.dim_y if self.format == AttrFormat.IMAGE else 1)

    @property
    def side(self) -> str:
        return "ro" if self.write == WriteType.READ else "rw"

    @property
    def label(self) -> str:
        base = f"{self.format.name.lower()}_{self.type.suffix}_{self.side}"
        if self.format == AttrFormat.SPECTRUM:
            return f"{base}_x{self.dim_x}"
        if self.format == AttrFormat.IMAGE:
            return f"{base}_{self.dim_x}x{self.dim_y}"
        return base

    def shape(self) -> CaseShape:
        """The case as results record it (a disk case's case_* fields, an inventory run's groups)."""
        return CaseShape(label=self.label, type=self.type.suffix, format=self.format.name.lower(), write=self.side,
                         elements=self.elements, dim_x=self.dim_x, dim_y=self.dim_y, events=self.events,
                         attributes=self.attributes, period_s=self.period_s, string_chars=self.string_chars,
                         span=self.span, sizes=list(self.sizes))


def parse_case(text: str, events: int, attributes: int, span: float = 1.0) -> Case:
    """`[scalar|spectrum|image:]<type>[:<n>|<x>x<y>][:ro|rw]`, e.g. `devstring:rw`, `spectrum:devdouble:1000`."""
    parts = [p for p in text.strip().lower().split(":") if p]
    fmt = AttrFormat.SCALAR
    if parts and parts[0] in ("scalar", "spectrum", "image"):
        fmt = AttrFormat[parts.pop(0).upper()]
    if not parts:
        raise ConfigError(f"case {text!r}: no Tango type")
    ttype = parse_type(parts.pop(0))
    write = WriteType.READ
    if parts and parts[-1] in ("ro", "rw"):
        write = WriteType.READ if parts.pop() == "ro" else WriteType.READ_WRITE
    dim_x, dim_y = (1, 0)
    if parts:
        dims = parts.pop(0).split("x")
        if not all(d.isdigit() and int(d) > 0 for d in dims) or len(dims) > 2 or parts:
            raise ConfigError(f"case {text!r}: dimensions must be <n> or <x>x<y>")
        dim_x, dim_y = int(dims[0]), int(dims[1]) if len(dims) == 2 else 0
    if fmt == AttrFormat.IMAGE and dim_y < 1:
        raise ConfigError(f"case {text!r}: an image needs <x>x<y>")
    if fmt == AttrFormat.SPECTRUM and dim_y:
        raise ConfigError(f"case {text!r}: a spectrum has one dimension")
    if fmt != AttrFormat.SCALAR and ttype == TangoType.DEV_ENCODED:
        raise ConfigError(f"case {text!r}: Tango allows DevEncoded only as a scalar")
    return Case(ttype, fmt, write, dim_x, dim_y, events, attributes, span=span)


def default_span(events: int) -> float:
    """DEFAULT_SPAN, narrowed so that the smallest size keeps MIN_FIT_EVENTS events: below that, a
    table is still in its first pages per attribute (half-full pages at each insertion point, InnoDB
    fragment pages) and the sizes do not lie on the line of the large table."""
    return max(1.0, min(DEFAULT_SPAN, events / MIN_FIT_EVENTS))


def default_cases(events: int, attributes: int, array_sizes: Sequence[int], span: float | None = None,
                  array_values: int | None = None) -> list[Case]:
    """Every scalar type (READ), devdouble READ_WRITE, and devdouble spectra of the given sizes,
    measured at sizes spanning `span` (default: default_span(events); spectra at most ARRAY_SPAN).

    Array cases get fewer events, so that each stores about `array_values` elements (default:
    events x 10, at most ARRAY_VALUES): one element costs what a scalar event does."""
    span = default_span(events) if span is None else span
    cases = [Case(t, events=events, attributes=attributes, span=span) for t in TangoType]
    cases.append(Case(TangoType.DEV_DOUBLE, write=WriteType.READ_WRITE, events=events, attributes=attributes, span=span))
    for n in array_sizes:
        cases.append(Case(TangoType.DEV_DOUBLE, AttrFormat.SPECTRUM, dim_x=n, attributes=attributes,
                          span=min(span, ARRAY_SPAN), events=array_events(events, n, attributes, array_values)))
    return cases


def array_events(events: int, elements: int, attributes: int, array_values: int | None = None) -> int:
    """Events of an array case of `elements` elements beside scalar cases of `events` events: about
    `array_values` elements in all (default: events x 10, at most ARRAY_VALUES), at least one per attribute."""
    values = array_values or min(events * 10, ARRAY_VALUES)
    return max(attributes, min(events, values // max(elements, 1)))


# ---------------------------------------------------------------------------------- events


def _emitter_type(t: TangoType) -> str:
    return next(name for name, info in TYPES.items() if info.number == int(t))


def case_spec(case: Case, index: int) -> AttrSpec:
    """The emitter spec of attribute `index` of a case."""
    fmt = case.format.name
    write = "READ" if case.write == WriteType.READ else "READ_WRITE"
    common: dict[str, Any] = {"name": f"a{index}", "type": _emitter_type(case.type), "format": fmt, "write": write,
                              "dim_x": case.dim_x, "dim_y": case.dim_y if case.format == AttrFormat.IMAGE else 0}
    if case.type == TangoType.DEV_STRING:
        common.update(model="noise", text="s" * max(0, case.string_chars - 8))
    elif case.type == TangoType.DEV_ENCODED:
        common.update(model="counter", dim_x=max(case.dim_x, 8))
    elif case.type in (TangoType.DEV_DOUBLE, TangoType.DEV_FLOAT):
        common.update(model="walk", amplitude=1000.0, step=0.5)
    elif case.type not in (TangoType.DEV_BOOLEAN, TangoType.DEV_STATE, TangoType.DEV_ENUM):
        common.update(model="walk", amplitude=1000.0, step=3)
    return AttrSpec(**common)


def case_attributes(case: Case, prefix: str) -> list[AttributeInfo]:
    return [AttributeInfo(f"{prefix}/{case.label}/a{i}", case.type, case.format, case.write)
            for i in range(case.attributes)]


def value_bytes(t: TangoType, value: Any) -> int:
    """Raw bytes of one side's value (see the module docstring)."""
    if value is None:
        return 0
    if t == TangoType.DEV_ENCODED:
        enc = as_encoded(value)
        return len(enc.format.encode()) + len(enc.data) if enc else 0
    if t == TangoType.DEV_STRING:
        if isinstance(value, str):
            return len(value.encode())
        return sum(value_bytes(t, v) for v in value)
    size = getattr(value, "size", None)
    if size is not None and not isinstance(value, (int, float, bool)):
        return int(size) * VALUE_BYTES[t]
    if isinstance(value, (list, tuple)):
        return sum(value_bytes(t, v) for v in value)
    return VALUE_BYTES[t]


@dataclass
class Tally:
    events: int = 0
    raw_bytes: int = 0
    element_rows: int = 0  # MariaDB array rows: one per element (at least one per event)


def case_batches(case: Case, infos: Sequence[AttributeInfo], seed: int, t0: datetime, tally: Tally,
                 first: int = 0, stop: int | None = None) -> Iterator[list[Event]]:
    """Events first..stop-1 of the case (default: all) in time order (event i is attribute i mod A
    at t0 + (i div A) * period), in bulk-writer batches."""
    stop = case.events if stop is None else stop
    generated = generated_values(case, len(infos), seed, first, stop)
    per_batch = max(1, BATCH_VALUES // max(case.elements, 1) // (10 if case.type == TangoType.DEV_STRING else 1))
    batch: list[Event] = []
    step = timedelta(seconds=case.period_s)
    for i, (r, w, quality) in enumerate(generated.values, start=first):
        k, a = divmod(i, len(infos))
        batch.append(Event(infos[a].name, t0 + k * step, r, w, quality))
        if len(batch) >= per_batch:
            yield batch
            batch = []
    if batch:
        yield batch
    tally.events += generated.events
    tally.raw_bytes += generated.raw_bytes
    tally.element_rows += generated.element_rows


@dataclass(frozen=True)
class Generated:
    """The values of events first..stop-1 of a case, and their tally."""

    values: tuple[tuple[Any, Any, Any], ...]  # read value, write value, quality of each event
    events: int
    raw_bytes: int
    element_rows: int


@functools.lru_cache(maxsize=128)
def generated_values(case: Case, attributes: int, seed: int, first: int, stop: int) -> Generated:
    """The emitter's values of a case's events (its attributes' seeded streams), made once per run and
    process: every backend and variant loads the same events, and making them is half of a string or
    array case's time (about 16 s of each variant's 50 in a default disk run). The caller clears the
    cache when its measurement ends (`generated_values.cache_clear`)."""
    streams = [EventStream(seed, stream_key(DEVICE, f"{case.label}/a{i}"), case_spec(case, i)) for i in range(attributes)]
    values, raw = [], 0
    for i in range(first, stop):
        k, a = divmod(i, attributes)
        ev = streams[a].event(k)
        r = ev.value if case.write != WriteType.WRITE else None
        w = ev.value if case.write != WriteType.READ else None
        values.append((r, w, ev.quality))
        raw += RAW_FIXED_BYTES + value_bytes(case.type, r) + value_bytes(case.type, w)
    n = stop - first
    return Generated(tuple(values), n, raw, n * max(1, case.elements))


# What the bulk writer sent for a case's events, by writer, attribute ids and events: a database of
# the same layout loads them again from here (recorded_load). Cleared with generated_values.
_RECORDED: dict[tuple[Any, ...], list[Any]] = {}


def recorded_load(backend: Backend, case: Case, infos: Sequence[AttributeInfo], seed: int, t0: datetime,
                  first: int, stop: int, tally: Tally) -> int:
    """Events first..stop-1 through the bulk writer. Every backend and variant of a server loads the
    same events: the first load keeps what the writer sent, and a later one whose writer gave the
    attributes the same ids sends that again unchanged, without building and encoding the events a
    second time (half of a string or array case's time)."""
    with backend.bulk_writer() as writer:
        ids = tuple(writer.register_attribute(info) for info in infos)
        key = (type(writer).__qualname__, ids, case, seed, t0, first, stop)
        if (recorded := _RECORDED.get(key)) is not None:
            generated = generated_values(case, len(infos), seed, first, stop)
            tally.events += generated.events
            tally.raw_bytes += generated.raw_bytes
            tally.element_rows += generated.element_rows
            return sum(writer.replay(part) for part in recorded)
        parts, stored = [], 0
        for batch in case_batches(case, infos, seed, t0, tally, first, stop):
            count, part = writer.write_recorded(batch)
            stored += count
            parts.append(part)
        if all(part is not None for part in parts):
            _RECORDED[key] = parts
        return stored


def clear_made() -> None:
    """Forget the events made and the writers' streams kept (at the end of a measurement)."""
    generated_values.cache_clear()
    case_start_time.cache_clear()
    _RECORDED.clear()


def bulk_loader(backend: Backend, infos: Sequence[AttributeInfo], batches: Iterator[list[Event]]) -> int:
    """Store through the backend's bulk writer (binary COPY / bulk executemany); return events stored."""
    with backend.bulk_writer() as writer:
        for info in infos:
            writer.register_attribute(info)
        return sum(writer.write(b) for b in batches)


def start_time(cases: Sequence[Case]) -> datetime:
    """A whole second far enough back that the longest case ends an hour before now."""
    span_s = max((math.ceil(c.events / max(c.attributes, 1)) * c.period_s for c in cases), default=0.0)
    t = datetime.now(timezone.utc) - timedelta(seconds=span_s + 3600)
    return t.replace(microsecond=0)


@functools.lru_cache(maxsize=None)
def case_start_time(case: Case) -> datetime:
    """start_time([case]), once per run and process: every backend and variant stores the case's
    events at the same times (and can be sent the same recorded stream)."""
    return start_time([case])

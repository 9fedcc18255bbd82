# SPDX-License-Identifier: Apache-2.0
"""Seeded HDB++ data written straight into a backend: the data sets of the extraction benchmarks.

A data set (TOML: the `[data]` table of a query set, or a whole file) describes attributes per
type, format and write type, how often each is archived, over which time span, and a seed:

    [data]
    name = "small"
    seed = 7
    span = "2d"                  # time span; ends at `end` (default: today 00:00 UTC)
    order = "time"               # pk = by (att_conf_id, data_time), time = by data_time (real archiving)

    [[data.attributes]]
    type = "devdouble"           # Tango type suffix (devboolean ... devenum)
    format = "scalar"            # scalar | spectrum
    write = "read"               # read | read_with_write | write | read_write
    count = 4                    # attributes of this kind
    period_s = 1.0               # or rate_hz = 1.0
    size = 16                    # elements per spectrum
    invalid_share = 0.0          # share of INVALID events (NULL values, quality 1)

Event k of attribute a is a pure function of (seed, a, k): its time is start + phase(a) + k * period
(phase seeded, below one period) and its values come from a counter-based hash (splitmix64), so the
data do not depend on chunking or order and scale from thousands to hundreds of millions of rows in
fixed memory. Scalar numeric types travel as numpy columns through the backends' fast bulk paths
(binary COPY built by numpy; MariaDB LOAD DATA LOCAL INFILE); unsigned types, strings, DevEncoded
and spectra go through the generic BulkWriter.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from hdbbench.model.columnar import FAST_TYPES, ColumnBatch
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Encoded, Event, Quality, TangoType, WriteType
from hdbbench.model.tomlfile import REQUIRED, Table, read_document, suggestion

ORDERS = ("pk", "time")
FORMATS = {"scalar": AttrFormat.SCALAR, "spectrum": AttrFormat.SPECTRUM}
WRITES = {w.name.lower(): w for w in WriteType}
TYPE_SUFFIXES = {t.suffix: t for t in TangoType}
DEFAULT_CHUNK_ROWS = 200_000
US = 1_000_000

@dataclass(frozen=True)
class AttributeGroup:
    """`count` attributes of one type, format and write type, archived every `period_s`."""

    tango_type: TangoType
    format: AttrFormat
    write_type: WriteType
    count: int
    period_s: float
    size: int = 1
    invalid_share: float = 0.0


@dataclass(frozen=True)
class DataSet:
    name: str
    seed: int
    start: datetime
    span_s: float
    groups: tuple[AttributeGroup, ...]
    order: str = "time"
    source: str = ""

    @property
    def start_us(self) -> int:
        return int(self.start.timestamp()) * US + self.start.microsecond

    @property
    def end(self) -> datetime:
        return self.start + timedelta(seconds=self.span_s)

    def attributes(self) -> list[GenAttribute]:
        """Every attribute, in registration (att_conf_id) order."""
        out = []
        for g in self.groups:
            for k in range(g.count):
                index = len(out)
                name = f"tango://datagen:10000/gen/{g.tango_type.suffix}/{g.format.name.lower()}_{g.write_type.name.lower()}_{k:04d}"
                period_us = max(1, int(round(g.period_s * US)))
                phase = int(mix64(np.array([index], dtype=np.uint64), self.seed, 0xA77)[0] % np.uint64(period_us))
                span_us = int(self.span_s * US)
                n = 0 if phase >= span_us else (span_us - phase - 1) // period_us + 1
                out.append(GenAttribute(AttributeInfo(name, g.tango_type, g.format, g.write_type), g, index, phase, period_us, n))
        return out

    def expected_rows(self) -> int:
        return sum(a.events for a in self.attributes())

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "seed": self.seed, "start": self.start.isoformat(), "span_s": self.span_s,
            "order": self.order, "events": self.expected_rows(),
            "groups": [{"type": g.tango_type.suffix, "format": g.format.name.lower(), "write": g.write_type.name.lower(),
                        "count": g.count, "period_s": g.period_s, "size": g.size, "invalid_share": g.invalid_share}
                       for g in self.groups],
        }


@dataclass(frozen=True)
class GenAttribute:
    info: AttributeInfo
    group: AttributeGroup
    index: int        # position in the data set: the hash key of its values
    phase_us: int     # first event after start
    period_us: int
    events: int

    def times_us(self, start_us: int, k: np.ndarray) -> np.ndarray:
        return start_us + self.phase_us + k.astype(np.int64) * self.period_us

    def k_range(self, start_us: int, lo_us: int, hi_us: int) -> tuple[int, int]:
        """Event numbers whose times fall in [lo_us, hi_us)."""
        base = start_us + self.phase_us
        first = max(0, -(-(lo_us - base) // self.period_us))
        last = min(self.events, max(0, -(-(hi_us - base) // self.period_us)))
        return first, max(first, last)


# ------------------------------------------------------------------------------------ parsing


def load_data_set(path: str | Path) -> DataSet:
    """The data set of a query set's `[data]` table (or of a file that is only that table)."""
    top = read_document(path, "data set").root()
    # in a query set the other top-level keys are the query set's (validated by hdbbench.parts.extraction.queries)
    return parse_data_set(top.table("data") if top.has("data") else top)


def parse_data_set(table: Table) -> DataSet:
    seed = table.seed("seed", 42)
    span_s = table.duration("span", "1d")
    order = table.choice("order", ORDERS, "time")
    start = _start(table, span_s)
    groups = tuple(_group(entry) for entry in table.tables("attributes", required=True, name_key=None))
    name = table.string("name", "data")
    table.finish()
    events = sum(g.count * span_s / g.period_s for g in groups)
    if events > 1e10:
        raise table.fail("span", f"makes {events:.3g} events; at most 1e10 can be generated")
    return DataSet(name, seed, start, span_s, groups, order, str(table.document.source))


def _start(table: Table, span_s: float) -> datetime:
    for key in ("start", "end"):
        value = table.get(key, (str, datetime), None)
        if value is None:
            continue
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise table.fail(key, f"must be an ISO date-time, got {value!r}") from None
        value = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return value if key == "start" else value - timedelta(seconds=span_s)
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(seconds=span_s)


def _group(entry: Table) -> AttributeGroup:
    suffix = entry.string("type")
    if suffix not in TYPE_SUFFIXES:
        raise entry.fail("type", f"{suffix!r} is not a Tango type" + suggestion(suffix, list(TYPE_SUFFIXES)))
    fmt = entry.choice("format", list(FORMATS), "scalar")
    write = entry.choice("write", list(WRITES), "read")
    count = entry.count("count", 1)
    entry.known("rate_hz", "period_s")
    if entry.has("rate_hz"):
        period = 1.0 / entry.number("rate_hz", positive=True, maximum=1e6)
    else:
        period = entry.number("period_s", REQUIRED, minimum=1e-6)
    size = entry.integer("size", 16 if fmt == "spectrum" else 1, minimum=1, maximum=1 << 24)
    entry.integer("count", 1, maximum=1_000_000)
    share = entry.number("invalid_share", 0.0, minimum=0.0)
    if share >= 1:
        raise entry.fail("invalid_share", f"must be in [0, 1), got {share!r}")
    entry.finish()
    return AttributeGroup(TYPE_SUFFIXES[suffix], FORMATS[fmt], WRITES[write], count, float(period), size, float(share))


# ----------------------------------------------------------------------------------- values


def mix64(k: np.ndarray, seed: int, salt: int) -> np.ndarray:
    """splitmix64 of (seed, salt, k): uniform uint64 per element, a pure function of its inputs."""
    z = k.astype(np.uint64) + np.uint64((seed * 0x9E3779B97F4A7C15 + salt * 0xD1B54A32D192ED03) % 2**64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def unit_float(h: np.ndarray) -> np.ndarray:
    """uint64 hash -> float64 uniform in [0, 1)."""
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def values_for(att: GenAttribute, seed: int, k: np.ndarray, side: int) -> np.ndarray:
    """Value `side` (0 read, 1 write) of events k; for spectra, a (len(k), size) array."""
    shape_k = k if att.group.size == 1 or att.info.format == AttrFormat.SCALAR else (
        k[:, None].astype(np.uint64) * np.uint64(att.group.size) + np.arange(att.group.size, dtype=np.uint64))
    h = mix64(np.asarray(shape_k, dtype=np.uint64), seed, att.index * 4 + side + 1)
    t = att.info.type
    if t in (TangoType.DEV_DOUBLE, TangoType.DEV_FLOAT):
        wave = np.sin(np.asarray(shape_k, dtype=np.float64) * (2 * math.pi / (600 + 37 * att.index)))
        v = 100.0 * wave + (unit_float(h) - 0.5) + 10.0 * att.index
        return v.astype(np.float32 if t == TangoType.DEV_FLOAT else np.float64)
    if t == TangoType.DEV_BOOLEAN:
        return (h & np.uint64(1)).astype(bool)
    if t == TangoType.DEV_STATE:
        return (h % np.uint64(14)).astype(np.int32)
    if t == TangoType.DEV_ENUM:
        return (h % np.uint64(3)).astype(np.int16)
    limits = {TangoType.DEV_SHORT: ("int16", 2**15), TangoType.DEV_LONG: ("int32", 2**31),
              TangoType.DEV_LONG64: ("int64", 2**62), TangoType.DEV_UCHAR: ("uint8", 2**8),
              TangoType.DEV_USHORT: ("uint16", 2**16), TangoType.DEV_ULONG: ("uint32", 2**32),
              TangoType.DEV_ULONG64: ("uint64", 2**63)}
    if t in limits:
        dtype, top = limits[t]
        signed = dtype.startswith("int")
        raw = (h % np.uint64(top * (2 if signed else 1))).astype(np.int64 if signed or top < 2**63 else np.uint64)
        return (raw - (top if signed else 0)).astype(dtype)
    return (h % np.uint64(10**9)).astype(np.int64)  # strings and DevEncoded are formatted from these


def invalid_mask(att: GenAttribute, seed: int, k: np.ndarray) -> np.ndarray:
    if att.group.invalid_share <= 0:
        return np.zeros(len(k), dtype=bool)
    return unit_float(mix64(k, seed, att.index * 4 + 3)) < att.group.invalid_share


def column_batch(atts: list[GenAttribute], ids: dict[str, int], seed: int, start_us: int,
                 parts: list[tuple[int, np.ndarray]]) -> ColumnBatch:
    """Scalar rows of one fast type: `parts` are (attribute position, event numbers)."""
    cols: dict[str, list[np.ndarray]] = {c: [] for c in ("id", "t", "r", "w", "hr", "hw", "rw", "q")}
    for pos, k in parts:
        att = atts[pos]
        n = len(k)
        bad = invalid_mask(att, seed, k)
        wt = att.info.write_type
        cols["id"].append(np.full(n, ids[att.info.name], dtype=np.int64))
        cols["t"].append(att.times_us(start_us, k))
        cols["r"].append(values_for(att, seed, k, 0))
        cols["w"].append(values_for(att, seed, k, 1))
        cols["hr"].append(~bad & (wt != WriteType.WRITE))
        cols["hw"].append(~bad & (wt != WriteType.READ))
        cols["rw"].append(np.full(n, wt != WriteType.READ))
        cols["q"].append(np.where(bad, Quality.INVALID, Quality.VALID).astype(np.int16))
    cat = {c: np.concatenate(v) for c, v in cols.items()}
    return ColumnBatch(atts[parts[0][0]].info.type, cat["id"], cat["t"], cat["r"], cat["w"], cat["hr"], cat["hw"],
                       cat["rw"], cat["q"])


def events_for(att: GenAttribute, seed: int, start_us: int, k: np.ndarray) -> list[Event]:
    """The same events as Event objects (the generic path, and for checks)."""
    times = att.times_us(start_us, k).tolist()
    bad = invalid_mask(att, seed, k).tolist()
    sides = [_plain(att, values_for(att, seed, k, s)) for s in (0, 1)]
    wt = att.info.write_type
    out = []
    for j, t in enumerate(times):
        when = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=t)
        if bad[j]:
            out.append(Event(att.info.name, when, None, None, Quality.INVALID))
            continue
        r = sides[0][j] if wt != WriteType.WRITE else None
        w = sides[1][j] if wt != WriteType.READ else None
        out.append(Event(att.info.name, when, r, w))
    return out


def _plain(att: GenAttribute, values: np.ndarray) -> list[Any]:
    t = att.info.type
    plain = values.tolist()
    if t == TangoType.DEV_STRING:
        return [[f"s{x}" for x in v] if isinstance(v, list) else f"s{v}" for v in plain]
    if t == TangoType.DEV_ENCODED:
        return [[Encoded("raw", str(x).encode()) for x in v] if isinstance(v, list) else Encoded("raw", str(v).encode())
                for v in plain]
    return plain


def fast_path(att: GenAttribute) -> bool:
    return att.info.format == AttrFormat.SCALAR and att.info.type in FAST_TYPES


# ------------------------------------------------------------------------------------- chunks


@dataclass
class Chunk:
    """One write: scalar columns of one fast type, or events of the generic path."""

    batch: ColumnBatch | None = None
    events: list[Event] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.batch) if self.batch is not None else len(self.events)


def chunks(inv: DataSet, atts: list[GenAttribute], ids: dict[str, int], order: str,
           chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[Chunk]:
    """The whole data set in `order`, chunk by chunk (about chunk_rows events each)."""
    if order == "pk":
        yield from _pk_chunks(inv, atts, ids, chunk_rows)
    else:
        yield from _time_chunks(inv, atts, ids, chunk_rows)


def _pk_chunks(inv: DataSet, atts: list[GenAttribute], ids: dict[str, int], chunk_rows: int) -> Iterator[Chunk]:
    for pos in sorted(range(len(atts)), key=lambda p: ids[atts[p].info.name]):
        att = atts[pos]
        step = chunk_rows if fast_path(att) else max(1, chunk_rows // (10 * att.group.size))
        for lo in range(0, att.events, step):
            k = np.arange(lo, min(att.events, lo + step), dtype=np.int64)
            yield _make_chunk(inv, atts, ids, [(pos, k)])


def time_window_us(atts: list[GenAttribute], chunk_rows: int) -> int | None:
    """The span of time one slice of a time-ordered load covers (None: no events)."""
    rate = sum(1e6 / a.period_us * (1 if fast_path(a) else 10 * a.group.size) for a in atts if a.events)
    return max(1, int(chunk_rows / rate * 1e6)) if rate else None


def _time_chunks(inv: DataSet, atts: list[GenAttribute], ids: dict[str, int], chunk_rows: int) -> Iterator[Chunk]:
    window_us = time_window_us(atts, chunk_rows)
    if window_us is None:
        return
    start, end = inv.start_us, inv.start_us + int(inv.span_s * US)
    for lo in range(start, end, window_us):
        hi = min(end, lo + window_us)
        by_kind: dict[tuple[bool, TangoType], list[tuple[int, np.ndarray]]] = {}
        for pos, att in enumerate(atts):
            first, last = att.k_range(start, lo, hi)
            if last > first:
                key = (fast_path(att), att.info.type)
                by_kind.setdefault(key, []).append((pos, np.arange(first, last, dtype=np.int64)))
        for parts in by_kind.values():
            yield _make_chunk(inv, atts, ids, parts)


def _make_chunk(inv: DataSet, atts: list[GenAttribute], ids: dict[str, int],
                parts: list[tuple[int, np.ndarray]]) -> Chunk:
    if fast_path(atts[parts[0][0]]):
        batch = column_batch(atts, ids, inv.seed, inv.start_us, parts)
        if len(parts) > 1:  # time order: by data_time, then att_conf_id
            batch = batch.take(np.lexsort((batch.att_conf_id, batch.data_time_us)))
        return Chunk(batch=batch)
    events = [e for pos, k in parts for e in events_for(atts[pos], inv.seed, inv.start_us, k)]
    if len(parts) > 1:
        events.sort(key=lambda e: (e.data_time, ids[e.att_name]))
    return Chunk(events=events)


# ------------------------------------------------------------------------------------ writing


@dataclass(frozen=True)
class GenerateResult:
    backend: str
    database: str
    order: str
    events: int
    seconds: float      # time spent in the backend's bulk loads (generation excluded)
    wall_s: float       # generation included
    size_bytes: int

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "database": self.database, "order": self.order, "events": self.events,
                "seconds": self.seconds, "wall_s": self.wall_s, "events_per_s": self.events_per_s, "size_bytes": self.size_bytes}


def register(writer: Any, inv: DataSet) -> tuple[list[GenAttribute], dict[str, int]]:
    """att_conf rows for every attribute of the data set, in data set order (idempotent)."""
    atts = inv.attributes()
    ids = {a.info.name: writer.register_attribute(a.info, inv.start) for a in atts}
    return atts, ids


def generate(backend: Any, inv: DataSet, order: str | None = None, chunk_rows: int = DEFAULT_CHUNK_ROWS,
             progress: Callable[[int], None] | None = None) -> GenerateResult:
    """Write the data set into `backend` (schema already created); time the writes."""
    order = order or inv.order
    if order not in ORDERS:
        raise ConfigError(f"unknown order {order!r} (known: {', '.join(ORDERS)})")
    wall = time.perf_counter()
    writer = backend.bulk_writer()
    atts, ids = register(writer, inv)
    loader = backend.column_loader()
    written = 0
    busy_s = 0.0
    try:
        for chunk in chunks(inv, atts, ids, order, chunk_rows):
            started = time.perf_counter()
            if chunk.batch is not None:
                loader.load(chunk.batch)
            else:
                writer.write(chunk.events)
            busy_s += time.perf_counter() - started
            written += len(chunk)
            if progress is not None:
                progress(len(chunk))
    finally:
        loader.close()
        writer.close()
    wall_s = time.perf_counter() - wall
    backend.refresh_statistics()
    return GenerateResult(backend.name, backend.database, order, written, busy_s, wall_s, backend.size_bytes())

# SPDX-License-Identifier: Apache-2.0
"""Extraction query sets: one TOML description, the same concrete queries on every backend.

A query set names its data set (a `[data]` inventory, see datagen.py) and lists query groups:

    name = "small"
    seed = 11

    [[query]]
    name = "elettra_1M"          # one attribute over a range sized to return about `rows` rows
    kind = "range"               # range | random | aggregate | array
    type = "devdouble"           # Tango type suffix
    attribute = 0                # position among the data set's attributes of that type and format,
                                 # or a full attribute name; default: seeded random choice
    rows = 1000000               # range: the row target
    cold = true                  # also measure after a server restart (default: true for range)

    [[query]]
    name = "random"
    kind = "random"              # random attribute, random start, for each interval length
    intervals = ["1h", "1d", "1w"]
    count = 100                  # queries per interval length

    [[query]]
    kind = "aggregate"           # 1-minute count/avg/min/max per bucket over random intervals
    bucket = "1min"
    intervals = ["1d"]
    count = 20

    [[query]]
    kind = "array"               # spectra of a random attribute over random intervals
    format = "spectrum"

Resolution turns groups into concrete `Query` values (attribute name, [start, end)) against a
`Catalog` of the data set — taken from one reference backend — with a generator seeded by (set
seed, group name): the same seed gives the same queries on every backend. A type that is not a
Tango type, or an attribute that is not in the data set, is refused with the file and the key.

The SQL differs per backend and lives in the backend modules, behind the small methods of
`ExtractionBackend` (hdbbench.backends.base); each backend implements them in its own folder.
"""

from __future__ import annotations

import math
import tomllib
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from hdbbench.backends.base import ExtractionBackend
from hdbbench.datagen import FORMATS, TYPE_SUFFIXES, Inventory, parse_duration_s, parse_inventory
from hdbbench.errors import ConfigError
from hdbbench.hdbtypes import AttrFormat, AttributeInfo, TangoType

KINDS = ("range", "random", "aggregate", "array")


@dataclass(frozen=True)
class QueryGroup:
    """One [[query]] entry of a query set."""

    name: str
    kind: str
    tango_type: TangoType
    format: AttrFormat
    attribute: str | int | None = None
    rows: int | None = None
    intervals_s: tuple[float, ...] = ()
    count: int = 1
    bucket_s: int = 60
    cold: bool = False


@dataclass(frozen=True)
class QuerySet:
    name: str
    source: str
    seed: int
    groups: tuple[QueryGroup, ...]
    data: Inventory | None = None
    fetch_rows: int = 10_000
    cold_explain: bool = True   # a second restart before EXPLAIN so cold server figures are cold too

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "source": self.source, "seed": self.seed, "fetch_rows": self.fetch_rows,
            "cold_explain": self.cold_explain, "data": self.data.to_dict() if self.data else None,
            "groups": [asdict(g) | {"tango_type": g.tango_type.suffix, "format": g.format.name.lower()} for g in self.groups],
        }


@dataclass(frozen=True)
class Query:
    """One concrete query: the same on every backend."""

    id: str
    group: str
    kind: str
    att_name: str
    tango_type: TangoType
    format: AttrFormat
    start: datetime
    end: datetime
    interval_s: float
    bucket_s: int = 60
    cold: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "group": self.group, "kind": self.kind, "att_name": self.att_name,
                "type": self.tango_type.suffix, "format": self.format.name.lower(), "start": self.start.isoformat(),
                "end": self.end.isoformat(), "interval_s": self.interval_s, "bucket_s": self.bucket_s, "cold": self.cold}


# ------------------------------------------------------------------------------------ parsing


def load_query_set(path: Path) -> QuerySet:
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"query set file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_query_set(document, str(path))


def parse_query_set(document: dict[str, Any], source: str) -> QuerySet:
    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{source}: {key} {problem}")

    known = {"name", "seed", "data", "query", "fetch_rows", "cold_explain"}
    for key in document:
        if key not in known:
            raise fail(key, f"is not a known key (known: {', '.join(sorted(known))})")
    seed = document.get("seed", 42)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise fail("seed", f"must be an integer, got {seed!r}")
    fetch_rows = document.get("fetch_rows", 10_000)
    if isinstance(fetch_rows, bool) or not isinstance(fetch_rows, int) or fetch_rows < 1:
        raise fail("fetch_rows", f"must be an integer >= 1, got {fetch_rows!r}")
    cold_explain = document.get("cold_explain", True)
    if not isinstance(cold_explain, bool):
        raise fail("cold_explain", f"must be a boolean, got {cold_explain!r}")
    data = parse_inventory(document["data"], source, "[data] ") if "data" in document else None
    items = document.get("query")
    if not isinstance(items, list) or not items:
        raise fail("query", "must list at least one [[query]] table")
    groups = tuple(_group(item, k, fail) for k, item in enumerate(items))
    names = [g.name for g in groups]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise fail("query", f"names {dup!r} twice; query names must be unique")
    return QuerySet(str(document.get("name", Path(source).stem)), source, seed, groups, data, fetch_rows, cold_explain)


_GROUP_KEYS = {"name", "kind", "type", "format", "attribute", "rows", "intervals", "interval", "count", "bucket", "cold"}


def _group(item: Any, k: int, fail: Callable[[str, str], ConfigError]) -> QueryGroup:
    where = f"query[{k}]"
    if not isinstance(item, dict):
        raise fail(where, "must be a table")
    for key in item:
        if key not in _GROUP_KEYS:
            raise fail(f"{where}.{key}", f"is not a known key (known: {', '.join(sorted(_GROUP_KEYS))})")
    kind = item.get("kind", "random")
    if kind not in KINDS:
        raise fail(f"{where}.kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    name = str(item.get("name", f"{kind}_{k}"))
    where = f"query[{k}] ({name})"
    suffix = item.get("type", "devdouble")
    if suffix not in TYPE_SUFFIXES:
        raise fail(f"{where}.type", f"{suffix!r} is not a Tango type (known: {', '.join(TYPE_SUFFIXES)})")
    fmt = item.get("format", "spectrum" if kind == "array" else "scalar")
    if fmt not in FORMATS:
        raise fail(f"{where}.format", f"must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if (kind == "array") != (fmt != "scalar"):
        raise fail(f"{where}.format", f"{fmt!r} does not fit kind {kind!r} (array queries read spectra, the others scalars)")
    attribute = item.get("attribute")
    if attribute is not None and (isinstance(attribute, bool) or not isinstance(attribute, (int, str))):
        raise fail(f"{where}.attribute", f"must be a position (integer) or an attribute name, got {attribute!r}")
    rows = item.get("rows")
    if kind == "range":
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
            raise fail(f"{where}.rows", f"must be the row target (an integer >= 1), got {rows!r}")
    elif rows is not None:
        raise fail(f"{where}.rows", "applies to range queries only")
    intervals = _intervals(item, kind, f"{where}.intervals", fail)
    count = item.get("count", 1 if kind == "range" else 100)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise fail(f"{where}.count", f"must be an integer >= 1, got {count!r}")
    try:
        bucket_s = parse_duration_s(item.get("bucket", "1min"))
    except ValueError as exc:
        raise fail(f"{where}.bucket", str(exc)) from None
    if bucket_s < 1 or bucket_s != int(bucket_s):
        raise fail(f"{where}.bucket", f"must be a whole number of seconds >= 1, got {bucket_s:g} s")
    cold = item.get("cold", kind == "range")
    if not isinstance(cold, bool):
        raise fail(f"{where}.cold", f"must be a boolean, got {cold!r}")
    return QueryGroup(name, kind, TYPE_SUFFIXES[suffix], FORMATS[fmt], attribute, rows, intervals, count,
                      int(bucket_s), cold)


def _intervals(item: dict[str, Any], kind: str, where: str, fail: Callable[[str, str], ConfigError]) -> tuple[float, ...]:
    raw = item.get("intervals", [item["interval"]] if "interval" in item else None)
    if kind == "range":
        if raw is not None:
            raise fail(where, "does not apply to range queries (they are sized by rows)")
        return ()
    if raw is None:
        raw = ["1h"]
    if not isinstance(raw, list) or not raw:
        raise fail(where, f"must be a list of durations such as [\"1h\", \"1d\"], got {raw!r}")
    try:
        values = tuple(parse_duration_s(v) for v in raw)
    except ValueError as exc:
        raise fail(where, str(exc)) from None
    if any(v <= 0 for v in values):
        raise fail(where, "must be positive durations")
    return values


# --------------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class AttributeSpan:
    name: str
    tango_type: TangoType
    format: AttrFormat
    events: int
    first: datetime
    last: datetime


@dataclass(frozen=True)
class Catalog:
    """The data set's attributes with their extent, from one reference backend."""

    attributes: tuple[AttributeSpan, ...]

    def of_kind(self, tango_type: TangoType, fmt: AttrFormat) -> list[AttributeSpan]:
        return sorted((a for a in self.attributes if a.tango_type == tango_type and a.format == fmt), key=lambda a: a.name)

    def to_dict(self) -> dict[str, Any]:
        return {"attributes": [{"name": a.name, "type": a.tango_type.suffix, "format": a.format.name.lower(),
                                "events": a.events, "first": a.first.isoformat(), "last": a.last.isoformat()}
                               for a in self.attributes]}


def catalog_of(backend: ExtractionBackend) -> Catalog:
    """Attributes with at least one stored event, with their extent."""
    atts = backend.attribute_catalog()
    by_table: dict[str, list[tuple[int, AttributeInfo]]] = {}
    for att_id, info in atts:
        by_table.setdefault(backend.table_for(info), []).append((att_id, info))
    spans = []
    for table, members in sorted(by_table.items()):
        stats = backend.attribute_spans(table)
        for att_id, info in members:
            if att_id in stats:
                events, first, last = stats[att_id]
                spans.append(AttributeSpan(info.name, info.type, info.format, events, _utc(first), _utc(last)))
    return Catalog(tuple(sorted(spans, key=lambda a: a.name)))


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


def resolve(qs: QuerySet, catalog: Catalog) -> list[Query]:
    """Every concrete query of the set, in set order."""
    out: list[Query] = []
    for group in qs.groups:
        rng = np.random.default_rng([qs.seed, zlib.crc32(group.name.encode())])
        candidates = catalog.of_kind(group.tango_type, group.format)
        where = f"{qs.source}: query {group.name!r}"
        if not candidates:
            raise ConfigError(f"{where}: the data set has no {group.format.name.lower()} {group.tango_type.suffix} "
                              "attribute (check type/format, or generate the [data] first)")
        fixed = _fixed_attribute(group, candidates, where)
        if group.kind == "range":
            out.append(_range_query(group, fixed or candidates[int(rng.integers(len(candidates)))], rng, where))
            continue
        for interval in group.intervals_s:
            for n in range(group.count):
                att = fixed or candidates[int(rng.integers(len(candidates)))]
                start = _random_start(att, interval, rng)
                out.append(Query(f"{group.name}/{_label(interval)}/{n:03d}", group.name, group.kind, att.name,
                                 group.tango_type, group.format, start, start + timedelta(seconds=interval), interval,
                                 group.bucket_s, group.cold))
    return out


def _fixed_attribute(group: QueryGroup, candidates: list[AttributeSpan], where: str) -> AttributeSpan | None:
    if group.attribute is None:
        return None
    if isinstance(group.attribute, int):
        if not 0 <= group.attribute < len(candidates):
            raise ConfigError(f"{where}: attribute {group.attribute} is out of range: the data set has "
                              f"{len(candidates)} {group.format.name.lower()} {group.tango_type.suffix} attribute(s)")
        return candidates[group.attribute]
    match = next((a for a in candidates if a.name == group.attribute), None)
    if match is None:
        raise ConfigError(f"{where}: attribute {group.attribute!r} is not a {group.format.name.lower()} "
                          f"{group.tango_type.suffix} attribute of the data set")
    return match


def _range_query(group: QueryGroup, att: AttributeSpan, rng: np.random.Generator, where: str) -> Query:
    """A range of `att` expected to hold about `rows` events, at a seeded place inside its extent."""
    assert group.rows is not None
    if group.rows > att.events:
        raise ConfigError(f"{where}: wants about {group.rows} rows but {att.name} holds {att.events} events; "
                          "lower rows or generate a larger data set")
    extent_s = (att.last - att.first).total_seconds()
    per_s = (att.events - 1) / extent_s if extent_s > 0 else math.inf
    span_s = group.rows / per_s if per_s > 0 else 0.0
    slack_s = max(0.0, extent_s - span_s)
    start = att.first + timedelta(seconds=float(rng.uniform(0, slack_s)) if slack_s else 0.0)
    end = min(start + timedelta(seconds=span_s), att.last + timedelta(microseconds=1))
    return Query(f"{group.name}", group.name, "range", att.name, group.tango_type, group.format, start, end,
                 (end - start).total_seconds(), group.bucket_s, group.cold)


def _random_start(att: AttributeSpan, interval_s: float, rng: np.random.Generator) -> datetime:
    slack_us = int(((att.last - att.first).total_seconds() - interval_s) * 1e6)
    return att.first + timedelta(microseconds=int(rng.integers(0, slack_us)) if slack_us > 0 else 0)


def _label(seconds: float) -> str:
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


# ------------------------------------------------------------------------------------ per backend


@dataclass(frozen=True)
class BoundQuery:
    """A query in one backend's SQL, with its parameters."""

    query: Query
    sql: str
    params: tuple[Any, ...]


def bind(backend: ExtractionBackend, query: Query, ids: dict[str, tuple[int, AttributeInfo]]) -> BoundQuery:
    """The backend's SQL for `query`; `ids` maps attribute names to (att_conf_id, info) on that backend."""
    try:
        att_id, info = ids[query.att_name]
    except KeyError:
        raise ConfigError(f"query {query.id}: attribute {query.att_name!r} is not archived on {backend.name}") from None
    table = backend.table_for(info)
    if query.kind == "aggregate":
        text = backend.aggregate_sql(table, query.bucket_s)
    else:
        text = backend.range_sql(table, query.kind == "array")
    return BoundQuery(query, text, (att_id, query.start, query.end))


def attribute_ids(backend: ExtractionBackend) -> dict[str, tuple[int, AttributeInfo]]:
    return {info.name: (att_id, info) for att_id, info in backend.attribute_catalog()}

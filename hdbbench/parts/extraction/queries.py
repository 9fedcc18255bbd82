# SPDX-License-Identifier: Apache-2.0
"""Extraction query sets: one TOML description, the same concrete queries on every backend.

A query set names its data set (a `[data]` table, see datagen.py) and lists query groups:

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
import re
import zlib
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from hdbbench.backends.base import ExtractionBackend
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType
from hdbbench.model.tomlfile import Table, from_values, parse_duration_s, read_document, suggestion
from hdbbench.parts.datagen import FORMATS, TYPE_SUFFIXES, DataSet, parse_data_set
from hdbbench.results.extraction import QueryRecord

KINDS = ("range", "random", "aggregate", "array")
MAX_QUERIES = 1_000_000     # per group and interval length: more is surely a typo
# A full attribute name as HDB++ stores it: tango://host:port/domain/family/member/name (or without
# the tango://host:port/ part); no quotes, spaces, semicolons or other characters Tango refuses.
ATTRIBUTE_NAME = re.compile(r"^(tango://[A-Za-z0-9_.-]+:\d{1,5}/)?([A-Za-z0-9_.-]+/){2,3}[A-Za-z][A-Za-z0-9_]{0,63}$")


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
    data: DataSet | None = None
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

    def record(self) -> QueryRecord:
        """As results.json keeps it."""
        return QueryRecord(id=self.id, group=self.group, kind=self.kind, att_name=self.att_name,
                           type=self.tango_type.suffix, format=self.format.name.lower(), start=self.start.isoformat(),
                           end=self.end.isoformat(), interval_s=self.interval_s, bucket_s=self.bucket_s,
                           cold=self.cold)


# ------------------------------------------------------------------------------------ parsing


def load_query_set(path: str | Path) -> QuerySet:
    """Read and validate a query set completely; ConfigError "file:line: key: problem" otherwise."""
    return _parse(read_document(path, "query set").root())


def parse_query_set(document: dict[str, Any], source: str) -> QuerySet:
    """A query set from values already parsed (no line numbers in its errors)."""
    return _parse(from_values(document, source).root())


def _parse(top: Table) -> QuerySet:
    source = str(top.document.source)
    seed = top.seed("seed", 42)
    fetch_rows = top.count("fetch_rows", 10_000)
    cold_explain = top.boolean("cold_explain", True)
    data = parse_data_set(top.table("data")) if top.has("data") else None
    groups = tuple(_group(entry, k) for k, entry in enumerate(top.tables("query", required=True)))
    name = top.string("name", Path(source).stem)
    top.finish()
    names = [g.name for g in groups]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise top.fail("query", f"names {dup!r} twice; query names must be unique")
    return QuerySet(name, source, seed, groups, data, fetch_rows, cold_explain)


def _group(entry: Table, k: int) -> QueryGroup:
    kind = entry.choice("kind", KINDS, "random")
    name = entry.string("name", f"{kind}_{k}")
    suffix = entry.string("type", "devdouble")
    if suffix not in TYPE_SUFFIXES:
        raise entry.fail("type", f"{suffix!r} is not a Tango type" + suggestion(suffix, list(TYPE_SUFFIXES)))
    fmt = entry.choice("format", list(FORMATS), "spectrum" if kind == "array" else "scalar")
    if (kind == "array") != (fmt != "scalar"):
        raise entry.fail("format", f"{fmt!r} does not fit kind {kind!r} (array queries read spectra, the others scalars)")
    attribute = entry.get("attribute", (int, str), None)
    if isinstance(attribute, str) and (len(attribute) > 255 or not ATTRIBUTE_NAME.match(attribute)):
        raise entry.fail("attribute", f"{attribute[:80]!r}{'...' if len(attribute) > 80 else ''} is not a Tango "
                                      "attribute name (domain/family/member/name, optionally after tango://host:port/)")
    if isinstance(attribute, int) and attribute < 0:
        raise entry.fail("attribute", f"must be >= 0 (a position among the data set's attributes), got {attribute}")
    rows = entry.integer("rows", None, minimum=1)
    if kind == "range" and rows is None:
        raise entry.fail("rows", "is missing: a range query needs its row target (an integer >= 1)")
    if kind != "range" and rows is not None:
        raise entry.fail("rows", "applies to range queries only")
    intervals = _intervals(entry, kind)
    count = entry.integer("count", 1 if kind == "range" else 100, minimum=1, maximum=MAX_QUERIES)
    bucket_s = entry.duration("bucket", "1min")
    if bucket_s < 1 or bucket_s != int(bucket_s):
        raise entry.fail("bucket", f"must be a whole number of seconds >= 1, got {bucket_s:g} s")
    cold = entry.boolean("cold", kind == "range")
    entry.finish()
    return QueryGroup(name, kind, TYPE_SUFFIXES[suffix], FORMATS[fmt], attribute, rows, intervals, count,
                      int(bucket_s), cold)


def _intervals(entry: Table, kind: str) -> tuple[float, ...]:
    key = "interval" if entry.has("interval") and not entry.has("intervals") else "intervals"
    entry.known("interval", "intervals")  # two spellings of one key
    if kind == "range":
        if entry.has(key):
            raise entry.fail(key, "does not apply to range queries (they are sized by rows)")
        return ()
    if not entry.has(key):
        return (3600.0,)
    raw = entry.values[key]
    items = raw if key == "intervals" else [raw]
    if not isinstance(items, list) or not items:
        raise entry.fail(key, f"must be a list of durations such as [\"1h\", \"1d\"], got {raw!r}")
    try:
        values = tuple(parse_duration_s(v) for v in items)
    except ValueError as exc:
        raise entry.fail(key, str(exc)) from None
    if any(v <= 0 for v in values):
        raise entry.fail(key, "must be positive durations")
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

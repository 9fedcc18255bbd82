# SPDX-License-Identifier: Apache-2.0
"""Disk usage per Tango type: bytes per archived event on each backend and storage variant.

Model
-----
A `Case` is one data table's worth of events: a Tango type, format and write type, an array size,
N events spread over A attributes (one event per attribute every `period_s`, attributes interleaved
in time as a subscriber stores them). Values come from the seeded emitter (`EventStream`): doubles
and longs a random walk, booleans a step, strings `string_chars` characters of noise, states and
enums a cycle; READ_WRITE attributes carry the same value on both sides.

For each backend and `MeasureVariant` (index set `pk` / `pk+2`; PostgreSQL/TimescaleDB also after
`CLUSTER`; MariaDB also `ROW_FORMAT=COMPRESSED`, `PAGE_COMPRESSED=1` and the MyRocks engine), the
cases run in *rounds* — at most one case per table per round, each round in a fresh database — so
every case starts from an empty table: its size before and after the load (`Backend.table_sizes`,
split into data / index / TOAST / free, with the server's own total) gives bytes per event. The
write-ahead log (PostgreSQL WAL, InnoDB redo, MariaDB binary log when on) is reported separately,
as log bytes per event; it is server-wide, so other activity on the same server adds to it.

Raw bytes of an event (the denominator of the compression ratio): 8 (timestamp) + 4 (attribute id)
+ 1 (quality) + the value bytes of every side present: per element the Tango type's size (boolean,
uchar 1; short, ushort, enum 2; long, ulong, float, state 4; long64, ulong64, double 8), strings their
UTF-8 length, DevEncoded format + data length. Array dimensions and recv_time are not counted.

Documented per-row minimum (what the engine cannot store a row in less than): PostgreSQL 4-byte item
pointer + MAXALIGN(23-byte tuple header + null bitmap) + the stored column bytes (pg_column_size,
alignment padding excluded); InnoDB (COMPACT/DYNAMIC) 5-byte record header + 6-byte transaction id
+ 7-byte roll pointer + null bitmap + 1–2 length bytes per non-NULL variable-length column + the
column bytes. Measured data bytes per row minus that minimum is the page/alignment/fill overhead.

Events go through the backend's bulk writer (`bulk_loader`); any other path — e.g. the real HDB++
subscriber fed by simulated devices — plugs in as a `Loader` function.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hdbbench.backends import BACKENDS, Backend, get_backend
from hdbbench.backends.base import TableDef, TableSize
from hdbbench.emitter import TYPES, AttrSpec, EventStream, stream_key
from hdbbench.errors import ConfigError, SchemaError
from hdbbench.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, WriteType, as_encoded
from hdbbench.results import RunDirectory, RunPart, environment_facts, results_document

RAW_FIXED_BYTES = 8 + 4 + 1  # data_time + att_conf_id + quality
VALUE_BYTES: dict[TangoType, int] = {
    TangoType.DEV_BOOLEAN: 1, TangoType.DEV_UCHAR: 1, TangoType.DEV_SHORT: 2, TangoType.DEV_USHORT: 2,
    TangoType.DEV_ENUM: 2, TangoType.DEV_LONG: 4, TangoType.DEV_ULONG: 4, TangoType.DEV_FLOAT: 4,
    TangoType.DEV_STATE: 4, TangoType.DEV_LONG64: 8, TangoType.DEV_ULONG64: 8, TangoType.DEV_DOUBLE: 8,
}
STORAGE_CLAUSES = {
    "compressed": "ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8",
    "page_compressed": "PAGE_COMPRESSED=1",
    "myrocks": "ENGINE=ROCKSDB",
}
DEFAULT_VARIANTS: dict[str, tuple[str, ...]] = {
    "timescaledb": ("pk", "pk+2"),
    "postgresql": ("pk", "pk+2"),
    "mysql": ("pk", "pk+2", "pk,compressed", "pk,page_compressed", "pk,myrocks"),
}
DEVICE = "disk/bench"  # emitter stream key prefix
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

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "type": self.type.suffix, "format": self.format.name.lower(),
                "write": self.side, "elements": self.elements, "dim_x": self.dim_x, "dim_y": self.dim_y,
                "events": self.events, "attributes": self.attributes, "period_s": self.period_s,
                "string_chars": self.string_chars}


def parse_type(text: str) -> TangoType:
    """`devdouble`, `DevDouble` or `DEV_DOUBLE`."""
    key = text.strip().lower().replace("_", "")
    for t in TangoType:
        if key in (t.suffix, t.name.lower().replace("_", "")):
            return t
    raise ConfigError(f"unknown Tango type {text!r} (e.g. devdouble, devlong, devstring)")


def parse_case(text: str, events: int, attributes: int) -> Case:
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
    return Case(ttype, fmt, write, dim_x, dim_y, events, attributes)


def default_cases(events: int, attributes: int, array_sizes: Sequence[int]) -> list[Case]:
    """Every scalar type (READ), devdouble READ_WRITE, and devdouble spectra of the given sizes.

    Array cases get fewer events so that each stores about `events` x 10 elements."""
    cases = [Case(t, events=events, attributes=attributes) for t in TangoType]
    cases.append(Case(TangoType.DEV_DOUBLE, write=WriteType.READ_WRITE, events=events, attributes=attributes))
    for n in array_sizes:
        n_events = max(attributes, min(events, events * 10 // max(n, 1)))
        cases.append(Case(TangoType.DEV_DOUBLE, AttrFormat.SPECTRUM, dim_x=n, events=n_events, attributes=attributes))
    return cases


# ---------------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class MeasureVariant:
    """`pk` | `pk+2` (+ `,partitioned`, `,interval=<N>d`), plus on MariaDB `compressed`,
    `page_compressed` or `myrocks`; PostgreSQL/TimescaleDB variants are also measured after CLUSTER."""

    name: str
    schema: str
    storage: str = ""

    @classmethod
    def parse(cls, backend: str, text: str) -> MeasureVariant:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        storage = [p for p in parts if p in STORAGE_CLAUSES]
        if len(storage) > 1:
            raise ConfigError(f"variant {text!r}: choose one of {', '.join(STORAGE_CLAUSES)}")
        if storage and backend != "mysql":
            raise ConfigError(f"variant {text!r}: {storage[0]} applies to MariaDB (backend mysql) only")
        schema = ",".join(p for p in parts if p not in STORAGE_CLAUSES and p != "clustered")
        if "clustered" in parts and backend == "mysql":
            raise ConfigError(f"variant {text!r}: InnoDB tables are always clustered by their primary key")
        return cls(",".join(parts), schema, storage[0] if storage else "")

    @property
    def clustered(self) -> bool:
        return "clustered" in self.name.split(",")


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


def case_batches(case: Case, infos: Sequence[AttributeInfo], seed: int, t0: datetime, tally: Tally) -> Iterator[list[Event]]:
    """The case's events in time order (all attributes at t0 + k*period), in bulk-writer batches."""
    streams = [EventStream(seed, stream_key(DEVICE, f"{case.label}/a{i}"), case_spec(case, i)) for i in range(len(infos))]
    per_batch = max(1, BATCH_VALUES // max(case.elements, 1) // (10 if case.type == TangoType.DEV_STRING else 1))
    batch: list[Event] = []
    step = timedelta(seconds=case.period_s)
    for i in range(case.events):
        k, a = divmod(i, len(infos))
        ev = streams[a].event(k)
        r = ev.value if case.write != WriteType.WRITE else None
        w = ev.value if case.write != WriteType.READ else None
        batch.append(Event(infos[a].name, t0 + k * step, r, w, ev.quality))
        tally.events += 1
        tally.raw_bytes += RAW_FIXED_BYTES + value_bytes(case.type, r) + value_bytes(case.type, w)
        tally.element_rows += max(1, case.elements)
        if len(batch) >= per_batch:
            yield batch
            batch = []
    if batch:
        yield batch


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


# ---------------------------------------------------------------------------------- tables


def table_for(backend: Backend, case: Case) -> str:
    if backend.name == "mysql":
        family = "scalar" if case.format == AttrFormat.SCALAR else "array"
        return f"att_{family}_{case.type.suffix}_{case.side}"
    return f"att_{('scalar', 'array', 'image')[case.format]}_{case.type.suffix}"


def rounds(backend: Backend, cases: Sequence[Case]) -> list[list[Case]]:
    """Cases grouped so that no two of a group share a table (each group runs in its own database)."""
    groups: list[list[Case]] = []
    for case in cases:
        table = table_for(backend, case)
        home = next((g for g in groups if all(table_for(backend, c) != table for c in g)), None)
        if home is None:
            groups.append([case])
        else:
            home.append(case)
    return groups


# ------------------------------------------------------------------------ documented minimum

_INNODB_FIXED = {"tinyint": 1, "smallint": 2, "int": 4, "bigint": 8, "float": 4, "double": 8, "datetime": 8}


def _innodb_column_expr(col: Any) -> str:
    name = f"`{col.name}`"
    base = col.type.split("(")[0].split()[0]
    if base in _INNODB_FIXED:
        size = 5 + 3 if base == "datetime" else _INNODB_FIXED[base]  # datetime(6): 5 + 3 fractional bytes
        return f"IF({name} IS NULL, 0, {size})"
    return f"IF({name} IS NULL, 0, LENGTH({name}) + IF(LENGTH({name}) > 127, 2, 1))"


def documented_minimum(backend: Backend, table_def: TableDef, prefix: str) -> tuple[int, float] | None:
    """(rows, average documented-minimum bytes per row) of the rows of attributes named `prefix...`."""
    if backend.name == "mysql":
        return _innodb_minimum(backend, table_def, prefix)
    return _pg_minimum(backend, table_def, prefix)


def _pg_minimum(backend: Any, table_def: TableDef, prefix: str) -> tuple[int, float] | None:
    cols = " + ".join(f'coalesce(pg_column_size(d."{c.name}"), 0)' for c in table_def.columns)
    header = 8 * math.ceil((23 + math.ceil(len(table_def.columns) / 8)) / 8)
    query = (f'SELECT count(*), coalesce(avg({cols}), 0) FROM "{table_def.name}" d WHERE d.att_conf_id IN '
             "(SELECT att_conf_id FROM att_conf WHERE att_name LIKE %s)")
    with backend.connect() as conn:
        rows, avg = conn.execute(query, (prefix + "%",)).fetchone()
    return (int(rows), 4 + header + float(avg)) if rows else None


def _innodb_minimum(backend: Any, table_def: TableDef, prefix: str) -> tuple[int, float] | None:
    nullable = sum(1 for c in table_def.columns if c.nullable)
    fixed = 5 + 6 + 7 + math.ceil(nullable / 8)
    cols = " + ".join(_innodb_column_expr(c) for c in table_def.columns)
    query = (f"SELECT COUNT(*), COALESCE(AVG({cols}), 0) FROM `{table_def.name}` WHERE att_conf_id IN "
             "(SELECT att_conf_id FROM att_conf WHERE att_name LIKE ?)")
    conn = backend.connect(backend.database)
    try:
        cur = conn.cursor()
        cur.execute("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                    (backend.database, table_def.name))
        if str(cur.fetchone()[0]).upper() != "INNODB":
            return None  # MyRocks rows are key-value pairs in SST files: no InnoDB record format
        cur.execute(query, (prefix + "%",))
        rows, avg = cur.fetchone()
    finally:
        conn.close()
    return (int(rows), fixed + float(avg)) if rows else None


# ------------------------------------------------------------------------------ measurement


@dataclass
class CaseResult:
    backend: str
    variant: str
    case: Case
    table: str
    events: int
    rows: int
    raw_bytes: int
    before: TableSize
    after: TableSize
    logs: dict[str, int | None] = field(default_factory=dict)
    min_row_bytes: float | None = None  # documented minimum per stored row (average)

    def delta(self, part: str) -> int:
        return int(getattr(self.after, part)) - int(getattr(self.before, part))

    def per_event(self, part: str) -> float:
        return self.delta(part) / self.events if self.events else math.nan

    def to_dict(self) -> dict[str, Any]:
        ev = self.events or 1
        disk = self.delta("disk_bytes")
        data_per_row = (self.delta("data_bytes")) / self.rows if self.rows else math.nan
        return {
            "backend": self.backend, "variant": self.variant, **{f"case_{k}": v for k, v in self.case.to_dict().items()},
            "table": self.table, "engine": self.after.engine, "parts": self.after.parts,
            "events": self.events, "rows": self.rows, "raw_bytes": self.raw_bytes,
            "before": _size_dict(self.before), "after": _size_dict(self.after),
            "bytes_per_event": disk / ev,
            "data_per_event": self.per_event("data_bytes"), "index_per_event": self.per_event("index_bytes"),
            "toast_per_event": self.per_event("toast_bytes"), "free_per_event": self.per_event("free_bytes"),
            "total_per_event": self.per_event("total_bytes"),
            "raw_per_event": self.raw_bytes / ev,
            "ratio_disk_to_raw": disk / self.raw_bytes if self.raw_bytes else math.nan,
            "overhead_per_event": (disk - self.raw_bytes) / ev,
            "data_per_row": data_per_row,
            "documented_min_row_bytes": self.min_row_bytes,
            "row_overhead_bytes": data_per_row - self.min_row_bytes if self.min_row_bytes is not None else None,
            "log_bytes": dict(self.logs),
            "log_per_event": {k: (v / ev if v is not None else None) for k, v in self.logs.items()},
        }


def _size_dict(size: TableSize) -> dict[str, Any]:
    return asdict(size) | {"disk_bytes": size.disk_bytes}


def _log_delta(before: dict[str, int | None], after: dict[str, int | None]) -> dict[str, int | None]:
    return {k: (after.get(k) - v if v is not None and after.get(k) is not None else None)  # type: ignore[operator]
            for k, v in before.items()}


def measure_case(backend: Backend, variant: str, case: Case, seed: int, loader: Loader,
                 table_defs: dict[str, TableDef]) -> CaseResult:
    """Size of the case's table before and after loading the case's events."""
    table = table_for(backend, case)
    prefix = f"tango://disk:10000/{uuid.uuid4().hex[:8]}"
    infos = case_attributes(case, prefix)
    tally = Tally()
    before = backend.table_sizes([table])[0]
    logs0 = backend.log_positions()
    stored = loader(backend, infos, case_batches(case, infos, seed, start_time([case]), tally))
    after = backend.table_sizes([table])[0]
    logs1 = backend.log_positions()
    minimum = documented_minimum(backend, table_defs[table], prefix)
    rows = tally.element_rows if backend.name == "mysql" and case.format != AttrFormat.SCALAR else stored
    return CaseResult(backend.name, variant, case, table, stored, rows, tally.raw_bytes, before, after,
                      _log_delta(logs0, logs1), minimum[1] if minimum else None)


def storage_unavailable(backend: Backend, storage: str) -> str | None:
    """Why a MariaDB storage variant cannot run on this server, or None when it can."""
    if not storage:
        return None
    conn = backend.connect()  # type: ignore[attr-defined]
    try:
        cur = conn.cursor()
        if storage == "myrocks":
            cur.execute("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")
            row = cur.fetchone()
            if row is None or str(row[0]).upper() not in ("YES", "DEFAULT"):
                cur.execute("SELECT @@plugin_dir")
                plugin = os.path.join(str(cur.fetchone()[0]), "ha_rocksdb.so")
                where = ("the plugin file is installed: start MariaDB with --set mariadb.plugin_load_add=ha_rocksdb"
                         if os.path.exists(plugin) else "Debian package mariadb-plugin-rocksdb is not installed")
                return f"MyRocks: the ROCKSDB engine is not loaded in this server ({where})"
        return None
    finally:
        conn.close()


def measure_round(backend_name: str, endpoint: Any, variant: MeasureVariant, cases: Sequence[Case], seed: int,
                  loader: Loader) -> list[CaseResult]:
    """One fresh database: load and measure each case; PostgreSQL/TimescaleDB again after CLUSTER."""
    backend = get_backend(backend_name, endpoint, f"hdbdisk_{backend_name[:5]}_{uuid.uuid4().hex[:8]}")
    backend.create_schema(variant.schema)
    try:
        tables = [table_for(backend, c) for c in cases]
        if variant.storage:
            backend.alter_data_tables(tables, STORAGE_CLAUSES[variant.storage])  # type: ignore[attr-defined]
        defs = {t.name: t for t in backend.expected_tables(variant.schema)}
        results = [measure_case(backend, variant.name, c, seed, loader, defs) for c in cases]
        if backend.name != "mysql":
            backend.cluster()
            clustered = backend.table_sizes(tables)
            results += [replace(r, variant=f"{variant.name},clustered", after=size, logs={})
                        for r, size in zip(list(results), clustered)]
        return results
    finally:
        backend.drop_schema()


@dataclass
class VariantOutcome:
    backend: str
    variant: str
    results: list[CaseResult] = field(default_factory=list)
    unavailable: str | None = None


def measure_variant(backend_name: str, endpoint: Any, variant_text: str, cases: Sequence[Case], seed: int = 42,
                    loader: Loader = bulk_loader) -> VariantOutcome:
    """Every case of one backend and variant, round by round; an unavailable storage variant is reported."""
    variant = MeasureVariant.parse(backend_name, variant_text)
    if variant.clustered:
        raise ConfigError(f"variant {variant_text!r}: give it without 'clustered'; every PostgreSQL/TimescaleDB "
                          "variant is measured before and after CLUSTER")
    outcome = VariantOutcome(backend_name, variant.name)
    probe = get_backend(backend_name, endpoint, "mysql" if backend_name == "mysql" else "postgres")
    if backend_name == "mysql":
        outcome.unavailable = storage_unavailable(probe, variant.storage)
        if outcome.unavailable:
            return outcome
    for group in rounds(probe, cases):
        try:
            outcome.results += measure_round(backend_name, endpoint, variant, group, seed, loader)
        except SchemaError as exc:
            raise SchemaError(f"{backend_name} {variant.name}: {exc}") from exc
        except Exception as exc:
            if variant.storage and _is_server_error(exc):
                outcome.unavailable = f"{variant.storage}: the server refused it: {str(exc).splitlines()[0]}"
                outcome.results = []
                return outcome
            raise
    return outcome


def _is_server_error(exc: Exception) -> bool:
    return type(exc).__module__.startswith("mariadb")


# ------------------------------------------------------------------------------ array fits


def array_fits(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """bytes/event = a + b * elements per (backend, variant, type, format, write), from >= 2 sizes."""
    from hdbbench.measure import fit_line

    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        if r["case_format"] != "scalar":
            key = (r["backend"], r["variant"], r["case_type"], r["case_format"], r["case_write"])
            groups.setdefault(key, []).append(r)
    fits = []
    for key, items in sorted(groups.items()):
        sizes = sorted({i["case_elements"] for i in items})
        if len(sizes) < 2:
            continue
        fit = fit_line([i["case_elements"] for i in items], [i["bytes_per_event"] for i in items])
        fits.append({"backend": key[0], "variant": key[1], "type": key[2], "format": key[3], "write": key[4],
                     "elements": sizes, "a_bytes": fit.intercept, "b_bytes_per_element": fit.slope, "r2": fit.r2})
    return fits


# ------------------------------------------------------------------------- inventory runs


@dataclass
class InventoryRun:
    """A whole inventory loaded into one database: what `size plan --check` compares against."""

    backend: str
    variant: str
    groups: list[dict[str, Any]]  # label, case, events stored
    before: list[TableSize]
    after: list[TableSize]
    unavailable: str | None = None

    @property
    def measured_bytes(self) -> int:
        return sum(a.disk_bytes - b.disk_bytes for a, b in zip(self.after, self.before))

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "variant": self.variant, "groups": self.groups,
                "tables": [{"before": _size_dict(b), "after": _size_dict(a)} for b, a in zip(self.before, self.after)],
                "measured_bytes": self.measured_bytes, "unavailable": self.unavailable}


def measure_inventory(backend_name: str, endpoint: Any, variant_text: str, groups: Sequence[tuple[str, Case]],
                      seed: int = 42, loader: Loader = bulk_loader) -> InventoryRun:
    """Load every (label, case) of an inventory into one fresh database; sizes of all its tables before/after."""
    variant = MeasureVariant.parse(backend_name, variant_text)
    run = InventoryRun(backend_name, variant.name, [], [], [])
    backend = get_backend(backend_name, endpoint, f"hdbdisk_{backend_name[:5]}_{uuid.uuid4().hex[:8]}")
    if backend_name == "mysql":
        run.unavailable = storage_unavailable(backend, variant.storage)
        if run.unavailable:
            return run
    backend.create_schema(variant.schema)
    try:
        tables = list(dict.fromkeys(table_for(backend, c) for _, c in groups))
        if variant.storage:
            backend.alter_data_tables(tables, STORAGE_CLAUSES[variant.storage])  # type: ignore[attr-defined]
        run.before = backend.table_sizes(tables)
        t0 = start_time([c for _, c in groups])
        for label, case in groups:
            infos = case_attributes(case, f"tango://disk:10000/{uuid.uuid4().hex[:8]}")
            stored = loader(backend, infos, case_batches(case, infos, seed, t0, Tally()))
            run.groups.append({"label": label, "case": case.to_dict(), "events": stored})
        if variant.clustered:
            backend.cluster()
        run.after = backend.table_sizes(tables)
        return run
    finally:
        backend.drop_schema()


# ------------------------------------------------------------------------------ run output

CSV_COLUMNS = (
    "backend", "variant", "case_label", "case_type", "case_format", "case_write", "case_elements", "table", "engine",
    "parts", "events", "rows", "raw_bytes", "bytes_per_event", "data_per_event", "index_per_event", "toast_per_event",
    "free_per_event", "raw_per_event", "ratio_disk_to_raw", "overhead_per_event", "data_per_row",
    "documented_min_row_bytes", "row_overhead_bytes",
)
LOG_NAMES = ("wal", "redo", "binlog")


def csv_row(row: dict[str, Any]) -> list[Any]:
    logs = row.get("log_per_event") or {}
    return [row.get(c) for c in CSV_COLUMNS] + [logs.get(k) for k in LOG_NAMES]


def server_facts(endpoints: Any) -> dict[str, Any]:
    """Versions and the settings that change sizes, of the servers measured."""
    facts: dict[str, Any] = {}
    if endpoints.postgres is not None:
        with endpoints.postgres.connect(autocommit=True) as conn:
            facts["postgres"] = {
                "version": conn.execute("SELECT version()").fetchone()[0],
                "timescaledb": (conn.execute("SELECT default_version FROM pg_available_extensions "
                                             "WHERE name = 'timescaledb'").fetchone() or [None])[0],
                **{k: conn.execute(f"SHOW {k}").fetchone()[0] for k in
                   ("block_size", "full_page_writes", "wal_compression", "wal_level", "default_toast_compression")},
            }
    if endpoints.mariadb is not None:
        conn = endpoints.mariadb.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT VERSION(), @@log_bin, @@binlog_format, @@innodb_page_size, "
                        "@@innodb_compression_algorithm, @@innodb_default_row_format")
            keys = ("version", "log_bin", "binlog_format", "innodb_page_size", "innodb_compression_algorithm",
                    "innodb_default_row_format")
            facts["mariadb"] = dict(zip(keys, (str(v) for v in cur.fetchone())))
            cur.execute("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")
            row = cur.fetchone()
            facts["mariadb"]["rocksdb"] = str(row[0]) if row else "not loaded"
        finally:
            conn.close()
    return facts


# ------------------------------------------------------------------------------------- runs


def variants_for(backends: Sequence[str], given: Sequence[str]) -> dict[str, list[str]]:
    """`--variant pk` applies to every backend; `--variant mysql=pk,myrocks` to one."""
    if not given:
        return {b: list(DEFAULT_VARIANTS[b]) for b in backends}
    chosen: dict[str, list[str]] = {b: [] for b in backends}
    for text in given:
        name, sep, variant = text.partition("=")
        if sep and name not in BACKENDS:
            raise ConfigError(f"--variant {text!r}: unknown backend {name!r} (known: {', '.join(BACKENDS)})")
        for b in ([name] if sep else backends):
            v = variant if sep else text
            if b in chosen and (b == "mysql" or not any(s in v.split(",") for s in STORAGE_CLAUSES)):
                chosen[b].append(v)
    return chosen


def run_measure(endpoints: Any, chosen: dict[str, list[str]], cases: Sequence[Any], seed: int, runs_root: Path,
                name: str, inventory_run: tuple[Any, float, float] | None = None,
                progress: Callable[[str], None] = lambda line: None, into: RunPart | None = None) -> Path:
    """Measure every backend/variant, write results.json + CSVs into a new run directory (or, `into` a
    part of another run, disk.json + disk-*.csv there); return its path.
    `progress` gets one line per variant measured."""
    run = into or RunDirectory.create(runs_root, name)
    try:
        rows, variants, inv_runs = [], [], []
        for backend, names in chosen.items():
            endpoint = endpoints.mariadb if backend == "mysql" else endpoints.postgres
            if endpoint is None:
                variants += [{"backend": backend, "variant": v, "unavailable": "no server in the stack"} for v in names]
                continue
            for v in names:
                progress(f"size: {backend} {v} ...")
                outcome = measure_variant(backend, endpoint, v, cases, seed)
                variants.append({"backend": backend, "variant": outcome.variant, "unavailable": outcome.unavailable})
                rows += [r.to_dict() for r in outcome.results]
                if inventory_run:
                    inv_runs.append(_inventory_run(backend, endpoint, v, inventory_run, seed, progress))
        _write_measure(run, endpoints, chosen, cases, seed, rows, variants, inv_runs, inventory_run)
        run.set_status("completed")
    except BaseException as exc:
        run.set_status("interrupted" if isinstance(exc, KeyboardInterrupt) else "failed", str(exc))
        raise
    return run.path


def _inventory_run(backend: str, endpoint: Any, variant: str, spec: tuple[Any, float, float],
                   seed: int, progress: Callable[[str], None]) -> dict[str, Any]:
    inv, simulated_s, scale = spec
    groups = [(g.label, g.case(simulated_s, scale)) for g in inv.groups]
    results = []
    for v in ([variant, f"{variant},clustered"] if backend != "mysql" else [variant]):
        progress(f"size: {backend} {v} inventory {inv.name} ...")
        results.append(measure_inventory(backend, endpoint, v, groups, seed).to_dict())
    return {"runs": results}


def _write_measure(run: RunDirectory | RunPart, endpoints: Any, chosen: dict[str, list[str]], cases: Sequence[Any],
                   seed: int, rows: list[dict[str, Any]], variants: list[dict[str, Any]], inv_runs: list[dict[str, Any]],
                   inventory_run: tuple[Any, float, float] | None) -> None:
    flat_inv = [r for item in inv_runs for r in item["runs"]]
    scenario = {"variants": chosen, "cases": [c.to_dict() for c in cases], "seed": seed, "loader": "bulk_writer",
                "inventory": inventory_run[0].to_dict() if inventory_run else None,
                "simulated_s": inventory_run[1] if inventory_run else None,
                "scale": inventory_run[2] if inventory_run else None}
    results = {"cases": rows, "fits": array_fits(rows), "variants": variants, "inventory_runs": flat_inv,
               "raw_bytes": "8 (timestamp) + 4 (attribute id) + 1 (quality) + value bytes of each side present"}
    run.write_json("results.json", results_document("disk", scenario, environment_facts(server_facts(endpoints)),
                                                    results))
    log_cols = [f"{k}_per_event" for k in LOG_NAMES]
    run.write_csv("sizes.csv", [*CSV_COLUMNS, *log_cols], (csv_row(r) for r in rows))
    run.write_csv("fits.csv", ["backend", "variant", "type", "format", "write", "elements", "a_bytes",
                               "b_bytes_per_element", "r2"],
                  ([f[k] if k != "elements" else " ".join(map(str, f[k])) for k in
                    ("backend", "variant", "type", "format", "write", "elements", "a_bytes", "b_bytes_per_element", "r2")]
                   for f in results["fits"]))
    run.write_csv("inventory.csv", ["backend", "variant", "measured_bytes", "unavailable"],
                  ([r["backend"], r["variant"], r["measured_bytes"], r["unavailable"]] for r in flat_inv))

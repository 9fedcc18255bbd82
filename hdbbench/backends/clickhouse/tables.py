# SPDX-License-Identifier: Apache-2.0
"""HDB++'s layout on ClickHouse 18.16, as `TableDef` values.

One MergeTree table per Tango type and format family, `att_scalar_<type>` and `att_array_<type>`
(spectra and images; HDB++'s TimescaleDB layout has the same two families and no read/write split),
sorted by (att_conf_id, data_time) and partitioned by month of data_time; the configuration tables
are small tables beside them. Columns:

- `att_conf_id UInt64`: FNV-1a (64 bits, top bit cleared) of the attribute's name, computed by every writer. HDB++'s
  ids come from a sequence in one transaction; ClickHouse has neither, and several subscribers
  register attributes at once, so the id is a function of the name (att_conf is a
  ReplacingMergeTree on it: two writers registering one attribute leave one row after a merge;
  readers take `LIMIT 1 BY att_conf_id`). `att_error_desc_id` likewise, of the message.
- `data_time Int64`: microseconds since the Unix epoch, UTC. 18.16 has no DateTime64 (20.x); a
  `DateTime` (seconds) plus a `UInt32` of microseconds would be two columns to compare and sort by,
  while one integer keeps HDB++'s microsecond time stamp exact, orders events within a second by the
  sort key itself and is bound in a query as one number. Partitions: `toYYYYMM` of it in seconds.
- `value_r`, `value_w`: `Nullable(T)` for scalars (NULL: no value, as HDB++); `Array(T)` for arrays
  (ClickHouse has no NULL array: an event without a value stores `[]`), images flattened row-major
  with `dim_x_*`/`dim_y_*` beside them.
- `quality Int8`, `att_error_desc_id Nullable(UInt64)`.

What it cannot hold: DevEncoded (Tango's (format, bytes) pair: 18.16's String would take the bytes,
but neither HDB++ library stores it and no comparison needs it; `cannot_hold` refuses such devices).
There are no secondary indexes (18.16's data-skipping indexes are experimental), no foreign keys,
no accounts of HDB++'s (users live in the server's users.xml).
"""

from __future__ import annotations

from hdbbench.backends.model import ColumnDef, SchemaVariant, TableDef
from hdbbench.model.hdbtypes import HISTORY_EVENTS, AttrFormat, AttributeInfo, TangoType, WriteType

# The backend's registry name (its class's `name`).
CLICKHOUSE = "clickhouse"

VALUE_TYPES: dict[TangoType, str] = {
    TangoType.DEV_BOOLEAN: "UInt8",
    TangoType.DEV_UCHAR: "UInt8",
    TangoType.DEV_SHORT: "Int16",
    TangoType.DEV_USHORT: "UInt16",
    TangoType.DEV_LONG: "Int32",
    TangoType.DEV_ULONG: "UInt32",
    TangoType.DEV_LONG64: "Int64",
    TangoType.DEV_ULONG64: "UInt64",
    TangoType.DEV_FLOAT: "Float32",
    TangoType.DEV_DOUBLE: "Float64",
    TangoType.DEV_STRING: "String",
    TangoType.DEV_STATE: "UInt8",
    TangoType.DEV_ENUM: "Int16",
}
HELD_TYPES = tuple(VALUE_TYPES)  # every archivable type but DevEncoded
ENCODED_REASON = ("DevEncoded: the what-if layout stores no (format, bytes) pairs (no HDB++ library "
                  "archives DevEncoded either)")

# Monthly partitions of a microsecond time stamp; `interval=<N>d` partitions N-day ranges instead.
MONTHLY = "toYYYYMM(toDateTime(intDiv(data_time, 1000000)))"
US_PER_DAY = 86_400_000_000
# att_history.event: HDB++'s event names as an Enum8, numbered as the PostgreSQL schema numbers them.
HISTORY_ENUM = "Enum8(" + ", ".join(f"'{e}' = {i}" for i, e in enumerate(HISTORY_EVENTS, 1)) + ")"

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


def fnv1a64(text: str) -> int:
    """FNV-1a (64 bits) of the UTF-8 bytes, its top bit cleared: the id of an attribute name or error
    message (the C++ writer computes the same, subscriber/src/clickhouse_writer.cpp). 63 bits, so that
    every id is also a signed 64-bit integer (numpy's int64 columns of `data generate`)."""
    value = _FNV_OFFSET
    for byte in text.encode():
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return value & 0x7FFFFFFFFFFFFFFF


def quote_ident(name: str) -> str:
    """A ClickHouse identifier in backquotes."""
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def quote_string(text: str) -> str:
    """A ClickHouse string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def family(fmt: AttrFormat) -> str:
    return "scalar" if fmt == AttrFormat.SCALAR else "array"


def table_name(tango_type: TangoType, fmt: AttrFormat) -> str:
    return f"att_{family(fmt)}_{tango_type.suffix}"


def table_of(info: AttributeInfo) -> str:
    return table_name(info.type, info.format)


def has_write_side(write_type: WriteType) -> bool:
    return write_type != WriteType.READ


def _c(name: str, type_: str) -> ColumnDef:
    return ColumnDef(name, type_, type_.startswith("Nullable("))


def config_tables() -> list[TableDef]:
    text = ("label", "unit", "standard_unit", "display_unit", "format", "archive_rel_change", "archive_abs_change",
            "archive_period", "description")
    replacing = {"engine": "ReplacingMergeTree"}
    return [
        TableDef("att_conf", (
            _c("att_conf_id", "UInt64"), _c("att_name", "String"), _c("table_name", "String"),
            _c("att_conf_type_id", "UInt8"), _c("att_conf_format_id", "UInt8"), _c("att_conf_write_id", "UInt8"),
            *(_c(n, "String") for n in ("cs_name", "domain", "family", "member", "name")), _c("ttl", "UInt32"),
        ), ("att_conf_id",), comment="Attribute Configuration Table", options=replacing),
        TableDef("att_conf_type", (_c("att_conf_type_id", "UInt8"), _c("type", "String")), ("att_conf_type_id",),
                 comment="Tango types (the Tango type number)"),
        TableDef("att_conf_format", (_c("att_conf_format_id", "UInt8"), _c("format", "String")), ("att_conf_format_id",),
                 comment="Attribute formats"),
        TableDef("att_conf_write", (_c("att_conf_write_id", "UInt8"), _c("write", "String")), ("att_conf_write_id",),
                 comment="Attribute write types"),
        TableDef("att_history", (_c("att_conf_id", "UInt64"), _c("event_time", "Int64"), _c("event", HISTORY_ENUM)),
                 ("att_conf_id", "event_time"), comment="Attribute Configuration Events History Table"),
        TableDef("att_parameter", (
            _c("att_conf_id", "UInt64"), _c("recv_time", "Int64"), *(_c(n, "String") for n in text),
            _c("enum_labels", "Array(String)"),
        ), ("att_conf_id", "recv_time"), comment="Attribute configuration parameters"),
        TableDef("att_error_desc", (_c("att_error_desc_id", "UInt64"), _c("error_desc", "String")),
                 ("att_error_desc_id",), comment="Error Description Table", options=replacing),
    ]


def data_table(tango_type: TangoType, fmt: AttrFormat, variant: SchemaVariant) -> TableDef:
    vtype = VALUE_TYPES[tango_type]
    cols = [_c("att_conf_id", "UInt64"), _c("data_time", "Int64")]
    if fmt == AttrFormat.SCALAR:
        cols += [_c("value_r", f"Nullable({vtype})"), _c("value_w", f"Nullable({vtype})")]
    else:
        cols += [_c("value_r", f"Array({vtype})"), _c("value_w", f"Array({vtype})"),
                 *(_c(n, "UInt32") for n in ("dim_x_r", "dim_y_r", "dim_x_w", "dim_y_w"))]
    cols += [_c("quality", "Int8"), _c("att_error_desc_id", "Nullable(UInt64)")]
    partition = (f"intDiv(data_time, {variant.interval_days * US_PER_DAY})" if variant.interval_days else MONTHLY)
    return TableDef(table_name(tango_type, fmt), tuple(cols), ("att_conf_id", "data_time"),
                    comment=f"{family(fmt).capitalize()} {tango_type.suffix[3:].capitalize()} Values Table",
                    options={"engine": "MergeTree", "partition_by": partition})


def data_tables(variant: SchemaVariant) -> list[TableDef]:
    return [data_table(t, fmt, variant) for t in HELD_TYPES for fmt in (AttrFormat.SCALAR, AttrFormat.SPECTRUM)]


def all_tables(variant: SchemaVariant) -> list[TableDef]:
    return config_tables() + data_tables(variant)


def lookup_rows() -> dict[str, list[tuple[int, str]]]:
    """The rows of the small lookup tables (Tango's numbers and names)."""
    return {
        "att_conf_type": [(int(t), t.name) for t in TangoType],
        "att_conf_format": [(int(f), f.name) for f in AttrFormat],
        "att_conf_write": [(int(w), w.name) for w in WriteType],
    }

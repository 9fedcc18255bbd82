# SPDX-License-Identifier: Apache-2.0
"""The layout of HDB++ events in InfluxDB 1.6: measurements, tags, fields, ids, what it cannot hold.

One measurement per Tango type and format, named as HDB++'s tables (``att_scalar_devdouble``,
``att_array_devlong``: spectrum and image share the array measurement); the write type does not
split them (the attribute's write type is in ``att_conf``). A point is one event:

    tag    att_conf_id   the attribute (a series per attribute and measurement)
    time   the source time (data_time), written with precision=u
    field  quality       integer, always present (a point needs one field)
    field  value_r, value_w   when the side has a value: boolean, integer (int64), float or string;
                              an array is a string holding its JSON text (see below)
    field  value_r_special, value_w_special   a float that is NaN, Infinity or -Infinity, as that
                              word (InfluxDB's line protocol has no literal for them), instead of value_*
    field  error_desc    string, on error events only

Arrays (spectrum and image) are one string field holding the value as JSON (a spectrum a list, an
image a list of rows, NaN/Infinity as JavaScript's words), rather than one field per element (a TSM
column per element and attribute: a 10,000-element spectrum would be 10,000 series keys) or one point
per element (an `idx` tag: attributes x elements series, and a timestamp per element). The string
costs: InfluxQL can neither aggregate nor select elements (a reader parses the JSON), and TSM
compresses it with Snappy as text, not with the float/integer encodings of scalar columns.

Configuration lives in the same database, in a retention policy of its own (``conf``, infinite), so
that the data retention policy's shards hold only events (their write counters and disk bytes are the
data's): ``att_conf`` (tag att_name; fields att_conf_id, data_type, tango_type, format, write_type,
ttl) at time 0 (one point per attribute: registering again overwrites it), ``att_history`` (tag
att_conf_id; field event) and ``att_parameter`` (tag att_conf_id; the configuration as fields).

The att_conf_id is computed, not allocated: the FNV-1a 64-bit hash of the attribute's name, kept to
53 bits (exact in any JSON reader), so every writer process (ours in C++, the Python bulk writer)
gives an attribute the same id without a sequence the server does not have. Two names of one
database collide with probability about n²/2⁵⁴ (5·10⁻⁵ for a million attributes); the bulk writer
refuses a collision it finds in att_conf.

What InfluxDB 1.6 cannot hold of HDB++ (`cannot_hold`): DevULong64 (no unsigned integer without a
build flag Debian's package lacks; int64 cannot hold 2⁶³..2⁶⁴−1) and DevEncoded (bytes: a string field
holds text only). Times are nanoseconds since 1970 in an int64: 1677-09-21 to 2262-04-11.
"""

from __future__ import annotations

from hdbbench.backends.model import ColumnDef, TableDef
from hdbbench.model.hdbtypes import AttrFormat, TangoType

INFLUXDB = "influxdb"
CONF_RP = "conf"              # retention policy of the configuration measurements
DATA_RP = "autogen"           # the database's default retention policy: the events
CONF_MEASUREMENTS = ("att_conf", "att_history", "att_parameter")
DATA_PATTERN = "/^att_(scalar|array)_dev/"  # every data measurement, in a FROM clause
WRITER_USER = "hdb_event_sub"    # READ and WRITE on the database (our subscriber's writer)
READER_USER = "hdb_data_reporter"  # READ on the database (extraction)
SHARD_DAYS_DEFAULT = 7         # InfluxDB's shard group duration of an infinite retention policy
SPECIAL_FLOATS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}

CANNOT_HOLD = {
    TangoType.DEV_ULONG64: "InfluxDB 1.6 has no unsigned 64-bit integer without the `uint` build flag",
    TangoType.DEV_ENCODED: "bytes: InfluxDB 1.6 string fields hold text only",
}

# FNV-1a 64-bit (also in subscriber/src/influxdb_writer.cpp: the two must agree).
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
ID_BITS = 53


def att_conf_id(att_name: str) -> int:
    """The attribute's id: FNV-1a 64 of its UTF-8 name, kept to 53 bits, never 0."""
    h = _FNV_OFFSET
    for byte in att_name.encode():
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return (h & ((1 << ID_BITS) - 1)) or 1


def measurement(tango_type: TangoType, fmt: AttrFormat) -> str:
    kind = "scalar" if fmt == AttrFormat.SCALAR else "array"
    return f"att_{kind}_{tango_type.suffix}"


def quote_ident(name: str) -> str:
    """An InfluxQL identifier in double quotes."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_string(text: str) -> str:
    """An InfluxQL string literal in single quotes."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _field_type(tango_type: TangoType, fmt: AttrFormat) -> str:
    if fmt != AttrFormat.SCALAR or tango_type == TangoType.DEV_STRING:
        return "string"
    if tango_type == TangoType.DEV_BOOLEAN:
        return "boolean"
    if tango_type in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE):
        return "float"
    return "integer"


def data_measurements() -> list[TableDef]:
    """Every data measurement as a TableDef (the columns a SELECT * gives: tag and fields)."""
    out = []
    for tango_type in TangoType:
        if tango_type in CANNOT_HOLD:
            continue
        for fmt in (AttrFormat.SCALAR, AttrFormat.SPECTRUM):
            value = _field_type(tango_type, fmt)
            columns = (ColumnDef("time", "timestamp", False), ColumnDef("att_conf_id", "tag", False),
                       ColumnDef("quality", "integer", False), ColumnDef("value_r", value),
                       ColumnDef("value_w", value), ColumnDef("error_desc", "string"))
            if value == "float":
                columns += (ColumnDef("value_r_special", "string"), ColumnDef("value_w_special", "string"))
            out.append(TableDef(measurement(tango_type, fmt), columns, ("att_conf_id", "time")))
    return out

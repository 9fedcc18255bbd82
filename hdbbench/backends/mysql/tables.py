# SPDX-License-Identifier: Apache-2.0
"""The libhdbpp-mysql table model as `TableDef` values: column types as MariaDB spells them, the
`att_<scalar|array>_<type>_<ro|rw>` data tables, partitions, users.

One table per type, format family and write side: READ attributes go to `_ro`, all other write
types to `_rw`; SPECTRUM and IMAGE share the `array` tables. Arrays use the classic HDB++ layout,
one row per element: `idx` (row-major for images), `dim_x_*`, `dim_y_*` (0 for spectra), PRIMARY
KEY (att_conf_id, data_time, idx). We chose it over the JSON variant because the server then
checks every element's type and range, the value columns are the same as the scalar tables', and
readers written for the classic layout keep working.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from hdbbench.backends.model import ColumnDef, IndexDef, SchemaVariant, TableDef
from hdbbench.model.hdbtypes import AttrFormat, TangoType, WriteType

# The backend's registry name (its class's `name`), here so that the reader of a live archive
# (inventory.py) names it without importing the class.
MYSQL = "mysql"

VALUE_TYPES: dict[TangoType, str] = {
    TangoType.DEV_BOOLEAN: "tinyint(1) unsigned",
    TangoType.DEV_UCHAR: "tinyint(3) unsigned",
    TangoType.DEV_SHORT: "smallint(6)",
    TangoType.DEV_USHORT: "smallint(5) unsigned",
    TangoType.DEV_LONG: "int(11)",
    TangoType.DEV_ULONG: "int(10) unsigned",
    TangoType.DEV_LONG64: "bigint(20)",
    TangoType.DEV_ULONG64: "bigint(20) unsigned",
    TangoType.DEV_FLOAT: "float",
    TangoType.DEV_DOUBLE: "double",
    # VARCHAR(16384) in HDB++ only fits the 65,535-byte row limit in a 1-byte charset; we store UTF-8.
    TangoType.DEV_STRING: "mediumtext",
    TangoType.DEV_STATE: "tinyint(3) unsigned",
    TangoType.DEV_ENCODED: "blob",
    TangoType.DEV_ENUM: "smallint(6)",
}
# The order of att_conf_data_type rows in libhdbpp-mysql (its ids are what readers see).
TYPE_ORDER = (
    TangoType.DEV_BOOLEAN, TangoType.DEV_UCHAR, TangoType.DEV_SHORT, TangoType.DEV_USHORT, TangoType.DEV_LONG,
    TangoType.DEV_ULONG, TangoType.DEV_LONG64, TangoType.DEV_ULONG64, TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE,
    TangoType.DEV_STRING, TangoType.DEV_STATE, TangoType.DEV_ENCODED, TangoType.DEV_ENUM,
)
# libhdbpp-mysql's six events first (same ids), then the two the PostgreSQL schema also has.
HISTORY_EVENTS_MYSQL = ("add", "remove", "start", "stop", "crash", "pause", "insert_param", "update_ttl")
ERROR_DESC_MAX = 255  # att_error_desc.error_desc VARCHAR(255): longer messages are truncated
ENCODED_FORMAT_TYPE = "varchar(255)"
RW_USER, RO_USER = "hdbpprw", "hdbppro"
PARTITIONS_EACH_SIDE = 4
BYTES_PER_PACKET = 4 * 1024 * 1024  # string/blob rows per executemany, by estimated size
ROWS_PER_PACKET = 50_000  # fixed-size rows per executemany (~100 B each on the wire)

UINT = "int(10) unsigned"
DT6 = "datetime(6)"


def quote_ident(name: str) -> str:
    """A MariaDB identifier in backticks (embedded backticks doubled)."""
    return "`" + name.replace("`", "``") + "`"


def data_type_name(tango_type: TangoType, fmt: AttrFormat, write_type: WriteType) -> str:
    """`scalar_devdouble_ro` etc.: the att_conf_data_type row and the table suffix."""
    family = "scalar" if fmt == AttrFormat.SCALAR else "array"
    side = "ro" if write_type == WriteType.READ else "rw"
    return f"{family}_{tango_type.suffix}_{side}"


def _c(name: str, type_: str, nullable: bool = True, default: str | None = None, ddl: str | None = None) -> ColumnDef:
    return ColumnDef(name, type_, nullable, default, ddl)


def config_tables() -> list[TableDef]:
    text = {"nullable": False, "default": "''"}
    param_cols = [
        _c("label", "varchar(255)", **text),
        _c("unit", "varchar(64)", **text),
        _c("standard_unit", "varchar(64)", False, "'1'"),
        *(_c(n, "varchar(64)", **text) for n in ("display_unit", "format", "archive_rel_change", "archive_abs_change", "archive_period")),
        _c("description", "varchar(1024)", **text),
        _c("enum_labels", "longtext", False, "'[]'", ddl="JSON"),
    ]
    return [
        TableDef(
            "att_conf",
            (
                _c("att_conf_id", UINT, False, ddl=f"{UINT} AUTO_INCREMENT"),
                _c("att_name", "varchar(255)", False),
                _c("att_conf_data_type_id", UINT, False),
                _c("att_ttl", UINT, True, "NULL"),
                *(_c(n, "varchar(255)", **text) for n in ("facility", "domain", "family", "member", "name")),
            ),
            ("att_conf_id",),
            (IndexDef("att_name", "att_name", unique=True), IndexDef("att_conf_data_type_id", "att_conf_data_type_id")),
            comment="Attribute Configuration Table",
        ),
        TableDef(
            "att_conf_data_type",
            (
                _c("att_conf_data_type_id", UINT, False, ddl=f"{UINT} AUTO_INCREMENT"),
                _c("data_type", "varchar(255)", False),
                _c("tango_data_type", "tinyint(1)", False),
            ),
            ("att_conf_data_type_id",),
            comment="Attribute types description",
        ),
        TableDef(
            "att_history",
            (_c("att_conf_id", UINT, False), _c("time", DT6, False), _c("att_history_event_id", UINT, False)),
            ("att_conf_id", "time"),
            (IndexDef("att_history_event_id", "att_history_event_id"),),
            comment="Attribute Configuration Events History Table",
        ),
        TableDef(
            "att_history_event",
            (_c("att_history_event_id", UINT, False, ddl=f"{UINT} AUTO_INCREMENT"), _c("event", "varchar(255)", False)),
            ("att_history_event_id",),
            comment="Attribute history events description",
        ),
        TableDef(
            "att_parameter",
            (_c("att_conf_id", UINT, False), _c("recv_time", DT6, False), *param_cols),
            ("att_conf_id", "recv_time"),
            comment="Attribute configuration parameters",
        ),
        TableDef(
            "att_error_desc",
            (
                _c("att_error_desc_id", UINT, False, ddl=f"{UINT} AUTO_INCREMENT"),
                _c("error_desc", f"varchar({ERROR_DESC_MAX})", False),
            ),
            ("att_error_desc_id",),
            (IndexDef("error_desc", "error_desc", unique=True),),
            comment="Error Description Table",
        ),
    ]


def data_table(tango_type: TangoType, fmt: AttrFormat, write_type: WriteType, variant: SchemaVariant) -> TableDef:
    kind = data_type_name(tango_type, fmt, write_type)
    name = f"att_{kind}"
    vtype = VALUE_TYPES[tango_type]
    rw = write_type != WriteType.READ
    cols = [_c("att_conf_id", UINT, False), _c("data_time", DT6, False), _c("recv_time", DT6, False)]
    if fmt == AttrFormat.SCALAR:
        cols += [_c("value_r", vtype, True, "NULL")]
        cols += [_c("value_w", vtype, True, "NULL")] if rw else []
        pk: tuple[str, ...] = ("att_conf_id", "data_time")
    else:
        cols += [_c("idx", UINT, False), _c("dim_x_r", UINT, False), _c("dim_y_r", UINT, False, "0"), _c("value_r", vtype, True, "NULL")]
        if rw:
            cols += [_c("dim_x_w", UINT, False), _c("dim_y_w", UINT, False, "0"), _c("value_w", vtype, True, "NULL")]
        pk = ("att_conf_id", "data_time", "idx")
    cols += [_c("quality", "tinyint(1)", True, "NULL"), _c("att_error_desc_id", UINT, True, "NULL")]
    if tango_type == TangoType.DEV_ENCODED:
        # Tango's DevEncoded format string, which HDB++ never stored (it never wrote DevEncoded).
        cols += [_c("format_r", ENCODED_FORMAT_TYPE, True, "NULL")]
        cols += [_c("format_w", ENCODED_FORMAT_TYPE, True, "NULL")] if rw else []
    indexes: tuple[IndexDef, ...] = ()
    if variant.indexes == "pk+2":
        indexes = (IndexDef(f"{name}_att_conf_id_idx", "att_conf_id"), IndexDef(f"{name}_att_conf_id_data_time_idx", "att_conf_id, data_time DESC"))
    side = "ReadOnly" if not rw else "ReadWrite"
    options = {"partitions": partition_bounds(name, variant)} if variant.partitioned else {}
    return TableDef(
        name,
        tuple(cols),
        pk,
        indexes,
        comment=f"{'Scalar' if fmt == AttrFormat.SCALAR else 'Array'} {tango_type.suffix[3:].capitalize()} {side} Values Table",
        options=options,
    )


def all_tables(variant: SchemaVariant) -> list[TableDef]:
    tables = config_tables()
    for t in TYPE_ORDER:
        for fmt in (AttrFormat.SCALAR, AttrFormat.SPECTRUM):
            tables += [data_table(t, fmt, w, variant) for w in (WriteType.READ, WriteType.READ_WRITE)]
    return tables


def partition_bounds(table: str, variant: SchemaVariant, today: date | None = None) -> list[tuple[str, date]]:
    """(partition name, exclusive upper bound) pairs; a `p000` below and a `future` MAXVALUE one are added.

    HDB++ default: yearly, bimonthly for the scalar devdouble tables, from two years back to next year;
    `interval=<N>d`: N-day ranges aligned on the Unix epoch, four on each side of today.
    """
    today = today or datetime.now(timezone.utc).date()
    if variant.interval_days:
        days = variant.interval_days
        epoch = date(1970, 1, 1)
        first = epoch + timedelta(days=((today - epoch).days // days - PARTITIONS_EACH_SIDE) * days)
        starts = [first + timedelta(days=k * days) for k in range(2 * PARTITIONS_EACH_SIDE + 2)]
    elif table.startswith("att_scalar_devdouble_"):
        starts = [date(y, m, 1) for y in range(today.year - 1, today.year + 2) for m in range(1, 13, 2)] + [date(today.year + 2, 1, 1)]
    else:
        starts = [date(y, 1, 1) for y in range(today.year - 2, today.year + 3)]
    return [(f"p{lo:%Y%m%d}", hi) for lo, hi in zip(starts, starts[1:])]

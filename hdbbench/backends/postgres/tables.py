# SPDX-License-Identifier: Apache-2.0
"""The HDB++ PostgreSQL/TimescaleDB table model as `TableDef` values (hdbpp-timescale-project
`hdb_schema.sql` + image tables).

`timescale=True` turns data tables and att_parameter into hypertables (chunk interval 28 days, 14
for att_scalar_devdouble); `timescale=False` keeps plain tables or, with the `partitioned` variant,
native range partitions on data_time of the same width.
"""

from __future__ import annotations

from typing import Any

from hdbbench.backends.model import ColumnDef, ForeignKeyDef, IndexDef, SchemaVariant, TableDef
from hdbbench.model.hdbtypes import AttrFormat, TangoType

# The registry names of the family's two backends (their classes' `name`), here so that the reader of a
# live archive (inventory.py) tells which one a database is without importing the classes.
POSTGRESQL, TIMESCALEDB = "postgresql", "timescaledb"

# Tango type -> (column type as the catalog spells it, binary COPY type of the value).
VALUE_TYPES: dict[TangoType, tuple[str, str]] = {
    TangoType.DEV_BOOLEAN: ("boolean", "bool"),
    TangoType.DEV_UCHAR: ("uchar", "numeric"),
    TangoType.DEV_SHORT: ("smallint", "int2"),
    TangoType.DEV_USHORT: ("ushort", "numeric"),
    TangoType.DEV_LONG: ("integer", "int4"),
    TangoType.DEV_ULONG: ("ulong", "numeric"),
    TangoType.DEV_LONG64: ("bigint", "int8"),
    TangoType.DEV_ULONG64: ("ulong64", "numeric"),
    TangoType.DEV_FLOAT: ("real", "float4"),
    TangoType.DEV_DOUBLE: ("double precision", "float8"),
    TangoType.DEV_STRING: ("text", "text"),
    TangoType.DEV_STATE: ("integer", "int4"),
    TangoType.DEV_ENCODED: ("bytea", "bytea"),
    TangoType.DEV_ENUM: ("smallint", "int2"),
}

# Unsigned domains: name -> (base type, max value). Catalog spells the base numeric(p,0).
DOMAINS: dict[str, tuple[str, int]] = {
    "uchar": ("numeric(3,0)", 255),
    "ushort": ("numeric(5,0)", 65535),
    "ulong": ("numeric(10,0)", 4294967295),
    "ulong64": ("numeric(20,0)", 18446744073709551615),
}

KINDS = ("scalar", "array", "image")  # indexed by AttrFormat
DEFAULT_CHUNK_DAYS = 28
DEVDOUBLE_CHUNK_DAYS = 14
PARTITIONS_EACH_SIDE = 4  # native partitions created before and after today (plus a DEFAULT one)

READONLY_ROLE, READWRITE_ROLE = "readonly", "readwrite"
USERS = {"hdb_cfg_man": READWRITE_ROLE, "hdb_event_sub": READWRITE_ROLE, "hdb_data_reporter": READONLY_ROLE}
WRITER_USER, READER_USER = "hdb_event_sub", "hdb_data_reporter"  # hdbbench.backends.accounts
ROLES = (READONLY_ROLE, READWRITE_ROLE, *USERS)


def data_table_name(tango_type: TangoType, fmt: AttrFormat) -> str:
    return f"att_{KINDS[fmt]}_{tango_type.suffix}"


def chunk_days(table: str, variant: SchemaVariant) -> int:
    if variant.interval_days:
        return variant.interval_days
    return DEVDOUBLE_CHUNK_DAYS if table == "att_scalar_devdouble" else DEFAULT_CHUNK_DAYS


def _col(name: str, type_: str, nullable: bool = True, default: str | None = None, ddl: str | None = None) -> ColumnDef:
    return ColumnDef(name, type_, nullable, default, ddl)


def _serial(name: str) -> ColumnDef:
    return ColumnDef(name, "integer", False, None, "serial")


def _unique(table: str, column: str) -> IndexDef:
    return IndexDef(f"{table}_{column}_key", column, unique=True)


def _lookup_table(table: str, id_col: str, text_col: str, num_col: str, comment: str) -> TableDef:
    return TableDef(
        table,
        (_serial(id_col), _col(text_col, "text", False), _col(num_col, "smallint", False)),
        (id_col,),
        (_unique(table, text_col), _unique(table, num_col)),
        comment=comment,
    )


def config_tables(timescale: bool) -> list[TableDef]:
    """att_conf* lookup and configuration tables, att_history*, att_parameter, att_error_desc."""
    text_nn = {"nullable": False, "default": "''"}
    conf_fk = ForeignKeyDef("att_conf_id", "att_conf", "att_conf_id")
    tables = [
        _lookup_table("att_conf_type", "att_conf_type_id", "type", "type_num", "Attribute data type"),
        _lookup_table("att_conf_format", "att_conf_format_id", "format", "format_num", "Attribute format type"),
        _lookup_table("att_conf_write", "att_conf_write_id", "write", "write_num", "Attribute write type"),
        TableDef(
            "att_conf",
            (
                _serial("att_conf_id"),
                _col("att_name", "text", False),
                _col("att_conf_type_id", "smallint", False),
                _col("att_conf_format_id", "smallint", False),
                _col("att_conf_write_id", "smallint", False),
                _col("table_name", "text", False),
                *(_col(c, "text", **text_nn) for c in ("cs_name", "domain", "family", "member", "name")),
                _col("ttl", "integer"),
                _col("hide", "boolean", default="false"),
            ),
            ("att_conf_id",),
            (
                _unique("att_conf", "att_name"),
                IndexDef("att_conf_att_conf_id_idx", "att_conf_id"),
                IndexDef("att_conf_att_conf_type_id_idx", "att_conf_type_id"),
            ),
            (
                ForeignKeyDef("att_conf_type_id", "att_conf_type", "att_conf_type_id"),
                ForeignKeyDef("att_conf_format_id", "att_conf_format", "att_conf_format_id"),
                ForeignKeyDef("att_conf_write_id", "att_conf_write", "att_conf_write_id"),
            ),
            comment="Attribute Configuration Table",
        ),
        TableDef(
            "att_history_event",
            (_serial("att_history_event_id"), _col("event", "text", False)),
            ("att_history_event_id",),
            (IndexDef("att_history_att_history_event_id_idx", "att_history_event_id"),),
            comment="Attribute history events description",
        ),
        TableDef(
            "att_history",
            (
                _col("att_conf_id", "integer", False),
                _col("att_history_event_id", "integer", False),
                _col("event_time", "timestamp with time zone", False),
                _col("details", "json"),
            ),
            ("att_conf_id", "event_time"),
            (IndexDef("att_history_att_conf_id_inx", "att_conf_id"),),
            (conf_fk, ForeignKeyDef("att_history_event_id", "att_history_event", "att_history_event_id")),
            comment="Attribute Configuration Events History Table",
        ),
        TableDef(
            "att_parameter",
            (
                _col("att_conf_id", "integer", False),
                _col("recv_time", "timestamp with time zone", False),
                *(
                    _col(c, "text", **text_nn)
                    for c in (
                        "label", "unit", "standard_unit", "display_unit", "format",
                        "archive_rel_change", "archive_abs_change", "archive_period", "description",
                    )
                ),
                _col("details", "json"),
                _col("enum_labels", "text[]", False, "'{}'::text[]"),
            ),
            (),
            (
                IndexDef("att_parameter_recv_time_idx", "recv_time"),
                IndexDef("att_parameter_att_conf_id_idx", "att_conf_id"),
            ),
            (conf_fk,),
            comment="Attribute configuration parameters",
            options={"hypertable": ("recv_time", DEFAULT_CHUNK_DAYS)} if timescale else {},
        ),
        TableDef(
            "att_error_desc",
            (_serial("att_error_desc_id"), _col("error_desc", "text", False)),
            ("att_error_desc_id",),
            (_unique("att_error_desc", "error_desc"), IndexDef("att_error_desc_att_error_desc_id_idx", "att_error_desc_id")),
            comment="Error Description Table",
        ),
    ]
    return tables


def data_table(tango_type: TangoType, fmt: AttrFormat, variant: SchemaVariant, timescale: bool) -> TableDef:
    name = data_table_name(tango_type, fmt)
    base = VALUE_TYPES[tango_type][0]
    vtype = base if fmt == AttrFormat.SCALAR else base + "[]"
    ltype = "text" if fmt == AttrFormat.SCALAR else "text[]"
    if tango_type == TangoType.DEV_ENUM:
        values = (_col("value_r_label", ltype), _col("value_r", vtype), _col("value_w_label", ltype), _col("value_w", vtype))
    else:
        values = (_col("value_r", vtype), _col("value_w", vtype))
    indexes: tuple[IndexDef, ...] = ()
    if variant.indexes == "pk+2":
        indexes = (
            IndexDef(f"{name}_att_conf_id_idx", "att_conf_id"),
            IndexDef(f"{name}_att_conf_id_data_time_idx", "att_conf_id, data_time DESC"),
        )
    days = chunk_days(name, variant)
    options: dict[str, Any] = {}
    if timescale:
        options["hypertable"] = ("data_time", days)
    elif variant.partitioned:
        options["partition_days"] = days
    return TableDef(
        name,
        (
            _col("att_conf_id", "integer", False),
            _col("data_time", "timestamp with time zone", False),
            *values,
            _col("quality", "smallint"),
            _col("att_error_desc_id", "integer"),
            _col("details", "json"),
        ),
        ("att_conf_id", "data_time"),
        indexes,
        (
            ForeignKeyDef("att_conf_id", "att_conf", "att_conf_id"),
            ForeignKeyDef("att_error_desc_id", "att_error_desc", "att_error_desc_id"),
        ) if variant.foreign_keys else (),
        comment=f"{KINDS[fmt].capitalize()} {tango_type.suffix[3:].capitalize()} Values Table",
        options=options,
    )


def all_tables(variant: SchemaVariant, timescale: bool) -> list[TableDef]:
    tables = config_tables(timescale)
    for fmt in AttrFormat:
        tables += [data_table(t, fmt, variant, timescale) for t in TangoType]
    return tables

def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'

# SPDX-License-Identifier: Apache-2.0
"""What PostgreSQL and TimescaleDB share: the HDB++ table model, DDL, verify, clustering and COPY writer.

The HDB++ TimescaleDB layout (hdbpp-timescale-project `hdb_schema.sql` + image tables) is described
here once as `TableDef` values. `timescale=True` turns data tables and att_parameter into hypertables
(chunk interval 28 days, 14 for att_scalar_devdouble); `timescale=False` keeps plain tables or, with
the `partitioned` variant, native range partitions on data_time of the same width.

Rows are written with binary COPY (psycopg 3), one COPY per table per batch, in one transaction.
devenum labels are filled by the schema's BEFORE INSERT trigger from the latest
att_parameter.enum_labels, as in HDB++, so the writer never sends them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import sql

from hdbbench.backends.base import (
    Backend,
    BulkWriter,
    ColumnDef,
    ForeignKeyDef,
    IndexDef,
    SchemaVariant,
    TableDef,
    TableSize,
    compare_tables,
)
from hdbbench.errors import SchemaError
from hdbbench.hdbtypes import (
    HISTORY_EVENTS,
    AttParameter,
    AttrFormat,
    AttributeInfo,
    Encoded,
    Event,
    TangoType,
    WriteType,
    as_encoded,
    as_plain,
    split_att_name,
)

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
USER_PASSWORD = "hdbpp"  # testbed servers listen on loopback only
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


# ----------------------------------------------------------------------------------------- DDL

_ENUM_TRIGGER_SQL = """
-- devenum labels, as HDB++ does: looked up in the latest att_parameter.enum_labels of the attribute.
-- Unlike the published array trigger, images keep their 2-D shape and empty arrays give '{}'.
CREATE OR REPLACE FUNCTION hdb_enum_labels(att integer) RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT enum_labels FROM att_parameter WHERE att_conf_id = att ORDER BY recv_time DESC LIMIT 1
$$;

CREATE OR REPLACE FUNCTION hdb_label_array(labels text[], v smallint[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN v IS NULL THEN NULL
        WHEN array_ndims(v) = 2 THEN (
            SELECT array_agg(ARRAY(SELECT labels[v[i][j] + 1] FROM generate_subscripts(v, 2) AS j ORDER BY j) ORDER BY i)
            FROM generate_subscripts(v, 1) AS i)
        ELSE coalesce((SELECT array_agg(labels[x + 1] ORDER BY n) FROM unnest(v) WITH ORDINALITY AS u(x, n)), '{}')
    END
$$;

CREATE OR REPLACE FUNCTION set_enum_label() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE labels text[] := hdb_enum_labels(NEW.att_conf_id);
BEGIN
    NEW.value_r_label := labels[NEW.value_r + 1];
    NEW.value_w_label := labels[NEW.value_w + 1];
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION set_enum_label_array() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE labels text[] := hdb_enum_labels(NEW.att_conf_id);
BEGIN
    NEW.value_r_label := hdb_label_array(labels, NEW.value_r);
    NEW.value_w_label := hdb_label_array(labels, NEW.value_w);
    RETURN NEW;
END $$;

CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_scalar_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label();
CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_array_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label_array();
CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_image_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label_array();
"""

ENUM_TRIGGER_TABLES = ("att_scalar_devenum", "att_array_devenum", "att_image_devenum")


def _render_table(t: TableDef) -> str:
    lines = []
    for c in t.columns:
        line = f"    {c.name} {c.ddl or c.type}"
        if not c.nullable:
            line += " NOT NULL"
        if c.default is not None:
            line += f" DEFAULT {c.default}"
        lines.append(line)
    if t.primary_key:
        lines.append(f"    PRIMARY KEY ({', '.join(t.primary_key)})")
    lines += [f"    UNIQUE ({i.columns})" for i in t.indexes if i.unique]
    lines += [f"    FOREIGN KEY ({f.columns}) REFERENCES {f.ref_table} ({f.ref_columns})" for f in t.foreign_keys]
    partition = " PARTITION BY RANGE (data_time)" if "partition_days" in t.options else ""
    out = [f"CREATE TABLE {t.name} (\n" + ",\n".join(lines) + f"\n){partition};"]
    if t.comment:
        out.append(f"COMMENT ON TABLE {t.name} IS '{t.comment}';")
    out += [f"CREATE INDEX {i.name} ON {t.name} ({i.columns});" for i in t.indexes if not i.unique]
    if "hypertable" in t.options:
        col, days = t.options["hypertable"]
        out.append(
            f"SELECT create_hypertable('{t.name}', '{col}', chunk_time_interval => interval '{days} days', "
            "create_default_indexes => false);"
        )
    if "partition_days" in t.options:
        out += _render_partitions(t.name, t.options["partition_days"])
    return "\n".join(out)


def partition_bounds(days: int, today: date | None = None) -> list[tuple[date, date]]:
    """Ranges of `days` days aligned on the Unix epoch, PARTITIONS_EACH_SIDE before and after today."""
    today = today or datetime.now(timezone.utc).date()
    epoch = date(1970, 1, 1)
    start = epoch + timedelta(days=((today - epoch).days // days - PARTITIONS_EACH_SIDE) * days)
    return [(start + timedelta(days=k * days), start + timedelta(days=(k + 1) * days)) for k in range(2 * PARTITIONS_EACH_SIDE + 1)]


def _render_partitions(table: str, days: int) -> list[str]:
    out = [
        f"CREATE TABLE {table}_p{lo:%Y%m%d} PARTITION OF {table} FOR VALUES FROM ('{lo} 00:00:00+00') TO ('{hi} 00:00:00+00');"
        for lo, hi in partition_bounds(days)
    ]
    out.append(f"CREATE TABLE {table}_default PARTITION OF {table} DEFAULT;")
    return out


def render_schema(tables: list[TableDef], timescale: bool) -> str:
    parts = ["-- HDB++ schema rendered by hdbbench (hdbbench schema sql); see schemas/README.md"]
    if timescale:
        parts.append("CREATE EXTENSION IF NOT EXISTS timescaledb;")
    for name, (base, top) in DOMAINS.items():
        parts.append(f"CREATE DOMAIN {name} AS {base} CHECK (VALUE >= 0 AND VALUE <= {top});")
    parts += [_render_table(t) for t in tables]
    parts.append(_render_lookup_rows())
    parts.append(_ENUM_TRIGGER_SQL.strip())
    return "\n\n".join(parts) + "\n"


def _render_lookup_rows() -> str:
    types = ", ".join(f"('{t.name}', {t.value})" for t in TangoType)
    formats = ", ".join(f"('{f.name}', {f.value})" for f in AttrFormat)
    writes = ", ".join(f"('{w.name}', {w.value})" for w in WriteType)
    events = ", ".join(f"('{e}')" for e in HISTORY_EVENTS)
    return "\n".join(
        [
            f"INSERT INTO att_conf_type (type, type_num) VALUES {types};",
            f"INSERT INTO att_conf_format (format, format_num) VALUES {formats};",
            f"INSERT INTO att_conf_write (write, write_num) VALUES {writes};",
            f"INSERT INTO att_history_event (event) VALUES {events};",
        ]
    )


def roles_sql() -> str:
    """Cluster-global roles and users, created idempotently (safe to run concurrently and repeatedly)."""
    stmts = []
    for role in (READONLY_ROLE, READWRITE_ROLE):
        stmts.append(f"CREATE ROLE {role} NOLOGIN")
    for user, role in USERS.items():
        stmts.append(f"CREATE ROLE {user} LOGIN PASSWORD '{USER_PASSWORD}' IN ROLE {role}")
    return "\n".join(
        f"DO $$ BEGIN {s}; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;" for s in stmts
    )


def grants_sql(database: str) -> sql.Composed:
    db = sql.Identifier(database)
    ro, rw = sql.Identifier(READONLY_ROLE), sql.Identifier(READWRITE_ROLE)
    stmts = [
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}, {}").format(db, ro, rw),
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}, {}").format(ro, rw),
        sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(ro),
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {}").format(rw),
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(rw),
        sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO {}").format(ro),
        sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {}").format(rw),
        sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {}").format(rw),
    ]
    return sql.SQL(";\n").join(stmts) + sql.SQL(";")


# ------------------------------------------------------- bulk loads, dumps, extraction (issue 7)
# The PostgreSQL side of hdbbench/datagen.py, dumps.py, queries.py and extraction.py: the small
# methods of `queries.ExtractionBackend`, mixed into PgBackend.


class PgColumnLoader:
    """Loads `columnar.ColumnBatch`es with binary COPY built by numpy; one transaction per batch."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def load(self, batch: Any) -> int:
        """Store a scalar batch in its type's data table."""
        from hdbbench.columnar import PG_COPY_COLUMNS, PGCOPY_HEADER, PGCOPY_TRAILER, pg_binary_rows

        if len(batch) == 0:
            return 0
        table = data_table_name(batch.tango_type, AttrFormat.SCALAR)
        stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, PG_COPY_COLUMNS)))
        try:
            with self.conn.cursor() as cur, cur.copy(stmt) as copy:
                copy.write(PGCOPY_HEADER + pg_binary_rows(batch) + PGCOPY_TRAILER)
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        return len(batch)

    def close(self) -> None:
        self.conn.close()


_DUMP_ORDER = {"pk": "att_conf_id, data_time", "time": "data_time, att_conf_id"}


class PgExtraction:
    """Extraction SQL and helpers of the PostgreSQL layout (TimescaleDB overrides the time bucket)."""

    placeholder = "%s"

    def connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        raise NotImplementedError

    def table_for(self, info: AttributeInfo) -> str:
        return data_table_name(info.type, info.format)

    def attribute_catalog(self) -> list[tuple[int, AttributeInfo]]:
        """(att_conf_id, AttributeInfo) of every archived attribute, by att_conf_id."""
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT c.att_conf_id, c.att_name, t.type_num, f.format_num, w.write_num FROM att_conf c "
                "JOIN att_conf_type t USING (att_conf_type_id) JOIN att_conf_format f USING (att_conf_format_id) "
                "JOIN att_conf_write w USING (att_conf_write_id) ORDER BY c.att_conf_id").fetchall()
        return [(r[0], AttributeInfo(r[1], TangoType(r[2]), AttrFormat(r[3]), WriteType(r[4]))) for r in rows]

    def attribute_spans(self, table: str) -> dict[int, tuple[int, datetime, datetime]]:
        """att_conf_id -> (events, first data_time, last data_time) in one data table."""
        query = sql.SQL("SELECT att_conf_id, count(*), min(data_time), max(data_time) FROM {} GROUP BY 1").format(
            sql.Identifier(table))
        with self.connect() as conn:
            return {r[0]: (int(r[1]), r[2], r[3]) for r in conn.execute(query)}

    def range_sql(self, table: str, array: bool) -> str:
        return (f"SELECT data_time, value_r FROM {_quote_ident(table)} WHERE att_conf_id = %s "
                "AND data_time >= %s AND data_time < %s ORDER BY data_time")

    def bucket_sql(self, bucket_s: int) -> str:
        units = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}
        if bucket_s in units:
            return f"date_trunc('{units[bucket_s]}', data_time)"
        return f"date_bin(interval '{int(bucket_s)} seconds', data_time, timestamptz '1970-01-01 00:00:00+00')"

    def aggregate_sql(self, table: str, bucket_s: int) -> str:
        b = self.bucket_sql(bucket_s)
        return (f"SELECT {b} AS bucket, count(value_r), avg(value_r), min(value_r), max(value_r) "
                f"FROM {_quote_ident(table)} WHERE att_conf_id = %s AND data_time >= %s AND data_time < %s "
                "GROUP BY 1 ORDER BY 1")

    def reader(self) -> psycopg.Connection[Any]:
        return self.connect()

    def stream(self, conn: psycopg.Connection[Any], query: str, params: tuple[Any, ...], fetch_rows: int,
               consume: Any) -> int:
        """Run `query` with a server-side cursor; hand each fetched block to `consume`; return rows."""
        rows = 0
        with conn.cursor(name="hdbbench_extract", binary=True) as cur:
            cur.itersize = fetch_rows
            cur.execute(query, params)
            while block := cur.fetchmany(fetch_rows):
                rows += len(block)
                consume(block)
        conn.commit()
        return rows

    def explain(self, conn: psycopg.Connection[Any], query: str, params: tuple[Any, ...]) -> dict[str, Any]:
        """Server time and buffers of one execution: EXPLAIN (ANALYZE, BUFFERS)."""
        row = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + query, params).fetchone()
        conn.commit()
        plan = row[0][0] if row else {}
        top = plan.get("Plan", {})
        return {
            "server_ms": plan.get("Execution Time"),
            "planning_ms": plan.get("Planning Time"),
            "pages_read": top.get("Shared Read Blocks"),
            "pages_hit": top.get("Shared Hit Blocks"),
            "server_rows": top.get("Actual Rows"),
            "server_source": "EXPLAIN (ANALYZE, BUFFERS)",
        }

    def column_loader(self) -> PgColumnLoader:
        return PgColumnLoader(self.connect())

    def dump_type(self, tango_type: TangoType, order: str, out: Any) -> None:
        """Write every scalar row of `tango_type` as neutral CSV bytes: att_conf_id, data_time (UTC),
        value_r, value_w, quality, att_error_desc_id; an empty field is NULL."""
        query = sql.SQL(
            "COPY (SELECT att_conf_id, to_char(data_time AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), value_r, "
            "value_w, quality, att_error_desc_id FROM {} ORDER BY " + _DUMP_ORDER[order] + ") TO STDOUT (FORMAT csv)"
        ).format(sql.Identifier(data_table_name(tango_type, AttrFormat.SCALAR)))
        with self.connect() as conn, conn.cursor() as cur:
            conn.execute("SET extra_float_digits = 3")  # every digit of a float, as stored
            with cur.copy(query) as copy:
                for block in copy:
                    out.write(block)

    def refresh_statistics(self) -> None:
        """Nothing to do: PostgreSQL sizes come from the files themselves."""

    def load_csv(self, table: str, path: str) -> None:
        """COPY a neutral CSV file (see dump_type) into `table`."""
        cols = ("att_conf_id", "data_time", "value_r", "value_w", "quality", "att_error_desc_id")
        stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv)").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, cols)))
        with self.connect() as conn:
            conn.execute("SET TimeZone = 'UTC'")
            with conn.cursor() as cur, cur.copy(stmt) as copy, open(path, "rb") as src:
                while block := src.read(1 << 20):
                    copy.write(block)
            conn.commit()


# ------------------------------------------------------------------------------------ backend


class PgBackend(PgExtraction, Backend):
    """HDB++ on PostgreSQL; `timescale` selects the TimescaleDB flavour."""

    timescale = False
    default_indexes = "pk+2"

    # --- connections
    def _admin(self) -> psycopg.Connection[Any]:
        return self.endpoint.connect(autocommit=True)

    def connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        """A connection to the HDB++ database."""
        try:
            return self.endpoint.connect(self.database, **kwargs)
        except psycopg.OperationalError as exc:
            raise SchemaError(f"cannot connect to database {self.database!r}: {str(exc).strip().splitlines()[-1]}") from exc

    # --- schema
    def expected_tables(self, variant: SchemaVariant | str | None = None) -> list[TableDef]:
        return all_tables(self.resolve_variant(variant), self.timescale)

    def schema_sql(self, variant: SchemaVariant | str | None = None) -> str:
        return render_schema(self.expected_tables(variant), self.timescale)

    def create_schema(self, variant: SchemaVariant | str | None = None) -> None:
        script = self.schema_sql(variant)
        with self._admin() as admin:
            if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone():
                raise SchemaError(f"database {self.database!r} already exists; drop it first")
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.database)))
            admin.execute(roles_sql())
        try:
            with self.connect() as conn:
                conn.execute(script)
                conn.execute(grants_sql(self.database))
        except psycopg.Error as exc:
            raise SchemaError(f"creating the {self.name} schema in {self.database!r} failed: {exc}") from exc

    def drop_schema(self) -> None:
        with self._admin() as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.database)))
            self._drop_roles_if_unused(admin)

    @staticmethod
    def _drop_roles_if_unused(admin: psycopg.Connection[Any]) -> None:
        """Roles are cluster-global: keep all of them while any other database still refers to one."""
        used = admin.execute(
            "SELECT count(*) FROM pg_shdepend d JOIN pg_roles r ON r.oid = d.refobjid "
            "WHERE d.refclassid = 'pg_authid'::regclass AND r.rolname = ANY(%s)",
            (list(ROLES),),
        ).fetchone()
        if used and used[0]:
            return
        for role in reversed(ROLES):
            try:
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
            except psycopg.errors.DependentObjectsStillExist:
                continue  # taken into use by a concurrent create: leave it

    def verify_schema(self, variant: SchemaVariant | str | None = None) -> list[str]:
        resolved = self.resolve_variant(variant)
        expected = all_tables(resolved, self.timescale)
        with self.connect() as conn:
            live = read_catalog(conn)
            diffs = compare_tables(expected, live)
            diffs += self._verify_extras(conn, expected)
        return diffs

    def _verify_extras(self, conn: psycopg.Connection[Any], expected: list[TableDef]) -> list[str]:
        diffs = _verify_domains(conn) + _verify_triggers(conn) + _verify_lookup_rows(conn) + _verify_roles(conn)
        if self.timescale:
            diffs += _verify_hypertables(conn, expected)
        else:
            diffs += _verify_partitioning(conn, expected)
        return diffs

    # --- maintenance
    def cluster(self) -> list[str]:
        """CLUSTER every chunk / partition / plain data table on its primary key (att_conf_id, data_time)."""
        done = []
        with self.connect(autocommit=True) as conn:
            for leaf, index in self._cluster_targets(conn):
                conn.execute(sql.SQL("CLUSTER {} USING {}").format(_qualified(leaf), sql.Identifier(index[1])))
                done.append(f"CLUSTER {leaf[0]}.{leaf[1]} USING {index[1]}")
        return done

    def _leaf_relations(self, conn: psycopg.Connection[Any], table: str) -> list[tuple[str, str]]:
        rows = conn.execute(
            "SELECT n.nspname, c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.inhparent = %s::regclass ORDER BY 1, 2",
            (f"public.{table}",),
        ).fetchall()
        if not rows and conn.execute("SELECT relkind FROM pg_class WHERE oid = %s::regclass", (f"public.{table}",)).fetchone()[0] == "r":
            rows = [("public", table)]
        return [(r[0], r[1]) for r in rows]

    def _cluster_targets(self, conn: psycopg.Connection[Any]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
        targets = []
        for t in TangoType:
            for fmt in AttrFormat:
                for leaf in self._leaf_relations(conn, data_table_name(t, fmt)):
                    if self.timescale and leaf[0] == "public":
                        continue  # the hypertable root holds no rows
                    pk = conn.execute(
                        "SELECT n.nspname, c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.indrelid = %s::regclass AND i.indisprimary",
                        (f"{_quote_ident(leaf[0])}.{_quote_ident(leaf[1])}",),
                    ).fetchone()
                    if pk:
                        targets.append((leaf, (pk[0], pk[1])))
        return targets

    def count_rows_by_attribute(self, since: datetime | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        since = since or datetime(1970, 1, 1, tzinfo=timezone.utc)
        with self.connect() as conn:
            names = dict(conn.execute("SELECT att_conf_id, att_name FROM att_conf").fetchall())
            tables = [row[0] for row in conn.execute("SELECT DISTINCT table_name FROM att_conf").fetchall()]
            for table in tables:
                query = sql.SQL("SELECT att_conf_id, count(*) FROM {} WHERE data_time >= %s GROUP BY att_conf_id"
                                ).format(sql.Identifier(table))
                for att_id, count in conn.execute(query, (since,)).fetchall():
                    counts[names[att_id]] = counts.get(names[att_id], 0) + int(count)
        return counts

    def size_bytes(self) -> int:
        with self.connect() as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    def table_sizes(self, tables: Sequence[str]) -> list[TableSize]:
        """TimescaleDB: hypertable_detailed_size (every chunk); PostgreSQL: pg_*_size summed over the
        leaf partitions (or the plain table). data = table - TOAST, TOAST = TOAST heap + its index."""
        with self.connect() as conn:
            return [self._hypertable_size(conn, t) if self.timescale else _plain_size(conn, t) for t in tables]

    @staticmethod
    def _hypertable_size(conn: psycopg.Connection[Any], table: str) -> TableSize:
        row = conn.execute(
            "SELECT table_bytes, index_bytes, toast_bytes, total_bytes FROM hypertable_detailed_size(%s)",
            (f"public.{_quote_ident(table)}",),
        ).fetchone()
        chunks = conn.execute("SELECT count(*) FROM show_chunks(%s)", (f"public.{_quote_ident(table)}",)).fetchone()
        heap, index, toast, total = (int(v or 0) for v in row) if row else (0, 0, 0, 0)
        return TableSize(table, heap, index, toast, 0, total, engine="timescaledb", parts=int(chunks[0]) if chunks else 0)

    def log_positions(self) -> dict[str, int | None]:
        with self.connect() as conn:
            row = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").fetchone()
        return {"wal": int(row[0]) if row else None}

    def bulk_writer(self) -> PgBulkWriter:
        return PgBulkWriter(self.connect())

    def fetch_events(self, att_name: str) -> list[Event]:
        with self.connect() as conn:
            return fetch_events(conn, att_name)


def _plain_size(conn: psycopg.Connection[Any], table: str) -> TableSize:
    """A plain or natively partitioned table: sums over its leaf relations."""
    row = conn.execute(
        "SELECT count(*), coalesce(sum(pg_table_size(c.oid)), 0), coalesce(sum(pg_indexes_size(c.oid)), 0), "
        "coalesce(sum(CASE WHEN c.reltoastrelid = 0 THEN 0 ELSE pg_total_relation_size(c.reltoastrelid) END), 0), "
        "coalesce(sum(pg_total_relation_size(c.oid)), 0) "
        "FROM pg_class c WHERE c.relkind = 'r' AND (c.oid = %s::regclass OR c.oid IN "
        "(SELECT relid FROM pg_partition_tree(%s::regclass) WHERE isleaf))",
        (f"public.{_quote_ident(table)}",) * 2,
    ).fetchone()
    parts, table_bytes, index, toast, total = (int(v) for v in row) if row else (0, 0, 0, 0, 0)
    return TableSize(table, table_bytes - toast, index, toast, 0, total, engine="postgresql", parts=parts)


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _qualified(rel: tuple[str, str]) -> sql.Composable:
    return sql.Identifier(rel[0], rel[1])


# ------------------------------------------------------------------------------------- verify

_INDEX_COLS = re.compile(r"USING \w+ \((.*)\)$")
_CON_COLS = re.compile(r"^(?:PRIMARY KEY|FOREIGN KEY) \(([^)]*)\)(?: REFERENCES (\S+?)\(([^)]*)\))?")


def read_catalog(conn: psycopg.Connection[Any]) -> dict[str, TableDef]:
    """The tables of schema `public` (partitions excluded) as TableDefs."""
    rels = conn.execute(
        "SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition"
    ).fetchall()
    oids = {oid: name for oid, name in rels}
    cols: dict[int, list[ColumnDef]] = defaultdict(list)
    for oid, name, typ, notnull in conn.execute(
        "SELECT attrelid, attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
        "WHERE attrelid = ANY(%s) AND attnum > 0 AND NOT attisdropped ORDER BY attrelid, attnum",
        (list(oids),),
    ):
        cols[oid].append(ColumnDef(name, typ, not notnull))
    pks: dict[int, tuple[str, ...]] = {}
    fks: dict[int, list[ForeignKeyDef]] = defaultdict(list)
    for oid, contype, condef in conn.execute(
        "SELECT conrelid, contype, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = ANY(%s) AND contype IN ('p', 'f')",
        (list(oids),),
    ):
        m = _CON_COLS.match(condef)
        if not m:
            continue
        if contype == "p":
            pks[oid] = tuple(c.strip() for c in m.group(1).split(","))
        else:
            fks[oid].append(ForeignKeyDef(m.group(1), m.group(2), m.group(3)))
    idx: dict[int, list[IndexDef]] = defaultdict(list)
    for oid, name, indexdef, unique in conn.execute(
        "SELECT i.indrelid, c.relname, pg_get_indexdef(i.indexrelid), i.indisunique FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = ANY(%s) AND NOT i.indisprimary",
        (list(oids),),
    ):
        m = _INDEX_COLS.search(indexdef)
        idx[oid].append(IndexDef(name, m.group(1) if m else indexdef, unique))
    return {
        name: TableDef(name, tuple(cols[oid]), pks.get(oid, ()), tuple(idx[oid]), tuple(fks[oid]))
        for oid, name in oids.items()
    }


def _verify_domains(conn: psycopg.Connection[Any]) -> list[str]:
    live = dict(
        conn.execute(
            "SELECT t.typname, format_type(t.typbasetype, t.typtypmod) FROM pg_type t "
            "JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public' AND t.typtype = 'd'"
        ).fetchall()
    )
    diffs = []
    for name, (base, _top) in DOMAINS.items():
        if name not in live:
            diffs.append(f"missing domain {name}")
        elif live[name] != base:
            diffs.append(f"domain {name} is {live[name]}, expected {base}")
    diffs += [f"unexpected domain {name}" for name in sorted(set(live) - set(DOMAINS))]
    return diffs


def _verify_triggers(conn: psycopg.Connection[Any]) -> list[str]:
    live = {
        (t, n)
        for t, n in conn.execute(
            "SELECT c.relname, g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT g.tgisinternal "
            "AND g.tgname = 'enum_label_trigger'"
        )
    }
    return [f"{t}: missing trigger enum_label_trigger" for t in ENUM_TRIGGER_TABLES if (t, "enum_label_trigger") not in live]


def _verify_lookup_rows(conn: psycopg.Connection[Any]) -> list[str]:
    checks = [
        ("att_conf_type", "SELECT type, type_num FROM att_conf_type", {(t.name, t.value) for t in TangoType}),
        ("att_conf_format", "SELECT format, format_num FROM att_conf_format", {(f.name, f.value) for f in AttrFormat}),
        ("att_conf_write", "SELECT write, write_num FROM att_conf_write", {(w.name, w.value) for w in WriteType}),
        ("att_history_event", "SELECT event, 0 FROM att_history_event", {(e, 0) for e in HISTORY_EVENTS}),
    ]
    diffs = []
    for table, query, want in checks:
        try:
            got = set(conn.execute(query).fetchall())
        except psycopg.Error:
            conn.rollback()
            continue  # the missing table is already reported
        if got != want:
            diffs.append(f"{table}: rows differ (missing {sorted(want - got)}, unexpected {sorted(got - want)})")
    return diffs


def _verify_roles(conn: psycopg.Connection[Any]) -> list[str]:
    live = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", (list(ROLES),))}
    return [f"missing role {r}" for r in ROLES if r not in live]


def _verify_hypertables(conn: psycopg.Connection[Any], expected: list[TableDef]) -> list[str]:
    live = {
        name: (col, interval)
        for name, col, interval in conn.execute(
            "SELECT hypertable_name, column_name, time_interval FROM timescaledb_information.dimensions "
            "WHERE hypertable_schema = 'public'"
        )
    }
    diffs = []
    for t in expected:
        if "hypertable" not in t.options:
            continue
        col, days = t.options["hypertable"]
        got = live.pop(t.name, None)
        if got is None:
            diffs.append(f"{t.name}: not a hypertable")
        elif got != (col, timedelta(days=days)):
            diffs.append(f"{t.name}: hypertable on {got[0]} every {got[1]}, expected {col} every {days} days")
    diffs += [f"unexpected hypertable {name}" for name in sorted(live)]
    return diffs


def _verify_partitioning(conn: psycopg.Connection[Any], expected: list[TableDef]) -> list[str]:
    live = dict(
        conn.execute(
            "SELECT c.relname, pg_get_partkeydef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'p'"
        ).fetchall()
    )
    diffs = []
    for t in expected:
        got = live.pop(t.name, None)
        if "partition_days" in t.options and got != "RANGE (data_time)":
            diffs.append(f"{t.name}: not range-partitioned on data_time")
    diffs += [f"{name}: unexpectedly partitioned ({key})" for name, key in sorted(live.items())]
    return diffs


# ------------------------------------------------------------------------------------- writer


class _Att:
    __slots__ = ("id", "info", "table", "copy_types", "enum")

    def __init__(self, att_id: int, info: AttributeInfo) -> None:
        self.id = att_id
        self.info = info
        self.table = data_table_name(info.type, info.format)
        vtype = VALUE_TYPES[info.type][1] + ("" if info.format == AttrFormat.SCALAR else "[]")
        self.copy_types = ["int4", "timestamptz", vtype, vtype, "int2", "int4", "json"]


COPY_COLUMNS = ("att_conf_id", "data_time", "value_r", "value_w", "quality", "att_error_desc_id", "details")


class PgBulkWriter(BulkWriter):
    """Binary-COPY writer for the HDB++ PostgreSQL/TimescaleDB layout (one connection, not thread-safe)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self._atts: dict[str, _Att] = {}
        self._errors: dict[str, int] = {}
        self._last_history: dict[int, datetime] = {}
        self._ids = {
            "type": dict(conn.execute("SELECT type_num, att_conf_type_id FROM att_conf_type").fetchall()),
            "format": dict(conn.execute("SELECT format_num, att_conf_format_id FROM att_conf_format").fetchall()),
            "write": dict(conn.execute("SELECT write_num, att_conf_write_id FROM att_conf_write").fetchall()),
            "event": dict(conn.execute("SELECT event, att_history_event_id FROM att_history_event").fetchall()),
        }
        conn.commit()

    def register_attribute(self, info: AttributeInfo, event_time: datetime | None = None) -> int:
        cached = self._atts.get(info.name)
        if cached is not None:
            _check_same_kind(cached.info, info)
            return cached.id
        row = self.conn.execute(
            "SELECT c.att_conf_id, t.type_num, f.format_num, w.write_num FROM att_conf c "
            "JOIN att_conf_type t USING (att_conf_type_id) JOIN att_conf_format f USING (att_conf_format_id) "
            "JOIN att_conf_write w USING (att_conf_write_id) WHERE c.att_name = %s",
            (info.name,),
        ).fetchone()
        if row is not None:
            if (row[1], row[2], row[3]) != (info.type, info.format, info.write_type):
                raise SchemaError(f"attribute {info.name!r} is already archived with another type/format/write type")
            att_id = row[0]
        else:
            parts = split_att_name(info.name)
            att_id = self.conn.execute(
                "INSERT INTO att_conf (att_name, att_conf_type_id, att_conf_format_id, att_conf_write_id, table_name, "
                "cs_name, domain, family, member, name, ttl) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "RETURNING att_conf_id",
                (
                    info.name, self._ids["type"][info.type], self._ids["format"][info.format],
                    self._ids["write"][info.write_type], data_table_name(info.type, info.format), *parts, info.ttl_hours,
                ),
            ).fetchone()[0]
            self._history(att_id, "add", event_time or datetime.now(timezone.utc))
        self.conn.commit()
        self._atts[info.name] = _Att(att_id, info)
        return att_id

    def _att(self, att_name: str) -> _Att:
        try:
            return self._atts[att_name]
        except KeyError:
            raise SchemaError(f"attribute {att_name!r} is not registered with this writer") from None

    def _history(self, att_id: int, event: str, event_time: datetime) -> None:
        if event not in self._ids["event"]:
            raise SchemaError(f"unknown history event {event!r} (known: {', '.join(HISTORY_EVENTS)})")
        # PRIMARY KEY(att_conf_id, event_time): events of one attribute at the same instant move 1 us later.
        last = self._last_history.get(att_id)
        if last is not None and event_time <= last:
            event_time = last + timedelta(microseconds=1)
        self._last_history[att_id] = event_time
        self.conn.execute(
            "INSERT INTO att_history (att_conf_id, att_history_event_id, event_time) VALUES (%s, %s, %s) "
            "ON CONFLICT (att_conf_id, event_time) DO NOTHING",
            (att_id, self._ids["event"][event], event_time),
        )

    def write_history(self, att_name: str, event: str, event_time: datetime) -> None:
        self._history(self._att(att_name).id, event, event_time)
        self.conn.commit()

    def write_parameter(self, param: AttParameter) -> None:
        att = self._att(param.att_name)
        self.conn.execute(
            "INSERT INTO att_parameter (att_conf_id, recv_time, label, unit, standard_unit, display_unit, format, "
            "archive_rel_change, archive_abs_change, archive_period, description, enum_labels) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                att.id, param.recv_time, param.label, param.unit, param.standard_unit, param.display_unit, param.format,
                param.archive_rel_change, param.archive_abs_change, param.archive_period, param.description,
                list(param.enum_labels),
            ),
        )
        self._history(att.id, "insert_param", param.recv_time)
        self.conn.commit()

    def _error_ids(self, descs: set[str]) -> None:
        missing = sorted(descs - self._errors.keys())
        if not missing:
            return
        self.conn.execute(
            "INSERT INTO att_error_desc (error_desc) SELECT unnest(%s::text[]) ON CONFLICT (error_desc) DO NOTHING", (missing,)
        )
        for att_error_id, desc in self.conn.execute(
            "SELECT att_error_desc_id, error_desc FROM att_error_desc WHERE error_desc = ANY(%s)", (missing,)
        ):
            self._errors[desc] = att_error_id

    def write(self, events: Iterable[Event]) -> int:
        by_table: dict[str, list[tuple[_Att, Event]]] = defaultdict(list)
        descs: set[str] = set()
        for e in events:
            att = self._att(e.att_name)
            by_table[att.table].append((att, e))
            if e.error_desc is not None:
                descs.add(e.error_desc)
        count = 0
        try:
            self._error_ids(descs)
            with self.conn.cursor() as cur:
                for table, items in by_table.items():
                    count += self._copy(cur, table, items)
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        return count

    def _copy(self, cur: psycopg.Cursor[Any], table: str, items: list[tuple[_Att, Event]]) -> int:
        stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, COPY_COLUMNS))
        )
        encoded = items[0][0].info.type == TangoType.DEV_ENCODED
        plain = items[0][0].info.type not in (TangoType.DEV_ENCODED,) and items[0][0].info.format != AttrFormat.SCALAR
        errors = self._errors
        with cur.copy(stmt) as copy:
            copy.set_types(items[0][0].copy_types)
            for att, e in items:
                t = e.data_time if e.data_time.tzinfo is not None else e.data_time.replace(tzinfo=timezone.utc)
                err = errors[e.error_desc] if e.error_desc is not None else None
                if encoded:
                    vr, vw, details = _encoded_values(e.value_r, e.value_w)
                    copy.write_row((att.id, t, vr, vw, e.quality, err, details))
                elif plain:
                    copy.write_row((att.id, t, as_plain(e.value_r), as_plain(e.value_w), e.quality, err, None))
                else:
                    copy.write_row((att.id, t, _scalar(e.value_r), _scalar(e.value_w), e.quality, err, None))
        return len(items)

    def close(self) -> None:
        self.conn.close()


def _scalar(value: Any) -> Any:
    """numpy scalars and Tango enums (DevState) to plain Python values."""
    if value is None or type(value) in (float, int, bool, str):
        return value
    item = getattr(value, "item", None)
    if item is not None:
        return item()
    return int(value) if hasattr(value, "__index__") else value


def _check_same_kind(known: AttributeInfo, info: AttributeInfo) -> None:
    if (known.type, known.format, known.write_type) != (info.type, info.format, info.write_type):
        raise SchemaError(f"attribute {info.name!r} is already archived with another type/format/write type")


def _encoded_side(value: Any) -> tuple[Any, Any]:
    """DEV_ENCODED: data bytes for the value column, format string(s) for `details` (same nesting)."""
    if value is None:
        return None, None
    if isinstance(value, list):
        sides = [_encoded_side(v) for v in value]
        return [d for d, _ in sides], [f for _, f in sides]
    pair = as_encoded(value)
    assert pair is not None
    return pair.data, pair.format


def _encoded_values(value_r: Any, value_w: Any) -> tuple[Any, Any, dict[str, Any] | None]:
    data_r, fmt_r = _encoded_side(value_r)
    data_w, fmt_w = _encoded_side(value_w)
    details = {k: v for k, v in (("format_r", fmt_r), ("format_w", fmt_w)) if v is not None}
    return data_r, data_w, details or None


# ------------------------------------------------------------------------------------- reader


def _from_db(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, list):
        return [_from_db(v) for v in value]
    return value


def _decode_encoded(data: Any, fmt: Any) -> Any:
    if data is None:
        return None
    if isinstance(data, list):
        fmts = fmt if isinstance(fmt, list) else [None] * len(data)
        return [_decode_encoded(d, f) for d, f in zip(data, fmts)]
    return Encoded(fmt or "", bytes(data))


def fetch_events(conn: psycopg.Connection[Any], att_name: str) -> list[Event]:
    row = conn.execute(
        "SELECT c.att_conf_id, c.table_name, t.type_num FROM att_conf c JOIN att_conf_type t USING (att_conf_type_id) "
        "WHERE c.att_name = %s",
        (att_name,),
    ).fetchone()
    if row is None:
        raise SchemaError(f"attribute {att_name!r} is not archived")
    att_id, table, type_num = row
    base = VALUE_TYPES[TangoType(type_num)][0]
    cast = sql.SQL("::numeric[]" if table.startswith(("att_array", "att_image")) else "::numeric") if base in DOMAINS else sql.SQL("")
    query = sql.SQL(
        "SELECT d.data_time, d.value_r{c}, d.value_w{c}, d.quality, e.error_desc, d.details FROM {t} d "
        "LEFT JOIN att_error_desc e USING (att_error_desc_id) WHERE d.att_conf_id = %s ORDER BY d.data_time"
    ).format(c=cast, t=sql.Identifier(table))
    events = []
    # Binary results: the text form of `real` is its shortest decimal, which is not the stored float32.
    for data_time, vr, vw, quality, error_desc, details in conn.execute(query, (att_id,), binary=True):
        if type_num == TangoType.DEV_ENCODED:
            details = details or {}
            vr, vw = _decode_encoded(vr, details.get("format_r")), _decode_encoded(vw, details.get("format_w"))
        else:
            vr, vw = _from_db(vr), _from_db(vw)
        events.append(Event(att_name, data_time.astimezone(timezone.utc), vr, vw, quality, error_desc))
    return events


# SPDX-License-Identifier: Apache-2.0
"""HDB++ on MySQL/MariaDB (InnoDB): the libhdbpp-mysql layout.

One table per type, format family and write side: `att_<scalar|array>_<type>_<ro|rw>`; READ
attributes go to `_ro`, all other write types to `_rw`; SPECTRUM and IMAGE share the `array` tables.
Arrays use the classic HDB++ layout, one row per element: `idx` (row-major for images), `dim_x_*`,
`dim_y_*` (0 for spectra), PRIMARY KEY (att_conf_id, data_time, idx). We chose it over the JSON
variant because the server then checks every element's type and range, the value columns are the
same as the scalar tables', and readers written for the classic layout keep working.
Consequences (documented in schemas/README.md): an event with no elements is stored as one row
idx=0, dim 0, value NULL; MariaDB has no NaN/Infinity, so non-finite floats are stored as NULL.

InnoDB tables are clustered by their primary key, so `cluster()` has nothing to do. Rows are written
with the connector's executemany (the MariaDB bulk protocol), one transaction per batch.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta, timezone
from typing import Any

from hdbbench.backends.base import (
    Backend,
    BulkWriter,
    ColumnDef,
    IndexDef,
    SchemaVariant,
    TableDef,
    TableSize,
    compare_tables,
)
from hdbbench.errors import ConfigError, SchemaError
from hdbbench.hdbtypes import (
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

# Column types exactly as MariaDB's information_schema.COLUMNS.COLUMN_TYPE spells them.
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
USER_PASSWORD = "hdbpp"  # testbed servers listen on loopback only
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


# ----------------------------------------------------------------------------------------- DDL


def _render_table(t: TableDef) -> str:
    lines = []
    for c in t.columns:
        line = f"    {quote_ident(c.name)} {c.ddl or c.type}"
        line += "" if c.nullable else " NOT NULL"
        line += f" DEFAULT {c.default}" if c.default is not None else ""
        lines.append(line)
    lines.append(f"    PRIMARY KEY ({', '.join(map(quote_ident, t.primary_key))})")
    for i in t.indexes:
        kind = "UNIQUE KEY" if i.unique else "KEY"
        lines.append(f"    {kind} {quote_ident(i.name)} ({i.columns})")
    out = f"CREATE TABLE {quote_ident(t.name)} (\n" + ",\n".join(lines) + f"\n) ENGINE=InnoDB COMMENT='{t.comment}'"
    if "partitions" in t.options:
        bounds = t.options["partitions"]
        parts = [f"    PARTITION p000 VALUES LESS THAN ('{_first_bound(bounds)}')"]
        parts += [f"    PARTITION {name} VALUES LESS THAN ('{hi}')" for name, hi in bounds]
        parts.append("    PARTITION future VALUES LESS THAN MAXVALUE")
        out += "\nPARTITION BY RANGE COLUMNS(data_time) (\n" + ",\n".join(parts) + "\n)"
    return out + ";"


def _first_bound(bounds: list[tuple[str, date]]) -> date:
    name = bounds[0][0]
    return date(int(name[1:5]), int(name[5:7]), int(name[7:9]))


def render_schema(tables: list[TableDef]) -> str:
    parts = ["-- HDB++ schema rendered by hdbbench (hdbbench schema sql); see schemas/README.md"]
    parts += [_render_table(t) for t in tables]
    kinds = ", ".join(
        f"('{data_type_name(t, fmt, w)}', {int(t)})"
        for t in TYPE_ORDER
        for fmt in (AttrFormat.SCALAR, AttrFormat.SPECTRUM)
        for w in (WriteType.READ, WriteType.READ_WRITE)
    )
    parts.append(f"INSERT INTO att_conf_data_type (data_type, tango_data_type) VALUES {kinds};")
    parts.append(f"INSERT INTO att_history_event (event) VALUES {', '.join(f'({e!r})' for e in HISTORY_EVENTS_MYSQL)};")
    return "\n\n".join(parts) + "\n"


def users_sql(database: str) -> list[str]:
    db = quote_ident(database)
    return [
        f"CREATE USER IF NOT EXISTS '{RW_USER}'@'%' IDENTIFIED BY '{USER_PASSWORD}'",
        f"CREATE USER IF NOT EXISTS '{RO_USER}'@'%' IDENTIFIED BY '{USER_PASSWORD}'",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {db}.* TO '{RW_USER}'@'%'",
        f"GRANT SELECT ON {db}.* TO '{RO_USER}'@'%'",
    ]


def _statements(script: str) -> list[str]:
    """Split a rendered script (no ';' inside literals or comments) into statements."""
    body = "\n".join(line for line in script.splitlines() if not line.startswith("--"))
    return [s.strip() for s in body.split(";\n") if s.strip().rstrip(";")]


# ------------------------------------------------------- bulk loads, dumps, extraction (issue 7)
# The MariaDB side of hdbbench/datagen.py, dumps.py, queries.py and extraction.py: the small
# methods of `queries.ExtractionBackend`, mixed into MySQLBackend.

_MY_STATUS = ("Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests", "Innodb_data_read")
_MY_DUMP_ORDER = {"pk": "att_conf_id, data_time", "time": "data_time, att_conf_id"}


class MySQLColumnLoader:
    """Loads `columnar.ColumnBatch`es with LOAD DATA LOCAL INFILE from a temporary file; one
    transaction per batch. About 4x faster than the bulk protocol for plain scalar rows."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        conn.autocommit = False
        self.cur = conn.cursor()

    def load(self, batch: Any) -> int:
        """Store a scalar batch: rows go to `att_scalar_<type>_ro` or `_rw` by their attribute's write side."""
        import tempfile

        from hdbbench.columnar import mysql_tsv

        table_base = f"att_scalar_{batch.tango_type.suffix}"
        try:
            for suffix, mask in (("_ro", ~batch.rw), ("_rw", batch.rw)):
                if not mask.any():
                    continue
                rw = suffix == "_rw"
                with tempfile.NamedTemporaryFile(prefix="hdbbench-load-", suffix=".tsv") as tmp:
                    tmp.write(mysql_tsv(batch.take(mask), with_w=rw))
                    tmp.flush()
                    cols = "att_conf_id, data_time, value_r, " + ("value_w, " if rw else "") + "quality"
                    self.cur.execute(f"LOAD DATA LOCAL INFILE ? INTO TABLE {quote_ident(table_base + suffix)} "
                                     f"({cols}) SET recv_time = data_time", (tmp.name,))
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        return len(batch)

    def close(self) -> None:
        self.conn.close()


class MySQLExtraction:
    """Extraction SQL and helpers of the libhdbpp-mysql layout."""

    placeholder = "?"
    database: str

    def connect(self, database: str | None = None, **kwargs: Any) -> Any:
        raise NotImplementedError

    def table_for(self, info: AttributeInfo) -> str:
        return "att_" + data_type_name(info.type, info.format, info.write_type)

    def attribute_catalog(self) -> list[tuple[int, AttributeInfo]]:
        """(att_conf_id, AttributeInfo); the layout keeps no format or exact write type:
        arrays read back as SPECTRUM, `_rw` attributes as READ_WRITE."""
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            cur.execute("SELECT c.att_conf_id, c.att_name, t.data_type, t.tango_data_type FROM att_conf c "
                        "JOIN att_conf_data_type t USING (att_conf_data_type_id) ORDER BY c.att_conf_id")
            rows = cur.fetchall()
        finally:
            conn.close()
        out = []
        for att_id, name, kind, type_num in rows:
            fmt = AttrFormat.SCALAR if kind.startswith("scalar") else AttrFormat.SPECTRUM
            wt = WriteType.READ if kind.endswith("_ro") else WriteType.READ_WRITE
            out.append((int(att_id), AttributeInfo(name, TangoType(type_num), fmt, wt)))
        return out

    def attribute_spans(self, table: str) -> dict[int, tuple[int, datetime, datetime]]:
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            cur.execute(f"SELECT att_conf_id, COUNT(DISTINCT data_time), MIN(data_time), MAX(data_time) "
                        f"FROM {quote_ident(table)} GROUP BY att_conf_id")
            return {int(r[0]): (int(r[1]), r[2].replace(tzinfo=timezone.utc), r[3].replace(tzinfo=timezone.utc))
                    for r in cur.fetchall()}
        finally:
            conn.close()

    def range_sql(self, table: str, array: bool) -> str:
        order = "data_time, idx" if array else "data_time"
        return (f"SELECT data_time, value_r FROM {quote_ident(table)} WHERE att_conf_id = ? "
                f"AND data_time >= ? AND data_time < ? ORDER BY {order}")

    def bucket_sql(self, bucket_s: int) -> str:
        b = int(bucket_s)
        return f"FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP(data_time) / {b}) * {b})"

    def aggregate_sql(self, table: str, bucket_s: int) -> str:
        return (f"SELECT {self.bucket_sql(bucket_s)} AS bucket, COUNT(value_r), AVG(value_r), MIN(value_r), "
                f"MAX(value_r) FROM {quote_ident(table)} WHERE att_conf_id = ? AND data_time >= ? AND data_time < ? "
                "GROUP BY bucket ORDER BY bucket")

    def reader(self) -> Any:
        return self.connect(self.database)

    @staticmethod
    def _params(params: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(_naive_utc(p) if isinstance(p, datetime) else p for p in params)

    def stream(self, conn: Any, query: str, params: tuple[Any, ...], fetch_rows: int, consume: Any) -> int:
        """Run `query` unbuffered (rows stream from the server); hand each block to `consume`."""
        rows = 0
        cur = conn.cursor(buffered=False, binary=True)  # binary: exact FLOAT/DOUBLE values
        try:
            cur.execute(query, self._params(params))
            while block := cur.fetchmany(fetch_rows):
                rows += len(block)
                consume(block)
        finally:
            cur.close()
        conn.commit()
        return rows

    def explain(self, conn: Any, query: str, params: tuple[Any, ...]) -> dict[str, Any]:
        """Server time of one execution (ANALYZE FORMAT=JSON) and InnoDB page reads around it."""
        cur = conn.cursor()
        before = _my_status(cur)
        cur.execute("ANALYZE FORMAT=JSON " + query, self._params(params))
        doc = json.loads(cur.fetchone()[0])
        after = _my_status(cur)
        cur.close()
        conn.commit()
        block = doc.get("query_block", {})
        engine = _find_key(block, "r_engine_stats") or {}
        return {
            "server_ms": block.get("r_total_time_ms"),
            "planning_ms": None,
            "pages_read": engine.get("pages_read_count", after[0] - before[0]),
            "pages_hit": engine.get("pages_accessed", after[1] - before[1]),
            "server_rows": _find_key(block, "r_rows"),
            "server_source": "ANALYZE FORMAT=JSON + Innodb_buffer_pool_reads",
        }

    def column_loader(self) -> MySQLColumnLoader:
        return MySQLColumnLoader(self.connect(self.database, local_infile=True))

    def dump_type(self, tango_type: TangoType, order: str, out: Any) -> None:
        """Write every scalar row of `tango_type` (both `_ro` and `_rw`) as CSV bytes."""
        import csv
        import io

        base = f"att_scalar_{tango_type.suffix}"
        cols = ("att_conf_id, DATE_FORMAT(data_time, '%Y-%m-%d %H:%i:%s.%f') AS data_time, value_r, {w} AS value_w, "
                "quality, att_error_desc_id")
        query = (f"SELECT {cols.format(w='NULL')} FROM {quote_ident(base + '_ro')} UNION ALL "
                 f"SELECT {cols.format(w='value_w')} FROM {quote_ident(base + '_rw')} ORDER BY {_MY_DUMP_ORDER[order]}")
        conn = self.connect(self.database)
        try:
            cur = conn.cursor(buffered=False, binary=True)
            cur.execute(query)
            while block := cur.fetchmany(10_000):
                text = io.StringIO()
                csv.writer(text, lineterminator="\n").writerows([_csv_value(v) for v in row] for row in block)
                out.write(text.getvalue().encode())
            cur.close()
        finally:
            conn.close()

    def refresh_statistics(self) -> None:
        """ANALYZE TABLE every data table that holds rows, so information_schema sizes are current."""
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? "
                        "AND TABLE_NAME LIKE 'att\\_%\\_dev%'", (self.database,))
            for (table,) in cur.fetchall():
                cur.execute(f"ANALYZE TABLE {quote_ident(table)}")
                cur.fetchall()
        finally:
            conn.close()

    def load_csv(self, table: str, path: str) -> None:
        """LOAD DATA a neutral CSV (att_conf_id, data_time UTC, value_r, value_w, quality, att_error_desc_id);
        an empty field is NULL; `_ro` tables ignore value_w."""
        with_w = table.endswith("_rw")
        sets = ["value_r = NULLIF(@vr, '')", "quality = NULLIF(@q, '')", "att_error_desc_id = NULLIF(@e, '')",
                "recv_time = data_time"]
        if with_w:
            sets.insert(1, "value_w = NULLIF(@vw, '')")
        conn = self.connect(self.database, local_infile=True)
        try:
            cur = conn.cursor()
            cur.execute(f"LOAD DATA LOCAL INFILE ? INTO TABLE {quote_ident(table)} FIELDS TERMINATED BY ',' "
                        "OPTIONALLY ENCLOSED BY '\"' (att_conf_id, data_time, @vr, @vw, @q, @e) SET " + ", ".join(sets),
                        (path,))
            conn.commit()
        finally:
            conn.close()


def _my_status(cur: Any) -> tuple[int, int]:
    cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (?, ?, ?)", _MY_STATUS)
    values = {k: int(v) for k, v in cur.fetchall()}
    return values.get(_MY_STATUS[0], 0), values.get(_MY_STATUS[1], 0)


def _find_key(doc: Any, key: str) -> Any:
    """The first value of `key` anywhere in a nested JSON document (depth first)."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        values: Iterable[Any] = doc.values()
    elif isinstance(doc, list):
        values = doc
    else:
        return None
    for value in values:
        found = _find_key(value, key)
        if found is not None:
            return found
    return None


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return value


# ------------------------------------------------------------------------------------ backend


class MySQLBackend(MySQLExtraction, Backend):
    name = "mysql"
    default_indexes = "pk"  # libhdbpp-mysql has no secondary index on data tables

    def check_variant(self, variant: SchemaVariant) -> None:
        if not variant.foreign_keys:
            raise ConfigError("mysql: the HDB++ data tables have no foreign keys; 'nofk' does not apply")

    def connect(self, database: str | None = None, **kwargs: Any) -> Any:
        import mariadb

        try:
            conn = self.endpoint.connect(database, **kwargs)
        except mariadb.Error as exc:
            raise SchemaError(f"cannot connect to MariaDB database {database!r}: {exc}") from exc
        return conn

    def expected_tables(self, variant: SchemaVariant | str | None = None) -> list[TableDef]:
        return all_tables(self.resolve_variant(variant))

    def schema_sql(self, variant: SchemaVariant | str | None = None) -> str:
        return render_schema(self.expected_tables(variant))

    def create_schema(self, variant: SchemaVariant | str | None = None) -> None:
        import mariadb

        script = self.schema_sql(variant)
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", (self.database,))
            if cur.fetchone():
                raise SchemaError(f"database {self.database!r} already exists; drop it first")
            # utf8mb4_bin: any Unicode name, and att_name/error_desc compare exactly as on PostgreSQL.
            cur.execute(f"CREATE DATABASE {quote_ident(self.database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
            cur.execute(f"USE {quote_ident(self.database)}")
            for stmt in _statements(script):
                cur.execute(stmt)
            for stmt in users_sql(self.database):
                cur.execute(stmt)
            conn.commit()
        except mariadb.Error as exc:
            raise SchemaError(f"creating the mysql schema in {self.database!r} failed: {exc}") from exc
        finally:
            conn.close()

    def drop_schema(self) -> None:
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(f"DROP DATABASE IF EXISTS {quote_ident(self.database)}")
            # Database-level grants outlive DROP DATABASE in mysql.db: revoke them explicitly.
            for user in (RW_USER, RO_USER):
                cur.execute("SELECT COUNT(*) FROM mysql.db WHERE User = ? AND Host = '%' AND Db = ?", (user, self.database))
                if cur.fetchone()[0]:
                    cur.execute(f"REVOKE ALL PRIVILEGES ON {quote_ident(self.database)}.* FROM '{user}'@'%'")
            # Users are server-global: drop them only when no other database grants them anything.
            cur.execute("SELECT COUNT(*) FROM mysql.db WHERE User IN (?, ?)", (RW_USER, RO_USER))
            if cur.fetchone()[0] == 0:
                cur.execute(f"DROP USER IF EXISTS '{RW_USER}'@'%', '{RO_USER}'@'%'")
            conn.commit()
        finally:
            conn.close()

    def verify_schema(self, variant: SchemaVariant | str | None = None) -> list[str]:
        resolved = self.resolve_variant(variant)
        expected = all_tables(resolved)
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", (self.database,))
            if not cur.fetchone():
                return [f"missing database {self.database}"]
            live, engines, partitions = read_catalog(cur, self.database)
            diffs = compare_tables(expected, live)
            diffs += [f"{t}: engine {e}, expected InnoDB" for t, e in sorted(engines.items()) if e != "InnoDB"]
            diffs += _verify_partitions(expected, partitions)
            diffs += _verify_rows_and_users(cur, self.database)
            return diffs
        finally:
            conn.close()

    def cluster(self) -> list[str]:
        return ["nothing to do: InnoDB tables are clustered by their primary key (att_conf_id, data_time[, idx])"]

    def count_rows_by_attribute(self, since: datetime | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        since_utc = (since or datetime(1970, 1, 1, tzinfo=timezone.utc)).astimezone(timezone.utc).replace(tzinfo=None)
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            cur.execute("SELECT c.att_conf_id, c.att_name, t.data_type FROM att_conf c"
                        " JOIN att_conf_data_type t USING (att_conf_data_type_id)")
            rows = cur.fetchall()
            names = {att_id: name for att_id, name, _ in rows}
            for table in sorted({f"att_{kind}" for _, _, kind in rows}):
                # Arrays are stored one row per element: an event is one distinct data_time.
                cur.execute(f"SELECT att_conf_id, COUNT(DISTINCT data_time) FROM {quote_ident(table)}"
                            " WHERE data_time >= ? GROUP BY att_conf_id", (since_utc,))
                for att_id, count in cur.fetchall():
                    counts[names[att_id]] = counts.get(names[att_id], 0) + int(count)
        finally:
            conn.close()
        return counts

    def size_bytes(self) -> int:
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            cur.execute("SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.TABLES"
                        " WHERE table_schema = ?", (self.database,))
            row = cur.fetchone()
        finally:
            conn.close()
        return int(row[0]) if row else 0

    def table_sizes(self, tables: Sequence[str]) -> list[TableSize]:
        """After ANALYZE TABLE (exact persistent statistics): DATA_LENGTH (clustered index, off-page
        columns included) and INDEX_LENGTH, both page-granular; the rest of the tablespace files
        (FILE_SIZE, every partition) is free_bytes; ALLOCATED_SIZE gives the blocks on disk.
        MyRocks has no per-table files: its memtables are flushed first and the SST-based
        DATA_LENGTH/INDEX_LENGTH are the whole figure."""
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            return [_mysql_table_size(cur, self.database, t) for t in tables]
        finally:
            conn.close()

    def log_positions(self) -> dict[str, int | None]:
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT @@global.log_bin")
            binlog: int | None = None
            if int(cur.fetchone()[0]):
                cur.execute("SHOW BINARY LOGS")
                binlog = sum(int(row[1]) for row in cur.fetchall())
            cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'")
            row = cur.fetchone()
            return {"binlog": binlog, "redo": int(row[1]) if row else None}
        finally:
            conn.close()

    def alter_data_tables(self, tables: Sequence[str], clause: str) -> None:
        """`ALTER TABLE <t> <clause>` for each table (storage options: ROW_FORMAT, PAGE_COMPRESSED, ENGINE)."""
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            for table in tables:
                cur.execute(f"ALTER TABLE {quote_ident(table)} {clause}")
        finally:
            conn.close()

    def bulk_writer(self) -> MySQLBulkWriter:
        return MySQLBulkWriter(self.connect(self.database))

    def fetch_events(self, att_name: str) -> list[Event]:
        conn = self.connect(self.database)
        try:
            return fetch_events(conn, att_name)
        finally:
            conn.close()


def _mysql_table_size(cur: Any, database: str, table: str) -> TableSize:
    cur.execute("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", (database, table))
    row = cur.fetchone()
    if row is None:
        raise SchemaError(f"no table {table!r} in database {database!r}")
    engine = str(row[0])
    if engine.upper() == "ROCKSDB":
        cur.execute("SET GLOBAL rocksdb_force_flush_memtable_now = 1")
    cur.execute(f"ANALYZE TABLE {quote_ident(table)}")
    cur.fetchall()
    cur.execute("SELECT DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                (database, table))
    data, index = (int(v or 0) for v in cur.fetchone())
    if engine.upper() != "INNODB":
        return TableSize(table, data, index, 0, 0, data + index, engine=engine.lower())
    # Write the table's dirty pages out, so that ALLOCATED_SIZE (sparse, page-compressed files) is current.
    cur.execute(f"FLUSH TABLES {quote_ident(table)} FOR EXPORT")
    cur.execute("UNLOCK TABLES")
    cur.execute("SELECT COUNT(*), COALESCE(SUM(FILE_SIZE), 0), COALESCE(SUM(ALLOCATED_SIZE), 0) "
                "FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = ? OR NAME LIKE ?",
                (f"{database}/{table}", f"{database}/{table}#P#%"))
    parts, file_size, allocated = (int(v) for v in cur.fetchone())
    sparse = 0 < allocated < file_size - 16384 * parts  # more than a page per file below the apparent size
    return TableSize(table, data, index, 0, file_size - data - index, file_size,
                     allocated if sparse else None, "innodb", parts)


# ------------------------------------------------------------------------------------- verify


def read_catalog(cur: Any, database: str) -> tuple[dict[str, TableDef], dict[str, str], dict[str, list[tuple[str, str, str]]]]:
    cur.execute("SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", (database,))
    engines = dict(cur.fetchall())
    cols: dict[str, list[ColumnDef]] = defaultdict(list)
    cur.execute(
        "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS "
        "WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION",
        (database,),
    )
    for table, col, typ, nullable in cur.fetchall():
        cols[table].append(ColumnDef(col, typ, nullable == "YES"))
    index_cols: dict[tuple[str, str], list[str]] = defaultdict(list)
    unique: dict[tuple[str, str], bool] = {}
    cur.execute(
        "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME, COLLATION FROM information_schema.STATISTICS "
        "WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
        (database,),
    )
    for table, index, non_unique, col, collation in cur.fetchall():
        index_cols[(table, index)].append(col + (" DESC" if collation == "D" else ""))
        unique[(table, index)] = not non_unique
    pks: dict[str, tuple[str, ...]] = {}
    idx: dict[str, list[IndexDef]] = defaultdict(list)
    for (table, index), columns in index_cols.items():
        if index == "PRIMARY":
            pks[table] = tuple(columns)
        else:
            idx[table].append(IndexDef(index, ", ".join(columns), unique[(table, index)]))
    partitions: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    cur.execute(
        "SELECT TABLE_NAME, PARTITION_NAME, PARTITION_METHOD, PARTITION_EXPRESSION FROM information_schema.PARTITIONS "
        "WHERE TABLE_SCHEMA = ? AND PARTITION_NAME IS NOT NULL ORDER BY TABLE_NAME, PARTITION_ORDINAL_POSITION",
        (database,),
    )
    for table, part, method, expr in cur.fetchall():
        partitions[table].append((part, method, expr))
    live = {t: TableDef(t, tuple(cols[t]), pks.get(t, ()), tuple(idx[t])) for t in engines}
    return live, engines, partitions


def _verify_partitions(expected: list[TableDef], live: dict[str, list[tuple[str, str, str]]]) -> list[str]:
    diffs = []
    for t in expected:
        got = live.pop(t.name, [])
        if "partitions" not in t.options:
            if got:
                diffs.append(f"{t.name}: unexpectedly partitioned")
            continue
        if not got or {(m, e.strip("`")) for _p, m, e in got} != {("RANGE COLUMNS", "data_time")}:
            diffs.append(f"{t.name}: not partitioned BY RANGE COLUMNS(data_time)")
        elif got[-1][0] != "future":
            diffs.append(f"{t.name}: no catch-all 'future' partition")
    diffs += [f"{name}: unexpectedly partitioned" for name in sorted(live)]
    return diffs


def _verify_rows_and_users(cur: Any, database: str) -> list[str]:
    diffs = []
    db = quote_ident(database)
    want_kinds = {
        (data_type_name(t, fmt, w), int(t))
        for t in TYPE_ORDER
        for fmt in (AttrFormat.SCALAR, AttrFormat.SPECTRUM)
        for w in (WriteType.READ, WriteType.READ_WRITE)
    }
    for table, query, want in (
        ("att_conf_data_type", f"SELECT data_type, tango_data_type FROM {db}.att_conf_data_type", want_kinds),
        ("att_history_event", f"SELECT event, 0 FROM {db}.att_history_event", {(e, 0) for e in HISTORY_EVENTS_MYSQL}),
    ):
        try:
            cur.execute(query)
        except Exception:  # noqa: BLE001 - a missing table is already reported
            continue
        got = set(cur.fetchall())
        if got != want:
            diffs.append(f"{table}: rows differ (missing {sorted(want - got)}, unexpected {sorted(got - want)})")
    for user, privilege in ((RW_USER, "Insert_priv"), (RO_USER, "Select_priv")):
        cur.execute(f"SELECT {privilege} FROM mysql.db WHERE User = ? AND Host = '%' AND Db = ?", (user, database))
        row = cur.fetchone()
        if row is None or row[0] != "Y":
            diffs.append(f"user {user}@% lacks {privilege.split('_')[0].upper()} on {database}")
    return diffs


# ------------------------------------------------------------------------------------- writer


def _naive_utc(dt: datetime) -> datetime:
    """datetime(6) columns hold UTC wall time (sessions run with time_zone '+00:00')."""
    if dt.tzinfo is None:
        return dt
    if dt.tzinfo is not timezone.utc:
        dt = dt.astimezone(timezone.utc)
    return dt.replace(tzinfo=None)


def _finite(x: Any) -> Any:
    """MariaDB has no NaN/Infinity in FLOAT/DOUBLE: they are stored as NULL (as libhdbpp-mysql does)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _converter(tango_type: TangoType) -> Any:
    if tango_type in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE):
        return _finite
    if tango_type == TangoType.DEV_STRING:
        return lambda x: x
    return lambda x: None if x is None else int(x)


class _Att:
    __slots__ = ("id", "info", "table", "rw", "array", "encoded", "convert", "columns", "type_is_var")

    def __init__(self, att_id: int, info: AttributeInfo) -> None:
        self.id = att_id
        self.info = info
        self.table = "att_" + data_type_name(info.type, info.format, info.write_type)
        self.rw = info.write_type != WriteType.READ
        self.array = info.format != AttrFormat.SCALAR
        self.encoded = info.type == TangoType.DEV_ENCODED
        self.convert = _converter(info.type)
        self.type_is_var = info.type in (TangoType.DEV_STRING, TangoType.DEV_ENCODED)
        cols = ["att_conf_id", "data_time", "recv_time"]
        if self.array:
            cols += ["idx", "dim_x_r", "dim_y_r", "value_r"] + (["dim_x_w", "dim_y_w", "value_w"] if self.rw else [])
        else:
            cols += ["value_r"] + (["value_w"] if self.rw else [])
        cols += ["quality", "att_error_desc_id"]
        if self.encoded:
            cols += ["format_r"] + (["format_w"] if self.rw else [])
        self.columns = cols


def _packets(rows: list[tuple[Any, ...]], variable: bool) -> Iterable[list[tuple[Any, ...]]]:
    """Split one table's rows so that a bulk request stays well below max_allowed_packet (16 MiB).

    The connector sends an executemany as one packet; strings and blobs make its size unpredictable.
    """
    if not variable:
        for k in range(0, len(rows), ROWS_PER_PACKET):
            yield rows[k : k + ROWS_PER_PACKET]
        return
    chunk: list[tuple[Any, ...]] = []
    size = 0
    for row in rows:
        n = 64 + sum(len(v) * 4 if isinstance(v, str) else len(v) for v in row if isinstance(v, (str, bytes)))
        if chunk and (size + n > BYTES_PER_PACKET or len(chunk) >= ROWS_PER_PACKET):
            yield chunk
            chunk, size = [], 0
        chunk.append(row)
        size += n
    if chunk:
        yield chunk


def _flatten(value: Any) -> tuple[list[Any], int, int]:
    """(elements row-major, dim_x, dim_y); dim_y is 0 for a spectrum."""
    if value is None:
        return [], 0, 0
    value = as_plain(value) if not isinstance(value, list) else value
    if value and isinstance(value[0], list):
        return [x for row in value for x in row], len(value[0]), len(value)
    return list(value), len(value), 0


def _split_encoded(values: list[Any]) -> tuple[list[Any], list[Any]]:
    pairs = [as_encoded(v) for v in values]
    return [p.data if p else None for p in pairs], [p.format if p else None for p in pairs]


class MySQLBulkWriter(BulkWriter):
    """executemany (MariaDB bulk protocol) writer for the libhdbpp-mysql layout; not thread-safe."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        conn.autocommit = False
        self.cur = conn.cursor()
        self._atts: dict[str, _Att] = {}
        self._errors: dict[str, int] = {}
        self._last_history: dict[int, datetime] = {}
        self.cur.execute("SELECT data_type, att_conf_data_type_id FROM att_conf_data_type")
        self._kinds = dict(self.cur.fetchall())
        self.cur.execute("SELECT event, att_history_event_id FROM att_history_event")
        self._events = dict(self.cur.fetchall())
        conn.commit()

    def register_attribute(self, info: AttributeInfo, event_time: datetime | None = None) -> int:
        cached = self._atts.get(info.name)
        if cached is not None:
            if (cached.info.type, cached.info.format, cached.info.write_type) != (info.type, info.format, info.write_type):
                raise SchemaError(f"attribute {info.name!r} is already archived with another type/format/write type")
            return cached.id
        kind = self._kinds[data_type_name(info.type, info.format, info.write_type)]
        self.cur.execute("SELECT att_conf_id, att_conf_data_type_id FROM att_conf WHERE att_name = ?", (info.name,))
        row = self.cur.fetchone()
        if row is not None:
            if row[1] != kind:
                raise SchemaError(f"attribute {info.name!r} is already archived with another type/format/write type")
            att_id = row[0]
        else:
            p = split_att_name(info.name)
            self.cur.execute(
                "INSERT INTO att_conf (att_name, att_conf_data_type_id, att_ttl, facility, domain, family, member, name) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (info.name, kind, info.ttl_hours, p.cs_name, p.domain, p.family, p.member, p.name),
            )
            att_id = self.cur.lastrowid
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
        if event not in self._events:
            raise SchemaError(f"unknown history event {event!r} (known: {', '.join(HISTORY_EVENTS_MYSQL)})")
        t = _naive_utc(event_time)
        # PRIMARY KEY(att_conf_id, time): events of one attribute at the same instant move 1 us later.
        last = self._last_history.get(att_id)
        if last is not None and t <= last:
            t = last + timedelta(microseconds=1)
        self._last_history[att_id] = t
        self.cur.execute(
            "INSERT IGNORE INTO att_history (att_conf_id, time, att_history_event_id) VALUES (?, ?, ?)",
            (att_id, t, self._events[event]),
        )

    def write_history(self, att_name: str, event: str, event_time: datetime) -> None:
        self._history(self._att(att_name).id, event, event_time)
        self.conn.commit()

    def write_parameter(self, param: AttParameter) -> None:
        att = self._att(param.att_name)
        self.cur.execute(
            "INSERT INTO att_parameter (att_conf_id, recv_time, label, unit, standard_unit, display_unit, format, "
            "archive_rel_change, archive_abs_change, archive_period, description, enum_labels) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                att.id, _naive_utc(param.recv_time), param.label, param.unit, param.standard_unit, param.display_unit,
                param.format, param.archive_rel_change, param.archive_abs_change, param.archive_period,
                param.description, json.dumps(list(param.enum_labels), ensure_ascii=False),
            ),
        )
        self._history(att.id, "insert_param", param.recv_time)
        self.conn.commit()

    def _error_ids(self, descs: set[str]) -> None:
        missing = sorted(descs - self._errors.keys())
        if not missing:
            return
        self.cur.executemany("INSERT IGNORE INTO att_error_desc (error_desc) VALUES (?)", [(d,) for d in missing])
        marks = ", ".join("?" * len(missing))
        self.cur.execute(f"SELECT att_error_desc_id, error_desc FROM att_error_desc WHERE error_desc IN ({marks})", missing)
        for att_error_id, desc in self.cur.fetchall():
            self._errors[desc] = att_error_id

    def write(self, events: Iterable[Event]) -> int:
        by_table: dict[str, tuple[_Att, list[tuple[Any, ...]]]] = {}
        descs: set[str] = set()
        events = list(events)
        for e in events:
            if e.error_desc is not None:
                descs.add(e.error_desc[:ERROR_DESC_MAX])
        try:
            self._error_ids(descs)
            now = datetime.now(timezone.utc).replace(tzinfo=None)
            for e in events:
                att = self._att(e.att_name)
                entry = by_table.setdefault(att.table, (att, []))
                self._rows(att, e, now, entry[1])
            for table, (att, rows) in by_table.items():
                cols = ", ".join(map(quote_ident, att.columns))
                marks = ", ".join("?" * len(att.columns))
                stmt = f"INSERT INTO {quote_ident(table)} ({cols}) VALUES ({marks})"
                for chunk in _packets(rows, att.type_is_var):
                    self.cur.executemany(stmt, chunk)
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        return len(events)

    def _rows(self, att: _Att, e: Event, now: datetime, out: list[tuple[Any, ...]]) -> None:
        t = _naive_utc(e.data_time)
        recv = _naive_utc(e.recv_time) if e.recv_time is not None else now
        err = self._errors[e.error_desc[:ERROR_DESC_MAX]] if e.error_desc is not None else None
        conv = att.convert
        if not att.array:
            if att.encoded:
                r, w = as_encoded(e.value_r), as_encoded(e.value_w)
                head = (att.id, t, recv, r.data if r else None) + ((w.data if w else None,) if att.rw else ())
                out.append(head + (e.quality, err, r.format if r else None) + ((w.format if w else None,) if att.rw else ()))
            elif att.rw:
                out.append((att.id, t, recv, conv(e.value_r), conv(e.value_w), e.quality, err))
            else:
                out.append((att.id, t, recv, conv(e.value_r), e.quality, err))
            return
        vr, dxr, dyr = _flatten(e.value_r)
        vw, dxw, dyw = _flatten(e.value_w) if att.rw else ([], 0, 0)
        fr: list[Any] = []
        fw: list[Any] = []
        if att.encoded:
            (vr, fr), (vw, fw) = _split_encoded(vr), _split_encoded(vw)
        else:
            vr, vw = [conv(x) for x in vr], [conv(x) for x in vw]
        nr, nw = len(vr), len(vw)
        for i in range(max(nr, nw, 1)):  # an event without elements still gets its row (idx 0, dims 0)
            row: tuple[Any, ...] = (att.id, t, recv, i, dxr, dyr, vr[i] if i < nr else None)
            if att.rw:
                row += (dxw, dyw, vw[i] if i < nw else None)
            row += (e.quality, err)
            if att.encoded:
                row += (fr[i] if i < nr else None,) + ((fw[i] if i < nw else None,) if att.rw else ())
            out.append(row)

    def close(self) -> None:
        self.conn.close()


# ------------------------------------------------------------------------------------- reader


def _reshape(values: list[Any], dim_x: int, dim_y: int, absent: bool) -> Any:
    """Rebuild a spectrum (dim_y 0) or image; no elements reads back as [] or, when absent, None."""
    if dim_x == 0:
        return None if absent else []
    n = dim_x * (dim_y or 1)
    flat = values[:n]
    if dim_y == 0:
        return flat
    return [flat[k * dim_x : (k + 1) * dim_x] for k in range(dim_y)]


def fetch_events(conn: Any, att_name: str) -> list[Event]:
    cur = conn.cursor(binary=True)  # the text protocol rounds FLOAT to 6 digits
    cur.execute(
        "SELECT c.att_conf_id, t.data_type, t.tango_data_type FROM att_conf c "
        "JOIN att_conf_data_type t USING (att_conf_data_type_id) WHERE c.att_name = ?",
        (att_name,),
    )
    row = cur.fetchone()
    if row is None:
        raise SchemaError(f"attribute {att_name!r} is not archived")
    att_id, kind, type_num = row
    array, rw, encoded = kind.startswith("array"), kind.endswith("_rw"), type_num == TangoType.DEV_ENCODED
    cols = ["d.data_time", "d.value_r", "d.value_w" if rw else "NULL", "d.quality", "e.error_desc"]
    cols += ["d.format_r", "d.format_w" if rw else "NULL"] if encoded else ["NULL", "NULL"]
    if array:
        cols += ["d.idx", "d.dim_x_r", "d.dim_y_r"] + (["d.dim_x_w", "d.dim_y_w"] if rw else ["0", "0"])
    order = "d.data_time, d.idx" if array else "d.data_time"
    cur.execute(
        f"SELECT {', '.join(cols)} FROM {quote_ident('att_' + kind)} d LEFT JOIN att_error_desc e "
        f"ON e.att_error_desc_id = d.att_error_desc_id WHERE d.att_conf_id = ? ORDER BY {order}",
        (att_id,),
    )
    rows = cur.fetchall()
    to_value = _value_reader(TangoType(type_num))
    if not array:
        return [
            Event(att_name, r[0].replace(tzinfo=timezone.utc), _enc_or(encoded, to_value(r[1]), r[5]),
                  _enc_or(encoded, to_value(r[2]), r[6]), r[3], r[4])
            for r in rows
        ]
    return _assemble_arrays(att_name, rows, encoded, rw, to_value)


def _value_reader(tango_type: TangoType) -> Any:
    if tango_type == TangoType.DEV_BOOLEAN:
        return lambda x: None if x is None else bool(x)
    if tango_type == TangoType.DEV_ENCODED:
        return lambda x: None if x is None else bytes(x)
    return lambda x: x


def _enc_or(encoded: bool, value: Any, fmt: Any) -> Any:
    if not encoded or value is None:
        return value
    return Encoded(fmt or "", value)


def _assemble_arrays(att_name: str, rows: list[tuple[Any, ...]], encoded: bool, rw: bool, to_value: Any) -> list[Event]:
    events: list[Event] = []
    groups: dict[datetime, list[tuple[Any, ...]]] = {}
    for r in rows:
        groups.setdefault(r[0], []).append(r)
    for data_time, items in groups.items():
        first = items[0]
        quality, error_desc = first[3], first[4]
        absent = error_desc is not None or quality == 1  # an INVALID or error event has no value
        vr = [_enc_or(encoded, to_value(r[1]), r[5]) for r in items]
        vw = [_enc_or(encoded, to_value(r[2]), r[6]) for r in items]
        value_r = _reshape(vr, first[8], first[9], absent)
        value_w = _reshape(vw, first[10], first[11], absent) if rw else None
        events.append(Event(att_name, data_time.replace(tzinfo=timezone.utc), value_r, value_w, quality, error_desc))
    return events

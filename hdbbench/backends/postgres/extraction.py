# SPDX-License-Identifier: Apache-2.0
"""The PostgreSQL side of data generation, dumps and extraction: the `ExtractionBackend` methods
(mixed into the backend) and the binary-COPY column loader of `hdbbench data generate`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from hdbbench.backends.accounts import as_account
from hdbbench.backends.postgres.copy_binary import (
    PG_COPY_COLUMNS,
    PGCOPY_HEADER,
    PGCOPY_TRAILER,
    pg_binary_rows,
)
from hdbbench.backends.postgres.maintenance import vacuum_analyze_tables
from hdbbench.backends.postgres.tables import READER_USER, data_table_name, quote_ident
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType, WriteType


class PgColumnLoader:
    """Loads `columnar.ColumnBatch`es with binary COPY built by numpy; one transaction per batch."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def load(self, batch: Any) -> int:
        """Store a scalar batch in its type's data table."""
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
        return (f"SELECT data_time, value_r FROM {quote_ident(table)} WHERE att_conf_id = %s "
                "AND data_time >= %s AND data_time < %s ORDER BY data_time")

    def bucket_sql(self, bucket_s: int) -> str:
        units = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}
        if bucket_s in units:
            return f"date_trunc('{units[bucket_s]}', data_time)"
        return f"date_bin(interval '{int(bucket_s)} seconds', data_time, timestamptz '1970-01-01 00:00:00+00')"

    def aggregate_sql(self, table: str, bucket_s: int) -> str:
        b = self.bucket_sql(bucket_s)
        return (f"SELECT {b} AS bucket, count(value_r), avg(value_r), min(value_r), max(value_r) "
                f"FROM {quote_ident(table)} WHERE att_conf_id = %s AND data_time >= %s AND data_time < %s "
                "GROUP BY 1 ORDER BY 1")

    def reader(self) -> psycopg.Connection[Any]:
        """Queries run as HDB++'s read-only role, as an extraction client does."""
        endpoint, database = getattr(self, "endpoint"), getattr(self, "database")
        return as_account(endpoint, READER_USER).connect(database)

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
        """VACUUM (ANALYZE) of the data tables that hold rows: loaded data as a facility's is, vacuumed
        (its visibility map set) and with the planner's statistics (our servers autoanalyze only
        after a million rows), the same however soon the queries or sizes follow the load."""
        with self.connect(autocommit=True) as conn:
            vacuum_analyze_tables(conn)

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

# SPDX-License-Identifier: Apache-2.0
"""The MariaDB side of data generation, dumps and extraction: the `ExtractionBackend` methods
(mixed into the backend) and the LOAD DATA column loader of `hdbbench data generate`.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from hdbbench.backends.accounts import as_account
from hdbbench.backends.mysql.encoders import naive_utc
from hdbbench.backends.mysql.loaddata import mysql_tsv
from hdbbench.backends.mysql.tables import RO_USER, data_type_name, quote_ident
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType, WriteType

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
        """Queries run as HDB++'s read-only user, as an extraction client does."""
        return as_account(getattr(self, "endpoint"), RO_USER).connect(self.database)

    @staticmethod
    def _params(params: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(naive_utc(p) if isinstance(p, datetime) else p for p in params)

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

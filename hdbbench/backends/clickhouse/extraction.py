# SPDX-License-Identifier: Apache-2.0
"""The ClickHouse side of data generation, dumps and extraction: the `ExtractionBackend` methods
(mixed into the backend) and the column loader of `hdbbench data generate`.

Queries are written with `?` placeholders, as the other backends' are; ClickHouse 18.16's HTTP
interface binds no parameters, so `stream` and `explain` put them into the text as literals (numbers
and microsecond time stamps only: nothing a caller gives is quoted text). Server figures come from
`system.query_log` (the server's configuration keeps it) for the statement's own query id.
"""

from __future__ import annotations

import csv
import io
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from hdbbench.backends.clickhouse.client import Session
from hdbbench.backends.clickhouse.encoders import from_us, to_us
from hdbbench.backends.clickhouse.rowbinary import data_row, scalar_batch
from hdbbench.backends.clickhouse.tables import HELD_TYPES, family, quote_ident, quote_string, table_of
from hdbbench.backends.clickhouse.writer import SCALAR_COLUMNS
from hdbbench.model.columnar import ColumnBatch
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, WriteType, parse_type

LOG_ATTEMPTS = 6
_DUMP_ORDER = {"pk": "att_conf_id, data_time", "time": "data_time, att_conf_id"}
_US = 1_000_000


def bind(query: str, params: tuple[Any, ...]) -> str:
    """The query with each `?` replaced by its parameter: an int, or a datetime as microseconds."""
    pieces = query.split("?")
    if len(pieces) != len(params) + 1:
        raise ConfigError(f"query has {len(pieces) - 1} placeholders for {len(params)} parameters")
    literals = [str(to_us(p)) if isinstance(p, datetime) else str(int(p)) for p in params]
    return "".join(piece + literal for piece, literal in zip(pieces, literals)) + pieces[-1]


class ClickHouseColumnLoader:
    """Loads `columnar.ColumnBatch`es (scalar rows) into `att_scalar_<type>`, one insert per batch."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def load(self, batch: ColumnBatch) -> int:
        if not len(batch):
            return 0
        self.session.insert(f"att_scalar_{batch.tango_type.suffix}", SCALAR_COLUMNS, scalar_batch(batch), binary=True)
        return len(batch)

    def close(self) -> None:
        self.session.close()


class ClickHouseExtraction:
    """Extraction SQL and helpers of the ClickHouse layout."""

    placeholder = "?"
    database: str
    session: Callable[[], Session]

    def table_for(self, info: AttributeInfo) -> str:
        return table_of(info)

    def attribute_catalog(self) -> list[tuple[int, AttributeInfo]]:
        rows = self.session().all(
            "SELECT att_conf_id, att_name, att_conf_type_id, att_conf_format_id, att_conf_write_id FROM att_conf "
            "ORDER BY att_conf_id LIMIT 1 BY att_conf_id")
        # Only attributes of the types the layout holds: another's would name a table that does not exist.
        return [(int(i), AttributeInfo(str(n), TangoType(int(t)), AttrFormat(int(f)), WriteType(int(w))))
                for i, n, t, f, w in rows if TangoType(int(t)) in HELD_TYPES]

    def attribute_spans(self, table: str) -> dict[int, tuple[int, datetime, datetime]]:
        rows = self.session().all(f"SELECT att_conf_id, count(), min(data_time), max(data_time) FROM {quote_ident(table)} "
                                  "GROUP BY att_conf_id")
        return {int(i): (int(n), from_us(lo), from_us(hi)) for i, n, lo, hi in rows}

    def range_sql(self, table: str, array: bool) -> str:
        return (f"SELECT data_time, value_r FROM {quote_ident(table)} WHERE att_conf_id = ? "
                "AND data_time >= ? AND data_time < ? ORDER BY data_time")

    def aggregate_sql(self, table: str, bucket_s: int) -> str:
        width = int(bucket_s) * _US
        return (f"SELECT intDiv(data_time, {width}) * {width} AS bucket, count(value_r), avg(value_r), "
                f"min(value_r), max(value_r) FROM {quote_ident(table)} WHERE att_conf_id = ? AND data_time >= ? "
                "AND data_time < ? GROUP BY bucket ORDER BY bucket")

    def reader(self) -> Session:
        """A session for queries (ClickHouse 18.16 has one account: the server's)."""
        return self.session()

    def stream(self, conn: Session, query: str, params: tuple[Any, ...], fetch_rows: int,
               consume: Callable[[list[Any]], None]) -> int:
        """Rows as they stream from the server, in blocks of `fetch_rows`; the first column (a
        microsecond time stamp in every query of this layout) as a UTC datetime."""
        rows = 0
        block: list[Any] = []
        for row in conn.rows(bind(query, params)):
            values = list(row.values())
            values[0] = from_us(values[0])
            block.append(tuple(values))
            if len(block) >= fetch_rows:
                rows += len(block)
                consume(block)
                block = []
        if block:
            rows += len(block)
            consume(block)
        return rows

    def explain(self, conn: Session, query: str, params: tuple[Any, ...]) -> dict[str, Any]:
        """Server time, rows and bytes read of one execution, from system.query_log."""
        query_id = uuid.uuid4().hex
        list(conn.rows(bind(query, params), settings={"log_queries": "1", "query_id": query_id}))
        found = _logged(conn, query_id)
        duration, read_rows, read_bytes, result_rows = found[0] if found else (None, None, None, None)
        return {"server_ms": duration, "planning_ms": None, "pages_read": None, "pages_hit": None,
                "server_rows": result_rows, "read_rows": read_rows, "read_bytes": read_bytes,
                "server_source": "system.query_log (query_duration_ms, whole milliseconds)"}

    def column_loader(self) -> ClickHouseColumnLoader:
        return ClickHouseColumnLoader(self.session())

    def dump_type(self, tango_type: TangoType, order: str, out: Any) -> None:
        """Every scalar row of `tango_type` as neutral CSV bytes (att_conf_id, data_time as UTC text,
        value_r, value_w, quality, att_error_desc_id; empty = NULL)."""
        table = quote_ident(f"att_{family(AttrFormat.SCALAR)}_{tango_type.suffix}")
        sql = (f"SELECT att_conf_id, data_time, value_r, value_w, quality, att_error_desc_id FROM {table} "
               f"ORDER BY {_DUMP_ORDER[order]}")
        for block in _blocks(self.session().rows(sql), 10_000):
            text = io.StringIO()
            csv.writer(text, lineterminator="\n").writerows(_dump_row(list(row.values())) for row in block)
            out.write(text.getvalue().encode())

    def refresh_statistics(self) -> None:
        """Nothing to refresh: system.parts is current and the planner keeps no statistics."""

    def load_csv(self, table: str, path: str) -> None:
        """Load a neutral CSV (att_conf_id, data_time UTC text, value_r, value_w, quality, att_error_desc_id;
        empty: NULL) into scalar table `table`, as RowBinary (exact values)."""
        tango_type = parse_type(table.rpartition("_")[2])
        info = AttributeInfo("", tango_type, AttrFormat.SCALAR, WriteType.READ_WRITE)
        value = _csv_value(tango_type)
        rows = []
        with open(path, encoding="utf-8", newline="") as handle:
            for fields in csv.reader(handle):
                if len(fields) < 6:
                    continue
                event = Event("", datetime.fromisoformat(fields[1]), value(fields[2]), quality=int(fields[4] or 0))
                error = int(fields[5]) if fields[5] else None
                rows.append(data_row(int(fields[0]), to_us(event.data_time), info, event, value(fields[3]), error))
        if rows:
            self.session().insert(quote_ident(table), SCALAR_COLUMNS, b"".join(rows), binary=True)


def _csv_value(tango_type: TangoType) -> Callable[[str], Any]:
    """A CSV field as the Python value of the type (empty: None)."""
    def convert(text: str) -> Any:
        if text == "":
            return None
        if tango_type == TangoType.DEV_STRING:
            return text
        if tango_type in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE):
            return float(text)
        if tango_type == TangoType.DEV_BOOLEAN:
            return text.strip().lower() in ("1", "t", "true")
        return int(text)
    return convert


def _logged(conn: Session, query_id: str) -> list[tuple[Any, ...]]:
    """The query's QueryFinish row of system.query_log. The server logs it once the query's answer is
    sent, so a flush right after the answer can precede it: flushed again for up to about a second."""
    for attempt in range(LOG_ATTEMPTS):
        conn.execute("SYSTEM FLUSH LOGS")
        found = conn.all("SELECT query_duration_ms, read_rows, read_bytes, result_rows FROM system.query_log "
                         f"WHERE query_id = {quote_string(query_id)} AND type = 2")
        if found:
            return found
        time.sleep(0.05 * (attempt + 1))
    return []


def _blocks(rows: Iterator[Any], size: int) -> Iterator[list[Any]]:
    block: list[Any] = []
    for row in rows:
        block.append(row)
        if len(block) >= size:
            yield block
            block = []
    if block:
        yield block


def _dump_row(values: list[Any]) -> list[Any]:
    values[1] = from_us(values[1]).strftime("%Y-%m-%d %H:%M:%S.%f")
    return ["" if v is None else repr(v) if isinstance(v, float) else v for v in values]

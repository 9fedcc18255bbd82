# SPDX-License-Identifier: Apache-2.0
"""Binary-COPY bulk writer for the HDB++ PostgreSQL/TimescaleDB layout.

Rows are written with binary COPY (psycopg 3), one COPY per table per batch, in one transaction.
devenum labels are filled by the schema's BEFORE INSERT trigger from the latest
att_parameter.enum_labels, as in HDB++, so the writer never sends them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
from psycopg import sql
from psycopg.copy import LibpqWriter

from hdbbench.backends.base import BulkWriter
from hdbbench.backends.postgres.encoders import encoded_values, plain_scalar
from hdbbench.backends.postgres.tables import VALUE_TYPES, data_table_name
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import (
    HISTORY_EVENTS,
    AttParameter,
    AttrFormat,
    AttributeInfo,
    Event,
    TangoType,
    as_plain,
    split_att_name,
)


def _copy_statement(table: str) -> sql.Composed:
    return sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, COPY_COLUMNS)))


class _Tee(LibpqWriter):
    """Sends the COPY stream and keeps a copy of it (PgBulkWriter.write_recorded)."""

    def __init__(self, cursor: psycopg.Cursor[Any], sink: list[bytes]) -> None:
        super().__init__(cursor)
        self.sink = sink

    def write(self, data: Any) -> None:
        self.sink.append(bytes(data))
        super().write(data)


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
        return self._write(events, None)

    def write_recorded(self, events: Iterable[Event]) -> tuple[int, Any]:
        """Each table's binary COPY stream as sent (error events, whose description ids are this
        database's, are not recorded: None)."""
        events = list(events)
        if any(e.error_desc is not None for e in events):
            return self.write(events), None
        recorded: list[tuple[str, bytes, int]] = []
        return self._write(events, recorded), recorded

    def replay(self, recorded: Any) -> int:
        count = 0
        try:
            with self.conn.cursor() as cur:
                for table, stream, events in recorded:
                    with cur.copy(_copy_statement(table)) as copy:
                        copy.write(stream)  # signature, rows and trailer, as recorded
                    count += events
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        return count

    def _write(self, events: Iterable[Event], recorded: list[tuple[str, bytes, int]] | None) -> int:
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
                    sink: list[bytes] | None = [] if recorded is not None else None
                    count += self._copy(cur, table, items, sink)
                    if recorded is not None and sink is not None:
                        recorded.append((table, b"".join(sink), len(items)))
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        return count

    def _copy(self, cur: psycopg.Cursor[Any], table: str, items: list[tuple[_Att, Event]],
              sink: list[bytes] | None = None) -> int:
        encoded = items[0][0].info.type == TangoType.DEV_ENCODED
        plain = items[0][0].info.type not in (TangoType.DEV_ENCODED,) and items[0][0].info.format != AttrFormat.SCALAR
        errors = self._errors
        with cur.copy(_copy_statement(table), writer=_Tee(cur, sink) if sink is not None else None) as copy:
            copy.set_types(items[0][0].copy_types)
            for att, e in items:
                t = e.data_time if e.data_time.tzinfo is not None else e.data_time.replace(tzinfo=timezone.utc)
                err = errors[e.error_desc] if e.error_desc is not None else None
                if encoded:
                    vr, vw, details = encoded_values(e.value_r, e.value_w)
                    copy.write_row((att.id, t, vr, vw, e.quality, err, details))
                elif plain:
                    copy.write_row((att.id, t, as_plain(e.value_r), as_plain(e.value_w), e.quality, err, None))
                else:
                    copy.write_row((att.id, t, plain_scalar(e.value_r), plain_scalar(e.value_w), e.quality, err, None))
        return len(items)

    def close(self) -> None:
        self.conn.close()

def _check_same_kind(known: AttributeInfo, info: AttributeInfo) -> None:
    if (known.type, known.format, known.write_type) != (info.type, info.format, info.write_type):
        raise SchemaError(f"attribute {info.name!r} is already archived with another type/format/write type")

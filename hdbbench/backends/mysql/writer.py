# SPDX-License-Identifier: Apache-2.0
"""executemany (MariaDB bulk protocol) writer for the libhdbpp-mysql layout, one transaction per
batch. An array event with no elements is stored as one row idx=0, dim 0, value NULL.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

from hdbbench.backends.base import BulkWriter
from hdbbench.backends.mysql.encoders import converter, flatten, naive_utc, split_encoded
from hdbbench.backends.mysql.tables import (
    BYTES_PER_PACKET,
    ERROR_DESC_MAX,
    HISTORY_EVENTS_MYSQL,
    ROWS_PER_PACKET,
    data_type_name,
    quote_ident,
)
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import (
    AttParameter,
    AttrFormat,
    AttributeInfo,
    Event,
    TangoType,
    WriteType,
    as_encoded,
    split_att_name,
)


class _Att:
    __slots__ = ("id", "info", "table", "rw", "array", "encoded", "convert", "columns", "type_is_var")

    def __init__(self, att_id: int, info: AttributeInfo) -> None:
        self.id = att_id
        self.info = info
        self.table = "att_" + data_type_name(info.type, info.format, info.write_type)
        self.rw = info.write_type != WriteType.READ
        self.array = info.format != AttrFormat.SCALAR
        self.encoded = info.type == TangoType.DEV_ENCODED
        self.convert = converter(info.type)
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
        t = naive_utc(event_time)
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
                att.id, naive_utc(param.recv_time), param.label, param.unit, param.standard_unit, param.display_unit,
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
        return self._write(list(events), None)

    def write_recorded(self, events: Iterable[Event]) -> tuple[int, Any]:
        """The statements and row packets as sent (error events, whose description ids are this
        database's, are not recorded: None)."""
        events = list(events)
        if any(e.error_desc is not None for e in events):
            return self.write(events), None
        recorded: list[tuple[str, list[tuple[Any, ...]]]] = []
        return self._write(events, recorded), (recorded, len(events))

    def replay(self, recorded: Any) -> int:
        packets, events = recorded
        try:
            for stmt, chunk in packets:
                self.cur.executemany(stmt, chunk)
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        return int(events)

    def _write(self, events: list[Event], recorded: list[tuple[str, list[tuple[Any, ...]]]] | None) -> int:
        by_table: dict[str, tuple[_Att, list[tuple[Any, ...]]]] = {}
        descs: set[str] = set()
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
                    if recorded is not None:
                        recorded.append((stmt, chunk))
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        return len(events)

    def _rows(self, att: _Att, e: Event, now: datetime, out: list[tuple[Any, ...]]) -> None:
        t = naive_utc(e.data_time)
        recv = naive_utc(e.recv_time) if e.recv_time is not None else now
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
        vr, dxr, dyr = flatten(e.value_r)
        vw, dxw, dyw = flatten(e.value_w) if att.rw else ([], 0, 0)
        fr: list[Any] = []
        fw: list[Any] = []
        if att.encoded:
            (vr, fr), (vw, fw) = split_encoded(vr), split_encoded(vw)
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

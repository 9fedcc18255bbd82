# SPDX-License-Identifier: Apache-2.0
"""The ClickHouse `BulkWriter`: a batch is one `INSERT ... FORMAT RowBinary` per data table
(rowbinary.py says why not text); the configuration rows go as TabSeparated text.

ClickHouse has no transactions: each insert is atomic for its table (one new part per partition),
a batch over several tables is not. Error messages get their att_error_desc row before the data
that names them, as the subscriber's writer does.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from hdbbench.backends.base import BulkWriter
from hdbbench.backends.clickhouse import rowbinary
from hdbbench.backends.clickhouse.client import Session
from hdbbench.backends.clickhouse.encoders import text, text_array, to_us, tsv
from hdbbench.backends.clickhouse.tables import ENCODED_REASON, HELD_TYPES, fnv1a64, has_write_side, table_of
from hdbbench.model.errors import ConfigError, SchemaError
from hdbbench.model.hdbtypes import AttParameter, AttrFormat, AttributeInfo, Event, split_att_name

SCALAR_COLUMNS = "att_conf_id, data_time, value_r, value_w, quality, att_error_desc_id"
ARRAY_COLUMNS = ("att_conf_id, data_time, value_r, value_w, dim_x_r, dim_y_r, dim_x_w, dim_y_w, quality, "
                 "att_error_desc_id")
PARAMETER_COLUMNS = ("att_conf_id, recv_time, label, unit, standard_unit, display_unit, format, archive_rel_change, "
                     "archive_abs_change, archive_period, description, enum_labels")


def data_row(att_id: int, info: AttributeInfo, event: Event, error_id: int | None) -> bytes:
    """One event as its table's RowBinary row (SCALAR_COLUMNS or ARRAY_COLUMNS)."""
    value_w = event.value_w if has_write_side(info.write_type) else None
    return rowbinary.data_row(att_id, to_us(event.data_time), info, event, value_w, error_id)


class ClickHouseBulkWriter(BulkWriter):
    def __init__(self, session: Session) -> None:
        self.session = session
        self._attributes: dict[str, tuple[int, AttributeInfo]] = {}
        self._errors: set[int] = set()

    def register_attribute(self, info: AttributeInfo, event_time: datetime | None = None) -> int:
        if info.type not in HELD_TYPES:
            raise ConfigError(f"{info.name}: {ENCODED_REASON}")
        att_id = fnv1a64(info.name)
        if info.name in self._attributes:
            return att_id
        exists = self.session.scalar(f"SELECT count() FROM att_conf WHERE att_conf_id = {att_id}")
        if not exists:
            parts = split_att_name(info.name)
            row = [str(att_id), text(info.name), table_of(info), str(int(info.type)), str(int(info.format)),
                   str(int(info.write_type)), *(text(p) for p in parts), str(info.ttl_hours or 0)]
            self.session.insert("att_conf", "att_conf_id, att_name, table_name, att_conf_type_id, att_conf_format_id,"
                                " att_conf_write_id, cs_name, domain, family, member, name, ttl", tsv([row]))
            self._attributes[info.name] = (att_id, info)
            self.write_history(info.name, "add", event_time or datetime.now(timezone.utc))
        self._attributes[info.name] = (att_id, info)
        return att_id

    def _id_of(self, att_name: str) -> int:
        try:
            return self._attributes[att_name][0]
        except KeyError:
            raise SchemaError(f"attribute {att_name!r} is not registered with this writer") from None

    def write_parameter(self, param: AttParameter) -> None:
        att_id = self._id_of(param.att_name)
        labels = text_array(param.enum_labels)
        row = [str(att_id), str(to_us(param.recv_time)), *(text(v) for v in (
            param.label, param.unit, param.standard_unit, param.display_unit, param.format, param.archive_rel_change,
            param.archive_abs_change, param.archive_period, param.description)), labels]
        self.session.insert("att_parameter", PARAMETER_COLUMNS, tsv([row]))
        self.write_history(param.att_name, "insert_param", param.recv_time)

    def write_history(self, att_name: str, event: str, event_time: datetime) -> None:
        row = [str(self._id_of(att_name)), str(to_us(event_time)), text(event)]
        self.session.insert("att_history", "att_conf_id, event_time, event", tsv([row]))

    def write(self, events: Iterable[Event]) -> int:
        rows: dict[str, list[bytes]] = {}
        columns: dict[str, str] = {}
        new_errors: dict[int, str] = {}
        count = 0
        for event in events:
            att_id = self._id_of(event.att_name)
            info = self._attributes[event.att_name][1]
            error_id = None
            if event.error_desc is not None:
                error_id = fnv1a64(event.error_desc)
                if error_id not in self._errors:
                    new_errors[error_id] = event.error_desc
            table = table_of(info)
            columns[table] = SCALAR_COLUMNS if info.format == AttrFormat.SCALAR else ARRAY_COLUMNS
            rows.setdefault(table, []).append(data_row(att_id, info, event, error_id))
            count += 1
        if new_errors:
            self.session.insert("att_error_desc", "att_error_desc_id, error_desc",
                                tsv([str(i), text(desc)] for i, desc in new_errors.items()))
            self._errors.update(new_errors)
        for table, table_rows in rows.items():
            self.session.insert(table, columns[table], b"".join(table_rows), binary=True)
        return count

    def close(self) -> None:
        self.session.close()


def writer_for(endpoint: Any, database: str) -> ClickHouseBulkWriter:
    return ClickHouseBulkWriter(Session(endpoint, database))

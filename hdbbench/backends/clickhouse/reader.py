# SPDX-License-Identifier: Apache-2.0
"""Stored events read back per attribute (for checks, not speed)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from hdbbench.backends.clickhouse.client import Session
from hdbbench.backends.clickhouse.encoders import from_us, shaped
from hdbbench.backends.clickhouse.tables import fnv1a64, has_write_side, quote_ident
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import AttrFormat, Event, Quality, TangoType, WriteType

# JSON has no NaN or infinity: ClickHouse writes them as null unless asked to quote them.
NON_FINITE_AS_TEXT = {"output_format_json_quote_denormals": "1"}
# The attribute's att_conf row (one per id even before duplicate registrations are merged away).
CONF = ("SELECT table_name, att_conf_type_id, att_conf_format_id, att_conf_write_id FROM att_conf "
        "WHERE att_conf_id = {id} LIMIT 1")


def _value_reader(tango_type: TangoType) -> Callable[[Any], Any]:
    if tango_type == TangoType.DEV_BOOLEAN:
        return bool
    if tango_type == TangoType.DEV_FLOAT:  # JSON prints a Float32's shortest digits: back to its exact value
        return lambda x: struct.unpack("f", struct.pack("f", float(x)))[0]
    if tango_type == TangoType.DEV_DOUBLE:  # non-finite values come as the strings "nan", "inf", "-inf"
        return float
    return lambda x: x


def fetch_events(session: Session, att_name: str) -> list[Event]:
    att_id = fnv1a64(att_name)
    conf = session.all(CONF.format(id=att_id))
    if not conf:
        raise SchemaError(f"attribute {att_name!r} is not archived")
    table, type_num, format_num, write_num = conf[0]
    to_value = _value_reader(TangoType(int(type_num)))
    write_side = has_write_side(WriteType(int(write_num)))
    write_only = WriteType(int(write_num)) == WriteType.WRITE
    array = AttrFormat(int(format_num)) != AttrFormat.SCALAR
    dims = ", dim_x_r, dim_y_r, dim_x_w, dim_y_w" if array else ""
    rows = [list(row.values()) for row in session.rows(
        f"SELECT data_time, value_r, value_w, quality, att_error_desc_id{dims} FROM {quote_ident(table)} "
        f"WHERE att_conf_id = {att_id} ORDER BY data_time", settings=NON_FINITE_AS_TEXT)]
    errors = _error_descs(session, {r[4] for r in rows if r[4] is not None})
    events = []
    for values in rows:
        error = errors[values[4]] if values[4] is not None else None
        absent = error is not None or values[3] == Quality.INVALID
        if array:
            # A write-only attribute has no read value (HDB++): its [] is no value, not an empty array.
            value_r = _array(values[1], values[5], values[6], absent or write_only, to_value)
            value_w = _array(values[2], values[7], values[8], absent, to_value) if write_side else None
        else:
            value_r = None if values[1] is None else to_value(values[1])
            value_w = None if values[2] is None or not write_side else to_value(values[2])
        events.append(Event(att_name, from_us(values[0]), value_r, value_w, int(values[3]), error))
    return events


def _array(items: list[Any], dim_x: int, dim_y: int, absent: bool, to_value: Callable[[Any], Any]) -> Any:
    """An array as written: None for an event without a value (stored as []), else shaped."""
    if not items and absent:
        return None
    return shaped([to_value(v) for v in items], int(dim_x), int(dim_y))


def _error_descs(session: Session, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    return {int(i): str(d) for i, d in session.all(
        f"SELECT att_error_desc_id, any(error_desc) FROM att_error_desc "
        f"WHERE att_error_desc_id IN ({', '.join(map(str, sorted(ids)))}) GROUP BY att_error_desc_id")}

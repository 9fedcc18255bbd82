# SPDX-License-Identifier: Apache-2.0
"""Reading stored events back, attribute by attribute (for checks, not speed): arrays are
reassembled from their element rows.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from hdbbench.backends.mysql.tables import quote_ident
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import Encoded, Event, TangoType


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

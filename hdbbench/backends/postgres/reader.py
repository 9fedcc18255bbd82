# SPDX-License-Identifier: Apache-2.0
"""Reading stored events back, attribute by attribute (for checks, not speed).
"""

from __future__ import annotations

from datetime import timezone
from typing import Any

import psycopg
from psycopg import sql

from hdbbench.backends.postgres.encoders import decode_encoded, from_db
from hdbbench.backends.postgres.tables import DOMAINS, VALUE_TYPES
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import Event, TangoType


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
            vr, vw = decode_encoded(vr, details.get("format_r")), decode_encoded(vw, details.get("format_w"))
        else:
            vr, vw = from_db(vr), from_db(vw)
        events.append(Event(att_name, data_time.astimezone(timezone.utc), vr, vw, quality, error_desc))
    return events

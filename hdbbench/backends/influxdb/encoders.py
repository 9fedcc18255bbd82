# SPDX-License-Identifier: Apache-2.0
"""HDB++ events to InfluxDB line protocol and back (the layout of tables.py).

Line protocol (one point a line): ``measurement,tag=value field=value,... <time>``. Tag values here
are numbers and need no escaping; string field values escape ``\\`` and ``"`` (a newline inside the
quotes is allowed). Integers carry the ``i`` suffix; floats are written with Python's repr (the
shortest text that reads back to the same double); booleans as ``true``/``false``.
subscriber/src/influxdb_writer.cpp writes the same text.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from hdbbench.backends.influxdb.tables import SPECIAL_FLOATS, att_conf_id, measurement
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, as_plain

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FLOATS = (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE)


def to_us(at: datetime) -> int:
    aware = at if at.tzinfo else at.replace(tzinfo=UTC)
    return (aware - EPOCH) // timedelta(microseconds=1)


def from_us(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=int(us))


def rfc3339(at: datetime) -> str:
    """A time as InfluxQL compares it, to the microsecond, UTC."""
    return from_us(to_us(at)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def string_field(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _special(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _scalar_field(side: str, tango_type: TangoType, value: Any) -> str:
    if tango_type == TangoType.DEV_BOOLEAN:
        return f"{side}={'true' if value else 'false'}"
    if tango_type in FLOATS:
        v = float(value)
        return f"{side}={v!r}" if math.isfinite(v) else f"{side}_special={string_field(_special(v))}"
    if tango_type == TangoType.DEV_STRING:
        return f"{side}={string_field(str(value))}"
    return f"{side}={int(value)}i"


def array_text(tango_type: TangoType, value: Any) -> str:
    """An array value as its JSON text (NaN/Infinity as JavaScript's words, as Python writes them)."""
    plain = as_plain(value)
    if tango_type in FLOATS:
        plain = _map(plain, float)
    elif tango_type == TangoType.DEV_BOOLEAN:
        plain = _map(plain, bool)
    return json.dumps(plain, ensure_ascii=False, separators=(",", ":"))


def _map(value: Any, cast: Any) -> Any:
    return [_map(v, cast) for v in value] if isinstance(value, list) else cast(value)


def event_line(info: AttributeInfo, event: Event) -> str:
    """One event of a registered attribute as a line of the data retention policy."""
    if event.data_time is None:
        raise ConfigError(f"{info.name}: an event needs its source time")
    fields = [f"quality={int(event.quality)}i"]
    if event.error_desc is not None:
        fields.append(f"error_desc={string_field(event.error_desc)}")
    else:
        for side, value in (("value_r", event.value_r), ("value_w", event.value_w)):
            if value is None:
                continue
            if info.format == AttrFormat.SCALAR:
                fields.append(_scalar_field(side, info.type, as_plain(value)))
            else:
                fields.append(f"{side}={string_field(array_text(info.type, value))}")
    return (f"{measurement(info.type, info.format)},att_conf_id={att_conf_id(info.name)} "
            f"{','.join(fields)} {to_us(event.data_time)}")


def conf_line(info: AttributeInfo) -> str:
    """The att_conf point of an attribute (time 0: registering it again overwrites the same point)."""
    ttl = f",ttl={int(info.ttl_hours)}i" if info.ttl_hours is not None else ""
    name = info.name.replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")  # a tag value's escapes
    return (f"att_conf,att_name={name} att_conf_id={att_conf_id(info.name)}i,"
            f"data_type={string_field(measurement(info.type, info.format)[4:])},tango_type={int(info.type)}i,"
            f"format={int(info.format)}i,write_type={int(info.write_type)}i{ttl} 0")


def history_line(att_name: str, event: str, at: datetime) -> str:
    return f"att_history,att_conf_id={att_conf_id(att_name)} event={string_field(event)} {to_us(at)}"


# ------------------------------------------------------------------------------------ reading back


def decode_value(info: AttributeInfo, value: Any, special: Any) -> Any:
    """A stored field (and its _special companion) as the Event value it was written from."""
    if special is not None:
        return SPECIAL_FLOATS[str(special)]
    if value is None:
        return None
    if info.format != AttrFormat.SCALAR:
        return _typed(info.type, json.loads(value))
    return _typed(info.type, value)


def _typed(tango_type: TangoType, value: Any) -> Any:
    """JSON numbers as the type's Python values (a float field of 1.0 comes back as the integer 1)."""
    if isinstance(value, list):
        return [_typed(tango_type, v) for v in value]
    if tango_type in FLOATS:
        return float(value)
    if tango_type in (TangoType.DEV_BOOLEAN, TangoType.DEV_STRING):
        return value
    return int(value)


def event_of(info: AttributeInfo, row: dict[str, Any]) -> Event:
    """An Event from a row of `SELECT *` (column name -> value, time in µs)."""
    return Event(info.name, from_us(row["time"]),
                 decode_value(info, row.get("value_r"), row.get("value_r_special")),
                 decode_value(info, row.get("value_w"), row.get("value_w_special")),
                 int(row["quality"]), row.get("error_desc"))

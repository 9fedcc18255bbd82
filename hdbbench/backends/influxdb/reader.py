# SPDX-License-Identifier: Apache-2.0
"""Stored events and the configuration read back (for checks, not speed)."""

from __future__ import annotations

from datetime import datetime

from hdbbench.backends.influxdb import client
from hdbbench.backends.influxdb.encoders import event_of, rfc3339
from hdbbench.backends.influxdb.tables import CONF_RP, DATA_PATTERN, measurement, quote_ident
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, WriteType
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint


def catalog(endpoint: InfluxDBEndpoint, database: str) -> dict[str, tuple[int, AttributeInfo]]:
    """att_conf: attribute name -> (att_conf_id, AttributeInfo)."""
    found = client.query(endpoint, f"SELECT * FROM {quote_ident(CONF_RP)}.att_conf", database)
    out: dict[str, tuple[int, AttributeInfo]] = {}
    for series in found[0] if found else []:
        for row in client.rows(series):
            ttl = row.get("ttl")
            info = AttributeInfo(row["att_name"], TangoType(int(row["tango_type"])), AttrFormat(int(row["format"])),
                                 WriteType(int(row["write_type"])), int(ttl) if ttl is not None else None)
            out[info.name] = (int(row["att_conf_id"]), info)
    return out


def fetch_events(endpoint: InfluxDBEndpoint, database: str, att_name: str) -> list[Event]:
    known = catalog(endpoint, database)
    if att_name not in known:
        return []
    att_id, info = known[att_name]
    found = client.query(endpoint, f"SELECT * FROM {quote_ident(measurement(info.type, info.format))} "
                                   f"WHERE att_conf_id = '{att_id}' ORDER BY time", database)
    return [event_of(info, row) for series in (found[0] if found else []) for row in client.rows(series)]


def _time_range(since: datetime | None, until: datetime | None) -> str:
    bounds = []
    if since is not None:
        bounds.append(f"time >= '{rfc3339(since)}'")
    if until is not None:
        bounds.append(f"time < '{rfc3339(until)}'")
    return f" WHERE {' AND '.join(bounds)}" if bounds else ""


def count_by_attribute(endpoint: InfluxDBEndpoint, database: str, since: datetime | None,
                       until: datetime | None) -> dict[str, int]:
    """Events (data and error points) per attribute name: count(quality), every point has it."""
    names = _names_by_id(endpoint, database)
    found = client.query(endpoint, f"SELECT count(quality) FROM {DATA_PATTERN}{_time_range(since, until)} "
                                   "GROUP BY att_conf_id", database)
    counts: dict[str, int] = {}
    for series in found[0] if found else []:
        for row in client.rows(series):
            name = names.get(int(row["att_conf_id"]), f"att_conf_id {row['att_conf_id']}")
            counts[name] = counts.get(name, 0) + int(row["count"])
    return {name: n for name, n in counts.items() if n}


def count_errors(endpoint: InfluxDBEndpoint, database: str, since: datetime,
                 until: datetime | None) -> dict[str, dict[str, int]]:
    """Error points per attribute and description (selecting error_desc gives only the points that have it)."""
    names = _names_by_id(endpoint, database)
    found = client.query(endpoint, f"SELECT error_desc FROM {DATA_PATTERN}{_time_range(since, until)} "
                                   "GROUP BY att_conf_id", database)
    counts: dict[str, dict[str, int]] = {}
    for series in found[0] if found else []:
        for row in client.rows(series):
            per = counts.setdefault(names.get(int(row["att_conf_id"]), str(row["att_conf_id"])), {})
            per[row["error_desc"]] = per.get(row["error_desc"], 0) + 1
    return counts


def _names_by_id(endpoint: InfluxDBEndpoint, database: str) -> dict[int, str]:
    return {att_id: name for name, (att_id, _) in catalog(endpoint, database).items()}


def require_database(endpoint: InfluxDBEndpoint, database: str) -> None:
    found = client.query(endpoint, "SHOW DATABASES")
    names = {row["name"] for series in (found[0] if found else []) for row in client.rows(series)}
    if database not in names:
        raise SchemaError(f"influxdb: database {database!r} does not exist")

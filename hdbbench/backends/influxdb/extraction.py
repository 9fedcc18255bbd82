# SPDX-License-Identifier: Apache-2.0
"""The InfluxDB side of extraction (the `ExtractionBackend` methods, mixed into the backend).

Queries are InfluxQL with `str.format` fields for their parameters (InfluxQL has no placeholders the
HTTP API binds to times): ``{att_conf_id}``, ``{start}``, ``{end}`` (RFC 3339, µs, UTC), filled by
`stream` from (att_conf_id, start, end) as the other backends bind theirs. Results come chunked
(``chunked=true``): one JSON document per chunk of `fetch_rows` rows, each handed to `consume`. The
HTTP body is read whole before it is parsed, as a client library that does not stream would.
Reading is done as the read-only account (READ on the database). `explain` runs EXPLAIN ANALYZE.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from hdbbench.backends.accounts import as_account
from hdbbench.backends.influxdb import client
from hdbbench.backends.influxdb.encoders import from_us, rfc3339
from hdbbench.backends.influxdb.loader import InfluxColumnLoader
from hdbbench.backends.influxdb.reader import catalog
from hdbbench.backends.influxdb.tables import READER_USER, measurement, quote_ident
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttributeInfo, TangoType
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint

WHERE = "WHERE att_conf_id = '{att_conf_id}' AND time >= '{start}' AND time < '{end}'"


_UNITS_MS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def _ms(duration: str | None) -> float | None:
    """A Go duration as EXPLAIN ANALYZE prints it (`461.584µs`, `1.2ms`, `1m2.5s`) in milliseconds."""
    if not duration:
        return None
    total, number = 0.0, ""
    rest = duration.strip()
    while rest:
        while rest and (rest[0].isdigit() or rest[0] == "."):
            number, rest = number + rest[0], rest[1:]
        unit = next((u for u in sorted(_UNITS_MS, key=len, reverse=True) if rest.startswith(u)), None)
        if unit is None or not number:
            return None
        total += float(number) * _UNITS_MS[unit]
        number, rest = "", rest[len(unit):]
    return total


class InfluxSession:
    """A reader's "connection": HTTP requests as one account on one database."""

    def __init__(self, endpoint: InfluxDBEndpoint, database: str) -> None:
        self.endpoint = endpoint
        self.database = database

    def close(self) -> None:
        pass  # each request is its own


def _as_rows(columns: list[str], block: list[list[Any]], array: bool) -> list[list[Any]]:
    """Rows as the other backends give them: the time a datetime, an array's JSON text a list, without
    the quality column a range query selects only to get every point."""
    keep = [i for i, c in enumerate(columns) if i and c != "quality"]
    if array:
        return [[from_us(row[0]), *(None if row[i] is None else json.loads(row[i]) for i in keep)] for row in block]
    return [[from_us(row[0]), *(row[i] for i in keep)] for row in block]


class InfluxExtraction:
    """Extraction queries of the InfluxDB layout."""

    placeholder = "{}"
    database: str
    endpoint: InfluxDBEndpoint

    def table_for(self, info: AttributeInfo) -> str:
        return measurement(info.type, info.format)

    def attribute_catalog(self) -> list[tuple[int, AttributeInfo]]:
        return sorted(catalog(self.endpoint, self.database).values(), key=lambda pair: pair[0])

    def attribute_spans(self, table: str) -> dict[int, tuple[int, datetime, datetime]]:
        """(events, first, last) per att_conf_id: count, and the times first() and last() report."""
        m = quote_ident(table)
        found = client.query(self.endpoint, f"SELECT count(quality) FROM {m} GROUP BY att_conf_id; "
                                            f"SELECT first(quality) FROM {m} GROUP BY att_conf_id; "
                                            f"SELECT last(quality) FROM {m} GROUP BY att_conf_id", self.database)
        counts, firsts, lasts = ({int(r["att_conf_id"]): r for s in part for r in client.rows(s)} for part in found)
        return {att: (int(counts[att]["count"]), from_us(firsts[att]["time"]), from_us(lasts[att]["time"]))
                for att in counts if att in firsts and att in lasts}

    def range_sql(self, table: str, array: bool) -> str:
        # quality too: InfluxQL returns only the points where a selected field has a value, and every point
        # has a quality (an event without value_r is a row with NULL value_r, as in SQL).
        return f"SELECT value_r, quality FROM {quote_ident(table)} {WHERE} ORDER BY time"

    def aggregate_sql(self, table: str, bucket_s: int) -> str:
        return (f"SELECT count(value_r), mean(value_r), min(value_r), max(value_r) FROM {quote_ident(table)} "
                f"{WHERE} GROUP BY time({int(bucket_s)}s) fill(none)")

    def reader(self) -> InfluxSession:
        """Queries run as the read-only account, as an extraction client's would."""
        return InfluxSession(as_account(self.endpoint, READER_USER), self.database)

    def stream(self, conn: InfluxSession, query: str, params: tuple[Any, ...], fetch_rows: int,
               consume: Callable[[list[Any]], None]) -> int:
        att_conf_id, start, end = params
        text = query.format(att_conf_id=int(att_conf_id), start=rfc3339(start), end=rfc3339(end))
        array = '"att_array_' in query  # its values are JSON texts (tables.py)
        return client.stream(conn.endpoint, conn.database, text, fetch_rows, lambda columns, block: consume(
            _as_rows(columns, block, array)))

    def explain(self, conn: InfluxSession, query: str, params: tuple[Any, ...]) -> dict[str, Any]:
        """EXPLAIN ANALYZE: the server's total and planning time of one execution, and the TSM blocks it
        decoded (InfluxDB's reads from its files; points still in the write cache decode none)."""
        att_conf_id, start, end = params
        text = query.format(att_conf_id=int(att_conf_id), start=rfc3339(start), end=rfc3339(end))
        found = client.query(conn.endpoint, "EXPLAIN ANALYZE " + text, conn.database)
        lines = [str(row[0]).strip("│├└─ \xa0") for part in found for series in part for row in series["values"]]
        values = dict(line.split(": ", 1) for line in lines if ": " in line)
        blocks = sum(int(v) for k, v in values.items() if k.endswith("_blocks_decoded"))
        return {"server_ms": _ms(values.get("total_time")), "planning_ms": _ms(values.get("planning_time")),
                "pages_read": blocks, "pages_hit": None, "server_rows": None,
                "server_source": "EXPLAIN ANALYZE (total_time; TSM blocks decoded as pages read)"}

    def column_loader(self) -> InfluxColumnLoader:
        return InfluxColumnLoader(self.endpoint, self.database)

    def dump_type(self, tango_type: TangoType, order: str, out: Any) -> None:
        raise ConfigError("influxdb: dumps are not implemented (what-if engine)")

    def load_csv(self, table: str, path: str) -> None:
        raise ConfigError("influxdb: loading dumps is not implemented (what-if engine)")

    def refresh_statistics(self) -> None:
        """Nothing to analyse: InfluxDB keeps no planner statistics."""

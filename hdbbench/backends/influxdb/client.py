# SPDX-License-Identifier: Apache-2.0
"""InfluxDB 1.x's HTTP API, with the standard library (the endpoint's `request`): InfluxQL queries,
line-protocol writes, chunked results. No client library: the API is three calls."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from hdbbench.model.errors import SchemaError
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint

Series = dict[str, Any]  # {"name", "tags", "columns", "values"}


class InfluxError(SchemaError):
    """The server refused a query or a write (its own message)."""


def _check(status: int, body: bytes, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(body) if body else {}
    except ValueError:
        doc = {"error": body[:300].decode(errors="replace")}
    if status >= 300 or "error" in doc:
        raise InfluxError(f"influxdb: {what} failed ({status}): {doc.get('error', '')}")
    return doc


def query(endpoint: InfluxDBEndpoint, text: str, database: str | None = None,
          method: str = "POST") -> list[list[Series]]:
    """Run InfluxQL statements (separated by ';'); per statement, its series; a statement's error raises."""
    params = {"q": text, "epoch": "u"}
    if database:
        params["db"] = database
    status, _, body = endpoint.request(method, "/query", params)
    doc = _check(status, body, f"query {text[:120]!r}")
    out = []
    for result in doc.get("results", []):
        if "error" in result:
            raise InfluxError(f"influxdb: {result['error']} (in {text[:160]!r})")
        out.append(result.get("series", []))
    return out


def rows(series: Series) -> Iterator[dict[str, Any]]:
    """The rows of one series as column -> value dicts, its tags included."""
    tags = series.get("tags") or {}
    columns = series["columns"]
    for values in series.get("values", []):
        yield {**tags, **dict(zip(columns, values))}


def write(endpoint: InfluxDBEndpoint, database: str, lines: list[str], rp: str | None = None) -> None:
    """POST line protocol in one request (precision µs)."""
    if not lines:
        return
    params = {"db": database, "precision": "u"}
    if rp:
        params["rp"] = rp
    status, _, body = endpoint.request("POST", "/write", params, body="\n".join(lines).encode())
    _check(status, body, f"write of {len(lines)} points")


def stream(endpoint: InfluxDBEndpoint, database: str, text: str, chunk_rows: int,
           consume: Callable[[list[str], list[Any]], None]) -> int:
    """Run one SELECT with chunked results; hand each chunk's columns and rows (lists, time first, in
    µs) to `consume`."""
    params = {"q": text, "db": database, "epoch": "u", "chunked": "true", "chunk_size": str(max(1, chunk_rows))}
    status, _, body = endpoint.request("POST", "/query", params)
    if status >= 300:
        _check(status, body, f"query {text[:120]!r}")
    count = 0
    for line in body.splitlines():
        if not line.strip():
            continue
        doc = _check(status, line, f"query {text[:120]!r}")
        for result in doc.get("results", []):
            if "error" in result:
                raise InfluxError(f"influxdb: {result['error']} (in {text[:160]!r})")
            for series in result.get("series", []):
                block = series.get("values", [])
                if block:
                    count += len(block)
                    consume(series["columns"], block)
    return count

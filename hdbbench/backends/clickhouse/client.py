# SPDX-License-Identifier: Apache-2.0
"""The backend's way of talking to ClickHouse: HTTP with the standard library (no client package),
one statement per request, rows read back as JSON lines."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hdbbench.backends.clickhouse.encoders import json_rows
from hdbbench.model.errors import SchemaError, ServerError
from hdbbench.stack.servers.clickhouse import open_query, query
from hdbbench.stack.servers.endpoints import ClickHouseEndpoint

# 64-bit integers as JSON numbers (ClickHouse quotes them by default, for JavaScript's sake).
JSON_SETTINGS = {"output_format_json_quote_64bit_integers": "0"}


class Session:
    """Statements against one database of one server. Holds no connection (HTTP requests are
    independent), so `close` only marks it closed; it exists for the callers that close sessions."""

    def __init__(self, endpoint: ClickHouseEndpoint, database: str | None) -> None:
        self.endpoint = endpoint
        self.database = database

    def execute(self, sql: str, *, timeout_s: float = 300.0) -> bytes:
        """One statement; SchemaError with ClickHouse's message when it fails."""
        try:
            return query(self.endpoint, sql, database=self.database, timeout_s=timeout_s)
        except ServerError as exc:
            raise SchemaError(str(exc)) from None

    def insert(self, table: str, columns: str, body: bytes, *, binary: bool = False) -> None:
        """`INSERT INTO table (columns) FORMAT TabSeparated` (or RowBinary) with `body` as its rows:
        one request, one new part per partition it touches."""
        form = "RowBinary" if binary else "TabSeparated"
        query(self.endpoint, f"INSERT INTO {table} ({columns}) FORMAT {form}", body, database=self.database)

    def rows(self, sql: str, settings: Mapping[str, str] | None = None) -> Iterator[dict[str, Any]]:
        """The rows of a SELECT as they stream from the server, as dicts in column order."""
        with open_query(self.endpoint, sql + " FORMAT JSONEachRow", database=self.database,
                        settings={**JSON_SETTINGS, **(settings or {})}) as response:
            yield from json_rows(response)

    def all(self, sql: str) -> list[tuple[Any, ...]]:
        return [tuple(row.values()) for row in self.rows(sql)]

    def scalar(self, sql: str) -> Any:
        rows = self.all(sql)
        return rows[0][0] if rows else None

    def close(self) -> None:
        """Nothing to release: every request was its own."""

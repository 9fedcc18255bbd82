# SPDX-License-Identifier: Apache-2.0
"""ClickHouse, a what-if engine beside HDB++'s (issue #54): HDB++'s layout on MergeTree tables
(tables.py), written by hdbbench's subscriber (subscriber/src/clickhouse_writer.cpp) and by the
Python bulk writer, over HTTP.

It answers "what would ClickHouse give us" (ingest rate, query time, bytes per event) by the same
rules as the HDB++ backends; no HDB++ library writes it, so it is never a default backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from hdbbench.backends.base import Backend
from hdbbench.backends.clickhouse.client import Session
from hdbbench.backends.clickhouse.ddl import render_schema, statements
from hdbbench.backends.clickhouse.encoders import to_us
from hdbbench.backends.clickhouse.extraction import ClickHouseExtraction
from hdbbench.backends.clickhouse.outside import ClickHouseOutsideFigures
from hdbbench.backends.clickhouse.reader import fetch_events
from hdbbench.backends.clickhouse.storage import database_bytes, parts_for, server_facts, table_sizes
from hdbbench.backends.clickhouse.tables import (
    CLICKHOUSE,
    ENCODED_REASON,
    HELD_TYPES,
    all_tables,
    quote_ident,
    quote_string,
    table_of,
)
from hdbbench.backends.clickhouse.verify import read_catalog, verify_engines, verify_lookup_rows
from hdbbench.backends.clickhouse.writer import ClickHouseBulkWriter
from hdbbench.backends.model import SchemaVariant, TableDef, TableSize, compare_tables
from hdbbench.model.errors import ConfigError, SchemaError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType

WHAT_IF = "what-if: not an HDB++ backend (no HDB++ library writes ClickHouse; only hdbbench's subscriber does)"


class ClickHouseBackend(ClickHouseExtraction, Backend):
    name = CLICKHOUSE
    default_indexes = "pk"  # the sort key (att_conf_id, data_time) is its only index
    disk_variants: ClassVar[tuple[str, ...]] = ("pk",)
    separate_clustering = True  # OPTIMIZE ... FINAL merges a table's parts: measured before and after
    published_as = "ClickHouse"
    what_if = WHAT_IF

    @classmethod
    def cannot_hold(cls, tango_type: TangoType, fmt: AttrFormat) -> str | None:
        return None if tango_type in HELD_TYPES else ENCODED_REASON

    @classmethod
    def check_variant(cls, variant: SchemaVariant) -> None:
        if variant.indexes == "pk+2":
            raise ConfigError("clickhouse: no secondary indexes (18.16's data-skipping indexes are experimental); "
                              "'pk+2' does not apply")
        if not variant.foreign_keys:
            raise ConfigError("clickhouse: the layout has no foreign keys; 'nofk' does not apply")

    def session(self, database: bool = True) -> Session:
        return Session(self.endpoint, self.database if database else None)

    # --- the schema
    def expected_tables(self, variant: SchemaVariant | str | None = None) -> list[TableDef]:
        return all_tables(self.resolve_variant(variant))

    def schema_sql(self, variant: SchemaVariant | str | None = None) -> str:
        return render_schema(self.expected_tables(variant))

    def create_schema(self, variant: SchemaVariant | str | None = None) -> None:
        tables = self.expected_tables(variant)
        server = self.session(database=False)
        if server.scalar(f"SELECT count() FROM system.databases WHERE name = {quote_string(self.database)}"):
            raise SchemaError(f"database {self.database!r} already exists; drop it first")
        server.execute(f"CREATE DATABASE {quote_ident(self.database)}")
        session = self.session()
        try:
            for stmt in statements(tables):
                session.execute(stmt)
        except SchemaError as exc:
            raise SchemaError(f"creating the clickhouse schema in {self.database!r} failed: {exc}") from None

    def drop_schema(self) -> None:
        self.session(database=False).execute(f"DROP DATABASE IF EXISTS {quote_ident(self.database)}")

    def verify_schema(self, variant: SchemaVariant | str | None = None) -> list[str]:
        expected = self.expected_tables(variant)
        server = self.session(database=False)
        if not server.scalar(f"SELECT count() FROM system.databases WHERE name = {quote_string(self.database)}"):
            return [f"missing database {self.database}"]
        live, engines = read_catalog(server, self.database)
        return compare_tables(expected, live) + verify_engines(expected, engines) + verify_lookup_rows(self.session())

    def cluster(self) -> list[str]:
        """Merge each data table's parts into one per partition (OPTIMIZE ... FINAL): rows in sort-key
        order in as few files as the partitions allow, as ClickHouse's background merges end up."""
        session = self.session()
        done = []
        for table in self._tables_with_rows():
            session.execute(f"OPTIMIZE TABLE {quote_ident(table)} FINAL", timeout_s=3600)
            done.append(f"OPTIMIZE TABLE {table} FINAL")
        return done or ["nothing to do: no data table holds rows"]

    def _tables_with_rows(self) -> list[str]:
        return [str(t) for (t,) in self.session(database=False).all(
            f"SELECT DISTINCT table FROM system.parts WHERE active AND database = {quote_string(self.database)} "
            "AND (startsWith(table, 'att_scalar_') OR startsWith(table, 'att_array_')) ORDER BY table")]

    # --- counts
    def count_rows_by_attribute(self, since: datetime | None = None, until: datetime | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for name, _, count in self._per_attribute("", since, until):
            counts[name] = counts.get(name, 0) + count
        return counts

    def count_error_events(self, since: datetime, until: datetime | None = None) -> dict[str, dict[str, int]]:
        descs = {int(i): str(d) for i, d in self.session().all(
            "SELECT att_error_desc_id, error_desc FROM att_error_desc LIMIT 1 BY att_error_desc_id")}
        counts: dict[str, dict[str, int]] = {}
        for name, error_id, count in self._per_attribute("att_error_desc_id", since, until):
            per = counts.setdefault(name, {})
            desc = descs.get(int(error_id), f"<att_error_desc_id {error_id}>")
            per[desc] = per.get(desc, 0) + count
        return counts

    def _per_attribute(self, by: str, since: datetime | None, until: datetime | None) -> list[tuple[str, Any, int]]:
        """(attribute, the `by` column or '', rows) over every data table that holds rows, with
        since <= data_time < until; only error rows when `by` is given."""
        session = self.session()
        names = {int(i): str(n) for i, n in session.all("SELECT att_conf_id, att_name FROM att_conf LIMIT 1 BY att_conf_id")}
        where = [f"data_time >= {to_us_or(since, 0)}", f"data_time < {to_us_or(until, 2**63 - 1)}"]
        if by:
            where.append(f"{by} IS NOT NULL")
        key = f", {by}" if by else ""
        out = []
        for table in self._tables_with_rows():
            for row in session.all(f"SELECT att_conf_id{key}, count() FROM {quote_ident(table)} "
                                   f"WHERE {' AND '.join(where)} GROUP BY att_conf_id{key}"):
                name = names.get(int(row[0]))
                if name is not None:
                    out.append((name, row[1] if by else "", int(row[-1])))
        return out

    # --- sizes
    def size_bytes(self) -> int:
        return database_bytes(self.session(database=False), self.database)

    def table_sizes(self, tables: Sequence[str]) -> list[TableSize]:
        return table_sizes(self.session(database=False), self.database, tables)

    def log_positions(self) -> dict[str, int | None]:
        """ClickHouse keeps no write-ahead log: an insert is a new part, nothing else."""
        return {}

    def parts_for(self, table: str, variant: SchemaVariant | str | None, days: float) -> int | None:
        return parts_for(table, self.resolve_variant(variant), days)

    # --- writing and reading back
    def bulk_writer(self) -> ClickHouseBulkWriter:
        return ClickHouseBulkWriter(self.session())

    def fetch_events(self, att_name: str) -> list[Event]:
        return fetch_events(self.session(), att_name)

    def table_for(self, info: AttributeInfo) -> str:
        return table_of(info)

    # --- optional abilities (hdbbench.backends.abilities)
    @classmethod
    def outside_figures(cls) -> ClickHouseOutsideFigures:
        return ClickHouseOutsideFigures()

    # --- the subscriber and the server
    @classmethod
    def subscriber_configuration(cls, endpoint: Any, database: str) -> dict[str, str]:
        """The keys of our subscriber's ClickHouse writer (subscriber/src/clickhouse_writer.cpp): its
        HTTP interface and account, and the database; no HDB++ library, so no `libname`."""
        return {"backend": cls.name, "host": endpoint.host, "port": str(endpoint.port), "user": endpoint.user,
                "password": endpoint.password, "dbname": database}

    @staticmethod
    def server_facts(endpoint: Any) -> dict[str, Any]:
        return server_facts(Session(endpoint, None))


def to_us_or(at: datetime | None, default: int) -> int:
    return default if at is None else to_us(at)

# SPDX-License-Identifier: Apache-2.0
"""InfluxDB 1.6 as a what-if backend: the schema lifecycle, counts, sizes, the writer.

No HDB++ library writes InfluxDB; our subscriber's writer does (subscriber/src/influxdb_writer.cpp),
and the bulk writer of this folder. The "schema" is a database with two retention policies (data:
the default `autogen`, infinite, shards of 7 days or `interval=<N>d`; configuration: `conf`) and
two accounts with grants on it. Its layout, and what it cannot hold of HDB++, are in tables.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from hdbbench.backends.accounts import account_password, as_account
from hdbbench.backends.base import SQL_SCHEMA, Backend
from hdbbench.backends.influxdb import client, reader, storage
from hdbbench.backends.influxdb.extraction import InfluxExtraction
from hdbbench.backends.influxdb.outside import InfluxOutsideFigures
from hdbbench.backends.influxdb.tables import (
    CANNOT_HOLD,
    CONF_RP,
    DATA_RP,
    INFLUXDB,
    READER_USER,
    WRITER_USER,
    data_measurements,
    quote_ident,
)
from hdbbench.backends.influxdb.writer import InfluxBulkWriter
from hdbbench.backends.model import SchemaVariant, TableDef, TableSize
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType


class InfluxBackend(InfluxExtraction, Backend):
    name = INFLUXDB
    default_indexes = "pk"  # the series index (measurement, att_conf_id) and time: nothing to choose
    disk_variants: ClassVar[tuple[str, ...]] = ("pk",)
    separate_clustering = False  # TSM files are ordered by series key and time: always "clustered"
    what_if = "what-if: not an HDB++ backend (no HDB++ library writes InfluxDB; only hdbbench's subscriber does)"
    # The server faults stop and kill apply (its server kind lists them); table_lock and database_full
    # need a faults() ability it does not have: their trials say so in one line.
    lacks: ClassVar[dict[str, str]] = {SQL_SCHEMA: "InfluxDB 1.6 has measurements, not SQL tables"}
    cold_note = "InfluxDB's TSM files mapped in memory (its inmem index is rebuilt at start)"

    @classmethod
    def cannot_hold(cls, tango_type: TangoType, fmt: AttrFormat) -> str | None:
        return CANNOT_HOLD.get(tango_type)

    @classmethod
    def check_variant(cls, variant: SchemaVariant) -> None:
        """Index sets, partitioning and foreign keys do not apply (one series index; shards are the time
        partitions, always there): any variant is the same layout, `interval=<N>d` its shard duration."""

    # --- the "schema": a database, two retention policies, two accounts
    def expected_tables(self, variant: SchemaVariant | str | None = None) -> list[TableDef]:
        self.resolve_variant(variant)
        return data_measurements()

    def schema_sql(self, variant: SchemaVariant | str | None = None) -> str:
        return "".join(s + ";\n" for s in self._schema_statements(self.resolve_variant(variant)))

    def _schema_statements(self, variant: SchemaVariant) -> list[str]:
        db = quote_ident(self.database)
        shard = f" SHARD DURATION {variant.interval_days}d" if variant.interval_days else ""
        return [f"CREATE DATABASE {db} WITH DURATION INF REPLICATION 1{shard} NAME {quote_ident(DATA_RP)}",
                f"CREATE RETENTION POLICY {quote_ident(CONF_RP)} ON {db} DURATION INF REPLICATION 1"]

    def create_schema(self, variant: SchemaVariant | str | None = None) -> None:
        resolved = self.resolve_variant(variant)
        if self._exists():
            raise SchemaError(f"database {self.database!r} already exists; drop it first")
        statements = self._schema_statements(resolved)
        # The subscriber's account writes and reads (strict mode looks att_conf up), as HDB++'s does.
        for user, grant in ((WRITER_USER, "ALL"), (READER_USER, "READ")):
            password = account_password(self.endpoint.password, user)
            if user not in self._users():
                statements.append(f"CREATE USER {quote_ident(user)} WITH PASSWORD '{password}'")
            statements.append(f"GRANT {grant} ON {quote_ident(self.database)} TO {quote_ident(user)}")
        client.query(self.endpoint, "; ".join(statements))

    def _users(self) -> set[str]:
        found = client.query(self.endpoint, "SHOW USERS")
        return {row["user"] for series in (found[0] if found else []) for row in client.rows(series)}

    def _exists(self) -> bool:
        try:
            reader.require_database(self.endpoint, self.database)
        except SchemaError:
            return False
        return True

    def drop_schema(self) -> None:
        """Drop the database; the accounts are server-wide and stay (their grants go with the database)."""
        client.query(self.endpoint, f"DROP DATABASE {quote_ident(self.database)}")

    def verify_schema(self, variant: SchemaVariant | str | None = None) -> list[str]:
        resolved = self.resolve_variant(variant)
        if not self._exists():
            return [f"missing database {self.database}"]
        found = client.query(self.endpoint, f"SHOW RETENTION POLICIES ON {quote_ident(self.database)}")
        policies = {row["name"]: row for series in (found[0] if found else []) for row in client.rows(series)}
        diffs = [f"missing retention policy {rp}" for rp in (DATA_RP, CONF_RP) if rp not in policies]
        if DATA_RP in policies and not policies[DATA_RP].get("default"):
            diffs.append(f"retention policy {DATA_RP} is not the default")
        if resolved.interval_days and DATA_RP in policies:
            want = f"{resolved.interval_days * 24}h0m0s"
            if policies[DATA_RP].get("shardGroupDuration") != want:
                diffs.append(f"shard duration {policies[DATA_RP].get('shardGroupDuration')}, expected {want}")
        diffs += [f"missing account {u}" for u in (WRITER_USER, READER_USER) if u not in self._users()]
        return diffs

    def cluster(self) -> list[str]:
        return ["nothing to do: TSM files are ordered by series (att_conf_id) and time"]

    # --- writing and counting
    def bulk_writer(self) -> InfluxBulkWriter:
        reader.require_database(self.endpoint, self.database)
        known = {name: info for name, (_, info) in reader.catalog(self.endpoint, self.database).items()}
        return InfluxBulkWriter(self.endpoint, self.database, known)

    def count_rows_by_attribute(self, since: datetime | None = None, until: datetime | None = None) -> dict[str, int]:
        reader.require_database(self.endpoint, self.database)
        return reader.count_by_attribute(self.endpoint, self.database, since, until)

    def count_error_events(self, since: datetime, until: datetime | None = None) -> dict[str, dict[str, int]]:
        reader.require_database(self.endpoint, self.database)
        return reader.count_errors(self.endpoint, self.database, since, until)

    def fetch_events(self, att_name: str) -> list[Event]:
        return reader.fetch_events(self.endpoint, self.database, att_name)

    def table_for(self, info: AttributeInfo) -> str:
        return InfluxExtraction.table_for(self, info)

    # --- sizes
    def size_bytes(self) -> int:
        return storage.database_bytes(self.endpoint, self.database)

    def table_sizes(self, tables: Sequence[str]) -> list[TableSize]:
        return storage.table_sizes(self.endpoint, self.database, tables)

    def log_positions(self) -> dict[str, int | None]:
        """The WAL is per shard and emptied at each cache snapshot: no position grows with the writes."""
        return {"wal": None}

    def parts_for(self, table: str, variant: SchemaVariant | str | None, days: float) -> int | None:
        return storage.parts_for(days, self.resolve_variant(variant).interval_days)

    # --- abilities
    @classmethod
    def outside_figures(cls) -> InfluxOutsideFigures:
        return InfluxOutsideFigures()

    # --- the subscriber and the server
    @classmethod
    def subscriber_configuration(cls, endpoint: Any, database: str) -> dict[str, str]:
        """Our writer's keys (subscriber/src/influxdb_writer.cpp): the HTTP API's address, the writer account
        (WRITE on the database) and the database; no `libname`: no HDB++ library exists for it."""
        writer = as_account(endpoint, WRITER_USER)
        return {"backend": cls.name, "host": endpoint.host, "port": str(endpoint.port), "user": writer.user,
                "password": writer.password, "dbname": database}

    @staticmethod
    def server_facts(endpoint: Any) -> dict[str, Any]:
        return storage.server_facts(endpoint)

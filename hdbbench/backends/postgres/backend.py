# SPDX-License-Identifier: Apache-2.0
"""HDB++ on PostgreSQL: the backend (schema lifecycle, clustering, counts, sizes, writer).

The TimescaleDB flavour (`timescaledb.py`) differs only in its table model (hypertables), its
layout check and its size query.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import psycopg
from psycopg import sql

from hdbbench.backends.accounts import as_account
from hdbbench.backends.base import Backend
from hdbbench.backends.model import SchemaVariant, TableDef, TableSize, compare_tables
from hdbbench.backends.postgres.aggregates import PgAggregates
from hdbbench.backends.postgres.aging import PgAgingLayout
from hdbbench.backends.postgres.ddl import grants_sql, render_schema, roles_sql
from hdbbench.backends.postgres.extraction import PgExtraction
from hdbbench.backends.postgres.faults import PgTableFaults
from hdbbench.backends.postgres.inventory import PgInventoryReader
from hdbbench.backends.postgres.maintenance import PgMaintenance
from hdbbench.backends.postgres.memory import PgMemoryModel
from hdbbench.backends.postgres.outside import PgOutsideFigures
from hdbbench.backends.postgres.reader import fetch_events
from hdbbench.backends.postgres.storage import (
    documented_row_minimum,
    hold_autovacuum,
    plain_table_size,
    server_facts,
    wal_position,
)
from hdbbench.backends.postgres.tables import (
    POSTGRESQL,
    ROLES,
    WRITER_USER,
    all_tables,
    chunk_days,
    data_table_name,
    quote_ident,
)
from hdbbench.backends.postgres.verify import read_catalog, verify_common, verify_partitioning
from hdbbench.backends.postgres.writer import PgBulkWriter
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import AttrFormat, Event, TangoType

# The installed file name of libhdb++timescale (libhdb++ dlopens the LibConfiguration's libname).
LIBNAME = "libhdb++timescale.so.2"


class PostgresBackend(PgExtraction, Backend):
    """HDB++ on plain PostgreSQL: the TimescaleDB layout without hypertables, which isolates what
    TimescaleDB adds. Variant `partitioned` turns every data table into a native range-partitioned
    table on data_time, with partitions as wide as the HDB++ chunks (28 days, 14 for
    att_scalar_devdouble, or `interval=<N>d`): four before and four after today plus a DEFAULT
    partition that catches everything else."""

    name = POSTGRESQL
    timescale = False  # the table model's hypertables
    default_indexes = "pk+2"
    published_as = "PostgreSQL"
    client_packages = ("psycopg", "psycopg-binary")

    # --- connections
    def _admin(self) -> psycopg.Connection[Any]:
        return self.endpoint.connect(autocommit=True)

    def connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        """A connection to the HDB++ database."""
        try:
            return self.endpoint.connect(self.database, **kwargs)
        except psycopg.OperationalError as exc:
            raise SchemaError(f"cannot connect to database {self.database!r}: {str(exc).strip().splitlines()[-1]}") from exc

    # --- schema
    def expected_tables(self, variant: SchemaVariant | str | None = None) -> list[TableDef]:
        return all_tables(self.resolve_variant(variant), self.timescale)

    def schema_sql(self, variant: SchemaVariant | str | None = None) -> str:
        return render_schema(self.expected_tables(variant), self.timescale)

    def create_schema(self, variant: SchemaVariant | str | None = None) -> None:
        script = self.schema_sql(variant)
        with self._admin() as admin:
            if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone():
                raise SchemaError(f"database {self.database!r} already exists; drop it first")
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.database)))
            admin.execute(roles_sql(self.endpoint.password))
        try:
            with self.connect() as conn:
                conn.execute(script)
                conn.execute(grants_sql(self.database))
        except psycopg.Error as exc:
            raise SchemaError(f"creating the {self.name} schema in {self.database!r} failed: {exc}") from exc

    def drop_schema(self) -> None:
        with self._admin() as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.database)))
            self._drop_roles_if_unused(admin)

    @staticmethod
    def _drop_roles_if_unused(admin: psycopg.Connection[Any]) -> None:
        """Roles are cluster-global: keep all of them while any other database still refers to one."""
        used = admin.execute(
            "SELECT count(*) FROM pg_shdepend d JOIN pg_roles r ON r.oid = d.refobjid "
            "WHERE d.refclassid = 'pg_authid'::regclass AND r.rolname = ANY(%s)",
            (list(ROLES),),
        ).fetchone()
        if used and used[0]:
            return
        for role in reversed(ROLES):
            try:
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
            except psycopg.errors.DependentObjectsStillExist:
                continue  # taken into use by a concurrent create: leave it

    def verify_schema(self, variant: SchemaVariant | str | None = None) -> list[str]:
        resolved = self.resolve_variant(variant)
        expected = all_tables(resolved, self.timescale)
        with self.connect() as conn:
            live = read_catalog(conn)
            diffs = compare_tables(expected, live)
            diffs += self._verify_extras(conn, expected)
        return diffs

    def _verify_extras(self, conn: psycopg.Connection[Any], expected: list[TableDef]) -> list[str]:
        return verify_common(conn) + self._verify_layout(conn, expected)

    def _verify_layout(self, conn: psycopg.Connection[Any], expected: list[TableDef]) -> list[str]:
        """Plain tables, or native partitions where the variant asks for them."""
        return verify_partitioning(conn, expected)

    # --- maintenance
    def cluster(self) -> list[str]:
        """CLUSTER every chunk / partition / plain data table on its primary key (att_conf_id, data_time)."""
        done = []
        with self.connect(autocommit=True) as conn:
            for leaf, index in self._cluster_targets(conn):
                conn.execute(sql.SQL("CLUSTER {} USING {}").format(_qualified(leaf), sql.Identifier(index[1])))
                done.append(f"CLUSTER {leaf[0]}.{leaf[1]} USING {index[1]}")
        return done

    def _leaf_relations(self, conn: psycopg.Connection[Any], table: str) -> list[tuple[str, str]]:
        rows = conn.execute(
            "SELECT n.nspname, c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.inhparent = %s::regclass ORDER BY 1, 2",
            (f"public.{table}",),
        ).fetchall()
        if not rows and conn.execute("SELECT relkind FROM pg_class WHERE oid = %s::regclass", (f"public.{table}",)).fetchone()[0] == "r":
            rows = [("public", table)]
        return [(r[0], r[1]) for r in rows]

    def _cluster_targets(self, conn: psycopg.Connection[Any]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
        targets = []
        for t in TangoType:
            for fmt in AttrFormat:
                for leaf in self._leaf_relations(conn, data_table_name(t, fmt)):
                    if self.timescale and leaf[0] == "public":
                        continue  # the hypertable root holds no rows
                    pk = conn.execute(
                        "SELECT n.nspname, c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.indrelid = %s::regclass AND i.indisprimary",
                        (f"{quote_ident(leaf[0])}.{quote_ident(leaf[1])}",),
                    ).fetchone()
                    if pk:
                        targets.append((leaf, (pk[0], pk[1])))
        return targets

    def count_rows_by_attribute(self, since: datetime | None = None, until: datetime | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        query = "SELECT att_conf_id, '', count(*) FROM {} WHERE data_time >= %s AND data_time < %s GROUP BY 1"
        for name, _, count in self._per_data_table(query, since, until):
            counts[name] = counts.get(name, 0) + count
        return counts

    def count_error_events(self, since: datetime, until: datetime | None = None) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {}
        query = ("SELECT t.att_conf_id, e.error_desc, count(*) FROM {} t JOIN att_error_desc e"
                 " USING (att_error_desc_id) WHERE t.data_time >= %s AND t.data_time < %s GROUP BY 1, 2")
        for name, desc, count in self._per_data_table(query, since, until):
            per = counts.setdefault(name, {})
            per[desc] = per.get(desc, 0) + count
        return counts

    def _per_data_table(self, query: str, since: datetime | None, until: datetime | None) -> list[tuple[str, str, int]]:
        """`query` (att_conf_id, description, count; placeholders since, until; {} the table) over every data
        table of an attribute in att_conf, as (attribute name, description, count)."""
        bounds = (since or datetime(1970, 1, 1, tzinfo=timezone.utc), until or datetime(9999, 1, 1, tzinfo=timezone.utc))
        rows: list[tuple[int, str, int]] = []
        with self.connect() as conn:
            tables = [row[0] for row in conn.execute("SELECT DISTINCT table_name FROM att_conf").fetchall()]
            for table in tables:
                statement = sql.SQL(query).format(sql.Identifier(table))  # type: ignore[arg-type]
                rows += [(att_id, str(desc), int(count)) for att_id, desc, count in conn.execute(statement, bounds)]
            # The names last: each statement sees what was committed when it began, and a subscriber
            # commits an attribute's att_conf row before its first event, so every id counted is named.
            names = dict(conn.execute("SELECT att_conf_id, att_name FROM att_conf").fetchall())
        return [(names[att_id], desc, count) for att_id, desc, count in rows]

    def size_bytes(self) -> int:
        with self.connect() as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    def table_sizes(self, tables: Sequence[str]) -> list[TableSize]:
        """TimescaleDB: hypertable_detailed_size (every chunk); PostgreSQL: pg_*_size summed over the
        leaf partitions (or the plain table). data = table - TOAST, TOAST = TOAST heap + its index."""
        with self.connect() as conn:
            return [self._table_size(conn, t) for t in tables]

    def _table_size(self, conn: psycopg.Connection[Any], table: str) -> TableSize:
        return plain_table_size(conn, table)

    def prepare_sizes(self, tables: Sequence[str]) -> None:
        with self.connect() as conn:
            for table in tables:
                hold_autovacuum(conn, table)

    def log_positions(self) -> dict[str, int | None]:
        with self.connect() as conn:
            return wal_position(conn)

    def parts_for(self, table: str, variant: SchemaVariant | str | None, days: float) -> int | None:
        resolved = self.resolve_variant(variant)
        if not (self.timescale or resolved.partitioned):
            return None
        return max(1, math.ceil(days / chunk_days(table, resolved)))

    def documented_row_minimum(self, table: TableDef, att_prefix: str) -> tuple[int, float] | None:
        with self.connect() as conn:
            return documented_row_minimum(conn, table, att_prefix)

    @classmethod
    def subscriber_configuration(cls, endpoint: Any, database: str) -> dict[str, str]:
        """libhdb++timescale serves both flavours and reads only `connect_string` (a libpq conninfo) and
        its logging keys; `libname` is its installed file name; `backend` tells our subscriber which
        flavour it writes (the real library ignores keys it does not know)."""
        subscriber = as_account(endpoint, WRITER_USER)  # HDB++'s event-subscriber role: no DELETE, no DROP
        return {"backend": cls.name, "libname": LIBNAME, "connect_string": subscriber.conninfo(database)}

    # --- optional abilities (hdbbench.backends.abilities); no storage options, and a restart leaves
    # nothing warm that the cache drop of a cold run does not (no cold_restart)
    @classmethod
    def aging_layout(cls) -> PgAgingLayout:
        return PgAgingLayout()

    @classmethod
    def maintenance(cls) -> PgMaintenance:
        return PgMaintenance()

    @classmethod
    def aggregates(cls) -> PgAggregates:
        return PgAggregates()

    @classmethod
    def inventory_reader(cls) -> PgInventoryReader:
        return PgInventoryReader()

    @classmethod
    def faults(cls) -> PgTableFaults:
        return PgTableFaults()

    @classmethod
    def memory_model(cls) -> PgMemoryModel:
        return PgMemoryModel(cls.timescale)  # TimescaleDB: the current chunk's indexes

    @classmethod
    def outside_figures(cls) -> PgOutsideFigures:
        return PgOutsideFigures()

    @staticmethod
    def server_facts(endpoint: Any) -> dict[str, Any]:
        return server_facts(endpoint)

    def account_files(self) -> dict[str, str]:
        return {"roles.sql": "-- HDB++ roles and users (cluster-global, idempotent), then their grants in database hdbpp\n"
                + roles_sql() + "\n\\c hdbpp\n" + grants_sql("hdbpp").as_string(None) + "\n"}

    def bulk_writer(self) -> PgBulkWriter:
        return PgBulkWriter(self.connect())

    def fetch_events(self, att_name: str) -> list[Event]:
        with self.connect() as conn:
            return fetch_events(conn, att_name)


def _qualified(rel: tuple[str, str]) -> sql.Composable:
    return sql.Identifier(rel[0], rel[1])

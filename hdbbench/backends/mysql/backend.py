# SPDX-License-Identifier: Apache-2.0
"""HDB++ on MySQL/MariaDB (InnoDB): the backend (schema lifecycle, counts, sizes, writer).

InnoDB tables are clustered by their primary key, so `cluster()` has nothing to do.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

from hdbbench.backends.accounts import as_account
from hdbbench.backends.base import Backend
from hdbbench.backends.model import SchemaVariant, TableDef, TableSize, compare_tables
from hdbbench.backends.mysql.aggregates import MySQLAggregates
from hdbbench.backends.mysql.aging import MySQLAgingLayout
from hdbbench.backends.mysql.cold import MySQLColdRestart
from hdbbench.backends.mysql.ddl import render_schema, statements, users_sql
from hdbbench.backends.mysql.extraction import MySQLExtraction
from hdbbench.backends.mysql.faults import MySQLTableFaults
from hdbbench.backends.mysql.inventory import MySQLInventoryReader
from hdbbench.backends.mysql.maintenance import MySQLMaintenance
from hdbbench.backends.mysql.memory import MySQLMemoryModel
from hdbbench.backends.mysql.outside import MySQLOutsideFigures
from hdbbench.backends.mysql.reader import fetch_events
from hdbbench.backends.mysql.storage import (
    MySQLStorageOptions,
    documented_row_minimum,
    log_positions,
    prepare_sizes,
    server_facts,
    table_size,
)
from hdbbench.backends.mysql.tables import MYSQL, RO_USER, RW_USER, all_tables, quote_ident
from hdbbench.backends.mysql.verify import read_catalog, verify_partitions, verify_rows_and_users
from hdbbench.backends.mysql.writer import MySQLBulkWriter
from hdbbench.model.errors import ConfigError, SchemaError
from hdbbench.model.hdbtypes import Event

T = TypeVar("T")
# The installed file name of libhdb++mysql (libhdb++ dlopens the LibConfiguration's libname).
LIBNAME = "libhdb++mysql.so.7"
# LibConfiguration keys libhdb++mysql reads as integers.
INTEGER_KEYS = ("port", "batch_size", "ignore_duplicates", "lightschema", "json_array")


class MySQLBackend(MySQLExtraction, Backend):
    name = MYSQL
    default_indexes = "pk"  # libhdbpp-mysql has no secondary index on data tables
    disk_variants = ("pk", "pk+2", "pk,compressed", "pk,page_compressed", "pk,myrocks")
    separate_clustering = False  # InnoDB tables are always clustered by their primary key
    published_as = "MySQL"
    cold_note = "MariaDB without buffer-pool dump/load"
    row_per_element = True  # arrays are stored one row per element
    client_packages = ("mariadb",)

    @classmethod
    def check_variant(cls, variant: SchemaVariant) -> None:
        if not variant.foreign_keys:
            raise ConfigError("mysql: the HDB++ data tables have no foreign keys; 'nofk' does not apply")

    def connect(self, database: str | None = None, **kwargs: Any) -> Any:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        try:
            conn = self.endpoint.connect(database, **kwargs)
        except mariadb.Error as exc:
            raise SchemaError(f"cannot connect to MariaDB database {database!r}: {exc}") from exc
        return conn

    def expected_tables(self, variant: SchemaVariant | str | None = None) -> list[TableDef]:
        return all_tables(self.resolve_variant(variant))

    def schema_sql(self, variant: SchemaVariant | str | None = None) -> str:
        return render_schema(self.expected_tables(variant))

    def create_schema(self, variant: SchemaVariant | str | None = None) -> None:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        script = self.schema_sql(variant)
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", (self.database,))
            if cur.fetchone():
                raise SchemaError(f"database {self.database!r} already exists; drop it first")
            # utf8mb4_bin: any Unicode name, and att_name/error_desc compare exactly as on PostgreSQL.
            cur.execute(f"CREATE DATABASE {quote_ident(self.database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
            cur.execute(f"USE {quote_ident(self.database)}")
            for stmt in statements(script):
                cur.execute(stmt)
            for stmt in users_sql(self.database, self.endpoint.password):
                cur.execute(stmt)
            conn.commit()
        except mariadb.Error as exc:
            raise SchemaError(f"creating the mysql schema in {self.database!r} failed: {exc}") from exc
        finally:
            conn.close()

    def drop_schema(self) -> None:
        conn = self.connect()
        try:
            cur = conn.cursor()
            # Table grants outlive DROP DATABASE in mysql.tables_priv: revoke them while the table exists.
            cur.execute("SELECT COUNT(*) FROM mysql.tables_priv WHERE User = ? AND Db = ?", (RW_USER, self.database))
            if cur.fetchone()[0]:
                cur.execute(f"REVOKE ALL PRIVILEGES ON {quote_ident(self.database)}.att_conf FROM '{RW_USER}'@'%'")
            cur.execute(f"DROP DATABASE IF EXISTS {quote_ident(self.database)}")
            # Database-level grants outlive DROP DATABASE in mysql.db: revoke them explicitly.
            for user in (RW_USER, RO_USER):
                cur.execute("SELECT COUNT(*) FROM mysql.db WHERE User = ? AND Host = '%' AND Db = ?", (user, self.database))
                if cur.fetchone()[0]:
                    cur.execute(f"REVOKE ALL PRIVILEGES ON {quote_ident(self.database)}.* FROM '{user}'@'%'")
            # Users are server-global: drop them only when no other database grants them anything.
            cur.execute("SELECT COUNT(*) FROM mysql.db WHERE User IN (?, ?)", (RW_USER, RO_USER))
            if cur.fetchone()[0] == 0:
                cur.execute(f"DROP USER IF EXISTS '{RW_USER}'@'%', '{RO_USER}'@'%'")
            conn.commit()
        finally:
            conn.close()

    def verify_schema(self, variant: SchemaVariant | str | None = None) -> list[str]:
        resolved = self.resolve_variant(variant)
        expected = all_tables(resolved)
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", (self.database,))
            if not cur.fetchone():
                return [f"missing database {self.database}"]
            live, engines, partitions = read_catalog(cur, self.database)
            diffs = compare_tables(expected, live)
            diffs += [f"{t}: engine {e}, expected InnoDB" for t, e in sorted(engines.items()) if e != "InnoDB"]
            diffs += verify_partitions(expected, partitions)
            diffs += verify_rows_and_users(cur, self.database)
            return diffs
        finally:
            conn.close()

    def cluster(self) -> list[str]:
        return ["nothing to do: InnoDB tables are clustered by their primary key (att_conf_id, data_time[, idx])"]

    def count_rows_by_attribute(self, since: datetime | None = None, until: datetime | None = None) -> dict[str, int]:
        query = "SELECT att_conf_id, {events} FROM {table} WHERE {where} GROUP BY att_conf_id"
        counts: dict[str, int] = {}
        for name, _, count in self._per_data_table(query, since, until):
            counts[name] = counts.get(name, 0) + count
        return counts

    def count_error_events(self, since: datetime, until: datetime | None = None) -> dict[str, dict[str, int]]:
        query = ("SELECT t.att_conf_id, e.error_desc, {events} FROM {table} t JOIN att_error_desc e"
                 " USING (att_error_desc_id) WHERE {where} GROUP BY 1, 2")
        counts: dict[str, dict[str, int]] = {}
        for name, desc, count in self._per_data_table(query, since, until):
            per = counts.setdefault(name, {})
            per[desc] = per.get(desc, 0) + count
        return counts

    def _per_data_table(self, query: str, since: datetime | None, until: datetime | None) -> list[tuple[str, str, int]]:
        """`query` (att_conf_id, [description,] count; placeholders {events}, {table}, {where}) over
        every data table of an attribute in att_conf, as (attribute name, description or '', count).

        {where} names the table's attributes as well as the time range: the primary key (att_conf_id,
        data_time) then bounds the scan to each attribute's range (a time range alone reads the whole
        table, 75 s of a saturation search's accounting on MariaDB). {events} counts rows where a
        scalar event is one row, and distinct time stamps where an array is one row per element."""
        def naive(at: datetime | None, default: datetime) -> datetime:  # the session time zone is UTC
            return (at or default).astimezone(timezone.utc).replace(tzinfo=None)

        bounds = (naive(since, datetime(1970, 1, 1, tzinfo=timezone.utc)),
                  naive(until, datetime(9999, 1, 1, tzinfo=timezone.utc)))
        out: list[tuple[str, str, int]] = []
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            cur.execute("SELECT c.att_conf_id, c.att_name, t.data_type FROM att_conf c"
                        " JOIN att_conf_data_type t USING (att_conf_data_type_id)")
            rows = cur.fetchall()
            names = {att_id: name for att_id, name, _ in rows}
            ids_by_table: dict[str, list[int]] = {}
            for att_id, _, kind in rows:
                ids_by_table.setdefault(f"att_{kind}", []).append(int(att_id))
            for table, ids in sorted(ids_by_table.items()):
                prefix = "t." if " t " in query else ""
                where = (f"{prefix}att_conf_id IN ({', '.join(map(str, ids))})"
                         f" AND {prefix}data_time >= ? AND {prefix}data_time < ?")
                events = "COUNT(*)" if table.startswith("att_scalar_") else f"COUNT(DISTINCT {prefix}data_time)"
                cur.execute(query.format(table=quote_ident(table), where=where, events=events), bounds)
                for row in cur.fetchall():
                    out.append((names[row[0]], str(row[1]) if len(row) == 3 else "", int(row[-1])))
        finally:
            conn.close()
        return out

    def size_bytes(self) -> int:
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            cur.execute("SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.TABLES"
                        " WHERE table_schema = ?", (self.database,))
            row = cur.fetchone()
        finally:
            conn.close()
        return int(row[0]) if row else 0

    def table_sizes(self, tables: Sequence[str]) -> list[TableSize]:
        """After ANALYZE TABLE (exact persistent statistics): the leaf pages in use of the clustered
        index (off-page columns included) and of the secondary indexes; the rest of the tablespace
        files (FILE_SIZE, every partition: reserved extents, internal pages) is free_bytes, the slack;
        ALLOCATED_SIZE (the file system's st_blocks x 512) gives the blocks of sparse files.
        MyRocks has no per-table files: its memtables are flushed first and the SST-based
        DATA_LENGTH/INDEX_LENGTH are the whole figure."""
        conn = self.connect(self.database)
        try:
            cur = conn.cursor()
            return [table_size(cur, self.database, t) for t in tables]
        finally:
            conn.close()

    def log_positions(self) -> dict[str, int | None]:
        return self._with_cursor(log_positions, database=None)

    def documented_row_minimum(self, table: TableDef, att_prefix: str) -> tuple[int, float] | None:
        return self._with_cursor(lambda cur: documented_row_minimum(cur, self.database, table, att_prefix))

    def parts_for(self, table: str, variant: SchemaVariant | str | None, days: float) -> int | None:
        """HDB++ partitions: yearly, bimonthly for the scalar devdouble tables, or `interval=<N>d`."""
        resolved = self.resolve_variant(variant)
        if not resolved.partitioned:
            return None
        width = resolved.interval_days or (365.25 / 6 if table.startswith("att_scalar_devdouble_") else 365.25)
        return max(1, math.ceil(days / width))

    def prepare_sizes(self, tables: Sequence[str]) -> None:
        self._with_cursor(lambda cur: prepare_sizes(cur, tables))

    # --- optional abilities (hdbbench.backends.abilities)
    @classmethod
    def aging_layout(cls) -> MySQLAgingLayout:
        return MySQLAgingLayout()

    @classmethod
    def maintenance(cls) -> MySQLMaintenance:
        return MySQLMaintenance()

    @classmethod
    def aggregates(cls) -> MySQLAggregates:
        return MySQLAggregates()

    @classmethod
    def inventory_reader(cls) -> MySQLInventoryReader:
        return MySQLInventoryReader()

    @classmethod
    def faults(cls) -> MySQLTableFaults:
        return MySQLTableFaults()

    @classmethod
    def storage_options(cls) -> MySQLStorageOptions:
        return MySQLStorageOptions()

    @classmethod
    def cold_restart(cls) -> MySQLColdRestart:
        return MySQLColdRestart()

    @classmethod
    def memory_model(cls) -> MySQLMemoryModel:
        return MySQLMemoryModel()

    @classmethod
    def outside_figures(cls) -> MySQLOutsideFigures:
        return MySQLOutsideFigures()

    # --- facts about the server and the subscriber
    @classmethod
    def subscriber_configuration(cls, endpoint: Any, database: str) -> dict[str, str]:
        """libhdb++mysql needs host, port, user, password and dbname; `libname` is its installed file name."""
        subscriber = as_account(endpoint, RW_USER)  # HDB++'s event-subscriber user: no DELETE, no DROP
        return {"backend": cls.name, "libname": LIBNAME, "host": endpoint.host, "port": str(endpoint.port),
                "user": subscriber.user, "password": subscriber.password, "dbname": database}

    @classmethod
    def lib_configuration_problem(cls, lines: Mapping[str, str]) -> str | None:
        """libhdb++mysql converts these keys to integers and crashes on a value that is not one."""
        for key in INTEGER_KEYS:
            value = lines.get(key)
            if value is not None and not re.fullmatch(r"\s*[+-]?\d+\s*", str(value)):
                return f"{key}={value!r}: libhdb++mysql reads {key} as an integer (another value crashes it)"
        return None

    @staticmethod
    def server_facts(endpoint: Any) -> dict[str, Any]:
        return server_facts(endpoint)

    def account_files(self) -> dict[str, str]:
        return {"users.sql": "-- HDB++ users (server-global) and their grants on database hdbpp\n"
                + "".join(s + ";\n" for s in users_sql("hdbpp"))}

    def _with_cursor(self, work: Callable[[Any], T], database: str | None | bool = True) -> T:
        """Run `work(cursor)` on a fresh connection (to this database, or to none) and close it."""
        conn = self.connect(self.database if database is True else None)
        try:
            return work(conn.cursor())
        finally:
            conn.close()

    def bulk_writer(self) -> MySQLBulkWriter:
        return MySQLBulkWriter(self.connect(self.database))

    def fetch_events(self, att_name: str) -> list[Event]:
        conn = self.connect(self.database)
        try:
            return fetch_events(conn, att_name)
        finally:
            conn.close()

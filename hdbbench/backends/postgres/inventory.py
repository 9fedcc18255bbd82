# SPDX-License-Identifier: Apache-2.0
"""A live HDB++ archive on PostgreSQL or TimescaleDB read for an inventory (`hdbbench inventory
from-hdb`; hdbbench.backends.abilities.inventory says what this module gives).

The session only reads: `default_transaction_read_only` is on for the session and every transaction
begins READ ONLY (a write would be refused by the server), every statement is a transaction of its
own (no snapshot is held across the read), and `statement_timeout` bounds each one. Per attribute it reads through the (att_conf_id, data_time) primary key: the newest
data_time, then at most `limit` rows newest first. Arrays are never read element by element: their
rows give NULL tests only, and one event's dimensions come from its array's bounds.

Which backend the database is: `timescaledb` when the extension is installed in it, else `postgresql`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import psycopg
from psycopg import sql

from hdbbench.backends.abilities.inventory import LENGTH, NUMBER, ArchivedAttribute, EventRow, open_session
from hdbbench.backends.postgres.tables import POSTGRESQL, TIMESCALEDB
from hdbbench.model.errors import ConfigError, ServerError, first_line
from hdbbench.model.hdbtypes import AttrFormat, TangoType

CONNECT_TIMEOUT_S = 10
APPLICATION_NAME = "hdbbench inventory from-hdb"


class PgInventoryReader:
    """Live archives on PostgreSQL servers, either flavour (hdbbench.backends.abilities.inventory.InventoryReader)."""

    url_form = "postgresql://user:password@host:port/database"

    def open_archive(self, endpoint: Any, database: str, statement_timeout_s: float) -> PgArchiveSession:
        where = f"PostgreSQL at {endpoint.host}:{endpoint.port}"
        return open_session(lambda: psycopg.connect(endpoint.conninfo(database), autocommit=True,
                                                    connect_timeout=CONNECT_TIMEOUT_S,
                                                    application_name=APPLICATION_NAME),
                            lambda conn: PgArchiveSession(conn, f"database {database!r} on {where}",
                                                          statement_timeout_s),
                            psycopg.Error, where, database)


class PgArchiveSession:
    """A read-only session on one HDB++ database (hdbbench.backends.abilities.inventory.ArchiveSession)."""

    def __init__(self, conn: psycopg.Connection[Any], where: str, statement_timeout_s: float) -> None:
        self.conn = conn
        self.where = where
        try:
            conn.execute("SET default_transaction_read_only = on")
            self.set_timeout(statement_timeout_s)
            conn.autocommit = False
            conn.read_only = True  # every transaction: BEGIN READ ONLY
            if self._one("SELECT to_regclass('att_conf') IS NOT NULL") is not True:
                raise ConfigError(f"{where} is not an HDB++ archive: it has no att_conf table")
            timescale = self._one("SELECT count(*) FROM pg_extension WHERE extname = 'timescaledb'")
            self.backend = TIMESCALEDB if timescale else POSTGRESQL
            self.tables = {r[0] for r in self._all(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v')")}
        except psycopg.Error as exc:
            raise ServerError(f"reading {where} failed: {first_line(exc)}") from exc

    # --- statements: each in a read-only transaction that ends with it
    def _all(self, query: Any, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            rows = self.conn.execute(query, params).fetchall()
            self.conn.commit()
            return rows
        except psycopg.errors.QueryCanceled as exc:
            self.conn.rollback()
            raise TimeoutError(f"a statement on {self.where} ran past its timeout") from exc
        except psycopg.Error as exc:
            self.conn.rollback()
            raise ServerError(f"reading {self.where} failed: {first_line(exc)}") from exc

    def _one(self, query: Any, params: tuple[Any, ...] = ()) -> Any:
        rows = self._all(query, params)
        return rows[0][0] if rows else None

    def set_timeout(self, seconds: float) -> None:
        ms = max(1, int(seconds * 1000))
        # SET takes no bound parameters: the value is an integer we made. Outside a transaction when
        # the session is set up; later in a read-only one of its own (the setting outlives it).
        try:
            self.conn.execute(f"SET statement_timeout = {ms}")
            if not self.conn.autocommit:
                self.conn.commit()
        except psycopg.Error as exc:
            self.conn.rollback()
            raise ServerError(f"reading {self.where} failed: {first_line(exc)}") from exc

    # --- the archive
    def attributes(self) -> list[ArchivedAttribute]:
        rows = self._all(
            "SELECT c.att_conf_id, c.att_name, t.type_num, f.format_num, w.write_num, c.table_name "
            "FROM att_conf c LEFT JOIN att_conf_type t USING (att_conf_type_id) "
            "LEFT JOIN att_conf_format f USING (att_conf_format_id) "
            "LEFT JOIN att_conf_write w USING (att_conf_write_id) ORDER BY c.att_conf_id")
        out = []
        for att_id, name, type_num, format_num, write_num, table in rows:
            known = type_num in TangoType._value2member_map_
            fmt = AttrFormat(format_num) if format_num in AttrFormat._value2member_map_ else None
            out.append(ArchivedAttribute(int(att_id), name, TangoType(type_num) if known else None, fmt,
                                         "ro" if write_num == 0 else "rw", table or ""))
        return out

    def last_time(self, att: ArchivedAttribute) -> datetime | None:
        if att.table not in self.tables:
            return None
        query = sql.SQL("SELECT data_time FROM {} WHERE att_conf_id = %s ORDER BY data_time DESC LIMIT 1").format(
            sql.Identifier(att.table))
        at = self._one(query, (att.id,))
        return at.astimezone(timezone.utc) if at is not None else None

    def events(self, att: ArchivedAttribute, since: datetime | None, until: datetime, limit: int,
               value: str | None) -> list[EventRow]:
        if att.table not in self.tables:
            return []
        expr = {NUMBER: "COALESCE(value_r, value_w)::double precision",
                LENGTH: "char_length(COALESCE(value_r, value_w))"}.get(value or "", "NULL")
        lower = "AND data_time >= %s " if since is not None else ""
        query = sql.SQL(
            "SELECT data_time, quality, att_error_desc_id IS NOT NULL, (value_r IS NOT NULL OR value_w IS NOT NULL), "
            f"{expr} FROM {{}} WHERE att_conf_id = %s {lower}AND data_time <= %s ORDER BY data_time DESC LIMIT %s"
        ).format(sql.Identifier(att.table))
        params = (att.id, since, until, limit) if since is not None else (att.id, until, limit)
        return [EventRow(t.astimezone(timezone.utc), q, bool(e), bool(v), None if x is None else float(x))
                for t, q, e, v, x in self._all(query, params)]

    def dims(self, att: ArchivedAttribute, at: datetime) -> tuple[int, int]:
        query = sql.SQL(
            "SELECT array_ndims(v), array_length(v, 1), array_length(v, 2) FROM "
            "(SELECT COALESCE(value_r, value_w) AS v FROM {} WHERE att_conf_id = %s AND data_time = %s) s"
        ).format(sql.Identifier(att.table))
        rows = self._all(query, (att.id, at))
        if not rows or rows[0][0] is None:
            return 0, 0
        ndims, first, second = rows[0]
        if ndims >= 2:  # an image is a list of rows: [height][width]
            return int(second or 0), int(first or 0)
        return int(first or 0), 0

    def close(self) -> None:
        try:
            self.conn.rollback()
        finally:
            self.conn.close()

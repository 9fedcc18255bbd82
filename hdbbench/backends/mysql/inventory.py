# SPDX-License-Identifier: Apache-2.0
"""A live HDB++ archive on MySQL/MariaDB (the libhdbpp-mysql layout) read for an inventory
(`hdbbench inventory from-hdb`; hdbbench.backends.abilities.inventory says what this module gives).

The session only reads: `SET SESSION TRANSACTION READ ONLY` (the server refuses any write), every
statement a transaction of its own (no read view is held across the read, so purge is not held
back), and every statement bounded by `max_statement_time` (MariaDB) or `max_execution_time`
(MySQL). Per attribute it reads through the primary key (att_conf_id, data_time[, idx]): the newest
data_time, then at most `limit` rows newest first. Arrays stored one row per element (`idx`) are
grouped into events here, and a row limit that cuts the oldest event keeps only the whole ones; the
JSON array layout (one row per event) reads the same way. The layout keeps no array format: an array
event with dim_y > 0 is an image.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from hdbbench.backends.abilities.inventory import LENGTH, NUMBER, ArchivedAttribute, EventRow, open_session
from hdbbench.backends.mysql.encoders import naive_utc
from hdbbench.backends.mysql.tables import MYSQL, quote_ident
from hdbbench.model.errors import ConfigError, ServerError, first_line
from hdbbench.model.hdbtypes import AttrFormat, TangoType

TIMEOUT_ERRNOS = (1969, 3024)   # MariaDB ER_STATEMENT_TIMEOUT, MySQL ER_QUERY_TIMEOUT
MIN_EVENTS = 3                  # whole array events read at least, whatever the row limit


class MySQLInventoryReader:
    """Live archives on MariaDB/MySQL servers (hdbbench.backends.abilities.inventory.InventoryReader)."""

    url_form = "mysql://user:password@host:port/database"

    def open_archive(self, endpoint: Any, database: str, statement_timeout_s: float) -> MySQLArchiveSession:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        where = f"MariaDB at {endpoint.host}:{endpoint.port}"
        return open_session(lambda: endpoint.connect(database),
                            lambda conn: MySQLArchiveSession(conn, f"database {database!r} on {where}",
                                                             statement_timeout_s),
                            mariadb.Error, where, database)


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at.astimezone(timezone.utc)


class MySQLArchiveSession:
    """A read-only session on one HDB++ database (hdbbench.backends.abilities.inventory.ArchiveSession)."""

    backend = MYSQL

    def __init__(self, conn: Any, where: str, statement_timeout_s: float) -> None:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        self.conn = conn
        self.where = where
        self._timeout_variable: str | None = None
        try:
            conn.autocommit = False
            self.cur = conn.cursor()
            self.cur.execute("SET SESSION TRANSACTION READ ONLY")
            self.set_timeout(statement_timeout_s)
            conf = {r[0] for r in self._all("SELECT COLUMN_NAME FROM information_schema.COLUMNS "
                                            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'att_conf'")}
        except mariadb.Error as exc:
            raise ServerError(f"reading {where} failed: {first_line(exc)}") from exc
        if not conf:
            raise ConfigError(f"{where} is not an HDB++ archive: it has no att_conf table")
        if "att_conf_data_type_id" not in conf:
            raise ConfigError(f"{where} is not an HDB++ archive of the libhdbpp-mysql layout: "
                              "att_conf has no att_conf_data_type_id")
        self.columns: dict[str, set[str]] = {}
        for table, column in self._all("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS "
                                       "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'att\\_%'"):
            self.columns.setdefault(table, set()).add(column)

    # --- statements: each in a read-only transaction that ends with it
    def _all(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        try:
            self.cur.execute(query, params)
            rows = [tuple(r) for r in self.cur.fetchall()]
            self.conn.commit()
            return rows
        except mariadb.Error as exc:
            self.conn.rollback()
            if getattr(exc, "errno", None) in TIMEOUT_ERRNOS:
                raise TimeoutError(f"a statement on {self.where} ran past its timeout") from exc
            raise ServerError(f"reading {self.where} failed: {first_line(exc)}") from exc

    def set_timeout(self, seconds: float) -> None:
        # deferred: the MariaDB driver loads only where a MariaDB server is used
        import mariadb

        if self._timeout_variable is None:
            try:  # MariaDB: seconds; MySQL has no such variable and bounds SELECTs in milliseconds
                self.cur.execute(f"SET SESSION max_statement_time = {max(0.001, seconds):.3f}")
                self._timeout_variable = "max_statement_time"
            except mariadb.Error:
                self._timeout_variable = "max_execution_time"
            else:
                return
        if self._timeout_variable == "max_statement_time":
            self.cur.execute(f"SET SESSION max_statement_time = {max(0.001, seconds):.3f}")
        else:
            self.cur.execute(f"SET SESSION max_execution_time = {max(1, int(seconds * 1000))}")

    # --- the archive
    def attributes(self) -> list[ArchivedAttribute]:
        rows = self._all("SELECT c.att_conf_id, c.att_name, t.data_type, t.tango_data_type FROM att_conf c "
                         "LEFT JOIN att_conf_data_type t USING (att_conf_data_type_id) ORDER BY c.att_conf_id")
        out = []
        for att_id, name, kind, type_num in rows:
            kind = kind or ""
            known = type_num in TangoType._value2member_map_
            out.append(ArchivedAttribute(int(att_id), name, TangoType(type_num) if known else None,
                                         AttrFormat.SCALAR if kind.startswith("scalar") else None,
                                         "ro" if kind.endswith("_ro") else "rw", f"att_{kind}" if kind else ""))
        return out

    def last_time(self, att: ArchivedAttribute) -> datetime | None:
        if att.table not in self.columns:
            return None
        rows = self._all(f"SELECT MAX(data_time) FROM {quote_ident(att.table)} WHERE att_conf_id = ?", (att.id,))
        return _utc(rows[0][0]) if rows and rows[0][0] is not None else None

    def _value_columns(self, table: str) -> str:
        return "COALESCE(value_r, value_w)" if "value_w" in self.columns[table] else "value_r"

    def events(self, att: ArchivedAttribute, since: datetime | None, until: datetime, limit: int,
               value: str | None) -> list[EventRow]:
        if att.table not in self.columns:
            return []
        columns = self.columns[att.table]
        has_value = ("(value_r IS NOT NULL OR value_w IS NOT NULL)" if "value_w" in columns
                     else "value_r IS NOT NULL")
        expr = {NUMBER: self._value_columns(att.table),
                LENGTH: f"CHAR_LENGTH({self._value_columns(att.table)})"}.get(value or "", "NULL")
        lower = "AND data_time >= ? " if since is not None else ""
        params = ((att.id, naive_utc(since)) if since is not None else (att.id,)) + (naive_utc(until),)

        def read(rows_limit: int) -> list[tuple[Any, ...]]:
            return self._all(
                f"SELECT data_time, quality, att_error_desc_id IS NOT NULL, {has_value}, {expr} "
                f"FROM {quote_ident(att.table)} WHERE att_conf_id = ? {lower}AND data_time <= ? "
                f"ORDER BY data_time DESC LIMIT {int(rows_limit)}", params)

        rows = read(limit)
        if "idx" not in columns:  # one row per event
            return [EventRow(_utc(t), q, bool(e), bool(v), None if x is None else float(x))
                    for t, q, e, v, x in rows]
        events = _whole_events(rows, limit)
        if len(rows) >= limit and len(events) < MIN_EVENTS and events:
            per_event = sum(1 for r in rows if r[0] == rows[0][0])
            if MIN_EVENTS * per_event + 1 > limit:
                bigger = MIN_EVENTS * per_event + 1
                events = _whole_events(read(bigger), bigger)
        return events

    def dims(self, att: ArchivedAttribute, at: datetime) -> tuple[int, int]:
        columns = self.columns.get(att.table, set())
        if "dim_x_r" not in columns:
            return 0, 0
        write = ", MAX(dim_x_w), MAX(dim_y_w)" if "dim_x_w" in columns else ""
        rows = self._all(f"SELECT MAX(dim_x_r), MAX(dim_y_r), MAX(value_r IS NOT NULL){write} FROM "
                         f"{quote_ident(att.table)} WHERE att_conf_id = ? AND data_time = ?", (att.id, naive_utc(at)))
        if not rows or rows[0][0] is None:
            return 0, 0
        row = rows[0]
        if not row[2] and write:
            return int(row[3] or 0), int(row[4] or 0)
        return int(row[0] or 0), int(row[1] or 0)

    def close(self) -> None:
        try:
            self.conn.rollback()
        finally:
            self.conn.close()


def _whole_events(rows: list[tuple[Any, ...]], limit: int) -> list[EventRow]:
    """Rows of one-row-per-element arrays (newest first) as events; when the row limit was reached the
    oldest event may be cut, and is left out unless it is the only one."""
    events: list[EventRow] = []
    for t, quality, error, has_value, _ in rows:
        if events and events[-1].data_time == _utc(t):
            last = events[-1]
            events[-1] = last._replace(error=last.error or bool(error),
                                       has_value=last.has_value or bool(has_value))
        else:
            events.append(EventRow(_utc(t), quality, bool(error), bool(has_value), None))
    if len(rows) >= limit and len(events) > 1:
        events.pop()
    return events

# SPDX-License-Identifier: Apache-2.0
"""HDB++ aggregates of the MariaDB layout as ordinary tables (hdbbench.backends.abilities.aggregates).

The same figures as the PostgreSQL ones, per data table `att_scalar_<type>_<ro|rw>`: tables
`cagg_scalar_<type>_<ro|rw>_<level>`, buckets FLOOR(UNIX_TIMESTAMP(data_time) / s) * s (sessions run
in UTC), refreshed by DELETE + INSERT ... SELECT from the watermark kept in `hdbbench_cagg_watermark`.
The `_ro` tables have no value_w, so their aggregates have no `_w` columns.

NaN and ±Infinity are not storable in a MariaDB DOUBLE: libhdbpp-mysql (and our writer) store them
as NULL, so count_nan_* is always 0 here and count_* leaves those events out, where PostgreSQL counts
them in count_* and count_nan_*.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

from hdbbench.backends.mysql.encoders import naive_utc
from hdbbench.backends.mysql.tables import data_type_name, quote_ident
from hdbbench.model.hdbtypes import AttrFormat, TangoType, WriteType

WATERMARKS = "hdbbench_cagg_watermark"
LATE_S = 60  # how late an event may be committed after its timestamp and still be aggregated
NUMERIC = (TangoType.DEV_UCHAR, TangoType.DEV_SHORT, TangoType.DEV_USHORT, TangoType.DEV_LONG,
           TangoType.DEV_ULONG, TangoType.DEV_LONG64, TangoType.DEV_ULONG64, TangoType.DEV_FLOAT,
           TangoType.DEV_DOUBLE)
# data table -> the sides it has (value_r only for READ attributes' `_ro` tables)
SIDES_OF = {f"att_{data_type_name(t, AttrFormat.SCALAR, w)}": ("r",) if w == WriteType.READ else ("r", "w")
            for t in NUMERIC for w in (WriteType.READ, WriteType.READ_WRITE)}
STATS = ("count", "count_nan", "mean", "min", "max", "stddev")


def _columns(table: str) -> list[str]:
    """The aggregate columns of `table`'s aggregates, in the order `_select` yields them."""
    return ["count_rows", "count_errors", *(f"{c}_{s}" for s in SIDES_OF[table] for c in STATS)]


def _bucket(expr: str, seconds: int) -> str:
    return f"FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP({expr}) / {int(seconds)}) * {int(seconds)})"


def _select(table: str, seconds: int) -> str:
    """The aggregation of raw rows in [?, ?): what a refresh writes and what a check recomputes. The
    value `+ 0e0` is a DOUBLE whatever the column (AVG of an integer would be DECIMAL)."""
    parts = ["COUNT(*)", "COUNT(att_error_desc_id)"]
    for side in SIDES_OF[table]:
        v = f"(value_{side} + 0e0)"
        parts += [f"COUNT(value_{side})", "0", f"AVG({v})", f"MIN({v})", f"MAX({v})", f"STDDEV_SAMP({v})"]
    named = ", ".join(f"{p} AS {c}" for p, c in zip(parts, _columns(table)))
    return (f"SELECT att_conf_id, {_bucket('data_time', seconds)} AS data_time, {named} "
            f"FROM {quote_ident(table)} WHERE data_time >= ? AND data_time < ? GROUP BY 1, 2")


@contextmanager
def _session(backend: Any, read_committed: bool = False) -> Iterator[Any]:
    """A cursor in one transaction, committed at the end. READ COMMITTED makes the SELECT of an
    INSERT ... SELECT a consistent read: under REPEATABLE READ InnoDB would lock the raw rows it scans
    (and the gap after the newest), holding up the subscribers that insert there."""
    conn = backend.connect(backend.database)
    try:
        cur = conn.cursor()
        if read_committed:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        yield cur
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    finally:
        conn.close()


def _exec(cur: Any, query: str, params: tuple[Any, ...] = ()) -> int:
    """Run `query` (datetimes as the naive UTC the session reads); the rows it changed."""
    cur.execute(query, tuple(naive_utc(p) if isinstance(p, datetime) else p for p in params))
    return int(cur.rowcount)


def _one(cur: Any, query: str, params: tuple[Any, ...] = ()) -> Any:
    _exec(cur, query, params)
    return cur.fetchone()


def _ensure(cur: Any, table: str, cagg: str) -> None:
    """The watermark and aggregate tables (DDL commits implicitly in MariaDB: done before the refresh)."""
    cur.execute(f"CREATE TABLE IF NOT EXISTS {WATERMARKS} (cagg_table varchar(64) NOT NULL PRIMARY KEY, "
                "data_table varchar(64) NOT NULL, level varchar(8) NOT NULL, first_row datetime(6) NOT NULL, "
                "watermark datetime(6) NOT NULL, refreshed_to datetime(6) NOT NULL) ENGINE=InnoDB")
    columns = ["att_conf_id int(10) unsigned NOT NULL", "data_time datetime(6) NOT NULL"]
    columns += [f"{c} bigint NOT NULL" if c.startswith("count") else f"{c} double NULL"
                for c in _columns(table)]
    # KEY (data_time): the refresh deletes and reads back by time alone.
    cur.execute(f"CREATE TABLE IF NOT EXISTS {quote_ident(cagg)} ({', '.join(columns)}, "
                "PRIMARY KEY (att_conf_id, data_time), KEY data_time (data_time)) ENGINE=InnoDB")


class MySQLAggregates:
    """HDB++'s aggregates as tables on MariaDB (hdbbench.backends.abilities.aggregates.Aggregates)."""

    def data_tables(self, backend: Any) -> list[str]:
        """The numeric scalar data tables holding rows (arrays are not aggregated)."""
        with _session(backend) as cur:
            return [t for t in SIDES_OF if _one(cur, f"SELECT EXISTS (SELECT 1 FROM {quote_ident(t)})")[0]]

    def refresh(self, backend: Any, table: str, cagg: str, level: str, seconds: int) -> int:
        """Replace `cagg`'s buckets from its watermark on (from the oldest row the first time) with the
        aggregates of the raw rows up to now; returns the rows written."""
        with _session(backend) as cur:
            _ensure(cur, table, cagg)
        with _session(backend, read_committed=True) as cur:  # one transaction: buckets and watermark together
            mark = _one(cur, f"SELECT watermark FROM {WATERMARKS} WHERE cagg_table = ? FOR UPDATE", (cagg,))
            hi = _one(cur, "SELECT NOW(6)")[0]
            if mark is None:
                first, lo = _one(cur, f"SELECT MIN(data_time), {_bucket('MIN(data_time)', seconds)} "
                                      f"FROM {quote_ident(table)}")
                if first is None:
                    return 0
                _exec(cur, f"INSERT INTO {WATERMARKS} VALUES (?, ?, ?, ?, ?, ?)",
                      (cagg, table, level, first, lo, lo))
            else:
                lo = mark[0]
            _exec(cur, f"DELETE FROM {quote_ident(cagg)} WHERE data_time >= ?", (lo,))
            columns = ", ".join(("att_conf_id", "data_time", *_columns(table)))
            rows = _exec(cur, f"INSERT INTO {quote_ident(cagg)} ({columns}) {_select(table, seconds)}", (lo, hi))
            newest = _one(cur, f"SELECT MAX(data_time) FROM {quote_ident(cagg)} WHERE data_time >= ?", (lo,))[0]
            # Events are committed after their timestamp (archivers batch): the next refresh goes back over
            # the last LATE_S too, so one that arrived late is still counted.
            late = _one(cur, f"SELECT {_bucket(f'? - INTERVAL {LATE_S} SECOND', seconds)}", (hi,))[0]
            _exec(cur, f"UPDATE {WATERMARKS} SET watermark = ?, refreshed_to = ? WHERE cagg_table = ?",
                      (min(newest or lo, late), hi, cagg))
        return rows

    def materialised(self, backend: Any) -> list[tuple[str, str, str]]:
        """(data table, aggregate table, level) of every aggregate table a refresh made."""
        with _session(backend) as cur:
            if _one(cur, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? "
                         "AND TABLE_NAME = ?", (backend.database, WATERMARKS))[0] == 0:
                return []
            cur.execute(f"SELECT data_table, cagg_table, level FROM {WATERMARKS} ORDER BY 2")
            return [(r[0], r[1], r[2]) for r in cur.fetchall()]

    def check(self, backend: Any, table: str, cagg: str, seconds: int, rel_tol: float) -> bool:
        """`cagg`'s rows equal the aggregation recomputed now over the raw rows it claims to cover (see the
        PostgreSQL one). Floats within `rel_tol`, NULL equal to NULL."""
        with _session(backend, read_committed=True) as cur:
            first, hi = _one(cur, f"SELECT first_row, refreshed_to FROM {WATERMARKS} WHERE cagg_table = ?",
                             (cagg,))
            oldest, oldest_bucket, first_bucket = _one(
                cur, f"SELECT MIN(data_time), {_bucket('MIN(data_time)', seconds)}, {_bucket('?', seconds)} "
                     f"FROM {quote_ident(table)}", (first,))
            if oldest is None:
                return True  # no raw row left to check against
            lo = first_bucket if oldest <= first else oldest_bucket + timedelta(seconds=seconds)
            close = []
            for c in _columns(table):
                close.append(f"m.{c} = c.{c}" if c.startswith("count") else
                             f"((m.{c} IS NULL AND c.{c} IS NULL) OR ABS(m.{c} - c.{c}) <= {rel_tol!r} * "
                             f"GREATEST(ABS(m.{c}), ABS(c.{c})))")
            materialised_rows = _one(cur, f"SELECT COUNT(*) FROM {quote_ident(cagg)} "
                                          "WHERE data_time >= ? AND data_time < ?", (lo, hi))[0]
            computed, matched = _one(
                cur, "SELECT COUNT(*), COALESCE(SUM(CASE WHEN m.att_conf_id IS NOT NULL AND "
                     f"{' AND '.join(close)} THEN 1 ELSE 0 END), 0) FROM ({_select(table, seconds)}) c "
                     f"LEFT JOIN {quote_ident(cagg)} m "
                     "ON m.att_conf_id = c.att_conf_id AND m.data_time = c.data_time",
                (lo, hi))
        # Both sides are keyed (att_conf_id, bucket): same counts and every computed row matched is equality.
        return int(materialised_rows) == int(computed) == int(matched)

    def span(self, backend: Any, cagg: str, att_conf_id: int) -> tuple[datetime, datetime] | None:
        """(the attribute's oldest materialised bucket, the table's watermark), or None (nothing
        materialised)."""
        if cagg not in {c for _t, c, _l in self.materialised(backend)}:
            return None
        with _session(backend) as cur:
            row = _one(cur, f"SELECT (SELECT MIN(data_time) FROM {quote_ident(cagg)} WHERE att_conf_id = ?), "
                            f"(SELECT watermark FROM {WATERMARKS} WHERE cagg_table = ?)", (att_conf_id, cagg))
        if row[0] is None or row[1] is None:
            return None
        return row[0].replace(tzinfo=timezone.utc), row[1].replace(tzinfo=timezone.utc)

    def hourly(self, backend: Any, conn: Any, source: str, table: str, cagg: str, att_conf_id: int,
               start: datetime, end: datetime) -> list[tuple[Any, ...]]:
        """(hour, count, mean, min, max) of value_r per hour in [start, end), from the raw rows or the
        `1hour` aggregate table, on `conn` (the caller times it)."""
        if source == "aggregate":
            query = (f"SELECT data_time, count_r, mean_r, min_r, max_r FROM {quote_ident(cagg)} "
                     "WHERE att_conf_id = ? AND data_time >= ? AND data_time < ? ORDER BY data_time")
        else:
            v = "(value_r + 0e0)"
            query = (f"SELECT {_bucket('data_time', 3600)}, COUNT(value_r), AVG({v}), MIN({v}), MAX({v}) "
                     f"FROM {quote_ident(table)} WHERE att_conf_id = ? AND data_time >= ? AND data_time < ? "
                     "GROUP BY 1 ORDER BY 1")
        cur = conn.cursor()
        cur.execute(query, (att_conf_id, naive_utc(start), naive_utc(end)))
        rows = cur.fetchall()
        conn.commit()
        return [(r[0].replace(tzinfo=timezone.utc), int(r[1]), *r[2:]) for r in rows]

    def drop(self, backend: Any) -> None:
        """Drop every aggregate table and the watermarks (a history reset, a fresh start)."""
        caggs = [c for _t, c, _l in self.materialised(backend)]
        with _session(backend) as cur:
            for cagg in caggs:
                cur.execute(f"DROP TABLE IF EXISTS {quote_ident(cagg)}")
            cur.execute(f"DROP TABLE IF EXISTS {WATERMARKS}")

    def oldest_raw(self, backend: Any, table: str, att_conf_id: int) -> datetime | None:
        """The attribute's oldest raw row (an index lookup): retention may have removed what the aggregates keep."""
        with _session(backend) as cur:
            row = _one(cur, f"SELECT MIN(data_time) FROM {quote_ident(table)} WHERE att_conf_id = ?", (att_conf_id,))
        return None if row[0] is None else row[0].replace(tzinfo=timezone.utc)

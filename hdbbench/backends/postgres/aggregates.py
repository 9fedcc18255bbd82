# SPDX-License-Identifier: Apache-2.0
"""HDB++ aggregates of the PostgreSQL layout, TimescaleDB's too, as ordinary tables
(hdbbench.backends.abilities.aggregates).

The HDB++ TimescaleDB project materialises its per-bucket figures as continuous aggregates, which
Debian's Apache-only TimescaleDB refuses; here they are plain tables `cagg_scalar_<type>_<level>`
refreshed incrementally from the raw rows. TimescaleDB buckets with `time_bucket`; plain PostgreSQL
has none and uses `date_bin` from the epoch (PostgreSQL 14+). Both give the same buckets for every
level: time_bucket's default origin, 2000-01-03, is a whole number of days after the epoch.

Every table's watermark (the start of its newest, possibly partial, bucket) and the upper bound of
its last refresh live in `hdbbench_cagg_watermark`. A refresh replaces the buckets from the
watermark on, in one transaction with the watermark's move, so a reader never sees a half refresh.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hdbbench.backends.postgres.tables import data_table_name, quote_ident
from hdbbench.model.hdbtypes import AttrFormat, TangoType

WATERMARKS = "hdbbench_cagg_watermark"
LATE_S = 60  # how late an event may be committed after its timestamp and still be aggregated
NUMERIC = (TangoType.DEV_UCHAR, TangoType.DEV_SHORT, TangoType.DEV_USHORT, TangoType.DEV_LONG,
           TangoType.DEV_ULONG, TangoType.DEV_LONG64, TangoType.DEV_ULONG64, TangoType.DEV_FLOAT,
           TangoType.DEV_DOUBLE)
FLOATS = (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE)
TYPE_OF = {data_table_name(t, AttrFormat.SCALAR): t for t in NUMERIC}
# Every PostgreSQL data table has value_w (NULL for READ attributes): both sides are aggregated.
SIDES = ("r", "w")
STATS = ("count", "count_nan", "mean", "min", "max", "stddev")
# The aggregate columns, in the order _select yields them.
COLUMNS = ("count_rows", "count_errors", *(f"{c}_{s}" for s in SIDES for c in STATS))
COUNTS = tuple(c for c in COLUMNS if c.startswith("count"))
FIGURES = tuple(c for c in COLUMNS if not c.startswith("count"))
# Untyped literals: they take the column's type (real or double precision).
SPECIALS = "('NaN', 'Infinity', '-Infinity')"


def _bucket(backend: Any, expr: str, seconds: int) -> str:
    if backend.timescale:
        return f"time_bucket(interval '{int(seconds)} seconds', {expr})"
    return f"date_bin(interval '{int(seconds)} seconds', {expr}, timestamptz 'epoch')"


def _value(table: str, side: str) -> str:
    """The value as double precision, NaN and ±Infinity as NULL (the statistics of the HDB++ project's
    aggregates skip them; integer types have none). Unsigned domains are numeric: cast too."""
    col = f"value_{side}"
    if TYPE_OF[table] in FLOATS:
        return f"CASE WHEN {col} IN {SPECIALS} THEN NULL ELSE {col}::float8 END"
    return f"{col}::float8"


def _select(backend: Any, table: str, seconds: int) -> str:
    """The aggregation of raw rows in [%(lo)s, %(hi)s): what a refresh writes and what a check
    recomputes (one text for both, so they cannot drift apart)."""
    parts = ["count(*) AS count_rows", "count(att_error_desc_id) AS count_errors"]
    for side in SIDES:
        v, col = _value(table, side), f"value_{side}"
        nan = f"count(*) FILTER (WHERE {col} IN {SPECIALS})" if TYPE_OF[table] in FLOATS else "0"
        parts += [f"count({col}) AS count_{side}", f"{nan} AS count_nan_{side}", f"avg({v}) AS mean_{side}",
                  f"min({v}) AS min_{side}", f"max({v}) AS max_{side}", f"stddev_samp({v}) AS stddev_{side}"]
    return (f"SELECT att_conf_id, {_bucket(backend, 'data_time', seconds)} AS data_time, {', '.join(parts)} "
            f"FROM {quote_ident(table)} WHERE data_time >= %(lo)s AND data_time < %(hi)s GROUP BY 1, 2")


def _ensure(conn: Any, cagg: str) -> None:
    columns = ["att_conf_id integer NOT NULL", "data_time timestamp with time zone NOT NULL"]
    columns += [f"{c} bigint NOT NULL" if c in COUNTS else f"{c} double precision" for c in COLUMNS]
    conn.execute(f"CREATE TABLE IF NOT EXISTS {WATERMARKS} (cagg_table text PRIMARY KEY, "
                 "data_table text NOT NULL, level text NOT NULL, first_row timestamptz NOT NULL, "
                 "watermark timestamptz NOT NULL, refreshed_to timestamptz NOT NULL)")
    conn.execute(f"CREATE TABLE IF NOT EXISTS {quote_ident(cagg)} ({', '.join(columns)}, "
                 "PRIMARY KEY (att_conf_id, data_time))")
    # The refresh deletes and reads back by time alone: without this index each would scan the table.
    conn.execute(f"CREATE INDEX IF NOT EXISTS {quote_ident(cagg + '_data_time_idx')} "
                 f"ON {quote_ident(cagg)} (data_time)")


class PgAggregates:
    """HDB++'s aggregates as tables on the PostgreSQL family (hdbbench.backends.abilities.aggregates.Aggregates)."""

    def data_tables(self, backend: Any) -> list[str]:
        """The numeric scalar data tables holding rows (arrays are not aggregated)."""
        with backend.connect() as conn:
            return [t for t in TYPE_OF
                    if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {quote_ident(t)})").fetchone()[0]]

    def refresh(self, backend: Any, table: str, cagg: str, level: str, seconds: int) -> int:
        """Replace `cagg`'s buckets from its watermark on (from the oldest row the first time) with the
        aggregates of the raw rows up to now; returns the rows written."""
        with backend.connect() as conn:  # one transaction: buckets and watermark move together
            _ensure(conn, cagg)
            mark = conn.execute(f"SELECT watermark FROM {WATERMARKS} WHERE cagg_table = %s FOR UPDATE",
                                (cagg,)).fetchone()
            hi = conn.execute("SELECT now()").fetchone()[0]
            if mark is None:
                first, lo = conn.execute(f"SELECT min(data_time), {_bucket(backend, 'min(data_time)', seconds)} "
                                         f"FROM {quote_ident(table)}").fetchone()
                if first is None:
                    return 0
                conn.execute(f"INSERT INTO {WATERMARKS} VALUES (%s, %s, %s, %s, %s, %s)",
                             (cagg, table, level, first, lo, lo))
            else:
                lo = mark[0]
            conn.execute(f"DELETE FROM {quote_ident(cagg)} WHERE data_time >= %s", (lo,))
            columns = ", ".join(("att_conf_id", "data_time", *COLUMNS))
            rows = conn.execute(f"INSERT INTO {quote_ident(cagg)} ({columns}) {_select(backend, table, seconds)}",
                                {"lo": lo, "hi": hi}).rowcount
            newest = conn.execute(f"SELECT max(data_time) FROM {quote_ident(cagg)} WHERE data_time >= %s",
                                  (lo,)).fetchone()[0]
            # Events are committed after their timestamp (archivers batch): the next refresh goes back over
            # the last LATE_S too, so one that arrived late is still counted.
            late = conn.execute(f"SELECT {_bucket(backend, '%s::timestamptz', seconds)}",
                                (hi - timedelta(seconds=LATE_S),)).fetchone()[0]
            conn.execute(f"UPDATE {WATERMARKS} SET watermark = %s, refreshed_to = %s WHERE cagg_table = %s",
                         (min(newest or lo, late), hi, cagg))
        return int(rows)

    def materialised(self, backend: Any) -> list[tuple[str, str, str]]:
        """(data table, aggregate table, level) of every aggregate table a refresh made."""
        with backend.connect() as conn:
            if conn.execute("SELECT to_regclass(%s)", (f"public.{WATERMARKS}",)).fetchone()[0] is None:
                return []
            rows = conn.execute(f"SELECT data_table, cagg_table, level FROM {WATERMARKS} ORDER BY 2").fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def check(self, backend: Any, table: str, cagg: str, seconds: int, rel_tol: float) -> bool:
        """`cagg`'s rows equal the aggregation recomputed now over the raw rows it claims to cover: from
        the oldest row of its first refresh (or, when older rows were removed since, from the first bucket
        still whole) to the upper bound of its last refresh. Floats within `rel_tol`, NULL equal to NULL."""
        with backend.connect() as conn:
            first, hi = conn.execute(f"SELECT first_row, refreshed_to FROM {WATERMARKS} WHERE cagg_table = %s",
                                     (cagg,)).fetchone()
            oldest, oldest_bucket, first_bucket = conn.execute(
                f"SELECT min(data_time), {_bucket(backend, 'min(data_time)', seconds)}, "
                f"{_bucket(backend, '%s::timestamptz', seconds)} FROM {quote_ident(table)}", (first,)).fetchone()
            if oldest is None:
                return True  # no raw row left to check against
            lo = first_bucket if oldest <= first else oldest_bucket + timedelta(seconds=seconds)
            close = [f"m.{c} = c.{c}" for c in COUNTS]
            close += [f"((m.{c} IS NULL AND c.{c} IS NULL) OR abs(m.{c} - c.{c}) <= {rel_tol!r} * "
                      f"greatest(abs(m.{c}), abs(c.{c})))" for c in FIGURES]
            counts = conn.execute(
                f"WITH c AS ({_select(backend, table, seconds)}), "
                f"m AS (SELECT * FROM {quote_ident(cagg)} WHERE data_time >= %(lo)s AND data_time < %(hi)s) "
                f"SELECT (SELECT count(*) FROM m), count(*), "
                f"coalesce(sum(CASE WHEN m.att_conf_id IS NOT NULL AND {' AND '.join(close)} "
                "THEN 1 ELSE 0 END), 0) "
                "FROM c LEFT JOIN m USING (att_conf_id, data_time)", {"lo": lo, "hi": hi}).fetchone()
        # Both sides are keyed (att_conf_id, bucket): same counts and every computed row matched is equality.
        return bool(counts[0] == counts[1] == counts[2])

    def span(self, backend: Any, cagg: str, att_conf_id: int) -> tuple[datetime, datetime] | None:
        """(the attribute's oldest materialised bucket, the table's watermark), or None (nothing
        materialised)."""
        with backend.connect() as conn:
            if conn.execute("SELECT to_regclass(%s)", (f"public.{cagg}",)).fetchone()[0] is None:
                return None
            row = conn.execute(f"SELECT (SELECT min(data_time) FROM {quote_ident(cagg)} WHERE att_conf_id = %s), "
                               f"(SELECT watermark FROM {WATERMARKS} WHERE cagg_table = %s)",
                               (att_conf_id, cagg)).fetchone()
        return None if row[0] is None or row[1] is None else (row[0], row[1])

    def hourly(self, backend: Any, conn: Any, source: str, table: str, cagg: str, att_conf_id: int,
               start: datetime, end: datetime) -> list[tuple[Any, ...]]:
        """(hour, count, mean, min, max) of value_r per hour in [start, end), from the raw rows or the
        `1hour` aggregate table, on `conn` (the caller times it)."""
        if source == "aggregate":
            query = (f"SELECT data_time, count_r, mean_r, min_r, max_r FROM {quote_ident(cagg)} "
                     "WHERE att_conf_id = %s AND data_time >= %s AND data_time < %s ORDER BY data_time")
        else:
            v = _value(table, "r")
            query = (f"SELECT {_bucket(backend, 'data_time', 3600)}, count(value_r), avg({v}), min({v}), "
                     f"max({v}) "
                     f"FROM {quote_ident(table)} WHERE att_conf_id = %s AND data_time >= %s AND data_time < %s "
                     "GROUP BY 1 ORDER BY 1")
        rows = conn.execute(query, (att_conf_id, start, end)).fetchall()
        conn.commit()
        return [(r[0].astimezone(timezone.utc), *r[1:]) for r in rows]

    def drop(self, backend: Any) -> None:
        """Drop every aggregate table and the watermarks (a history reset, a fresh start)."""
        with backend.connect() as conn:
            for _table, cagg, _level in self.materialised(backend):
                conn.execute(f"DROP TABLE IF EXISTS {quote_ident(cagg)}")
            conn.execute(f"DROP TABLE IF EXISTS {WATERMARKS}")

    def oldest_raw(self, backend: Any, table: str, att_conf_id: int) -> datetime | None:
        """The attribute's oldest raw row (an index lookup): retention may have removed what the aggregates keep."""
        with backend.connect() as conn:
            row = conn.execute(f"SELECT min(data_time) FROM {quote_ident(table)} WHERE att_conf_id = %s",
                               (att_conf_id,)).fetchone()
        return row[0] if row else None

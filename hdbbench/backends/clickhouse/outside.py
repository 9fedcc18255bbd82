# SPDX-License-Identifier: Apache-2.0
"""What a subscriber stored, read from outside it (ClickHouse).

Inserted rows: `InsertedRows` of `system.events`, the server's cumulative count of rows inserted by
INSERT queries, current at every read (the server adds each block's rows as it writes it). It is
server-wide: rows inserted into any table of any database count, this database's configuration
tables too, so their rows (counted at each read) are taken off, as the MariaDB reader does. An array
event is one row. Rows are visible once their insert returns (its part is committed); the probe
reads them with its own request.

Server work: `Merge` of system.events, the background merges launched, which compete with the
inserts for CPU and disk.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from hdbbench.backends.clickhouse.client import Session
from hdbbench.backends.clickhouse.encoders import from_us, to_us
from hdbbench.backends.clickhouse.tables import fnv1a64, quote_ident, quote_string

COUNTER = ("system.events InsertedRows less the rows of the database's configuration tables (server-wide: rows "
           "inserted into other databases count); current at every read")
SERVER_WORK = {"Merge": "merges"}
UNCONFIGURED_LOOKUP_S = 1.0


class ClickHouseOutsideReader:
    counter = COUNTER
    resolution_s = 0.0
    # OPTIMIZE and background merges rewrite parts without counting InsertedRows.
    counts_maintenance_writes = False

    def __init__(self, session: Session) -> None:
        self.session = session
        self._tables: dict[str, str] = {}  # attribute -> its data table
        self._by_id: dict[int, str] = {}
        self._next_lookup = 0.0
        self._configuration: list[str] | None = None

    def rows_inserted(self) -> int:
        inserted = int(self.session.scalar("SELECT value FROM system.events WHERE event = 'InsertedRows'") or 0)
        return inserted - self._configuration_rows()

    def baseline(self) -> int:
        return self.rows_inserted()

    def server_work(self) -> dict[str, float]:
        names = ", ".join(quote_string(n) for n in SERVER_WORK)
        counted = {str(n): float(v) for n, v in self.session.all(
            f"SELECT event, value FROM system.events WHERE event IN ({names})")}
        return {label: counted.get(event, 0.0) for event, label in SERVER_WORK.items()}  # listed once non-zero

    def log_bytes(self) -> int | None:
        return None  # 18.16's MergeTree has no write-ahead log: an insert writes its part's files directly

    def _configuration_rows(self) -> int:
        if self._configuration is None:
            self._configuration = [str(t) for (t,) in self.session.all(
                f"SELECT name FROM system.tables WHERE database = {quote_string(self.session.database or '')} "
                "AND NOT startsWith(name, 'att_scalar_') AND NOT startsWith(name, 'att_array_')")]
        if not self._configuration:
            return 0
        return int(self.session.scalar(
            "SELECT " + " + ".join(f"(SELECT count() FROM {quote_ident(t)})" for t in self._configuration)) or 0)

    def event_times_after(self, after: Mapping[str, datetime]) -> dict[str, list[datetime]]:
        """One statement for every located attribute: a UNION ALL of one range of the sort key each."""
        missing = [a for a in after if a not in self._tables]
        if missing and time.monotonic() >= self._next_lookup:
            self._locate(missing)
            self._next_lookup = time.monotonic() + UNCONFIGURED_LOOKUP_S
        located = [a for a in after if a in self._tables]
        if not located:
            return {}
        query = " UNION ALL ".join(
            f"SELECT att_conf_id, data_time FROM {quote_ident(self._tables[a])} "
            f"WHERE att_conf_id = {fnv1a64(a)} AND data_time > {to_us(after[a])}" for a in located)
        found: dict[str, list[datetime]] = {}
        for att_id, at in self.session.all(query):
            found.setdefault(self._by_id[int(att_id)], []).append(from_us(at))
        for times in found.values():
            times.sort()
        return found

    def _locate(self, attributes: Sequence[str]) -> None:
        ids = {fnv1a64(a): a for a in attributes}
        for att_id, table in self.session.all(
                f"SELECT att_conf_id, any(table_name) FROM att_conf WHERE att_conf_id IN ({', '.join(map(str, ids))}) "
                "GROUP BY att_conf_id"):
            self._tables[ids[int(att_id)]] = str(table)
            self._by_id[int(att_id)] = ids[int(att_id)]

    def close(self) -> None:
        self.session.close()


class ClickHouseOutsideFigures:
    """The outside figures of ClickHouse (hdbbench.backends.abilities.outside.OutsideFigures)."""

    def reader(self, backend: Any) -> ClickHouseOutsideReader:
        return ClickHouseOutsideReader(backend.session())

# SPDX-License-Identifier: Apache-2.0
"""What a subscriber stored, read from outside it (MySQL/MariaDB).

Inserted rows: ``Handler_write`` of SHOW GLOBAL STATUS, the rows written through any storage engine's
handler. It needs no privilege and no server setting, so it works on our private MariaDB 10.11 and on a
facility's server alike. (MariaDB 10.11 has no ``Innodb_rows_inserted`` any more; the per-table
``information_schema.TABLE_STATISTICS`` needs ``userstat=1``, which only an administrator can switch
on.) It is server-wide: it counts every row written into any table of any database (the HDB++
configuration tables add a few rows per attribute, other users' work adds theirs; the server's
internal temporary tables count apart, in Handler_tmp_write), counts a row when it is written (a
rolled-back or ignored duplicate row too), and counts array elements as rows (HDB++'s MySQL layout
stores one row per element). The rows of this database's configuration tables (att_conf,
att_parameter, att_history, ...: every table but the data tables, which only grow) are counted at
each read and taken off, so that a configuration event of every attribute during a trial is not taken
for stored events. The server sums the live sessions' counts at each read, so it is current at every
read. Rows become visible at commit; the probe reads them with its own autocommit
connection.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from hdbbench.backends.mysql.tables import quote_ident

COUNTER = ("SHOW GLOBAL STATUS Handler_write less the rows of the database's configuration tables (server-wide: "
           "rows written into every table of other databases count, array elements count as rows); current at "
           "every read")

# InnoDB's waits of the writers on its own flushing (base.OutsideReader.server_work), by status variable.
SERVER_WORK = {"Innodb_buffer_pool_wait_free": "free_page_waits", "Innodb_log_waits": "log_waits"}
# The redo log bytes InnoDB wrote (`log_bytes`), read in server_work's statement: one statement per sample.
LOG_WRITTEN = "Innodb_os_log_written"
SEEN_FRESH_S = 0.5  # how recent server_work's read must be for `log_bytes` to answer with it
# An attribute not configured yet (its subscriber has not added it) is looked up again after this long.
UNCONFIGURED_LOOKUP_S = 1.0


class MySQLOutsideReader:
    counter = COUNTER
    resolution_s = 0.0  # summed over the live sessions at each read
    # Handler_write: OPTIMIZE and REORGANIZE PARTITION write every row again.
    counts_maintenance_writes = True

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.cur = conn.cursor()
        self._where: dict[str, tuple[int, str]] = {}  # attribute -> (att_conf_id, data table)
        self._by_id: dict[int, str] = {}                # att_conf_id -> attribute
        self._poll = conn.cursor(prepared=True)         # runs event_times_after's statement...
        self._query = ""                                # ...this one, which reads...
        self._query_attributes: list[str] = []          # ...these attributes, in this order
        self._next_lookup = 0.0                         # when to look unconfigured attributes up again
        self._configuration: list[str] | None = None     # this database's tables other than data tables
        self._log_seen: tuple[int | None, float] | None = None  # LOG_WRITTEN as the last server_work read it, when

    def rows_inserted(self) -> int:
        """Handler_write less the rows of this database's configuration tables (see the module docstring)."""
        self.cur.execute("SHOW GLOBAL STATUS LIKE 'Handler_write'")
        row = self.cur.fetchone()
        written = int(row[1]) if row else 0
        return written - self._configuration_rows()

    def baseline(self) -> int:
        return self.rows_inserted()  # current at every read

    def server_work(self) -> dict[str, float]:
        """Waits for a clean page of the buffer pool, and for the redo log buffer to be written."""
        self.cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (?, ?, ?)", (*SERVER_WORK, LOG_WRITTEN))
        found = {str(name): value for name, value in self.cur.fetchall()}
        self._log_seen = (int(found[LOG_WRITTEN]) if found.get(LOG_WRITTEN) is not None else None, time.monotonic())
        return {SERVER_WORK[name]: float(value) for name, value in found.items() if name in SERVER_WORK}

    def log_bytes(self) -> int | None:
        """The redo log bytes InnoDB wrote since the server started (Innodb_os_log_written): the value the
        last `server_work` read when not taken yet (the sampler calls the two in turn), else read now."""
        seen, self._log_seen = self._log_seen, None
        if seen is not None and time.monotonic() - seen[1] < SEEN_FRESH_S:
            return seen[0]
        self.cur.execute(f"SHOW GLOBAL STATUS LIKE '{LOG_WRITTEN}'")
        row = self.cur.fetchone()
        return int(row[1]) if row and row[1] is not None else None

    def _configuration_rows(self) -> int:
        if self._configuration is None:
            self.cur.execute("SELECT table_name FROM information_schema.TABLES WHERE table_schema = DATABASE()"
                             " AND table_name NOT LIKE 'att\\_scalar\\_%' AND table_name NOT LIKE 'att\\_array\\_%'")
            self._configuration = [name for (name,) in self.cur.fetchall()]
        if not self._configuration:
            return 0
        self.cur.execute("SELECT " + " + ".join(f"(SELECT COUNT(*) FROM {quote_ident(t)})" for t in self._configuration))
        row = self.cur.fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def event_times_after(self, after: Mapping[str, datetime]) -> dict[str, list[datetime]]:
        """One statement for all the attributes (base.OutsideReader): a UNION ALL of one range scan of
        the (att_conf_id, data_time[, idx]) primary key per attribute, so a poll that finds nothing costs
        one index probe per attribute and one round trip. A prepared statement on its own cursor: its
        text changes only when another attribute is located, so the server parses it once."""
        missing = [a for a in after if a not in self._where]
        if missing and time.monotonic() >= self._next_lookup:  # once a second, not at every poll
            self._locate(missing)
            self._next_lookup = time.monotonic() + UNCONFIGURED_LOOKUP_S
        located = [a for a in after if a in self._where]  # the others are not configured yet: nothing visible
        if not located:
            return {}
        if located != self._query_attributes:
            # Arrays are one row per element: an event is one distinct data_time.
            self._query = " UNION ALL ".join(
                f"SELECT DISTINCT att_conf_id, data_time FROM {quote_ident(self._where[a][1])}"
                " WHERE att_conf_id = ? AND data_time > ?" for a in located)
            self._query_attributes = located
        params = [p for a in located  # the session time zone is UTC
                  for p in (self._where[a][0], after[a].astimezone(timezone.utc).replace(tzinfo=None))]
        self._poll.execute(self._query, params)
        found: dict[str, list[datetime]] = {}
        for att_id, t in self._poll.fetchall():
            found.setdefault(self._by_id[int(att_id)], []).append(t.replace(tzinfo=timezone.utc))
        for times in found.values():
            times.sort()
        return found

    def _locate(self, attributes: Sequence[str]) -> None:
        """Look up the att_conf_id and data table of attributes not located yet, in one statement."""
        self.cur.execute("SELECT c.att_name, c.att_conf_id, t.data_type FROM att_conf c"
                         " JOIN att_conf_data_type t USING (att_conf_data_type_id)"
                         f" WHERE c.att_name IN ({', '.join('?' for _ in attributes)})", list(attributes))
        # att_name compares case-insensitively (the table's default collation): the stored name may be
        # spelt otherwise than the one asked for, which is the one the caller knows.
        asked = {a.casefold(): a for a in attributes}
        for name, att_id, data_type in self.cur.fetchall():
            attribute = asked.get(str(name).casefold(), str(name))
            self._where[attribute] = (int(att_id), f"att_{data_type}")
            self._by_id[int(att_id)] = attribute

    def close(self) -> None:
        self.conn.close()


class MySQLOutsideFigures:
    """The outside figures of MariaDB (hdbbench.backends.abilities.outside.OutsideFigures)."""

    def reader(self, backend: Any) -> MySQLOutsideReader:
        """Inserted rows and visible rows read from outside the subscriber, on a connection of its own."""
        return MySQLOutsideReader(backend.connect(backend.database, autocommit=True))

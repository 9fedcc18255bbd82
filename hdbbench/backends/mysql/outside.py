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

from datetime import datetime, timezone
from typing import Any

from hdbbench.backends.mysql.tables import quote_ident

COUNTER = ("SHOW GLOBAL STATUS Handler_write less the rows of the database's configuration tables (server-wide: "
           "rows written into every table of other databases count, array elements count as rows); current at "
           "every read")


class MySQLOutsideReader:
    counter = COUNTER
    resolution_s = 0.0  # summed over the live sessions at each read

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.cur = conn.cursor()
        self._where: dict[str, tuple[int, str]] = {}  # attribute -> (att_conf_id, data table)
        self._configuration: list[str] | None = None     # this database's tables other than data tables

    def rows_inserted(self) -> int:
        """Handler_write less the rows of this database's configuration tables (see the module docstring)."""
        self.cur.execute("SHOW GLOBAL STATUS LIKE 'Handler_write'")
        row = self.cur.fetchone()
        written = int(row[1]) if row else 0
        return written - self._configuration_rows()

    def baseline(self) -> int:
        return self.rows_inserted()  # current at every read

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

    def event_times_after(self, attribute: str, after: datetime) -> list[datetime]:
        where = self._locate(attribute)
        if where is None:
            return []  # not configured yet: nothing of it can be visible
        att_id, table = where
        naive = after.astimezone(timezone.utc).replace(tzinfo=None)  # the session time zone is UTC
        # Arrays are one row per element: an event is one distinct data_time.
        self.cur.execute(f"SELECT DISTINCT data_time FROM {quote_ident(table)} WHERE att_conf_id = ? "
                         "AND data_time > ? ORDER BY data_time", (att_id, naive))
        return [t.replace(tzinfo=timezone.utc) for (t,) in self.cur.fetchall()]

    def _locate(self, attribute: str) -> tuple[int, str] | None:
        if attribute not in self._where:
            self.cur.execute("SELECT c.att_conf_id, t.data_type FROM att_conf c"
                             " JOIN att_conf_data_type t USING (att_conf_data_type_id) WHERE c.att_name = ?",
                             (attribute,))
            row = self.cur.fetchone()
            if row is None:
                return None
            self._where[attribute] = (int(row[0]), f"att_{row[1]}")
        return self._where[attribute]

    def close(self) -> None:
        self.conn.close()

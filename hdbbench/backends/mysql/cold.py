# SPDX-License-Identifier: Apache-2.0
"""A cold restart of MariaDB (hdbbench.backends.abilities.cold.ColdRestart): InnoDB dumps its buffer
pool at shutdown and loads it back at start, so a server restarted for a cold run would come back
warm; the dump is switched off before the stop and its file removed after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

BUFFER_POOL_FILE = "ib_buffer_pool"   # innodb_buffer_pool_filename's default, in the data directory


class MySQLColdRestart:
    """`backend` is a MySQLBackend."""

    def before_cold_stop(self, backend: Any) -> None:
        backend._with_cursor(lambda cur: cur.execute("SET GLOBAL innodb_buffer_pool_dump_at_shutdown = OFF"),
                             database=None)

    def after_cold_stop(self, backend: Any, data_dir: Path) -> None:
        (data_dir / BUFFER_POOL_FILE).unlink(missing_ok=True)

# SPDX-License-Identifier: Apache-2.0
"""What a subscriber stored, read from outside it (InfluxDB).

Inserted rows: the `writePointsOk` counters of the database's data shards (SHOW STATS FOR 'shard':
points written into each shard, summed over the shards of the data retention policy). They are the
server's own, current at every read, and count this database's events only: the configuration
measurements are in a retention policy of their own (tables.py), and neither other databases nor the
`_internal` monitor store count (the server-wide `write` statistics' `pointReq` counts them all,
`_internal`'s own points every 10 s included). A point that replaces one of the same series and time
counts again. A server restart sets the counters to zero.

Visible rows: a point is visible to queries once its write has returned (the WAL and the cache are
written before the reply); the probe selects the times of the points newer than each attribute's
bound, one statement per attribute, all in one request.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from hdbbench.backends.influxdb import client
from hdbbench.backends.influxdb.encoders import from_us, rfc3339
from hdbbench.backends.influxdb.reader import catalog
from hdbbench.backends.influxdb.storage import shards, stats
from hdbbench.backends.influxdb.tables import DATA_RP, measurement, quote_ident
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint

COUNTER = ("SHOW STATS FOR 'shard' writePointsOk summed over the database's data shards (this database's events "
           "only; a point replacing one of the same series and time counts again); current at every read")
UNCONFIGURED_LOOKUP_S = 1.0
# The storage engine's own work that competes with the writers, by tsm1_engine statistic.
SERVER_WORK = {"cacheCompactions": "cache_snapshots", "tsmLevel1Compactions": "level1_compactions",
               "tsmFullCompactions": "full_compactions"}


class InfluxOutsideReader:
    counter = COUNTER
    resolution_s = 0.0
    counts_maintenance_writes = False

    def __init__(self, endpoint: InfluxDBEndpoint, database: str) -> None:
        self.endpoint = endpoint
        self.database = database
        self._where: dict[str, tuple[int, str]] = {}  # attribute -> (att_conf_id, measurement)
        self._next_lookup = 0.0

    def rows_inserted(self) -> int:
        return sum(int(s.get("writePointsOk") or 0) for s in shards(self.endpoint, self.database, DATA_RP))

    def baseline(self) -> int:
        return self.rows_inserted()

    def event_times_after(self, after: Mapping[str, datetime]) -> dict[str, list[datetime]]:
        missing = [a for a in after if a not in self._where]
        if missing and time.monotonic() >= self._next_lookup:
            for name, (att_id, info) in catalog(self.endpoint, self.database).items():
                self._where[name] = (att_id, measurement(info.type, info.format))
            self._next_lookup = time.monotonic() + UNCONFIGURED_LOOKUP_S
        located = [a for a in after if a in self._where]
        if not located:
            return {}
        text = "; ".join(f"SELECT quality FROM {quote_ident(self._where[a][1])} WHERE att_conf_id = "
                         f"'{self._where[a][0]}' AND time > '{rfc3339(after[a])}'" for a in located)
        found: dict[str, list[datetime]] = {}
        for name, part in zip(located, client.query(self.endpoint, text, self.database, method="GET")):
            times = sorted(from_us(row["time"]) for series in part for row in client.rows(series))
            if times:
                found[name] = times
        return found

    def server_work(self) -> dict[str, float]:
        paths = {s["path"] for s in shards(self.endpoint, self.database, DATA_RP)}
        work = dict.fromkeys(SERVER_WORK.values(), 0.0)
        for engine in stats(self.endpoint, "tsm1_engine"):
            if engine.get("path") in paths:
                for key, name in SERVER_WORK.items():
                    work[name] += float(engine.get(key) or 0)
        return work

    def log_bytes(self) -> int | None:
        # 1.6 keeps a WAL per shard, but its statistics give the segments' current sizes (cut at each
        # snapshot), not the bytes appended: no cumulative counter to take differences of.
        return None

    def close(self) -> None:
        self._where.clear()


class InfluxOutsideFigures:
    """The outside figures of InfluxDB (hdbbench.backends.abilities.outside.OutsideFigures)."""

    def reader(self, backend: Any) -> InfluxOutsideReader:
        return InfluxOutsideReader(backend.endpoint, backend.database)

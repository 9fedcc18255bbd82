# SPDX-License-Identifier: Apache-2.0
"""Sizes on disk of an InfluxDB database and of each measurement, and the server's facts.

The database: the sum of its shards' `diskBytes` (SHOW STATS: the TSM files and the WAL segments of
each shard, as the server counts them), both retention policies. A measurement: InfluxDB keeps every
measurement of a time range in one shard, so no counter gives one measurement's bytes; they are read
from the shards' TSM files (their paths are in SHOW STATS; this needs the files readable, a server on
this host), whose index lists every block of every series key ``<measurement>,<tags>#!~#<field>``:
its blocks' bytes are the measurement's data, its index entries its index. Events still in the
write cache are in the WAL, not yet in a TSM file: `flush` waits until the data shards' caches have
been snapshotted (the server does so once a shard has had no write for
`cache-snapshot-write-cold-duration`, 2 s in our profiles) before a measurement is sized.
"""

from __future__ import annotations

import math
import struct
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hdbbench.backends.influxdb import client
from hdbbench.backends.influxdb.tables import DATA_RP, SHARD_DAYS_DEFAULT
from hdbbench.backends.model import TableSize
from hdbbench.model.errors import ConfigError
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint

TSM_MAGIC = 0x16D116D1
FIELD_SEPARATOR = b"#!~#"
FLUSH_TIMEOUT_S = 30.0


def stats(endpoint: InfluxDBEndpoint, module: str) -> list[dict[str, Any]]:
    """SHOW STATS FOR `module`: one dict (tags and values) per series."""
    found = client.query(endpoint, f"SHOW STATS FOR '{module}'", method="GET")
    return [row for series in (found[0] if found else []) for row in client.rows(series)]


def shards(endpoint: InfluxDBEndpoint, database: str, rp: str | None = None) -> list[dict[str, Any]]:
    return [s for s in stats(endpoint, "shard")
            if s.get("database") == database and (rp is None or s.get("retentionPolicy") == rp)]


def database_bytes(endpoint: InfluxDBEndpoint, database: str) -> int:
    return sum(int(s.get("diskBytes") or 0) for s in shards(endpoint, database))


def cached_bytes(endpoint: InfluxDBEndpoint, database: str) -> int:
    """Bytes of the data shards' write caches not yet snapshotted into TSM files."""
    paths = {s["path"] for s in shards(endpoint, database, DATA_RP)}
    return sum(int(c.get("memBytes") or 0) for c in stats(endpoint, "tsm1_cache") if c.get("path") in paths)


def flush(endpoint: InfluxDBEndpoint, database: str) -> None:
    """Wait until the data shards' caches are in TSM files (the server snapshots a cold shard)."""
    deadline = time.monotonic() + FLUSH_TIMEOUT_S
    while cached_bytes(endpoint, database):
        if time.monotonic() > deadline:
            raise ConfigError(f"influxdb: the write cache of {database} was not snapshotted within "
                              f"{FLUSH_TIMEOUT_S:.0f} s (cache-snapshot-write-cold-duration too long?)")
        time.sleep(0.5)


def tsm_bytes_by_measurement(path: Path) -> dict[str, tuple[int, int]]:
    """One TSM file's bytes per measurement: (block bytes, index entry bytes), from its index."""
    data = path.read_bytes()
    if len(data) < 13 or struct.unpack(">I", data[:4])[0] != TSM_MAGIC:
        raise ConfigError(f"{path}: not a TSM file")
    offset = struct.unpack(">Q", data[-8:])[0]
    end = len(data) - 8
    out: dict[str, list[int]] = {}
    while offset < end:
        (key_len,) = struct.unpack_from(">H", data, offset)
        key = data[offset + 2: offset + 2 + key_len]
        (count,) = struct.unpack_from(">H", data, offset + 3 + key_len)
        entries = offset + 5 + key_len
        blocks = sum(struct.unpack_from(">I", data, entries + 28 * i + 24)[0] for i in range(count))
        name = key.split(FIELD_SEPARATOR, 1)[0].split(b",", 1)[0].decode()
        sums = out.setdefault(name, [0, 0])
        sums[0] += blocks
        sums[1] += 5 + key_len + 28 * count
        offset = entries + 28 * count
    return {name: (b, i) for name, (b, i) in out.items()}


def table_sizes(endpoint: InfluxDBEndpoint, database: str, tables: Sequence[str]) -> list[TableSize]:
    """Each measurement's bytes in the data shards' TSM files (after `flush`)."""
    flush(endpoint, database)
    totals = {t: [0, 0, 0] for t in tables}  # data, index, shards
    for shard in shards(endpoint, database, DATA_RP):
        directory = Path(shard["path"])
        if not directory.is_dir():
            raise ConfigError(f"influxdb: shard directory {directory} is not readable here: measurement sizes "
                              "need the server's files on this host")
        seen: set[str] = set()
        for tsm in sorted(directory.glob("*.tsm")):
            for name, (blocks, index) in tsm_bytes_by_measurement(tsm).items():
                if name in totals:
                    totals[name][0] += blocks
                    totals[name][1] += index
                    seen.add(name)
        for name in seen:
            totals[name][2] += 1
    return [TableSize(t, d, i, 0, 0, d + i, engine="tsm1", parts=max(1, n)) for t, (d, i, n) in totals.items()]


def parts_for(days: float, shard_days: int | None) -> int:
    """Shards `days` of data span: one per shard group duration (7 days in an infinite retention policy)."""
    return max(1, math.ceil(days / (shard_days or SHARD_DAYS_DEFAULT)))


def server_facts(endpoint: InfluxDBEndpoint) -> dict[str, Any]:
    _, headers, _ = endpoint.request("GET", "/ping", timeout_s=5)
    version = {k.lower(): v for k, v in headers.items()}.get("x-influxdb-version")
    return {"version": f"InfluxDB {version}" if version else None, "engine": "tsm1",
            "index": "inmem (per the server's profile)", "layout": "one measurement per type and format"}

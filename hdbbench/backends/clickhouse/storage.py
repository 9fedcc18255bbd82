# SPDX-License-Identifier: Apache-2.0
"""Table sizes from `system.parts` (active parts only: a merged-away part is deleted a few minutes
later but is no longer the table's), the database's size, and the facts of the server that change
sizes (version, compression, index granularity)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from hdbbench.backends.clickhouse.client import Session
from hdbbench.backends.clickhouse.tables import quote_string
from hdbbench.backends.model import SchemaVariant, TableSize

# ClickHouse's defaults in 18.16, which the layout keeps: LZ4 for every column (no codecs before
# 19.x), a mark every 8192 rows.
COMPRESSION = "lz4 (the server's default; 18.16 has no per-column codecs)"
INDEX_GRANULARITY = 8192


def database_bytes(session: Session, database: str) -> int:
    return int(session.scalar(f"SELECT sum(bytes_on_disk) FROM system.parts WHERE active "
                              f"AND database = {quote_string(database)}") or 0)


def table_sizes(session: Session, database: str, tables: Sequence[str]) -> list[TableSize]:
    """Per table: its compressed column files as data; its marks, sparse primary index and every part's
    own small files (checksums, column list, count) as index; the sum is what system.parts reports
    on disk. `parts` is the number of partitions (months) it spans."""
    if not tables:
        return []
    names = ", ".join(quote_string(t) for t in tables)
    found = {str(row[0]): row[1:] for row in session.all(
        "SELECT table, sum(data_compressed_bytes), sum(bytes_on_disk), uniqExact(partition_id) FROM system.parts "
        f"WHERE active AND database = {quote_string(database)} AND table IN ({names}) GROUP BY table")}
    sizes = []
    for table in tables:
        data, total, partitions = (int(v) for v in found.get(table, (0, 0, 0)))
        sizes.append(TableSize(table, data_bytes=data, index_bytes=total - data, toast_bytes=0, free_bytes=0,
                               total_bytes=total, engine="MergeTree", parts=max(partitions, 1)))
    return sizes


def parts_for(table: str, variant: SchemaVariant, days: float) -> int | None:
    """Partitions `days` of data occupy: months (tables.MONTHLY), or `interval=<N>d` ranges; data tables only."""
    if not table.startswith(("att_scalar_", "att_array_")):
        return None
    width = variant.interval_days or 365.25 / 12
    return max(1, math.ceil(days / width))


def server_facts(session: Session) -> dict[str, Any]:
    version, timezone = session.all("SELECT version(), timezone()")[0]
    return {"version": f"ClickHouse {version}", "compression": COMPRESSION,
            "index_granularity": INDEX_GRANULARITY, "timezone": str(timezone)}

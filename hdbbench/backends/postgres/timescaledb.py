# SPDX-License-Identifier: Apache-2.0
"""HDB++ on TimescaleDB: the published hdbpp-timescale-project layout, data tables as hypertables.

A variant of the PostgreSQL backend: everything but the hypertables (table model, layout check,
size query, time buckets) is shared. Only the features of the Apache-licensed TimescaleDB build are
used: hypertables, chunks, size functions. Compression, continuous aggregates, reorder_chunk and
policies need the community licence and are not used; clustering is plain `CLUSTER` per chunk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from hdbbench.backends.model import SchemaVariant, TableDef, TableSize
from hdbbench.backends.postgres.backend import PostgresBackend
from hdbbench.backends.postgres.faults import TimescaleTableFaults
from hdbbench.backends.postgres.storage import hypertable_size
from hdbbench.backends.postgres.tables import TIMESCALEDB
from hdbbench.backends.postgres.verify import verify_hypertables
from hdbbench.model.errors import ConfigError

# The version scripts/setup.sh built from Debian's source package (docs/timescaledb.md).
BUILT_VERSION_FILE = Path(__file__).resolve().parents[3] / ".cache" / "setup" / "timescaledb-version"


class TimescaleBackend(PostgresBackend):
    name = TIMESCALEDB
    timescale = True
    published_as = "TimescaleDB"
    build_fact_labels = {"timescaledb_built": "TimescaleDB built"}

    @classmethod
    def build_facts(cls) -> dict[str, Any]:
        try:
            built: str | None = BUILT_VERSION_FILE.read_text().strip()
        except OSError:
            built = None  # not built here (an external server, or setup not run)
        return {"timescaledb_built": built}

    @classmethod
    def faults(cls) -> TimescaleTableFaults:
        return TimescaleTableFaults()

    @classmethod
    def check_variant(cls, variant: SchemaVariant) -> None:
        if variant.partitioned:
            raise ConfigError(
                "timescaledb: hypertables are always chunked; set the chunk size with interval=<N>d instead of 'partitioned'"
            )

    def bucket_sql(self, bucket_s: int) -> str:
        """Aggregation buckets with TimescaleDB's time_bucket (the extraction query sets)."""
        return f"time_bucket(interval '{int(bucket_s)} seconds', data_time)"

    def _verify_layout(self, conn: psycopg.Connection[Any], expected: list[TableDef]) -> list[str]:
        return verify_hypertables(conn, expected)

    def _table_size(self, conn: psycopg.Connection[Any], table: str) -> TableSize:
        return hypertable_size(conn, table)

# SPDX-License-Identifier: Apache-2.0
"""HDB++ on TimescaleDB: the published hdbpp-timescale-project layout, data tables as hypertables.

Everything but the hypertables is shared with the PostgreSQL backend (`_pg_common`). Only the
features of the Apache-licensed TimescaleDB build are used: hypertables, chunks, size functions.
Compression, continuous aggregates, reorder_chunk and policies need the community licence and are
not used; clustering is plain `CLUSTER` per chunk.
"""

from __future__ import annotations

from hdbbench.backends._pg_common import PgBackend
from hdbbench.backends.base import SchemaVariant
from hdbbench.errors import ConfigError


class TimescaleBackend(PgBackend):
    name = "timescaledb"
    timescale = True

    def check_variant(self, variant: SchemaVariant) -> None:
        if variant.partitioned:
            raise ConfigError(
                "timescaledb: hypertables are always chunked; set the chunk size with interval=<N>d instead of 'partitioned'"
            )

    def bucket_sql(self, bucket_s: int) -> str:
        """Aggregation buckets with TimescaleDB's time_bucket (the extraction query sets)."""
        return f"time_bucket(interval '{int(bucket_s)} seconds', data_time)"

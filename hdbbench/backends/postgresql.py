# SPDX-License-Identifier: Apache-2.0
"""HDB++ on plain PostgreSQL: the TimescaleDB layout without hypertables.

It isolates what TimescaleDB adds. Variant `partitioned` turns every data table into a native
range-partitioned table on data_time, with partitions as wide as the HDB++ chunks (28 days, 14 for
att_scalar_devdouble, or `interval=<N>d`): four before and four after today plus a DEFAULT
partition that catches everything else.
"""

from __future__ import annotations

from hdbbench.backends._pg_common import PgBackend


class PostgresBackend(PgBackend):
    name = "postgresql"
    timescale = False

# SPDX-License-Identifier: Apache-2.0
"""ClickHouse (`clickhouse`), a what-if engine: HDB++'s layout on MergeTree tables, over HTTP.

tables (the layout and why), ddl, verify, client (HTTP sessions), encoders, writer (the BulkWriter),
reader, extraction, storage (system.parts), outside (system.events), backend.
"""

from hdbbench.backends.clickhouse.backend import ClickHouseBackend

__all__ = ["ClickHouseBackend"]

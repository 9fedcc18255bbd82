# SPDX-License-Identifier: Apache-2.0
"""The PostgreSQL family: HDB++ on plain PostgreSQL (`PostgresBackend`, backend `postgresql`) and on
TimescaleDB (`TimescaleBackend`, backend `timescaledb`), which share one table model and differ in
hypertables.

    tables.py      the table model (TableDef values), type map, roles
    ddl.py         DDL rendered from the model: domains, partitions, hypertables, triggers, grants
    verify.py      the live catalog read back, and the checks beyond the tables
    writer.py      binary-COPY BulkWriter (the subscriber's path)
    encoders.py    Python values to and from the column types
    reader.py      stored events read back per attribute
    extraction.py  ExtractionBackend methods and the column loader of data generation
    storage.py     table sizes, documented row minimum, WAL position, server facts
    backend.py     PostgresBackend (postgresql); timescaledb.py: TimescaleBackend

Its optional abilities (hdbbench.backends.abilities), one module each: aging.py (PgAgingLayout),
maintenance.py (PgMaintenance), aggregates.py (PgAggregates), inventory.py (PgInventoryReader),
faults.py (PgTableFaults, TimescaleTableFaults), outside.py (PgOutsideFigures).
"""

from hdbbench.backends.postgres.backend import PostgresBackend
from hdbbench.backends.postgres.reader import fetch_events
from hdbbench.backends.postgres.timescaledb import TimescaleBackend

__all__ = ["PostgresBackend", "TimescaleBackend", "fetch_events"]

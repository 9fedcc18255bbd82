# SPDX-License-Identifier: Apache-2.0
"""HDB++ on MySQL/MariaDB (InnoDB; MyRocks as a storage option): the libhdbpp-mysql layout.

    tables.py      the table model (TableDef values), type map, partitions, users
    ddl.py         DDL rendered from the model, lookup rows, users and grants
    verify.py      the live catalog read back, and the checks beyond the tables
    writer.py      executemany BulkWriter (the subscriber's path)
    encoders.py    Python values to the column types (UTC wall time, NaN as NULL, arrays as rows)
    reader.py      stored events read back per attribute
    extraction.py  ExtractionBackend methods and the LOAD DATA column loader of data generation
    storage.py     table sizes and free extents, row minimum, storage options, logs, server facts
    backend.py     MySQLBackend

Its optional abilities (hdbbench.backends.abilities), one module each: aging.py (MySQLAgingLayout),
maintenance.py (MySQLMaintenance), aggregates.py (MySQLAggregates), inventory.py
(MySQLInventoryReader), faults.py (MySQLTableFaults), outside.py (MySQLOutsideFigures), cold.py
(MySQLColdRestart); its storage options are in storage.py (MySQLStorageOptions).

MariaDB has no NaN/Infinity, so non-finite floats are stored as NULL (see schemas/README.md).
"""

from hdbbench.backends.mysql.backend import MySQLBackend
from hdbbench.backends.mysql.ddl import users_sql
from hdbbench.backends.mysql.reader import fetch_events
from hdbbench.backends.mysql.tables import RO_USER, RW_USER

__all__ = ["RO_USER", "RW_USER", "MySQLBackend", "fetch_events", "users_sql"]

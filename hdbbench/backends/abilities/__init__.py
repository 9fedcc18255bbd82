# SPDX-License-Identifier: Apache-2.0
"""The optional abilities of a backend: one Protocol each, with the types its callers and its
implementations share, all here so that a backend folder needs nothing from the stages above it.

A backend class declares each ability with one class method that returns its implementation or None
(`Backend.aging_layout()`, `maintenance()`, `aggregates()`, `inventory_reader()`, `faults()`,
`storage_options()`, `cold_restart()`, `outside_figures()`, `memory_model()`; hdbbench.backends.base). Class methods,
because a scenario asks what a backend can do before any server runs (which maintenance jobs, whether
it holds a history, which storage options, which URLs it reads an inventory from). An implementation
keeps no state: each method takes the backend it serves (an instance of the class that returned it)
as its first argument, so one object serves every database of the backend.

    aging.py        AgingLayout     an aged history's layout, markers, copies (hdbbench.parts.aging)
    maintenance.py  MaintenanceJobs the jobs facilities run while archiving (hdbbench.parts.maintenance)
    aggregates.py   Aggregates      HDB++'s aggregates as ordinary tables, refreshed incrementally
    inventory.py    InventoryReader a live archive read for `hdbbench inventory from-hdb`
    faults.py       TableFaults     a held table lock, data tables on a filesystem that fills
    storage.py      StorageOptions  table storage options of `size measure` (row formats, engines)
    cold.py         ColdRestart     warm state a cold restart must drop
    outside.py      OutsideFigures  stored rows and visibility read from outside the subscriber
    memory.py       MemoryModel     the hot set of an insert stream and the knee it predicts under a budget
"""

from __future__ import annotations

from hdbbench.backends.abilities.aggregates import Aggregates
from hdbbench.backends.abilities.aging import AgingLayout
from hdbbench.backends.abilities.cold import ColdRestart
from hdbbench.backends.abilities.faults import HeldLock, TableFaults
from hdbbench.backends.abilities.inventory import InventoryReader
from hdbbench.backends.abilities.maintenance import MaintenanceJobs
from hdbbench.backends.abilities.memory import HotSet, HotSetPart, MemoryModel
from hdbbench.backends.abilities.outside import OutsideFigures, OutsideReader
from hdbbench.backends.abilities.storage import StorageOptions

__all__ = [
    "Aggregates", "AgingLayout", "ColdRestart", "HeldLock", "HotSet", "HotSetPart", "InventoryReader", "MaintenanceJobs",
    "MemoryModel",
    "OutsideFigures", "OutsideReader", "StorageOptions", "TableFaults",
]

# SPDX-License-Identifier: Apache-2.0
"""The files of a run's faults part: ``faults.json`` (kind "faults", ``results.trials[]`` of
`FaultTrial`, whose record is hdbbench.results.faults), ``faults-table.csv`` (the fault table) and
``faults-series-<label>.csv`` (1 Hz) beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hdbbench.model.records import write
from hdbbench.parts.faults.accounting import REASONS
from hdbbench.results.faults import FaultTrial

RESULTS_KIND = "faults"
NAMES_KEPT = 10           # never-resumed attributes named in a record (a facility's can be hundreds)
TABLE_CSV = "table.csv"   # written through RunPart(run, "faults"): faults-table.csv


TABLE_COLUMNS = ("backend", "kind", "fault", "spool_mode", "emitted", "stored", "lost", *REASONS, "duplicates",
                 "recovery_s", "write_stall_s", "caught_up_s", "lag_bytes_at_begin", "lag_bytes_max", "killed_server", "killed_attributes", "never_resumed", "resume_p50_s", "resume_max_s",
                 "silent_before_kill", "silent_resumed",
                 "peak_memory_bytes", "memory_queue_max", "memory_queue_capacity", "queue_capacity",
                 "wal_replayed",
                 "error")


def table_rows(trials: Sequence[FaultTrial]) -> list[list[Any]]:
    """The fault table as CSV rows of TABLE_COLUMNS."""
    rows = []
    for t in trials:
        values = {**write(t), **{r: t.lost_by_reason.get(r, 0) for r in REASONS}}
        rows.append(["" if values[c] is None else values[c] for c in TABLE_COLUMNS])
    return rows

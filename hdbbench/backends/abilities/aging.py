# SPDX-License-Identifier: Apache-2.0
"""The aging layout ability: what an aged history (hdbbench.parts.aging) needs of a backend.

A history lives in a database of its own, marked by a one-row table (its key and its record as JSON)
so that a later run on the same stack finds it; its data tables have the facilities' layout (chunks,
monthly partitions, or plain tables), shaped before the rows are loaded and reordered after as the
facilities' own jobs leave them. A backend without it keeps no history (`Backend.aging_layout()` is
None), and a scenario's `[history]` on it is refused before anything starts.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol


class AgingLayout(Protocol):
    """An aged history's layout on one backend; every method takes that backend first."""

    # Whether `clone` can copy a history's database (a template, PostgreSQL); False: a copy is built
    # again from the same seed (MariaDB has no templates).
    clones: bool

    def exists(self, backend: Any) -> bool:
        """The backend's database exists (a history in it may be finished or interrupted)."""

    def read_marker(self, backend: Any) -> tuple[str, str] | None:
        """(key, record as JSON) of a finished history, or None (no marker: an interrupted build)."""

    def write_marker(self, backend: Any, key: str, record: str) -> None:
        """Mark the history finished, written last so that an interrupted build has no marker."""

    def building(self, backend: Any) -> AbstractContextManager[None]:
        """What the backend widens while a history is built with the server's limits lifted (a
        bigger buffer pool), put back on leaving; or nothing to widen, then what it writes back."""

    def shape_layout(self, backend: Any, start: datetime, end: datetime) -> None:
        """Give the empty data tables the facilities' layout over [start, end] (partitions)."""

    def fast_loader(self, backend: Any) -> Any:
        """The column loader a build loads the numeric scalars with (`backend.column_loader()` or one
        that skips checks a build does not need)."""

    def reorder_older(self, backend: Any) -> bool:
        """Order the older chunks as the facilities' reorder job does; whether they are so ordered."""

    def delete_after(self, backend: Any, end: datetime) -> int:
        """Remove the rows stamped after `end` (a trial's) and refresh those tables' statistics; the rows."""

    def clone(self, backend: Any, target: str) -> None:
        """Make database `target` a copy of the backend's history (only where `clones`)."""

    def drop_copy(self, backend: Any) -> None:
        """Drop the backend's database, a copy of a history or a history the maintenance jobs changed."""

    def checksum(self, backend: Any, table: str, after: datetime) -> tuple[int, int]:
        """(rows, a sum over their keys and values) of `table` stamped after `after`: two loads of the
        same rows give the same pair whatever their order."""

    def cluster_table(self, backend: Any, table: str) -> float | None:
        """Seconds to order `table` on its primary key; None where the engine keeps it so (InnoDB)."""

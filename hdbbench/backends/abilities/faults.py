# SPDX-License-Identifier: Apache-2.0
"""The table-faults ability: what the fault injectors (hdbbench.parts.faults.injectors) need from a
backend for `table_lock` and `database_full`: hold a lock that makes inserts wait, move data tables
onto a filesystem that can be filled and back, and tell the server's disk-full error from others.
(`database_stop` and `database_kill` act on the server's process and need nothing of the backend.)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol


class HeldLock(Protocol):
    """An exclusive lock on data tables that an admin session holds until `release`."""

    def waiters(self) -> int:
        """Sessions waiting for this lock right now (the load's inserts, blocked)."""

    def release(self) -> None:
        """Give the lock up and close its session; idempotent."""


class TableFaults(Protocol):
    """A backend's table faults; every method but `is_disk_full` takes that backend first."""

    def hold_table_lock(self, backend: Any, tables: Sequence[str]) -> HeldLock:
        """Lock `tables` exclusively from a separate session, so inserts into them wait (not fail)."""

    def lock_wait_limits(self, backend: Any) -> dict[str, str]:
        """The server settings that bound how long a blocked insert waits, as the server reports them."""

    def move_tables(self, backend: Any, tables: Sequence[str], directory: Path) -> None:
        """Store `tables` (with their chunks/partitions, indexes, and those created later) in
        `directory`, an empty directory the server's account owns."""

    def restore_tables(self, backend: Any, tables: Sequence[str]) -> None:
        """Move `tables` back to the server's default place and forget the directory; idempotent."""

    def is_disk_full(self, error: BaseException) -> bool:
        """True when `error` is the server's "no space" error for a table."""

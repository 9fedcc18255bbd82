# SPDX-License-Identifier: Apache-2.0
"""The outside-figures ability: a backend whose stored rate and visibility lag can be read without
asking the subscriber (hdbbench.trials.outside samples them during a trial)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol


class OutsideReader(Protocol):
    """One connection that reads what a subscriber stored from outside it: the database's own count of
    inserted data rows, and the source times of an attribute's rows as they become visible."""

    counter: str  # which counter `rows_inserted` reads and how fresh it is, for the results
    # How stale the counter can be (s): a rate over a window of w seconds is exact to resolution_s / w.
    resolution_s: float
    # Whether maintenance jobs' own writes count too (a server-wide counter: a table rebuilt or a
    # partition reorganised writes every row again), so that a window a job runs in cannot take its
    # stored rate from the counter (hdbbench.parts.maintenance.windows).
    counts_maintenance_writes: bool

    def rows_inserted(self) -> int:
        """The database's cumulative count of rows inserted into the HDB++ data tables (its
        differences matter)."""

    def baseline(self) -> int:
        """`rows_inserted` as it should read now, to take a trial's difference from (a database created
        for the trial may know its rows exactly before its counter has caught up)."""

    def event_times_after(self, after: Mapping[str, datetime]) -> dict[str, list[datetime]]:
        """Source times (data_time, UTC, ascending) of the rows visible now that are newer than their
        attribute's bound in `after` (attribute -> bound), by attribute (those with none left out);
        one statement on the primary-key index, so that it can be polled many times a second."""

    def server_work(self) -> dict[str, float]:
        """Cumulative counts of the server's own background work that competes with the writers
        (checkpoints, vacuums, waits for a flush), by name; empty where the server keeps none. A
        saturation step during which one rose says so (hdbbench.trials.saturation), so that a reader sees
        which failing steps met such work."""

    def log_bytes(self) -> int | None:
        """The cumulative bytes of the server's write-ahead log (PostgreSQL's WAL position, InnoDB's redo
        log written), its own counter; its differences over a window are the log a load cost. None
        where the server has no such log or cannot say (a standby, an engine without one). Read right
        after `server_work`, it may take its value from that call's statement (one statement per
        sample on a connection shared with fast polls)."""

    def close(self) -> None: ...


class OutsideFigures(Protocol):
    """A backend's outside figures: a reader of its own, one connection each."""

    def reader(self, backend: Any) -> OutsideReader:
        """A new reader on the backend's database (the caller closes it)."""

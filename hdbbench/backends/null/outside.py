# SPDX-License-Identifier: Apache-2.0
"""What the subscribers counted, read from outside them (the null backend).

Inserted rows: the data and error events of the ``events`` line of every process's ``.counts`` file
(hdbbench.backends.null.counts), which the null writer rewrites every 20 ms while events come, so
the counter is at most one rewrite period (plus the flusher's wake-up) stale. Visible rows: the
source times the same files list for the events counted in their last two rewrite periods; an event
is "visible" once a rewrite has published it, as a row is once its transaction has committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from hdbbench.backends.null.counts import COUNTS, JOURNAL, CountsFile, JournalReader, from_us, stems, to_us

REWRITE_PERIOD_S = 0.02  # NullWriter::kRewritePeriod (subscriber/src/null_writer.h)
COUNTER = ("data and error events the subscribers' null writers counted (the `events` line of <database>.counts/"
           "*.counts), rewritten every 20 ms while events come and at the writer's close")


class NullOutsideReader:
    counter = COUNTER
    resolution_s = REWRITE_PERIOD_S
    counts_maintenance_writes = False  # the subscribers' own count files

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # Per process: its journal's registrations, read on from where the last poll stopped.
        self._journals: dict[str, JournalReader] = {}

    def rows_inserted(self) -> int:
        total = 0
        for counts in self.directory.glob(f"*{COUNTS}"):
            c = CountsFile.read(counts, wanted=())
            total += c.data + c.errors
        return total

    def baseline(self) -> int:
        return self.rows_inserted()  # current at every read, to a rewrite period

    def event_times_after(self, after: Mapping[str, datetime]) -> dict[str, list[datetime]]:
        """Source times (UTC, ascending) listed in the .counts files newer than their attribute's bound,
        by attribute. An index the journal does not name yet (registered between this poll's two
        reads) is skipped: its times stay listed for another rewrite period."""
        bounds = {name: to_us(at) for name, at in after.items()}
        found: dict[str, list[int]] = {}
        for stem in stems(self.directory):
            journal = self._journals.setdefault(
                stem, JournalReader(self.directory / f"{stem}{JOURNAL}", keep_buckets=False))
            journal.read()
            wanted = {idx: name for idx, name in journal.names.items() if name in bounds}
            if not wanted:
                continue
            for idx, times in CountsFile.read(self.directory / f"{stem}{COUNTS}", wanted).recent.items():
                name = wanted[idx]
                found.setdefault(name, []).extend(t for t in times if t > bounds[name])
        return {name: [from_us(t) for t in sorted(set(times))] for name, times in found.items() if times}

    def server_work(self) -> dict[str, float]:
        return {}  # no server: the writers are the whole of it

    def log_bytes(self) -> int | None:
        return None  # no server, no log: the count files are rewritten in place

    def close(self) -> None:
        self._journals.clear()


class NullOutsideFigures:
    """The outside figures of the null backend (hdbbench.backends.abilities.outside.OutsideFigures)."""

    def reader(self, backend: Any) -> NullOutsideReader:
        """Inserted and visible events read from outside the subscribers, from their count files."""
        return NullOutsideReader(backend._existing())

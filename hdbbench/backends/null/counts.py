# SPDX-License-Identifier: Apache-2.0
"""The null backend's "database": the files the subscriber's null writer leaves in its directory.

Each subscriber process writes two files named after it (``<pid>-<start µs>``), in the format
described in ``subscriber/src/null_writer.h``:

* ``<stem>.journal``, append-only: attribute registrations (``a``), error descriptions (``x``) and
  event counts per attribute and millisecond of source time (``d``; ``e`` per description for error
  events), as deltas: a bucket's count is the sum of its lines. A last line without its newline is
  being written and is left for the next read.
* ``<stem>.counts``, rewritten whole (tmp + rename) every 20 ms while events come: the totals (the
  inserted-row counter) and the source times of the events counted in the last two rewrites, per
  attribute index (what the visibility watch polls).

Indexes are per process; attributes are merged by name across the processes of one database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hdbbench.model.errors import SchemaError

JOURNAL = ".journal"
COUNTS = ".counts"
COUNTS_HEADER = "hdbbench-null-counts 1"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
BUCKET_US = 1000  # the journal counts events per millisecond of source time


def to_us(at: datetime) -> int:
    """Microseconds since the epoch, exactly (a naive datetime is taken as UTC)."""
    aware = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    return (aware - EPOCH) // timedelta(microseconds=1)


def from_us(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


def complete_lines(data: bytes) -> tuple[list[str], int]:
    """The complete lines of `data` and how many bytes they take (a last line without its newline is
    still being written)."""
    end = data.rfind(b"\n") + 1
    return data[:end].decode("utf-8", errors="replace").splitlines(), end


@dataclass
class JournalReader:
    """One process's journal, read from where the previous read stopped (its indexes kept)."""

    path: Path
    offset: int = 0
    names: dict[int, str] = field(default_factory=dict)   # attribute index -> name
    descs: dict[int, str] = field(default_factory=dict)   # description index -> text
    buckets: list[tuple[str, int, int]] = field(default_factory=list)  # (attribute, ms, events) read so far
    error_buckets: list[tuple[str, str, int, int]] = field(default_factory=list)  # (attribute, desc, ms, events)
    keep_buckets: bool = True  # False: only the registrations are kept (the visibility watch's reader)

    def read(self) -> None:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                lines, used = complete_lines(f.read())
        except FileNotFoundError:
            return
        self.offset += used
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        kind, _, rest = line.partition(" ")
        if kind == "a":
            idx, _type, _format, _write, name = rest.split(" ", 4)
            self.names[int(idx)] = name
        elif kind == "x":
            idx, _, text = rest.partition(" ")
            self.descs[int(idx)] = str(json.loads(text))
        elif kind == "d" and self.keep_buckets:
            idx, ms, events = rest.split(" ")
            self.buckets.append((self.names[int(idx)], int(ms), int(events)))
        elif kind == "e" and self.keep_buckets:
            idx, desc, ms, events = rest.split(" ")
            self.error_buckets.append((self.names[int(idx)], self.descs[int(desc)], int(ms), int(events)))
        elif kind not in ("a", "x", "d", "e"):
            raise SchemaError(f"{self.path}: unexpected line {line[:80]!r} (not a null backend journal?)")


@dataclass(frozen=True)
class CountsFile:
    """One process's .counts file as last rewritten."""

    data: int = 0
    errors: int = 0
    params: int = 0
    history: int = 0
    duplicates: int = 0
    rejected: int = 0
    attributes: int = 0
    recent: Mapping[int, tuple[int, ...]] = field(default_factory=dict)  # attribute index -> source µs

    @classmethod
    def read(cls, path: Path, wanted: Iterable[int] | None = None) -> CountsFile:
        """The file's totals, and the source times of the attribute indexes `wanted` (all when None)."""
        try:
            lines = path.read_text().splitlines()
        except FileNotFoundError:
            return cls()
        if not lines or lines[0] != COUNTS_HEADER:
            raise SchemaError(f"{path}: not a null backend counts file (first line {lines[:1]!r})")
        keep = None if wanted is None else set(wanted)
        totals: list[int] = []
        recent: dict[int, tuple[int, ...]] = {}
        for line in lines[1:]:
            kind, _, rest = line.partition(" ")
            if kind == "events":
                totals = [int(v) for v in rest.split()]
            elif kind == "r":
                idx, _, times = rest.partition(" ")
                if keep is None or int(idx) in keep:
                    recent[int(idx)] = tuple(int(t) for t in times.split())
        data, errors, params, history, duplicates, rejected, attributes = (totals + [0] * 7)[:7]
        return cls(data, errors, params, history, duplicates, rejected, attributes, recent)


def stems(directory: Path) -> list[str]:
    """The processes that wrote into `directory` (one journal each)."""
    return sorted(p.name[: -len(JOURNAL)] for p in directory.glob(f"*{JOURNAL}"))


def read_journals(directory: Path) -> list[JournalReader]:
    """Every process's journal of `directory`, read whole."""
    readers = [JournalReader(directory / f"{stem}{JOURNAL}") for stem in stems(directory)]
    for reader in readers:
        reader.read()
    return readers


def bounds_ms(since: datetime | None, until: datetime | None) -> tuple[float, float]:
    """The bucket range [first, end) of since <= data_time < until, to the millisecond."""
    first = to_us(since) // BUCKET_US if since is not None else float("-inf")
    end = to_us(until) // BUCKET_US if until is not None else float("inf")
    return first, end


def count_by_attribute(directory: Path, since: datetime | None, until: datetime | None) -> dict[str, int]:
    """Data and error events per attribute (a database's data tables hold both as rows)."""
    first, end = bounds_ms(since, until)
    counts: dict[str, int] = {}
    for reader in read_journals(directory):
        buckets = [*reader.buckets, *((name, ms, n) for name, _, ms, n in reader.error_buckets)]
        for name, ms, events in buckets:
            if first <= ms < end:
                counts[name] = counts.get(name, 0) + events
    return {name: n for name, n in counts.items() if n}


def count_errors(directory: Path, since: datetime | None, until: datetime | None) -> dict[str, dict[str, int]]:
    first, end = bounds_ms(since, until)
    counts: dict[str, dict[str, int]] = {}
    for reader in read_journals(directory):
        for name, desc, ms, events in reader.error_buckets:
            if first <= ms < end:
                per = counts.setdefault(name, {})
                per[desc] = per.get(desc, 0) + events
    return counts

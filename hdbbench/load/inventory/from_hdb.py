# SPDX-License-Identifier: Apache-2.0
"""An inventory read from a live HDB++ archive (`hdbbench inventory from-hdb URL --output FILE`).

Which archive: hdbbench.load.inventory.archive resolves the URL to a server kind and the inventory reader
of its backends (`Backend.inventory_reader()`), whose session recognises the database (PostgreSQL with
the timescaledb extension is `timescaledb`). The SQL lives in the backend folders; this module reads,
measures and warns without any.

What is read, per attribute of att_conf, in a read-only session:
1. its newest data_time (an index lookup). The newest of all ends the window (default 24 h), so an
   archive that stopped an hour ago reads as it ran;
2. its events in the window, newest first, at most `rows_per_attribute` rows. An attribute without
   an event in the window is read from its last events before it instead (and named in a warning);
   one without any event is left out (and named in a warning).

Rate of an attribute (hdbbench.load.inventory.figures): with n >= 3 events read, (n - 2) / (last -
second), leaving out the oldest, which is often the value sent on subscription at a random phase;
periodic archiving then gives its exact period even in a short window. Groups (hdbbench.load.inventory.
grouping): attributes of one Tango type, format, write type (ro: READ; rw: the others), array length,
and rate band (the rate to two significant digits); a group's rate is its attributes' mean; its label
says the period ("scalar devdouble ro every 10 s").

Value statistics of a group, over the events read: `error_share` (stored with an error), `invalid_share`
(no error, but INVALID quality or no value), and for numeric scalars `value_step` (mean |difference|
of consecutive values) and `repeat_share` (share of consecutive values equal to the previous); a
string group's `string_chars` is its values' mean length.

Bounds: every statement has a timeout, and the whole read stops after `max_seconds`, with one line
and nothing written. The inventory is written atomically (hdbbench.load.inventory.write) once everything
is read; a file that `load_inventory` would not read back is never written.
"""

from __future__ import annotations

import os
import textwrap
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from hdbbench.backends.abilities.inventory import ArchivedAttribute, ArchiveSession
from hdbbench.load.inventory.archive import Archive, resolve_url
from hdbbench.load.inventory.figures import attribute_rate, tally, value_mode
from hdbbench.load.inventory.grouping import AttributeShape, group_shapes, shape_of
from hdbbench.load.inventory.model import Inventory, parse_inventory
from hdbbench.load.inventory.write import inventory_text, write_inventory
from hdbbench.model.console import PLAIN_PERIOD_S
from hdbbench.model.errors import ConfigError, HdbbenchError
from hdbbench.model.hdbtypes import AttrFormat, TangoType, WriteType

DEFAULT_WINDOW_H = 24.0
DEFAULT_MAX_SECONDS = 600.0
DEFAULT_ROWS_PER_ATTRIBUTE = 10_000
STATEMENT_TIMEOUT_S = 60.0          # any one statement; less when less of max_seconds is left
NAMES_IN_A_WARNING = 3
HEADER_WIDTH = 100                  # the inventory's comment lines


class ReadStopped(HdbbenchError):
    """The read ran out of its time (--max-seconds); nothing was written."""


# ----------------------------------------------------------------------------------- reading


class ReadProgress:
    """A rich progress bar on a terminal; otherwise one plain line every PLAIN_PERIOD_S."""

    def __init__(self, console: Console, total: int, what: str) -> None:
        self.console, self.total, self.what = console, total, what
        self.done = 0
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), TimeRemainingColumn(), console=console,
                             transient=True) if console.is_terminal else None
        self._task: Any = None
        self._started = self._printed = time.monotonic()

    def __enter__(self) -> ReadProgress:
        if self._bar is not None:
            self._bar.__enter__()
            self._task = self._bar.add_task(self.what, total=self.total)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, error, tb)

    def step(self, phase: str) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, description=f"{self.what}: {phase}", completed=self.done)
            return
        now = time.monotonic()
        if now - self._printed >= PLAIN_PERIOD_S:
            self._printed = now
            self.console.print(f"{self.what}: {phase}, {self.done:,} of {self.total:,} steps, "
                               f"{now - self._started:.0f} s", highlight=False, soft_wrap=True)


@dataclass
class ArchiveRead:
    """Everything read of one archive, before grouping."""

    archive: Archive
    backend: str
    newest: datetime
    window_s: float
    rows_per_attribute: int
    attributes: list[AttributeShape]
    total: int                                              # attributes in att_conf
    left_out: dict[str, list[str]] = field(default_factory=dict)   # reason -> names
    stale: list[str] = field(default_factory=list)          # read from their last events before the window
    seconds: float = 0.0

    def warnings(self) -> list[str]:
        """One line per kind of attribute that is left out or read from outside the window."""
        hours = f"{self.window_s / 3600:g} h"
        lines = []
        if self.stale:
            lines.append(f"{_attributes(len(self.stale))} without an event in the {hours} window, counted at "
                         f"the rate of their last events: {_some(self.stale)}")
        for reason, names in self.left_out.items():
            lines.append(f"{_attributes(len(names))} left out, {reason}: {_some(names)}")
        return lines


def _some(names: Sequence[str]) -> str:
    """`a, b, c and 4 more`."""
    shown = ", ".join(sorted(names)[:NAMES_IN_A_WARNING])
    more = len(names) - NAMES_IN_A_WARNING
    return shown + (f" and {more:,} more" if more > 0 else "")


def _attributes(n: int) -> str:
    return f"{n:,} attribute{'s' if n != 1 else ''}"


class _Clock:
    """The read's deadline; the session's statement timeout never runs past it."""

    def __init__(self, session: ArchiveSession, max_seconds: float, started: float) -> None:
        self.session, self.max_seconds = session, max_seconds
        self.deadline = started + max_seconds
        self.timeout = min(STATEMENT_TIMEOUT_S, max_seconds)
        self.done = self.total = 0   # attributes whose events are read, of all

    def check(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.stopped()
        if left < self.timeout:
            self.timeout = max(left, 0.001)
            self.session.set_timeout(self.timeout)

    def stopped(self) -> ReadStopped:
        if not self.total:
            return self.stopped_before(self.max_seconds)
        return ReadStopped(f"stopped after {self.max_seconds:g} s (--max-seconds) with {self.done:,} of "
                           f"{self.total:,} attributes read; nothing written")

    @staticmethod
    def stopped_before(max_seconds: float) -> ReadStopped:
        return ReadStopped(f"stopped after {max_seconds:g} s (--max-seconds) before the attributes were read; "
                           "nothing written")


def read_archive(url: str, *, window_h: float = DEFAULT_WINDOW_H, max_seconds: float = DEFAULT_MAX_SECONDS,
                 rows_per_attribute: int = DEFAULT_ROWS_PER_ATTRIBUTE,
                 console: Console | None = None) -> ArchiveRead:
    """Read the archive at `url` (read-only) into per-attribute figures."""
    if window_h <= 0:
        raise ConfigError(f"the window must be > 0 hours, got {window_h:g}")
    if max_seconds <= 0:
        raise ConfigError(f"max_seconds must be > 0, got {max_seconds:g}")
    if rows_per_attribute < 2:
        raise ConfigError(f"rows per attribute must be >= 2, got {rows_per_attribute}")
    archive = resolve_url(url)
    console = console or Console(stderr=True)
    started = time.monotonic()
    timeout = min(STATEMENT_TIMEOUT_S, max_seconds)
    where = f"database {archive.database!r} ({archive.url})"
    try:
        session: ArchiveSession = archive.reader.open_archive(archive.endpoint, archive.database, timeout)
    except TimeoutError:
        if time.monotonic() - started >= max_seconds - 0.5:
            raise _Clock.stopped_before(max_seconds) from None
        raise HdbbenchError(f"a statement on {where} ran past {timeout:g} s; nothing written") from None
    clock = _Clock(session, max_seconds, started)
    try:
        try:
            attributes = session.attributes()
            clock.total = len(attributes)
            if not attributes:
                raise ConfigError(f"{where} holds no archived attribute: att_conf is empty")
            with ReadProgress(console, 2 * len(attributes), f"reading {archive.database}") as progress:
                lasts = _last_times(session, attributes, clock, progress)
                if all(t is None for t in lasts.values()):
                    raise ConfigError(f"{where} holds no archived event: none of its {len(attributes):,} "
                                      "attributes has a row in its data table")
                newest = max(t for t in lasts.values() if t is not None)
                read = ArchiveRead(archive, session.backend, newest, window_h * 3600.0, rows_per_attribute,
                                   [], len(attributes))
                _read_events(session, attributes, lasts, read, clock, progress)
        except TimeoutError:
            if time.monotonic() >= clock.deadline - 0.5:
                raise clock.stopped() from None
            raise HdbbenchError(f"a statement on {where} ran past {clock.timeout:g} s; "
                                "nothing written") from None
    finally:
        session.close()
    read.seconds = time.monotonic() - started
    return read


def _last_times(session: ArchiveSession, attributes: Sequence[ArchivedAttribute], clock: _Clock,
                progress: ReadProgress) -> dict[int, datetime | None]:
    lasts: dict[int, datetime | None] = {}
    for att in attributes:
        clock.check()
        lasts[att.id] = session.last_time(att) if att.type is not None else None
        progress.step("newest events")
    return lasts


def _read_events(session: ArchiveSession, attributes: Sequence[ArchivedAttribute],
                 lasts: dict[int, datetime | None], read: ArchiveRead, clock: _Clock,
                 progress: ReadProgress) -> None:
    since = read.newest - timedelta(seconds=read.window_s)

    def leave_out(reason: str, att: ArchivedAttribute) -> None:
        read.left_out.setdefault(reason, []).append(att.name)

    for k, att in enumerate(attributes):
        clock.done = k
        clock.check()
        progress.step("events in the window")
        last = lasts[att.id]
        if att.type is None:
            leave_out("a Tango type this testbed does not know", att)
            continue
        if last is None:
            leave_out("no event stored", att)
            continue
        if att.type == TangoType.DEV_ENCODED and att.format not in (AttrFormat.SCALAR, None):
            leave_out("DevEncoded arrays (Tango has DevEncoded scalars only)", att)
            continue
        in_window = last >= since
        mode = value_mode(att.type, att.format)
        rows = session.events(att, since if in_window else None, read.newest if in_window else last,
                              read.rows_per_attribute, mode)
        if not rows:
            leave_out("no event stored", att)
            continue
        fmt, dim_x, dim_y = att.format, 1, 0
        if fmt != AttrFormat.SCALAR:
            valued = next((r for r in rows if r.has_value and not r.error), None)
            dim_x, dim_y = session.dims(att, valued.data_time) if valued is not None else (0, 0)
            if dim_x <= 0 and dim_y <= 0:
                leave_out("arrays without a value in their last events (their length is unknown)", att)
                continue
            if fmt is None:
                fmt = AttrFormat.IMAGE if dim_y > 0 else AttrFormat.SPECTRUM
            if att.type == TangoType.DEV_ENCODED:
                leave_out("DevEncoded arrays (Tango has DevEncoded scalars only)", att)
                continue
            dim_x = max(1, dim_x)
            dim_y = max(1, dim_y) if fmt == AttrFormat.IMAGE else 0
        write = WriteType.READ if att.write == "ro" else WriteType.READ_WRITE
        shape = shape_of(att.name, int(att.type), int(fmt), int(write), dim_x, dim_y,
                         attribute_rate([r.data_time for r in rows], read.window_s, read.newest),
                         tally(att.type, rows))
        if isinstance(shape, str):
            leave_out(shape, att)
            continue
        read.attributes.append(shape)
        if not in_window:
            read.stale.append(att.name)


# ------------------------------------------------------------------------------- the command


@dataclass(frozen=True)
class FromHdb:
    """What `from_hdb` wrote and why."""

    path: Path
    inventory: Inventory
    read: ArchiveRead
    warnings: tuple[str, ...]

    def summary(self) -> str:
        r = self.read
        attributes = sum(g.count for g in self.inventory.groups)
        return (f"wrote {self.path}: {len(self.inventory.groups)} groups of {attributes:,} attributes from "
                f"{r.backend} database {r.archive.database!r}, rates over the {r.window_s / 3600:g} h to "
                f"{r.newest:%Y-%m-%d %H:%M:%S} UTC; read in {r.seconds:.1f} s")


def check_output(path: Path) -> None:
    """ConfigError before anything is read when `path` cannot be written (or replaced)."""
    if path.is_dir():
        raise ConfigError(f"output {path} is a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(f"output {path} exists and is not writable")
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"output {path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"output {path}: cannot write in {parent}")


def header_lines(read: ArchiveRead, warnings: Sequence[str]) -> list[str]:
    """The comment above the inventory: where it was read, how, and what was left out (wrapped)."""
    hours = f"{read.window_s / 3600:g} h"
    now = datetime.now(timezone.utc)
    paragraphs = [
        (f"Read by `hdbbench inventory from-hdb` from {read.archive.url} ({read.backend}) at "
         f"{now:%Y-%m-%dT%H:%M:%SZ} in {read.seconds:.1f} s."),
        (f"Rates: per attribute over the {hours} ending at the archive's newest event, "
         f"{read.newest:%Y-%m-%dT%H:%M:%SZ}: (n-2)/(last-second) of its n events (the oldest is often the "
         f"value sent on subscription), 1/(last-first) of two, 1/({hours}) of one. "
         "Groups: Tango type, format, write type, array length and rate to 2 significant digits; rate_hz "
         "is the group's mean."),
        (f"Shares of the events read (at most {read.rows_per_attribute:,} rows per attribute): error_share "
         "(an error instead of a value), invalid_share (INVALID quality or no value); value_step and "
         "repeat_share of numeric scalars; string_chars of strings."),
        *(f"Warning: {line}" for line in warnings),
    ]
    return [line for text in paragraphs
            for line in textwrap.wrap(text, HEADER_WIDTH, subsequent_indent="  ",
                                               break_on_hyphens=False, break_long_words=False)]


def from_hdb(url: str, output: Path, *, window_h: float = DEFAULT_WINDOW_H,
             max_seconds: float = DEFAULT_MAX_SECONDS, rows_per_attribute: int = DEFAULT_ROWS_PER_ATTRIBUTE,
             name: str | None = None, console: Console | None = None) -> FromHdb:
    """Read the HDB++ archive at `url` and write its inventory to `output` (atomically, or not at all)."""
    output = Path(output)
    check_output(output)
    read = read_archive(url, window_h=window_h, max_seconds=max_seconds,
                        rows_per_attribute=rows_per_attribute, console=console)
    groups = group_shapes(read.attributes)
    if not groups:
        raise ConfigError(f"database {read.archive.database!r} ({read.archive.url}) holds no attribute an "
                          f"inventory can describe: {'; '.join(read.warnings())}")
    warnings = read.warnings()
    header = header_lines(read, warnings)
    inventory = Inventory(name or f"{read.archive.database} ({read.backend})", output, tuple(groups))
    # The one reader must take the file back: checked before a byte is written.
    parse_inventory(tomllib.loads(inventory_text(inventory, header)), output)
    try:
        write_inventory(output, inventory, header)
    except OSError as exc:
        raise ConfigError(f"cannot write {output}: {exc.strerror or exc}") from exc
    return FromHdb(output, inventory, read, tuple(warnings))

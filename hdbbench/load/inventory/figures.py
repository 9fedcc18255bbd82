# SPDX-License-Identifier: Apache-2.0
"""What an archived attribute's stored events say: its rate, and the statistics of its values.

Rate: with n >= 3 events read, (n - 2) / (last - second). The oldest event is left out because in a
short archive it is often not one of the periodic events: a subscriber stores the value Tango sends
when it subscribes, at a random phase of the period, so (n - 1) / (last - first) over three events
of a 60 s attribute reads anywhere from 40 to 60 s. Leaving out one event of a long window changes
nothing else. With two events, (1) / (last - first); with one, 1 / the window (or 1 / the time from
that event to the window's end, when it is older).

Values (`ValueTally`, over the events read): errors (stored with an error description), invalid
events (no error, but INVALID quality or no value), and for numeric scalars the sum of |difference|
of consecutive values and how many were equal; for strings their lengths.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from hdbbench.backends.abilities.inventory import LENGTH, NUMBER, EventRow
from hdbbench.model.hdbtypes import AttrFormat, Quality, TangoType

NUMERIC_TYPES = frozenset({
    TangoType.DEV_SHORT, TangoType.DEV_USHORT, TangoType.DEV_LONG, TangoType.DEV_ULONG, TangoType.DEV_LONG64,
    TangoType.DEV_ULONG64, TangoType.DEV_UCHAR, TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE,
})


@dataclass
class ValueTally:
    """Counts over one attribute's events read (or, summed, over a group's)."""

    events: int = 0
    errors: int = 0
    invalid: int = 0
    step_sum: float = 0.0
    pairs: int = 0
    repeats: int = 0
    chars_sum: float = 0.0
    chars_n: int = 0

    @staticmethod
    def total(tallies: Iterable[ValueTally]) -> ValueTally:
        out = ValueTally()
        for t in tallies:
            out.events += t.events
            out.errors += t.errors
            out.invalid += t.invalid
            out.step_sum += t.step_sum
            out.pairs += t.pairs
            out.repeats += t.repeats
            out.chars_sum += t.chars_sum
            out.chars_n += t.chars_n
        return out


def attribute_rate(times: Sequence[datetime], window_s: float, newest: datetime) -> float:
    """Events per second of one attribute from the data_times read (any order, at least one)."""
    ordered = sorted(times)
    if len(ordered) >= 3 and ordered[-1] > ordered[1]:
        return (len(ordered) - 2) / (ordered[-1] - ordered[1]).total_seconds()
    if len(ordered) == 2 and ordered[1] > ordered[0]:
        return 1.0 / (ordered[1] - ordered[0]).total_seconds()
    return 1.0 / max(window_s, (newest - ordered[-1]).total_seconds())


def value_mode(att_type: TangoType, fmt: AttrFormat | None) -> str | None:
    """What a session should return as each row's value: the number, the string's length, or nothing."""
    if fmt != AttrFormat.SCALAR:
        return None
    if att_type in NUMERIC_TYPES:
        return NUMBER
    return LENGTH if att_type == TangoType.DEV_STRING else None


def tally(att_type: TangoType, rows: Sequence[EventRow]) -> ValueTally:
    """Errors, invalid events and value statistics of an attribute's rows (any order)."""
    out = ValueTally(events=len(rows))
    previous: float | None = None
    for row in sorted(rows, key=lambda r: r.data_time):
        if row.error:
            out.errors += 1
            continue
        if row.quality == Quality.INVALID or not row.has_value:
            out.invalid += 1
        if row.value is None or not math.isfinite(row.value):
            continue
        if att_type == TangoType.DEV_STRING:
            out.chars_sum += row.value
            out.chars_n += 1
            continue
        if previous is not None:
            step = abs(row.value - previous)
            out.step_sum += step
            out.pairs += 1
            out.repeats += step == 0
        previous = row.value
    return out

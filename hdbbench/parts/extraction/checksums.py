# SPDX-License-Identifier: Apache-2.0
"""Validation of extraction results: every backend and variant must return the same rows for a query.

A result is summarised without keeping it (rows, values per row, NULLs, the sum of its time stamps
in µs weighted by values per row, the sum of its values), so that validation streams results of
millions of rows. The first backend's summary of each query is the reference; every later one must
match it exactly, but for the values' sum, which must match within a relative tolerance (REL_TOL).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from hdbbench.backends.base import ExtractionBackend
from hdbbench.model.errors import HdbbenchError
from hdbbench.parts.extraction.queries import BoundQuery
from hdbbench.results.extraction import Checksum as ChecksumRecord

REL_TOL = 1e-9


class ValidationError(HdbbenchError):
    """Two backends returned different rows for the same query."""


_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_US = datetime(1970, 1, 1, 0, 0, 0, 1) - _EPOCH


def time_us(value: datetime) -> int:
    """µs since the Unix epoch; naive values are UTC (MariaDB datetime(6))."""
    return (value - (_EPOCH if value.tzinfo is None else _EPOCH_UTC)) // _ONE_US


@dataclass
class Checksum:
    """Order-independent summary of a result: rows, values per row (array elements), time stamps and values."""

    rows: int = 0
    items: int = 0
    nulls: int = 0
    time_us_sum: int = 0
    value_sum: float = 0.0

    def add(self, block: Sequence[Sequence[Any]]) -> None:
        # Millions of rows per database pass through here (validation reads every query's rows): the
        # time stamps are summed as timedeltas from the block's first one (exact, and far from
        # timedelta's limit), the values gathered in one list and summed once.
        partial: list[Any] = []
        gather = partial.append
        nulls = items_sum = 0
        weighted_us = 0  # time stamps of array rows count once per element
        offsets = {False: timedelta(0), True: timedelta(0)}  # by whether the stamps are time-zone aware
        bases: dict[bool, datetime] = {}
        counts = {False: 0, True: 0}
        for row in block:
            items = 1
            for value in row[1:]:
                if value is None:
                    nulls += 1
                elif isinstance(value, list):
                    items = len(value)
                    for v in value:
                        if v is None:
                            nulls += 1
                        else:
                            gather(v)
                else:
                    gather(value)
            stamp = row[0]
            if items != 1:
                weighted_us += time_us(stamp) * items
            else:
                aware = stamp.tzinfo is not None
                offsets[aware] += stamp - bases.setdefault(aware, stamp)
                counts[aware] += 1
            items_sum += items
        self.rows += len(block)
        self.items += items_sum
        self.nulls += nulls
        self.time_us_sum += weighted_us + sum(offsets[a] // _ONE_US + counts[a] * time_us(base)
                                              for a, base in bases.items())
        self.value_sum += math.fsum(float(v) if isinstance(v, (Decimal, bool)) else v for v in partial)

    def matches(self, other: Checksum) -> bool:
        tol = REL_TOL * max(1.0, abs(self.value_sum), abs(other.value_sum))
        return (self.items, self.nulls, self.time_us_sum) == (other.items, other.nulls, other.time_us_sum) and \
            abs(self.value_sum - other.value_sum) <= tol

    def describe(self) -> str:
        return f"{self.items} values ({self.nulls} NULL), time sum {self.time_us_sum} us, value sum {self.value_sum:.12g}"

    def record(self, reference: str) -> ChecksumRecord:
        """As results.json keeps it, with the backend/variant it came from."""
        return ChecksumRecord(reference=reference, rows=self.rows, items=self.items, nulls=self.nulls,
                              time_us_sum=self.time_us_sum, value_sum=self.value_sum)


def checksum(backend: ExtractionBackend, conn: Any, bq: BoundQuery, fetch_rows: int) -> Checksum:
    result = Checksum()
    backend.stream(conn, bq.sql, bq.params, fetch_rows, result.add)
    return result


class Validator:
    """Holds the first backend's checksum of each query and checks every later one against it."""

    def __init__(self) -> None:
        self.reference: dict[str, tuple[str, Checksum]] = {}

    def check(self, who: str, query_id: str, got: Checksum) -> None:
        if query_id not in self.reference:
            self.reference[query_id] = (who, got)
            return
        ref_who, ref = self.reference[query_id]
        if not ref.matches(got):
            raise ValidationError(f"query {query_id}: {ref_who} and {who} return different rows: "
                                  f"{ref.describe()} vs {got.describe()}")

    def records(self) -> dict[str, ChecksumRecord]:
        """Each query's reference checksum, by query id."""
        return {qid: c.record(who) for qid, (who, c) in self.reference.items()}

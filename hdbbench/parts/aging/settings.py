# SPDX-License-Identifier: Apache-2.0
"""The scenario's settings for the archive's age: `[history]` (an aged history and Elettra's load-order
measurement, hdbbench.parts.aging.history and load_order) and `[measurements] growth` (the growth trial's
plan entry, hdbbench.parts.aging.growth), read here so that the scenario module stays a table of contents
and the trial takes its plan entry without reading the scenario."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hdbbench.backends.base import EXTRACTION
from hdbbench.backends.model import SchemaVariant
from hdbbench.backends.registry import backend_class
from hdbbench.model.errors import ConfigError
from hdbbench.model.tomlfile import Table
from hdbbench.model.units import parse_bytes
from hdbbench.trials.settings import GrowthLoad


@dataclass(frozen=True)
class LoadOrderPart:
    """Elettra's load-order measurement (hdbbench.parts.aging.load_order)."""

    rows: tuple[int, ...] = (1_000_000,)
    attributes: int = 2000
    repeat: int = 1
    variants: tuple[str, ...] = ()   # schema variants loaded into; () = the scenario's


@dataclass(frozen=True)
class HistorySize:
    """How much history: `days` of archive time, or `rows` rows (exactly one of them)."""

    days: float | None = None
    rows: int | None = None
    cluster: bool = True
    # Stop once the database holds this many bytes (`rows` is then the most it may take): a history
    # sized against a memory budget, whatever a row costs on the backend and variant.
    min_bytes: int | None = None

    def words(self) -> str:
        size = f"{self.days:g} days" if self.days is not None else f"{self.rows:,} rows"
        return size + (f" or {self.min_bytes / 2**20:,.0f} MiB" if self.min_bytes else "")


@dataclass(frozen=True)
class HistoryPart:
    """[history]: an aged history before the trials (hdbbench.parts.aging.history) and Elettra's load orders."""

    size: HistorySize
    load_order: LoadOrderPart | None = None


def history_refusal(backend: str) -> str | None:
    """One line when `backend` cannot hold a history (no database, no column loader, no aging layout:
    hdbbench.backends.abilities.aging), else None. Here, not with the history, because the scenario's
    `[history]` is refused with it before anything is built."""
    why = backend_class(backend).refusal(EXTRACTION)
    if why is None and backend_class(backend).aging_layout() is None:
        why = f"backend {backend} has no history layout (its aging_layout() is None)"
    return why


def parse_history(reader: Table, backends: Sequence[str]) -> HistoryPart:
    """[history]: days or rows (one of them), cluster, load_order; a backend that keeps no history refused."""
    if reader.has("days") and reader.has("rows"):
        raise reader.fail("rows", "give exactly one of days and rows, not both")
    if not reader.has("days") and not reader.has("rows"):
        raise reader.fail(None, "give its size: days = <N> or rows = <N>")
    days = reader.number("days", minimum=0.001, maximum=3660.0) if reader.has("days") else None
    rows = reader.integer("rows", minimum=1, maximum=10**10) if reader.has("rows") else None
    cluster = reader.boolean("cluster", True)
    load_order = None
    if (sub := reader.optional_table("load_order")) is not None:
        sizes = tuple(sub.list_of("rows", int, [1_000_000], minimum=1, non_empty=True))
        load_order = LoadOrderPart(sizes, sub.integer("attributes", 2000, minimum=1, maximum=1_000_000),
                                   sub.integer("repeat", 1, minimum=1, maximum=100),
                                   tuple(sub.list_of("variants", str, [], non_empty=False)))
        for variant in load_order.variants:
            try:
                SchemaVariant.parse(variant)
            except ConfigError as exc:
                raise sub.fail("variants", str(exc)) from None
        sub.finish()
    reader.finish()
    for backend in backends:
        if (refusal := history_refusal(backend)) is not None:
            raise reader.fail(None, f"{refusal}; it cannot hold a history")
    return HistoryPart(HistorySize(days, rows, cluster), load_order)



def parse_growth(reader: Table) -> GrowthLoad:
    until_bytes = None
    if reader.has("until_bytes"):
        try:
            until_bytes = parse_bytes(reader.get("until_bytes", (str, int)))
        except ValueError as exc:
            raise reader.fail("until_bytes", str(exc)) from None
    interval_s = reader.positive("interval_s", 10.0)
    growth = GrowthLoad(rate=reader.positive("rate", 20000.0),
                        until_memory_ratio=reader.positive("until_memory_ratio", 10.0), until_bytes=until_bytes,
                        interval_s=interval_s, max_duration_s=reader.positive("max_duration_s", 1200.0))
    if growth.max_duration_s < 3 * interval_s:  # the knee needs a few intervals to tell from one slow one
        raise reader.fail("max_duration_s", f"must be at least 3 intervals ({3 * interval_s:g} s), "
                                            f"got {growth.max_duration_s:g}")
    reader.finish()
    return growth

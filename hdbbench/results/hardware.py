# SPDX-License-Identifier: Apache-2.0
"""hardware.json (kind "hardware-plan"): the hardware an inventory needs, planned from measured unit costs.

`hdbbench plan hardware` and a run whose disk part has an inventory (hdbbench.run.runner) write it;
hdbbench.scenario.hardware makes it; the report's hardware section (hdbbench.report.hardware) reads it.
Every planned figure carries what it needs at the inventory's rate, what to provide with the headroom,
the unit cost it came from with that cost's spread over the trials measured, and whether the cost held
constant over the rates those trials ran at (a figure measured at one rate is used at another only
through a fitted line; where the cost per event changed with rate the figure says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hdbbench.model.records import omitted


def years_text(years: float) -> str:
    """"1 year", "5 years", "0.5 years"."""
    return f"{years:g} year" + ("" if years == 1 else "s")


@dataclass(frozen=True, kw_only=True)
class UnitCostFit:
    """A quantity (cores, write IOPS, bytes/s) as fixed + per_event × stored rate over measured windows."""

    fixed: float                 # at no events (cores idle, …): per subscriber process for the subscribers
    per_event: float             # the marginal cost of one event per second
    points: int                  # measured windows (trials and unsaturated saturation steps)
    rates: list[float]           # their stored rates, lowest and highest (events/s)
    per_event_range: list[float]  # the all-in cost per event (quantity / rate) at those windows: lowest, highest
    constant: bool               # whether the all-in cost per event stayed within CONSTANT_WITHIN over the rates
    how: str                     # in words: the fit, or why a single cost per event was used


@dataclass(frozen=True, kw_only=True)
class PlannedFigure:
    """One resource of a plan."""

    needed: float | None         # at the inventory's rate (None: the runs given could not tell)
    provide: float | None        # what to buy: needed over the headroom (rounded up where whole units count)
    unit: str                    # cores, bytes, IOPS, archivers, bytes/s
    source: str                  # where it came from, in words
    fit: UnitCostFit | None = omitted()


@dataclass(frozen=True, kw_only=True)
class BackendHardware:
    """The plan of one backend."""

    backend: str
    subscriber_kind: str
    variant: str                  # the schema variant the unit costs and the hot set are of
    events_per_s: float           # the inventory's events per second
    attributes: int
    archivers: PlannedFigure
    archiver_cores: PlannedFigure
    database_cores: PlannedFigure
    hot_set: PlannedFigure        # the pages a steady insert stream touches at once (the memory model)
    memory: PlannedFigure         # the database server's: its own memory and the hot set
    write_iops: PlannedFigure
    storage_class: str | None     # the smallest class of hdbbench.stack that sustains `write_iops.provide`
    write_bytes_per_s: PlannedFigure
    log_bytes_per_s: PlannedFigure  # WAL / redo: what replication and log backups carry
    disk: PlannedFigure           # at min(years, retention), from the measured bytes per event
    machine: str                  # the machine and pace the unit costs were measured on
    sentence: str                 # the plan in one sentence
    unknown: list[str] = field(default_factory=list)  # what this backend's plan could not measure


@dataclass(frozen=True, kw_only=True)
class HardwareCheck:
    """A planned figure against the one measured by a run at the same scale (`plan hardware --check`)."""

    backend: str
    quantity: str                 # e.g. "subscribers' CPU, cores"
    rate: float                   # the stored rate of the measured trial, the rate the plan was evaluated at
    planned: float | None
    measured: float | None
    error: float | None           # (planned - measured) / measured
    tolerance: float
    within: bool | None


@dataclass(frozen=True, kw_only=True)
class HardwarePlanResults:
    """results of kind "hardware-plan"."""

    inventory: str
    scale: float                  # the inventory's attribute counts multiplied by this
    years: float
    headroom: float               # every resource used at most this share of what is provided
    runs: list[str]               # the runs the unit costs came from
    backends: list[BackendHardware]
    cannot_know: str              # what no plan from these measurements can know
    checks: list[HardwareCheck] = field(default_factory=list)

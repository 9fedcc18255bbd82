# SPDX-License-Identifier: Apache-2.0
"""The records of a sizing results file: ``sizing.json`` of a run, or ``results.json`` of ``size plan``
(kind "disk-plan"), written by hdbbench.parts.disk.sizing and read by the report's sizing section.

Typed records (hdbbench.model.records): read exactly as written, an unknown or missing key refused.
Fields declared with ``omitted()`` or ``absent()`` are ones results format 1 did not record
(`hdbbench migrate` carries such a file without them); today's producers always write them.
"""

from __future__ import annotations

from dataclasses import dataclass

from hdbbench.model.records import Absent, absent, omitted


@dataclass(frozen=True, kw_only=True)
class ProjectedGroup:
    """One inventory group on one backend/variant: its bytes per event and what they come to."""

    label: str
    events_per_day: float
    bytes_per_event: float | None    # None: not measured (the group is left out of the totals)
    source: str                      # where bytes_per_event comes from, in words
    bytes_per_day: float | None
    retention_days: float
    bytes_at_retention: float | None
    log_bytes_per_day: dict[str, float]
    # Chunks / partitions its table holds at retention (null: not partitioned, or unknown; absent in format 1).
    parts_at_retention: int | None | Absent = absent()
    share_at_retention: float | None


@dataclass(frozen=True)
class Projection:
    """``results.projections[]`` (hdbbench.parts.disk.sizing.project): disk of an inventory on one variant."""

    backend: str
    variant: str
    complete: bool
    bytes_per_day: float
    bytes_per_month: float
    bytes_per_year: float
    bytes_at_retention: float
    log_bytes_per_day: dict[str, float]
    groups: list[ProjectedGroup]
    replicas: float | None = omitted()            # copies kept (primary + replicas); total_bytes counts them all
    log_retention_days: float | None = omitted()  # days of WAL / binary log kept
    log_bytes_retained: float | None = omitted()
    total_bytes: float | None = omitted()         # (bytes at retention + logs kept) x replicas

    # What a projection of format 1 (which had none of the four figures above) stands for: one copy, no logs kept.
    @property
    def copies(self) -> float:
        return 1.0 if self.replicas is None else self.replicas

    @property
    def log_days(self) -> float:
        return 0.0 if self.log_retention_days is None else self.log_retention_days

    @property
    def logs_kept(self) -> float:
        return 0.0 if self.log_bytes_retained is None else self.log_bytes_retained

    @property
    def total(self) -> float:
        """(at retention + logs kept) × replicas: the figure to buy disks for."""
        if self.total_bytes is not None:
            return self.total_bytes
        return (self.bytes_at_retention + self.logs_kept) * self.copies


@dataclass(frozen=True, kw_only=True)
class SizingCheck:
    """``results.checks[]``: the projection of the events a `size measure --inventory` run stored
    against the pages in use it measured (hdbbench.parts.disk.sizing.check)."""

    backend: str
    variant: str
    projected_bytes: float
    measured_bytes: int
    error: float | None              # projected / measured - 1; None when a group was not measured
    within_tolerance: bool
    unmeasured_groups: list[str]


@dataclass(frozen=True, kw_only=True)
class PlanResults:
    """``results`` of kind "disk-plan"."""

    projections: list[Projection]
    checks: list[SizingCheck]

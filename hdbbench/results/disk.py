# SPDX-License-Identifier: Apache-2.0
"""The records of the disk results files, written by hdbbench.parts.disk:

* ``disk.json`` (kind "disk", ``size measure`` or a run's disk part): `DiskResults`, one `CaseSize`
  per case (type x format x write x backend x variant) with its marginal bytes per event;
* ``results.json`` of ``size validate`` (kind "disk-validate"): `ValidateResults`.

Typed records (hdbbench.model.records): read exactly as written, an unknown or missing key refused.
A field declared with ``omitted()`` is one results format 1 did not record (`hdbbench migrate`
carries such a file without it; today's producers always write it).
"""

from __future__ import annotations

from dataclasses import dataclass

from hdbbench.model.records import omitted


@dataclass(frozen=True, kw_only=True)
class TableBytes:
    """One table's bytes as its server reports them (hdbbench.backends.model.TableSize and its disk_bytes)."""

    table: str
    data_bytes: int
    index_bytes: int
    toast_bytes: int
    free_bytes: int
    total_bytes: int
    allocated_bytes: int | None      # file-system blocks of a sparse file, when they differ from total_bytes
    engine: str
    parts: int                       # chunks / partitions / tablespaces the table spans
    disk_bytes: int


@dataclass(frozen=True, kw_only=True)
class MeasuredSize:
    """A case's table at one of its cumulative sizes, less its size before the load."""

    events: int
    rows: int
    raw_bytes: int
    measured_bytes: int              # what the fit is made on: pages in use, or allocated blocks
    data_bytes: int
    index_bytes: int
    toast_bytes: int
    free_bytes: int
    total_bytes: int
    disk_bytes: int


@dataclass(frozen=True, kw_only=True)
class CaseSize:
    """``results.cases[]``: one case on one backend and variant (hdbbench.parts.disk.measure.CaseResult)."""

    backend: str
    variant: str
    case_label: str
    case_type: str
    case_format: str
    case_write: str
    case_elements: int
    case_dim_x: int
    case_dim_y: int
    case_events: int
    case_attributes: int
    case_period_s: float
    case_string_chars: int
    case_span: float | None = omitted()
    case_sizes: list[int] | None = omitted()
    table: str
    engine: str
    parts: int
    events: int
    rows: int
    raw_bytes: int
    before: TableBytes
    after: TableBytes
    sizes: list[MeasuredSize] | None = omitted()
    # The headline figure is marginal: what one more event costs once the table is large (null in a
    # case of format 1, which measured one size and fitted nothing: its average is average_bytes_per_event).
    bytes_per_event: float | None
    marginal_bytes_per_event: float | None = omitted()
    fixed_bytes: float | None = omitted()
    fit_r2: float | None = omitted()
    fit_max_residual: float | None = omitted()
    fit_sizes: list[int] | None = omitted()
    fit_span: float | None = omitted()
    fit_linear: bool | None = omitted()
    fit_ok: bool | None = omitted()  # False: the sizes do not lie on a line; the marginal is not used
    fit_note: str
    average_bytes_per_event: float
    data_per_event: float
    index_per_event: float
    toast_per_event: float
    slack_bytes: int | None = omitted()
    free_per_event: float
    allocated_blocks: bool | None = omitted()
    total_per_event: float
    raw_per_event: float
    ratio_disk_to_raw: float
    overhead_per_event: float
    data_per_row: float
    documented_min_row_bytes: float | None
    row_overhead_bytes: float | None
    log_bytes: dict[str, int | None]     # WAL / binary log / redo written by the load
    log_per_event: dict[str, float | None]

    @property
    def usable(self) -> bool:
        """A marginal that planning and the report may take: measured, and its sizes on a line."""
        return self.bytes_per_event is not None and self.fit_ok is not False

    @property
    def name(self) -> str:
        size = f" ×{self.case_elements:,}" if self.case_elements > 1 else ""
        return f"{self.case_type} {self.case_format} {self.case_write}{size}"


@dataclass(frozen=True, kw_only=True)
class ArrayFit:
    """``results.fits[]``: marginal bytes per event = a + b x elements over two or more array sizes."""

    backend: str
    variant: str
    type: str
    format: str
    write: str
    elements: list[int]
    a_bytes: float
    b_bytes_per_element: float
    r2: float


@dataclass(frozen=True, kw_only=True)
class ReferenceComparison:
    """``results.reference[]``: ours beside a published figure of the same table and index choice
    (hdbbench.parts.disk.reference)."""

    backend: str
    variant: str
    published: str
    order: str
    published_bytes_per_row: float
    ours_bytes_per_event: float
    ratio: float
    differs: bool
    why: str                         # what differs, when far apart
    setup: str


@dataclass(frozen=True, kw_only=True)
class VariantRun:
    """``results.variants[]``: a backend's variant measured, or why not."""

    backend: str
    variant: str
    unavailable: str | None


@dataclass(frozen=True, kw_only=True)
class CaseShape:
    """A case's settings (hdbbench.parts.disk.cases.Case), as an inventory run records the groups it loaded."""

    label: str
    type: str
    format: str
    write: str
    elements: int
    dim_x: int
    dim_y: int
    events: int
    attributes: int
    period_s: float
    string_chars: int
    span: float
    sizes: list[int]


@dataclass(frozen=True, kw_only=True)
class InventoryGroup:
    label: str
    case: CaseShape
    events: int                      # stored


@dataclass(frozen=True, kw_only=True)
class TableChange:
    before: TableBytes
    after: TableBytes


@dataclass(frozen=True, kw_only=True)
class InventoryLoad:
    """``results.inventory_runs[]``: a (scaled) inventory loaded into one database (hdbbench.parts.disk.inventory)."""

    backend: str
    variant: str
    groups: list[InventoryGroup]
    tables: list[TableChange]
    measured_bytes: int              # pages in use (allocated blocks of sparse files)
    disk_bytes: int                  # whole files, slack included
    unavailable: str | None


@dataclass(frozen=True, kw_only=True)
class DiskResults:
    """``results`` of kind "disk"."""

    cases: list[CaseSize]
    fits: list[ArrayFit]
    reference: list[ReferenceComparison] | None = omitted()
    variants: list[VariantRun]
    inventory_runs: list[InventoryLoad]
    raw_bytes: str                   # what an event's raw bytes count, in words
    bytes_per_event: str | None = omitted()  # what the marginal is, in words


# --- size validate ---------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class SizeValidation:
    """``results.validations[]`` of ``size validate``: a fit at the default scale projected to `rows`
    rows, against the bytes those rows took (hdbbench.parts.disk.validate)."""

    backend: str
    variant: str
    order: str
    rows: int
    fixed_bytes: float
    marginal_bytes_per_event: float
    fit_sizes: list[int]
    projected_bytes: float
    measured_bytes: int              # pages in use
    file_bytes: int                  # whole files, slack included
    error: float
    file_error: float
    measured_bytes_per_event: float | None
    within_tolerance: bool


@dataclass(frozen=True, kw_only=True)
class ValidateResults:
    """``results`` of kind "disk-validate"."""

    validations: list[SizeValidation]
    tolerance: float
    measured: str                    # what "measured" means, in words

# SPDX-License-Identifier: Apache-2.0
"""Measuring cases: each in its own table of a fresh database, its size before the load and after
each of its cumulative sizes, fitted as fixed + marginal x events (disk.fit).

PostgreSQL/TimescaleDB variants are measured again after CLUSTER, once, at the largest size; their
marginal takes the fixed part of the fit before CLUSTER (CLUSTER rewrites the table, so sizes on the
way could only be had by clustering at each size, which would change what comes after).
"""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from hdbbench.backends import get_backend
from hdbbench.backends.base import Backend
from hdbbench.backends.model import TableDef, TableSize
from hdbbench.model.errors import ConfigError, HdbbenchError, SchemaError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo
from hdbbench.model.measure import fit_line
from hdbbench.parts.disk.cases import (
    Case,
    Loader,
    Tally,
    case_attributes,
    case_batches,
    case_start_time,
    recorded_load,
)
from hdbbench.parts.disk.columns import column_load, columns_apply
from hdbbench.parts.disk.fit import SizeFit, fit_sizes, part_marginals, relative_weights
from hdbbench.parts.disk.variants import MeasureVariant, apply_storage, storage_unavailable
from hdbbench.results.disk import ArrayFit, CaseSize, MeasuredSize, TableBytes

# ---------------------------------------------------------------------------------- tables


def table_for(backend: Backend, case: Case) -> str:
    return backend.table_for(AttributeInfo("case", case.type, case.format, case.write))


def rounds(backend: Backend, cases: Sequence[Case]) -> list[list[Case]]:
    """Cases grouped so that no two of a group share a table (each group runs in its own database)."""
    groups: list[list[Case]] = []
    for case in cases:
        table = table_for(backend, case)
        home = next((g for g in groups if all(table_for(backend, c) != table for c in g)), None)
        if home is None:
            groups.append([case])
        else:
            home.append(case)
    return groups


# ------------------------------------------------------------------------------ measurement


@dataclass(frozen=True)
class SizePoint:
    """The case's table after `events` events (cumulative), with the rows and raw bytes stored so far."""

    events: int
    rows: int
    raw_bytes: int
    size: TableSize


@dataclass
class CaseResult:
    backend: str
    variant: str
    case: Case
    table: str
    before: TableSize
    points: list[SizePoint]
    logs: dict[str, int | None] = field(default_factory=dict)
    min_row_bytes: float | None = None  # documented minimum per stored row (average)
    fixed_from: SizeFit | None = None  # set after CLUSTER: the fixed part comes from the unclustered fit

    @property
    def after(self) -> TableSize:
        return self.points[-1].size

    @property
    def events(self) -> int:
        return self.points[-1].events

    @property
    def rows(self) -> int:
        return self.points[-1].rows

    @property
    def raw_bytes(self) -> int:
        return self.points[-1].raw_bytes

    def delta(self, part: str, size: TableSize | None = None) -> int:
        return int(getattr(size or self.after, part)) - int(getattr(self.before, part))

    def per_event(self, part: str) -> float:
        return self.delta(part) / self.events if self.events else math.nan

    def measured(self, size: TableSize) -> int:
        """Bytes the fit is made on: pages in use (data + index + TOAST), or the allocated blocks of
        a sparse file (page compression), where free pages cannot be told apart."""
        if size.allocated_bytes is not None:
            return self.delta("disk_bytes", size)
        return sum(self.delta(p, size) for p in ("data_bytes", "index_bytes", "toast_bytes"))

    def fit(self) -> SizeFit:
        ys = [self.measured(p.size) for p in self.points]
        if self.fixed_from is None:
            return fit_sizes([p.events for p in self.points], ys)
        base = self.fixed_from
        marginal = (ys[-1] - base.fixed_bytes) / self.events if self.events else math.nan
        note = "after CLUSTER at the largest size; fixed part from the fit before CLUSTER"
        return SizeFit(base.fixed_bytes, marginal, base.r2, base.max_residual, (self.events,), base.linear,
                       f"{note}; {base.note}" if base.note else note)

    def part_marginals(self, fit: SizeFit) -> dict[str, float]:
        parts = ("data_bytes", "index_bytes", "toast_bytes")
        if self.fixed_from is not None or len(self.points) < 2:
            share = fit.marginal_bytes_per_event / (self.measured(self.after) or 1)
            return {p: self.delta(p) * share for p in parts}
        events = [pt.events for pt in self.points]
        weights = relative_weights([self.measured(pt.size) for pt in self.points])
        return part_marginals(events, {p: [self.delta(p, pt.size) for pt in self.points] for p in parts}, weights)

    def record(self) -> CaseSize:
        """The case as disk.json keeps it (hdbbench.results.disk.CaseSize)."""
        ev = self.events or 1
        fit = self.fit()
        marginal = fit.marginal_bytes_per_event
        parts = self.part_marginals(fit)
        rows_per_event = self.rows / ev
        raw = self.raw_bytes / ev
        data_per_row = parts["data_bytes"] / rows_per_event if rows_per_event else math.nan
        shape = self.case.shape()
        return CaseSize(
            backend=self.backend, variant=self.variant, case_label=shape.label, case_type=shape.type,
            case_format=shape.format, case_write=shape.write, case_elements=shape.elements, case_dim_x=shape.dim_x,
            case_dim_y=shape.dim_y, case_events=shape.events, case_attributes=shape.attributes,
            case_period_s=shape.period_s, case_string_chars=shape.string_chars, case_span=shape.span,
            case_sizes=shape.sizes, table=self.table, engine=self.after.engine, parts=self.after.parts,
            events=self.events, rows=self.rows, raw_bytes=self.raw_bytes,
            before=table_bytes(self.before), after=table_bytes(self.after), sizes=[self._point(p) for p in self.points],
            # The headline figures are marginal: what one more event costs once the table is large.
            bytes_per_event=marginal, marginal_bytes_per_event=marginal, fixed_bytes=fit.fixed_bytes, fit_r2=fit.r2,
            fit_max_residual=fit.max_residual, fit_sizes=list(fit.sizes), fit_span=fit.span, fit_linear=fit.linear,
            fit_ok=fit.linear, fit_note=fit.note, average_bytes_per_event=self.delta("disk_bytes") / ev,
            data_per_event=parts["data_bytes"], index_per_event=parts["index_bytes"],
            toast_per_event=parts["toast_bytes"], slack_bytes=self.delta("free_bytes"),
            free_per_event=self.per_event("free_bytes"), allocated_blocks=self.after.allocated_bytes is not None,
            total_per_event=self.per_event("total_bytes"), raw_per_event=raw,
            ratio_disk_to_raw=marginal / raw if raw else math.nan, overhead_per_event=marginal - raw,
            data_per_row=data_per_row, documented_min_row_bytes=self.min_row_bytes,
            row_overhead_bytes=data_per_row - self.min_row_bytes if self.min_row_bytes is not None else None,
            log_bytes=dict(self.logs), log_per_event={k: (v / ev if v is not None else None) for k, v in self.logs.items()})

    def _point(self, p: SizePoint) -> MeasuredSize:
        return MeasuredSize(events=p.events, rows=p.rows, raw_bytes=p.raw_bytes, measured_bytes=self.measured(p.size),
                            **{k: self.delta(k, p.size) for k in ("data_bytes", "index_bytes", "toast_bytes",
                                                                   "free_bytes", "total_bytes", "disk_bytes")})


def table_bytes(size: TableSize) -> TableBytes:
    """A table's size as results record it."""
    return TableBytes(table=size.table, data_bytes=size.data_bytes, index_bytes=size.index_bytes,
                      toast_bytes=size.toast_bytes, free_bytes=size.free_bytes, total_bytes=size.total_bytes,
                      allocated_bytes=size.allocated_bytes, engine=size.engine, parts=size.parts,
                      disk_bytes=size.disk_bytes)


def _log_delta(before: dict[str, int | None], after: dict[str, int | None]) -> dict[str, int | None]:
    return {k: (after.get(k) - v if v is not None and after.get(k) is not None else None)  # type: ignore[operator]
            for k, v in before.items()}


def load_range(backend: Backend, case: Case, infos: Sequence[AttributeInfo], seed: int, t0: datetime,
               first: int, stop: int, tally: Tally, loader: Loader | None) -> int:
    """Store events first..stop-1: numpy columns through the column loader where they apply and no
    other loader is given, else `Event` batches through `loader` (default: the bulk writer)."""
    if loader is None and columns_apply(backend, case):
        return column_load(backend, case, infos, seed, t0, first, stop, tally)
    if loader is None:
        return recorded_load(backend, case, infos, seed, t0, first, stop, tally)
    return loader(backend, infos, case_batches(case, infos, seed, t0, tally, first, stop))


class Stopped(HdbbenchError):
    """Another part of the measurement failed or was interrupted: this one stopped at its next step."""


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise Stopped("stopped: another part of the measurement failed or was interrupted")


def measure_case(backend: Backend, variant: str, case: Case, seed: int, loader: Loader | None,
                 table_defs: dict[str, TableDef], stop: threading.Event | None = None) -> CaseResult:
    """Sizes of the case's table before the load and after each of the case's cumulative sizes."""
    table = table_for(backend, case)
    prefix = f"tango://disk:10000/{uuid.uuid4().hex[:8]}"
    infos = case_attributes(case, prefix)
    tally = Tally()
    t0 = case_start_time(case)
    before = backend.table_sizes([table])[0]
    logs0 = backend.log_positions()
    points, stored = [], 0
    for n in case.sizes:
        _check(stop)
        stored += load_range(backend, case, infos, seed, t0, stored, n, tally, loader)
        rows = tally.element_rows if backend.row_per_element and case.format != AttrFormat.SCALAR else stored
        points.append(SizePoint(stored, rows, tally.raw_bytes, backend.table_sizes([table])[0]))
    logs1 = backend.log_positions()
    minimum = backend.documented_row_minimum(table_defs[table], prefix)
    return CaseResult(backend.name, variant, case, table, before, points, _log_delta(logs0, logs1),
                      minimum[1] if minimum else None)


def measure_round(backend_name: str, endpoint: Any, variant: MeasureVariant, cases: Sequence[Case], seed: int,
                  loader: Loader | None, stop: threading.Event | None = None,
                  tick: Callable[[Case], None] = lambda case: None) -> list[CaseResult]:
    """One fresh database: load and measure each case (`tick` after each); PostgreSQL/TimescaleDB
    again after CLUSTER."""
    backend = get_backend(backend_name, endpoint, f"hdbdisk_{backend_name[:5]}_{uuid.uuid4().hex[:8]}")
    backend.create_schema(variant.schema)
    try:
        tables = [table_for(backend, c) for c in cases]
        apply_storage(backend, tables, variant.storage)
        backend.prepare_sizes(tables)
        defs = {t.name: t for t in backend.expected_tables(variant.schema)}
        results = []
        for case in cases:
            results.append(measure_case(backend, variant.name, case, seed, loader, defs, stop))
            tick(case)
        if backend.separate_clustering:
            backend.cluster()
            clustered = backend.table_sizes(tables)
            results += [replace(r, variant=f"{variant.name},clustered", points=[replace(r.points[-1], size=size)],
                                logs={}, fixed_from=r.fit()) for r, size in zip(list(results), clustered)]
        return results
    finally:
        backend.drop_schema()


@dataclass
class VariantOutcome:
    backend: str
    variant: str
    results: list[CaseResult] = field(default_factory=list)
    unavailable: str | None = None


def measure_variant(backend_name: str, endpoint: Any, variant_text: str, cases: Sequence[Case], seed: int = 42,
                    loader: Loader | None = None, stop: threading.Event | None = None,
                    tick: Callable[[Case], None] = lambda case: None) -> VariantOutcome:
    """Every case of one backend and variant, round by round (`tick` after each case); an unavailable
    storage variant is reported."""
    variant = MeasureVariant.parse(backend_name, variant_text)
    if variant.clustered:
        raise ConfigError(f"variant {variant_text!r}: give it without 'clustered'; every {backend_name} "
                          "variant is measured before and after CLUSTER")
    outcome = VariantOutcome(backend_name, variant.name)
    probe = get_backend(backend_name, endpoint, "probe")  # no database: names tables, asks the server
    outcome.unavailable = storage_unavailable(probe, variant.storage)
    if outcome.unavailable:
        return outcome
    for group in rounds(probe, cases):
        _check(stop)
        try:
            outcome.results += measure_round(backend_name, endpoint, variant, group, seed, loader, stop, tick)
        except SchemaError as exc:
            raise SchemaError(f"{backend_name} {variant.name}: {exc}") from exc
        except Exception as exc:
            if variant.storage and _is_server_error(exc):
                outcome.unavailable = f"{variant.storage}: the server refused it: {str(exc).splitlines()[0]}"
                outcome.results = []
                return outcome
            raise
    return outcome


def _is_server_error(exc: Exception) -> bool:
    """An error the database driver raised (the server refused a statement), not one of ours."""
    return not type(exc).__module__.startswith(("hdbbench", "builtins"))


# ------------------------------------------------------------------------------ array fits


def array_fits(rows: Sequence[CaseSize]) -> list[ArrayFit]:
    """marginal bytes/event = a + b * elements per (backend, variant, type, format, write), from >= 2
    array sizes whose own fits are linear."""
    groups: dict[tuple[str, ...], list[CaseSize]] = {}
    for r in rows:
        if r.case_format != "scalar" and r.usable:
            key = (r.backend, r.variant, r.case_type, r.case_format, r.case_write)
            groups.setdefault(key, []).append(r)
    fits = []
    for key, items in sorted(groups.items()):
        sizes = sorted({i.case_elements for i in items})
        if len(sizes) < 2:
            continue
        fit = fit_line([i.case_elements for i in items], [i.bytes_per_event or 0.0 for i in items])
        fits.append(ArrayFit(backend=key[0], variant=key[1], type=key[2], format=key[3], write=key[4], elements=sizes,
                             a_bytes=fit.intercept, b_bytes_per_element=fit.slope, r2=fit.r2))
    return fits

# SPDX-License-Identifier: Apache-2.0
"""Measuring cases: each in its own table of a fresh database, sizes before and after the load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any
import math
import uuid

from hdbbench.backends import get_backend
from hdbbench.backends.base import Backend
from hdbbench.backends.model import TableDef, TableSize
from hdbbench.disk.cases import Case, Loader, Tally, bulk_loader, case_attributes, case_batches, start_time
from hdbbench.disk.variants import MeasureVariant, apply_storage, storage_unavailable
from hdbbench.errors import ConfigError, SchemaError
from hdbbench.hdbtypes import AttrFormat, AttributeInfo


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


@dataclass
class CaseResult:
    backend: str
    variant: str
    case: Case
    table: str
    events: int
    rows: int
    raw_bytes: int
    before: TableSize
    after: TableSize
    logs: dict[str, int | None] = field(default_factory=dict)
    min_row_bytes: float | None = None  # documented minimum per stored row (average)

    def delta(self, part: str) -> int:
        return int(getattr(self.after, part)) - int(getattr(self.before, part))

    def per_event(self, part: str) -> float:
        return self.delta(part) / self.events if self.events else math.nan

    def to_dict(self) -> dict[str, Any]:
        ev = self.events or 1
        disk = self.delta("disk_bytes")
        data_per_row = (self.delta("data_bytes")) / self.rows if self.rows else math.nan
        return {
            "backend": self.backend, "variant": self.variant, **{f"case_{k}": v for k, v in self.case.to_dict().items()},
            "table": self.table, "engine": self.after.engine, "parts": self.after.parts,
            "events": self.events, "rows": self.rows, "raw_bytes": self.raw_bytes,
            "before": size_dict(self.before), "after": size_dict(self.after),
            "bytes_per_event": disk / ev,
            "data_per_event": self.per_event("data_bytes"), "index_per_event": self.per_event("index_bytes"),
            "toast_per_event": self.per_event("toast_bytes"), "free_per_event": self.per_event("free_bytes"),
            "total_per_event": self.per_event("total_bytes"),
            "raw_per_event": self.raw_bytes / ev,
            "ratio_disk_to_raw": disk / self.raw_bytes if self.raw_bytes else math.nan,
            "overhead_per_event": (disk - self.raw_bytes) / ev,
            "data_per_row": data_per_row,
            "documented_min_row_bytes": self.min_row_bytes,
            "row_overhead_bytes": data_per_row - self.min_row_bytes if self.min_row_bytes is not None else None,
            "log_bytes": dict(self.logs),
            "log_per_event": {k: (v / ev if v is not None else None) for k, v in self.logs.items()},
        }


def size_dict(size: TableSize) -> dict[str, Any]:
    return asdict(size) | {"disk_bytes": size.disk_bytes}


def _log_delta(before: dict[str, int | None], after: dict[str, int | None]) -> dict[str, int | None]:
    return {k: (after.get(k) - v if v is not None and after.get(k) is not None else None)  # type: ignore[operator]
            for k, v in before.items()}


def measure_case(backend: Backend, variant: str, case: Case, seed: int, loader: Loader,
                 table_defs: dict[str, TableDef]) -> CaseResult:
    """Size of the case's table before and after loading the case's events."""
    table = table_for(backend, case)
    prefix = f"tango://disk:10000/{uuid.uuid4().hex[:8]}"
    infos = case_attributes(case, prefix)
    tally = Tally()
    before = backend.table_sizes([table])[0]
    logs0 = backend.log_positions()
    stored = loader(backend, infos, case_batches(case, infos, seed, start_time([case]), tally))
    after = backend.table_sizes([table])[0]
    logs1 = backend.log_positions()
    minimum = backend.documented_row_minimum(table_defs[table], prefix)
    rows = tally.element_rows if backend.row_per_element and case.format != AttrFormat.SCALAR else stored
    return CaseResult(backend.name, variant, case, table, stored, rows, tally.raw_bytes, before, after,
                      _log_delta(logs0, logs1), minimum[1] if minimum else None)


def measure_round(backend_name: str, endpoint: Any, variant: MeasureVariant, cases: Sequence[Case], seed: int,
                  loader: Loader) -> list[CaseResult]:
    """One fresh database: load and measure each case; PostgreSQL/TimescaleDB again after CLUSTER."""
    backend = get_backend(backend_name, endpoint, f"hdbdisk_{backend_name[:5]}_{uuid.uuid4().hex[:8]}")
    backend.create_schema(variant.schema)
    try:
        tables = [table_for(backend, c) for c in cases]
        apply_storage(backend, tables, variant.storage)
        defs = {t.name: t for t in backend.expected_tables(variant.schema)}
        results = [measure_case(backend, variant.name, c, seed, loader, defs) for c in cases]
        if backend.separate_clustering:
            backend.cluster()
            clustered = backend.table_sizes(tables)
            results += [replace(r, variant=f"{variant.name},clustered", after=size, logs={})
                        for r, size in zip(list(results), clustered)]
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
                    loader: Loader = bulk_loader) -> VariantOutcome:
    """Every case of one backend and variant, round by round; an unavailable storage variant is reported."""
    variant = MeasureVariant.parse(backend_name, variant_text)
    if variant.clustered:
        raise ConfigError(f"variant {variant_text!r}: give it without 'clustered'; every PostgreSQL/TimescaleDB "
                          "variant is measured before and after CLUSTER")
    outcome = VariantOutcome(backend_name, variant.name)
    probe = get_backend(backend_name, endpoint, "probe")  # no database: names tables, asks the server
    outcome.unavailable = storage_unavailable(probe, variant.storage)
    if outcome.unavailable:
        return outcome
    for group in rounds(probe, cases):
        try:
            outcome.results += measure_round(backend_name, endpoint, variant, group, seed, loader)
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


def array_fits(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """bytes/event = a + b * elements per (backend, variant, type, format, write), from >= 2 sizes."""
    from hdbbench.measure import fit_line

    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        if r["case_format"] != "scalar":
            key = (r["backend"], r["variant"], r["case_type"], r["case_format"], r["case_write"])
            groups.setdefault(key, []).append(r)
    fits = []
    for key, items in sorted(groups.items()):
        sizes = sorted({i["case_elements"] for i in items})
        if len(sizes) < 2:
            continue
        fit = fit_line([i["case_elements"] for i in items], [i["bytes_per_event"] for i in items])
        fits.append({"backend": key[0], "variant": key[1], "type": key[2], "format": key[3], "write": key[4],
                     "elements": sizes, "a_bytes": fit.intercept, "b_bytes_per_element": fit.slope, "r2": fit.r2})
    return fits

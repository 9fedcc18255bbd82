# SPDX-License-Identifier: Apache-2.0
"""`size validate`: does the default-scale fit hold at ten million rows and more?

For each backend and variant, scalar devdouble (READ) is first measured as `size measure` does at
the default scale (`fit_events`, sizes spanning `span` x, time order): fixed + marginal x events.
Then a fresh database is loaded with `rows` events of the same case, once in time order (as a
subscriber stores them) and once in primary-key order (a dump reloaded), and its table measured.
The projection fixed + marginal x rows is compared with the pages in use (the quantity fitted):
error = projected / measured - 1, target within ±TOLERANCE. The whole files (slack included) are
reported beside it, with their own error, for disk purchases.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.backends import endpoint_for, get_backend
from hdbbench.backends.registry import server_facts
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import TangoType
from hdbbench.parts.disk.cases import Case, Tally, case_attributes, start_time
from hdbbench.parts.disk.columns import column_load
from hdbbench.parts.disk.fit import SizeFit
from hdbbench.parts.disk.inventory import used_bytes
from hdbbench.parts.disk.measure import measure_variant, table_for
from hdbbench.results.disk import SizeValidation, ValidateResults
from hdbbench.results.document import RunDirectory, environment_facts, results_document

TOLERANCE = 0.10
ORDERS = ("time", "pk")
VARIANTS = ("pk", "pk+2")


@dataclass(frozen=True)
class Validation:
    backend: str
    variant: str
    order: str
    rows: int
    fixed_bytes: float
    marginal_bytes_per_event: float
    fit_sizes: tuple[int, ...]
    projected_bytes: float
    measured_bytes: int  # pages in use
    file_bytes: int      # whole files, slack included

    @property
    def error(self) -> float:
        return self.projected_bytes / self.measured_bytes - 1.0 if self.measured_bytes else float("nan")

    @property
    def file_error(self) -> float:
        return self.projected_bytes / self.file_bytes - 1.0 if self.file_bytes else float("nan")

    @property
    def within_tolerance(self) -> bool:
        return abs(self.error) <= TOLERANCE

    def record(self) -> SizeValidation:
        """As results.json keeps it."""
        return SizeValidation(backend=self.backend, variant=self.variant, order=self.order, rows=self.rows,
                              fixed_bytes=self.fixed_bytes, marginal_bytes_per_event=self.marginal_bytes_per_event,
                              fit_sizes=list(self.fit_sizes), projected_bytes=self.projected_bytes,
                              measured_bytes=self.measured_bytes, file_bytes=self.file_bytes, error=self.error,
                              file_error=self.file_error,
                              measured_bytes_per_event=self.measured_bytes / self.rows if self.rows else None,
                              within_tolerance=self.within_tolerance)


def default_scale_fit(backend: str, endpoint: Any, variant: str, fit_events: int, span: float, attributes: int,
                      seed: int) -> SizeFit:
    """The fit `size measure` makes of scalar devdouble at the default scale (before any CLUSTER)."""
    case = Case(TangoType.DEV_DOUBLE, events=fit_events, attributes=attributes, span=span)
    outcome = measure_variant(backend, endpoint, variant, [case], seed)
    return next(r for r in outcome.results if r.variant == outcome.variant).fit()


def load_and_measure(backend_name: str, endpoint: Any, variant: str, rows: int, attributes: int, order: str,
                     seed: int) -> tuple[int, int]:
    """(pages in use, whole files) of scalar devdouble after `rows` events loaded in `order`."""
    case = Case(TangoType.DEV_DOUBLE, events=rows, attributes=attributes)
    backend = get_backend(backend_name, endpoint, f"hdbval_{backend_name[:5]}_{uuid.uuid4().hex[:8]}")
    backend.create_schema(variant)
    try:
        table = table_for(backend, case)
        backend.prepare_sizes([table])
        before = backend.table_sizes([table])[0]
        infos = case_attributes(case, f"tango://validate:10000/{uuid.uuid4().hex[:8]}")
        column_load(backend, case, infos, seed, start_time([case]), 0, rows, Tally(), order)
        after = backend.table_sizes([table])[0]
        return used_bytes(after) - used_bytes(before), after.disk_bytes - before.disk_bytes
    finally:
        backend.drop_schema()


def validate(endpoints: Any, backends: Sequence[str], variants: Sequence[str], orders: Sequence[str], rows: int,
             fit_events: int, span: float, attributes: int, seed: int,
             progress: Callable[[str], None] = lambda line: None) -> list[Validation]:
    for order in orders:
        if order not in ORDERS:
            raise ConfigError(f"unknown load order {order!r} (known: {', '.join(ORDERS)})")
    if rows <= fit_events:
        raise ConfigError(f"--rows {rows} must exceed --fit-events {fit_events}: validation extrapolates the fit")
    out = []
    for backend in backends:
        endpoint = endpoint_for(backend, endpoints)
        if endpoint is None:
            raise ConfigError(f"backend {backend}: the stack has no server for it")
        for variant in variants:
            progress(f"validate: {backend} {variant}: fit at {fit_events} events ...")
            fit = default_scale_fit(backend, endpoint, variant, fit_events, span, attributes, seed)
            for order in orders:
                progress(f"validate: {backend} {variant}: {rows} rows in {order} order ...")
                used, files = load_and_measure(backend, endpoint, variant, rows, attributes, order, seed)
                out.append(Validation(backend, variant, order, rows, fit.fixed_bytes, fit.marginal_bytes_per_event,
                                      fit.sizes, fit.at(rows), used, files))
    return out


CSV_COLUMNS = ("backend", "variant", "order", "rows", "fixed_bytes", "marginal_bytes_per_event", "projected_bytes",
               "measured_bytes", "error", "file_bytes", "file_error", "within_tolerance")


def write_validation(runs_root: Path, name: str, endpoints: Any, settings: dict[str, Any],
                     results: list[Validation]) -> Path:
    run = RunDirectory.create(runs_root, name)
    rows = [v.record() for v in results]
    run.write_json("results.json", results_document(
        "disk-validate", settings, environment_facts(server_facts(endpoints)),
        ValidateResults(validations=rows, tolerance=TOLERANCE,
                        measured="pages in use (allocated blocks of sparse files); file_bytes: whole files, slack "
                                 "included")))
    run.write_csv("validate.csv", CSV_COLUMNS, ([getattr(r, c) for c in CSV_COLUMNS] for r in rows))
    run.set_status("completed")
    return run.path

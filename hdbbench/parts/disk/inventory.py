# SPDX-License-Identifier: Apache-2.0
"""A whole inventory loaded into one database: what `size plan --check` compares a projection with.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hdbbench.backends import get_backend
from hdbbench.backends.model import TableSize
from hdbbench.parts.disk.cases import Case, Loader, Tally, case_attributes, start_time
from hdbbench.parts.disk.measure import load_range, table_bytes, table_for
from hdbbench.parts.disk.variants import MeasureVariant, apply_storage, storage_unavailable
from hdbbench.results.disk import InventoryGroup, InventoryLoad, TableChange

# ------------------------------------------------------------------------- inventory runs


@dataclass
class InventoryRun:
    """A whole inventory loaded into one database: what `size plan --check` compares against."""

    backend: str
    variant: str
    groups: list[InventoryGroup]
    before: list[TableSize]
    after: list[TableSize]
    unavailable: str | None = None

    @property
    def measured_bytes(self) -> int:
        """Pages in use (allocated blocks of sparse files), as the cases' fits count them."""
        return sum(used_bytes(a) - used_bytes(b) for a, b in zip(self.after, self.before))

    @property
    def disk_bytes(self) -> int:
        """Whole files, slack included."""
        return sum(a.disk_bytes - b.disk_bytes for a, b in zip(self.after, self.before))

    def record(self) -> InventoryLoad:
        """The run as disk.json keeps it (``results.inventory_runs[]``)."""
        return InventoryLoad(backend=self.backend, variant=self.variant, groups=list(self.groups),
                             tables=[TableChange(before=table_bytes(b), after=table_bytes(a))
                                     for b, a in zip(self.before, self.after)],
                             measured_bytes=self.measured_bytes, disk_bytes=self.disk_bytes, unavailable=self.unavailable)


def used_bytes(size: TableSize) -> int:
    if size.allocated_bytes is not None:
        return size.allocated_bytes
    return size.data_bytes + size.index_bytes + size.toast_bytes


def measure_inventory(backend_name: str, endpoint: Any, variant_text: str, groups: Sequence[tuple[str, Case]],
                      seed: int = 42, loader: Loader | None = None,
                      then_clustered: bool = False) -> list[InventoryRun]:
    """Load every (label, case) of an inventory into one fresh database; sizes of all its tables
    before/after. `then_clustered` (a backend that clusters apart, a variant not clustered): the same
    database again after CLUSTER, as a second run "<variant>,clustered": the same rows, one load."""
    variant = MeasureVariant.parse(backend_name, variant_text)
    run = InventoryRun(backend_name, variant.name, [], [], [])
    backend = get_backend(backend_name, endpoint, f"hdbdisk_{backend_name[:5]}_{uuid.uuid4().hex[:8]}")
    run.unavailable = storage_unavailable(backend, variant.storage)
    if run.unavailable:
        return [run]
    backend.create_schema(variant.schema)
    try:
        tables = list(dict.fromkeys(table_for(backend, c) for _, c in groups))
        apply_storage(backend, tables, variant.storage)
        backend.prepare_sizes(tables)
        run.before = backend.table_sizes(tables)
        t0 = start_time([c for _, c in groups])
        for label, case in groups:
            infos = case_attributes(case, f"tango://disk:10000/{uuid.uuid4().hex[:8]}")
            stored = load_range(backend, case, infos, seed, t0, 0, case.events, Tally(), loader)
            run.groups.append(InventoryGroup(label=label, case=case.shape(), events=stored))
        if variant.clustered:
            backend.cluster()
        run.after = backend.table_sizes(tables)
        if not then_clustered or variant.clustered or not backend.separate_clustering:
            return [run]
        backend.cluster()
        return [run, replace(run, variant=f"{variant.name},clustered", after=backend.table_sizes(tables))]
    finally:
        backend.drop_schema()

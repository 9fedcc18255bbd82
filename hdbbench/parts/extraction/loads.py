# SPDX-License-Identifier: Apache-2.0
"""Extraction's databases, loaded and validated before any query is timed: each backend's in a
process of its own, side by side (hdbbench.parts.side_by_side).

Loading a data set and fetching every query's result once for validation are untimed: they count
rows and check values, and a load beside another changes neither. One after the other they were
half of the default run's extraction (about 60 of its 119 s); side by side, on two cores, 35 s. What
is timed, the queries, then runs one database at a time with nothing beside it (hdbbench.parts.extraction.extraction).
Each load's own seconds (`loads` in the results) are those of a load that shared the machine with
the others: the loads are no insertion benchmark.

The databases are made first, here, one at a time: making one also makes the server's HDB++ roles
(or users) and sets their passwords, server-wide, and two sessions altering the same role at once
fail ("tuple concurrently updated", in a default run). Each process resolves the query set against
its own database's catalogue, and the caller checks that every database gave the same queries (one
data set, the same seed): every backend then runs exactly the same queries, as when they were
resolved once. The validation's checksums come back to the caller, which compares them in the
databases' order (hdbbench.parts.extraction.checksums.Validator).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hdbbench.backends import backend_for_stack
from hdbbench.backends.base import ExtractionBackend, extraction_of
from hdbbench.model.errors import HdbbenchError
from hdbbench.parts.datagen import generate
from hdbbench.parts.extraction.checksums import Checksum, checksum
from hdbbench.parts.extraction.queries import Query, QuerySet, attribute_ids, bind, catalog_of, resolve
from hdbbench.parts.side_by_side import GroupProgress, ItemProgress, side_by_side
from hdbbench.results.extraction import DataLoad


@dataclass
class Loaded:
    """One database, loaded: its load record, the queries resolved against it and, when validated,
    each query's checksum (query id, checksum) in the queries' order."""

    backend: str
    variant: str
    load: DataLoad
    queries: list[Query]
    checksums: list[tuple[str, Checksum]] = field(default_factory=list)


def database_name(prefix: str, backend: str, variant: str) -> str:
    tag = variant.replace("+", "p").replace(",", "_").replace("=", "")
    return f"{prefix}_{backend}_{tag}"


def load_all(qs: QuerySet, endpoints: Any, databases: Sequence[tuple[str, str]], options: Any,
             progress: Any) -> dict[tuple[str, str], Loaded]:
    """Make each (variant, backend) of `databases` here, one at a time, then load (and validate, with
    `options.validate`) them, each backend's in a process of its own; (variant, backend) → Loaded.
    `progress(text, fraction done)`. The caller drops the databases, also on a failure."""
    for variant, name in databases:
        progress(f"{name} {variant}: creating the database", 0.0)
        database = backend_for_stack(name, endpoints, database_name(options.database_prefix, name, variant))
        database.drop_schema()
        database.create_schema(None if variant == "default" else variant)
    backends = list(dict.fromkeys(name for _, name in databases))
    groups = [[name] for name in backends]
    variants = {name: [v for v, n in databases if n == name] for name in backends}
    steps = 2 if options.validate else 1
    tally = GroupProgress(progress, [len(variants[name]) * steps for name in backends])
    work = partial(_load_backend, qs=qs, endpoints=endpoints, variants=variants, options=options)
    loaded = [item for part in side_by_side(groups, work, tally) for item in part]
    return {(item.variant, item.backend): item for item in loaded}


def _load_backend(backends: Sequence[str], progress: ItemProgress, stop: Any, *, qs: QuerySet, endpoints: Any,
                  variants: dict[str, list[str]], options: Any) -> list[Loaded]:
    out: list[Loaded] = []
    for name in backends:
        for variant in variants[name]:
            if stop is not None and stop.is_set():
                raise HdbbenchError("stopped: another part of the extraction failed or was interrupted")
            out.append(_load_one(qs, endpoints, name, variant, options, progress))
    return out


def _load_one(qs: QuerySet, endpoints: Any, name: str, variant: str, options: Any,
              progress: ItemProgress) -> Loaded:
    assert qs.data is not None
    database = backend_for_stack(name, endpoints, database_name(options.database_prefix, name, variant))
    backend = extraction_of(database)
    progress(f"{name} {variant}: generating {qs.data.expected_rows()} events")
    result = generate(backend, qs.data, options.order)
    tables = sorted({backend.table_for(a.info) for a in qs.data.attributes()})
    load = DataLoad(backend=result.backend, database=result.database, order=result.order, events=result.events,
                    seconds=result.seconds, wall_s=result.wall_s, events_per_s=result.events_per_s,
                    size_bytes=result.size_bytes, variant=variant, table_sizes=table_sizes(backend, tables))
    queries = resolve(qs, catalog_of(backend))
    progress.tick(f"{name} {variant}: loaded")
    if not options.validate:
        return Loaded(name, variant, load, queries)
    ids = attribute_ids(backend)
    bound = [bind(backend, q, ids) for q in queries]
    progress(f"{name} {variant}: validating {len(bound)} queries")
    conn = backend.reader()
    try:
        sums = [(bq.query.id, checksum(backend, conn, bq, qs.fetch_rows)) for bq in bound]
    finally:
        conn.close()
    progress.tick(f"{name} {variant}: validated")
    return Loaded(name, variant, load, queries, sums)


def table_sizes(backend: ExtractionBackend, tables: list[str]) -> dict[str, int]:
    """Bytes per data table (Backend.table_sizes), {} where the backend cannot tell."""
    try:
        return {t.table: t.total_bytes for t in backend.table_sizes(tables)}
    except NotImplementedError:
        return {}

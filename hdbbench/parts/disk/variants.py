# SPDX-License-Identifier: Apache-2.0
"""What a disk measurement measures on each backend: index set and schema variant, storage options,
and which variants `--variant` selects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hdbbench.backends import BACKENDS, backend_class
from hdbbench.backends.base import Backend
from hdbbench.model.errors import ConfigError

# The variants each backend is measured in by default (each backend class says which).
DEFAULT_VARIANTS: dict[str, tuple[str, ...]] = {name: backend_class(name).disk_variants for name in BACKENDS}


@dataclass(frozen=True)
class MeasureVariant:
    """`pk` | `pk+2` (+ `,partitioned`, `,interval=<N>d`), plus on MariaDB `compressed`,
    `page_compressed` or `myrocks`; PostgreSQL/TimescaleDB variants are also measured after CLUSTER."""

    name: str
    schema: str
    storage: str = ""

    @classmethod
    def parse(cls, backend: str, text: str) -> MeasureVariant:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        owners = storage_owners()
        storage = [p for p in parts if p in owners]
        if len(storage) > 1:
            raise ConfigError(f"variant {text!r}: choose one of {', '.join(owners)}")
        if storage and backend not in owners[storage[0]]:
            raise ConfigError(f"variant {text!r}: {storage[0]} applies to backend {' or '.join(owners[storage[0]])} only")
        schema = ",".join(p for p in parts if p not in owners and p != "clustered")
        if "clustered" in parts and not backend_class(backend).separate_clustering:
            raise ConfigError(f"variant {text!r}: {backend} tables are always clustered by their primary key")
        return cls(",".join(parts), schema, storage[0] if storage else "")

    @property
    def clustered(self) -> bool:
        return "clustered" in self.name.split(",")


def storage_owners() -> dict[str, list[str]]:
    """Storage option name -> the backends that offer it (`Backend.storage_options()`)."""
    owners: dict[str, list[str]] = {}
    for name in BACKENDS:
        for option in storage_of(name):
            owners.setdefault(option, []).append(name)
    return owners


def storage_unavailable(backend: Backend, storage: str) -> str | None:
    """Why a storage option cannot run on this backend's server, or None when it can (or none is asked)."""
    if not storage:
        return None
    options = backend.storage_options()
    if options is None:
        return f"{backend.name} has no storage options"
    return options.unavailable(backend, storage)


def apply_storage(backend: Backend, tables: Sequence[str], storage: str) -> None:
    if storage:
        options = backend.storage_options()
        assert options is not None  # checked by MeasureVariant.parse and storage_unavailable
        options.apply(backend, tables, storage)


# ------------------------------------------------------------------------------------- runs


def variants_for(backends: Sequence[str], given: Sequence[str]) -> dict[str, list[str]]:
    """`--variant pk` applies to every backend; `--variant mysql=pk,myrocks` to one."""
    if not given:
        return {b: list(DEFAULT_VARIANTS[b]) for b in backends}
    chosen: dict[str, list[str]] = {b: [] for b in backends}
    owners = storage_owners()
    for text in given:
        name, sep, variant = text.partition("=")
        if sep and name not in BACKENDS:
            raise ConfigError(f"--variant {text!r}: unknown backend {name!r} (known: {', '.join(BACKENDS)})")
        for b in ([name] if sep else backends):
            v = variant if sep else text
            if b in chosen and not (set(v.split(",")) & (set(owners) - set(storage_of(b)))):
                chosen[b].append(v)
    return chosen


def storage_of(backend: str) -> list[str]:
    options = backend_class(backend).storage_options()
    return [] if options is None else list(options.clauses)

# SPDX-License-Identifier: Apache-2.0
"""Every fault kind's injector, by name: the single-server faults (hdbbench.parts.faults.injectors)
and a replicated cluster's (hdbbench.parts.faults.cluster), which builds on the former."""

from __future__ import annotations

from collections.abc import Callable

from hdbbench.model.errors import ConfigError
from hdbbench.parts.faults import cluster, injectors
from hdbbench.parts.faults.injectors import FaultTarget, Injector

INJECTORS: dict[str, Callable[[FaultTarget], Injector]] = {**injectors.INJECTORS, **cluster.INJECTORS}


def make_injector(kind: str, target: FaultTarget) -> Injector:
    """The injector of `kind` for `target`; an unknown kind is refused naming it and the known ones."""
    factory = INJECTORS.get(kind)
    if factory is None:
        raise ConfigError(f"unknown fault kind {kind!r} (known: {', '.join(sorted(INJECTORS))})")
    return factory(target)

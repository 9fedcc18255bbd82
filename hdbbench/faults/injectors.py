# SPDX-License-Identifier: Apache-2.0
"""Fault injectors: what a fault trial does to a running stack, in four steps.

    arm()     before the load starts (mount a tmpfs, move tables onto it); invisible to the load
    begin()   the fault starts now
    end()     the fault is over; returns once the component accepts work again
    disarm()  undo arm; always called (in a finally), idempotent, also when end() never ran

Each injector keeps `marks`, the wall-clock times (time.time()) of what happened, for the results.
The kinds by name are in `INJECTORS`; `make_injector` builds one for a `FaultTarget`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hdbbench.errors import ConfigError


@dataclass(frozen=True)
class FaultTarget:
    state_dir: Path          # the running stack's state directory (records of its servers)
    backend: str             # registry name of the backend the load writes to
    database: str            # the HDB++ database, e.g. "hdbpp"
    tables: tuple[str, ...]  # data tables the load writes to, e.g. ("att_scalar_devdouble",)
    spool_dir: Path | None = None   # the subscriber's spool directory (for spool_full)
    tmpfs_mb: int = 64       # size of the tmpfs that filesystem faults mount


class Injector(Protocol):
    name: str
    marks: dict[str, float]  # time.time() of what happened: "began", "ended", "back", ...

    def arm(self) -> None: ...
    def begin(self) -> None: ...
    def end(self) -> None: ...
    def disarm(self) -> None: ...


INJECTORS: dict[str, Callable[[FaultTarget], Injector]] = {}


def make_injector(kind: str, target: FaultTarget) -> Injector:
    """The injector of `kind` for `target`; an unknown kind is refused naming it and the known ones."""
    factory = INJECTORS.get(kind)
    if factory is None:
        raise ConfigError(f"unknown fault kind {kind!r} (known: {', '.join(sorted(INJECTORS))})")
    return factory(target)

# SPDX-License-Identifier: Apache-2.0
"""The four kinds of input file, recognised by content, each with the one loader that validates it fully.

    scenario         hdbbench.scenario.scenario.load_scenario      name, backends, [stack], [load], [measurements] ...
    device profile   hdbbench.load.devices.load_profile        [profile], [defaults], [[attribute]], [[matrix]]
    inventory        hdbbench.load.inventory.model.load_inventory       name, retention_days, [[attributes]]
    query set        hdbbench.parts.extraction.queries.load_query_set      [[query]], [data]

`load_input` validates a file of any kind (`hdbbench check`); `load_as` is what a command that takes
one kind calls before anything starts (`run`, `devices up`, `size plan`, `extract`): the same
validation, and a file of another kind is refused by name instead of by its first unknown key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hdbbench.load.devices import load_profile
from hdbbench.load.inventory.model import load_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.tomlfile import read_document
from hdbbench.parts.extraction.queries import load_query_set
from hdbbench.scenario.scenario import load_scenario

KINDS = ("scenario", "device profile", "inventory", "query set")
_MARKS = (  # (kind, top-level keys that only this kind has), most specific first
    ("query set", {"query", "data"}),
    ("device profile", {"profile", "defaults", "attribute", "matrix"}),
    ("inventory", {"attributes", "retention_days"}),
)


def _loaders() -> dict[str, Callable[[Path], Any]]:
    return {"scenario": load_scenario, "device profile": load_profile, "inventory": load_inventory,
            "query set": load_query_set}


def kind_of(path: str | Path) -> str:
    """The kind of input `path` holds (a scenario when no other kind's keys are there)."""
    keys = set(read_document(path, "input").values)
    return next((kind for kind, marks in _MARKS if keys & marks), "scenario")


def load_input(path: str | Path) -> tuple[str, Any]:
    """(kind, validated value) of any input file; ConfigError "file:line: key: problem" on the first problem."""
    kind = kind_of(path)
    return kind, _loaders()[kind](Path(path))


def load_as(path: str | Path, kind: str) -> Any:
    """The validated value of `path`, which must hold a `kind` file; ConfigError in one line otherwise."""
    if kind not in KINDS:
        raise ValueError(f"unknown input kind {kind!r}")
    found = kind_of(path)
    if found != kind:
        raise ConfigError(f"{path}: is {_article(found)} {found} file, not {_article(kind)} {kind} file")
    return _loaders()[kind](Path(path))


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"

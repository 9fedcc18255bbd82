# SPDX-License-Identifier: Apache-2.0
"""The four kinds of input file, recognised by content, each with the one loader that validates it fully.

    scenario         hdbbench.scenario.load_scenario      name, backends, [stack], [load], [measurements] ...
    device profile   hdbbench.devices.load_profile        [profile], [defaults], [[attribute]], [[matrix]]
    inventory        hdbbench.sizing.load_inventory       name, retention_days, [[attributes]]
    query set        hdbbench.queries.load_query_set      [[query]], [data]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hdbbench.tomlfile import read_document

_MARKS = (  # (kind, top-level keys that only this kind has), most specific first
    ("query set", {"query"}),
    ("device profile", {"profile", "defaults", "attribute", "matrix"}),
    ("inventory", {"attributes", "retention_days"}),
)


def _loaders() -> dict[str, Callable[[Path], Any]]:
    from hdbbench.devices import load_profile
    from hdbbench.queries import load_query_set
    from hdbbench.scenario import load_scenario
    from hdbbench.sizing import load_inventory

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

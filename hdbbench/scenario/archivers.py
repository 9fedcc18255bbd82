# SPDX-License-Identifier: Apache-2.0
"""How many archivers an inventory needs on a backend, and which attributes go where.

From a measured figure: the rate one subscriber process of the kind sustains on the backend for
this mix (a run's saturation search: its last sustainable rate over the trial's subscribers), or a
rate the user states. The plan keeps every archiver at most at `headroom` × that rate (default 50 %)
and at most at the kind's safe attribute count (Tango's event consumer limit, hdbbench.subscribers.kinds): the
archiver count is the larger of what the rate and what the attribute count ask for. The attributes
are then dealt by cost, largest first, each to the archiver with the least cost so far that still
has room (the longest-processing-time rule: no archiver ends more than one attribute's cost above
the lightest). Cost is an attribute's events per second; an array's elements are not weighed
(what an element costs on each backend is not measured here).

The plan is written as an inventory with [[archivers]] (the facility scenario runs exactly that
layout: `--validate`), as `AttributeAdd` calls for hdbpp-es or the configuration manager, and as YAML.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.load.facility import MAX_ATTRIBUTES_PER_SUBSCRIBER, facility_specs, plan_facility
from hdbbench.load.inventory.model import Archiver, Group, Inventory
from hdbbench.model.errors import ConfigError
from hdbbench.results.document import read_trials
from hdbbench.subscribers.kinds import OURS, TANGO_SUB_SEND_HWM, TOPICS_PER_ATTRIBUTE

DEFAULT_HEADROOM = 0.5
ARCHIVER_PREFIX = "archiving/hdbpp/es"


@dataclass(frozen=True)
class PlannedArchiver:
    name: str                          # the HdbEventSubscriber device
    attributes: tuple[str, ...]
    rate: float                        # events/s assigned


@dataclass(frozen=True)
class ArchiverPlan:
    backend: str
    kind: str
    sustainable_rate: float            # events/s one archiver of the kind sustains on the backend
    rate_source: str                   # where that figure comes from, in words
    headroom: float
    safe_attributes: int | None
    archivers: tuple[PlannedArchiver, ...]

    @property
    def total_rate(self) -> float:
        return sum(a.rate for a in self.archivers)

    def limits(self) -> str:
        """Why this many archivers, in words."""
        cap = f"{self.headroom:.0%} of {self.sustainable_rate:,.0f} events/s"
        count = f"{self.safe_attributes:,} attributes" if self.safe_attributes else "no attribute limit"
        return f"each archiver at most {cap} ({self.rate_source}) and {count}"


def safe_attributes(kind: str) -> int:
    """The attributes one archiver of `kind` keeps: HDB++'s MAX_ATTRIBUTES_PER_SUBSCRIBER for ours; another
    kind what Tango's event consumer allows (two topics per attribute), if that is fewer."""
    kind_limit = None if kind == OURS else TANGO_SUB_SEND_HWM // TOPICS_PER_ATTRIBUTE
    return min(x for x in (kind_limit, MAX_ATTRIBUTES_PER_SUBSCRIBER) if x is not None)


def attribute_names(inventory: Inventory) -> list[tuple[Group, list[str]]]:
    """Each group with its attributes' names: the archive's where the inventory has them, else those
    the facility scenario gives its simulated attributes at scale 1 in its default layout
    ("device/attribute"), so that a plan of an inventory without names runs as `--validate` lays it out."""
    device_of = {spec.name: plan.name for plan in plan_facility(inventory, 1.0) for spec in plan.specs}
    return [(group, list(group.names) if group.names else [f"{device_of[s.name]}/{s.name}" for s in specs])
            for group, specs in facility_specs(inventory, 1.0)]


def plan_archivers(inventory: Inventory, backend: str, kind: str, sustainable_rate: float, rate_source: str,
                   safe_attributes: int | None, headroom: float = DEFAULT_HEADROOM) -> ArchiverPlan:
    """The plan (the module docstring)."""
    if not (0 < headroom <= 1):
        raise ConfigError(f"headroom must be in (0, 1], got {headroom:g}")
    if sustainable_rate <= 0:
        raise ConfigError(f"the sustainable rate must be > 0 events/s, got {sustainable_rate:g}")
    costs = [(name, group.rate_hz) for group, names in attribute_names(inventory) for name in names]
    cap = headroom * sustainable_rate
    biggest = max(rate for _, rate in costs)
    if biggest > cap:
        raise ConfigError(f"one attribute alone archives {biggest:,.1f} events/s, more than an archiver's "
                          f"{cap:,.1f} events/s at {headroom:.0%} headroom")
    count = max(math.ceil(sum(r for _, r in costs) / cap),
                math.ceil(len(costs) / safe_attributes) if safe_attributes else 1, 1)
    while True:
        dealt = _deal(costs, count, cap, safe_attributes)
        if dealt is not None:
            break
        count += 1  # the rule left an attribute without room: one archiver more
    width = max(2, len(str(count)))
    archivers = tuple(PlannedArchiver(f"{ARCHIVER_PREFIX}-{n + 1:0{width}d}", tuple(names), rate)
                      for n, (names, rate) in enumerate(dealt))
    return ArchiverPlan(backend, kind, sustainable_rate, rate_source, headroom, safe_attributes, archivers)


def _deal(costs: Sequence[tuple[str, float]], count: int, cap: float,
          limit: int | None) -> list[tuple[list[str], float]] | None:
    """Largest cost first, each to the lightest archiver with room; None when one finds none."""
    loads: list[tuple[list[str], float]] = [([], 0.0) for _ in range(count)]
    for name, rate in sorted(costs, key=lambda c: (-c[1], c[0])):
        room = [i for i, (names, load) in enumerate(loads)
                if load + rate <= cap * (1 + 1e-9) and (limit is None or len(names) < limit)]
        if not room:
            return None
        lightest = min(room, key=lambda i: (loads[i][1], len(loads[i][0])))
        names, load = loads[lightest]
        names.append(name)
        loads[lightest] = (names, load + rate)
    return [(sorted(names), load) for names, load in loads]


def planned_inventory(inventory: Inventory, plan: ArchiverPlan) -> Inventory:
    """`inventory` with every group's names and the plan's [[archivers]]: the facility scenario runs it."""
    groups = tuple(dataclasses.replace(group, names=tuple(names)) for group, names in attribute_names(inventory))
    archivers = tuple(Archiver(a.name, a.attributes) for a in plan.archivers)
    return dataclasses.replace(inventory, groups=groups, archivers=archivers)


def attribute_add_lines(plan: ArchiverPlan, tango_host: str | None = None) -> list[str]:
    """One line per attribute: the archiver device, the command, the attribute (a full tango:// name
    when `tango_host` is given and the name is not one)."""
    out = []
    for archiver in plan.archivers:
        for name in archiver.attributes:
            full = name if name.startswith("tango://") or tango_host is None else f"tango://{tango_host}/{name}"
            out.append(f"{archiver.name} AttributeAdd {full}")
    return out


def plan_yaml(plan: ArchiverPlan) -> str:
    """The assignment as YAML: archiver → its attributes, with the figures it was planned from."""
    # deferred: optional; only YAML files need it
    import yaml

    document: dict[str, Any] = {
        "backend": plan.backend, "kind": plan.kind, "sustainable_rate": round(plan.sustainable_rate, 1),
        "rate_source": plan.rate_source, "headroom": plan.headroom,
        "archivers": {a.name: {"rate": round(a.rate, 3), "attributes": list(a.attributes)} for a in plan.archivers}}
    return yaml.safe_dump(document, sort_keys=False, width=120)


def sustainable_from_run(run_dir: Path, backend: str, kind: str) -> tuple[float, str]:
    """One subscriber's sustainable rate on `backend` from a run's saturation search (its last
    sustainable rate over the trial's subscribers), and the words saying so; ConfigError when the run
    has no such figure."""
    path = Path(run_dir) / "results.json"
    try:
        _, results = read_trials(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such results file") from None
    found = [t for t in results.trials if t.backend == backend and t.saturation is not None
             and t.saturation.last_sustainable_rate and (t.subscriber_kind or "hdbbench-es") == kind]
    if not found:
        raise ConfigError(f"{path}: no saturation search on {backend} with subscriber kind {kind} "
                          "(run a scenario with [measurements] saturation first, or give --rate)")
    trial = found[-1]
    assert trial.saturation is not None and trial.saturation.last_sustainable_rate is not None
    rate = float(trial.saturation.last_sustainable_rate) / max(1, trial.subscribers)
    bound = "" if trial.saturation.limited_by == "subscriber" else (
        f"; a lower bound: the search ended on {trial.saturation.limited_by}, not the subscriber")
    return rate, (f"saturation search {trial.label} of {path.parent.name}, over {trial.subscribers} subscriber(s)"
                  + bound)


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)

# SPDX-License-Identifier: Apache-2.0
"""Combining criteria (methodology, "Combining criteria"; seed 000): contestants in rows, criteria in
columns, each column normalised to its best, a weighted sum, a ranking.

Normalisation, per column, over the contestants that have a figure:

* all figures > 0: ratio to the best — ``value / max`` when higher is better, ``min / value`` when
  lower is better — so the best scores 1 and a contestant half as good scores 0.5;
* otherwise (a slope can be zero or negative): min–max scaling, best 1, worst 0.

A contestant without a figure for a criterion scores 0 there (it is shown as missing, never
guessed). A criterion nobody has a figure for is dropped and its weight with it. Weights are
normalised to sum 1, so scores lie in 0..1. Pure functions: no plots, no files.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hdbbench.model.errors import ConfigError


@dataclass(frozen=True)
class Criterion:
    name: str
    label: str
    unit: str
    higher_is_better: bool
    group: str  # throughput | latency | cost | query | disk: the weight sets lean on groups


CRITERIA: tuple[Criterion, ...] = (
    Criterion("stored_median", "median stored rate", "events/s", True, "throughput"),
    Criterion("peak_rate", "peak stored rate in sweeps", "events/s", True, "throughput"),
    Criterion("saturation_rate", "last sustainable rate", "events/s", True, "throughput"),
    Criterion("sustained_share", "sustained share of seconds", "", True, "throughput"),
    Criterion("batch_slope", "rate gain per batch doubling", "events/s", True, "throughput"),
    Criterion("event_age_p99", "event age at commit p99", "s", False, "latency"),
    Criterion("pending_max", "pending queue max", "events", False, "latency"),
    Criterion("cpu_us_per_event", "archiving CPU per event", "µs", False, "cost"),
    Criterion("query_p95_slope", "query p95 slope", "s per day of interval", False, "query"),
    Criterion("query_p95", "query p95 (longest interval)", "s", False, "query"),
    Criterion("bytes_per_event", "disk bytes per event (scalar devdouble, marginal)", "B", False, "disk"),
)
CRITERION_NAMES: tuple[str, ...] = tuple(c.name for c in CRITERIA)
_BY_NAME = {c.name: c for c in CRITERIA}

# Named weight sets: group → weight; a criterion takes its group's weight.
WEIGHT_SETS: dict[str, dict[str, float]] = {
    "balanced": {"throughput": 1, "latency": 1, "cost": 1, "query": 1, "disk": 1},
    "throughput-first": {"throughput": 4, "latency": 1, "cost": 1, "query": 1, "disk": 1},
    "latency-first": {"throughput": 1, "latency": 4, "cost": 1, "query": 1, "disk": 1},
    "query-first": {"throughput": 1, "latency": 1, "cost": 1, "query": 4, "disk": 1},
    "disk-first": {"throughput": 1, "latency": 1, "cost": 1, "query": 1, "disk": 4},
}


def criterion(name: str) -> Criterion:
    return _BY_NAME[name]


def weights_for_set(set_name: str, present: Sequence[str]) -> dict[str, float]:
    groups = WEIGHT_SETS[set_name]
    return {name: float(groups.get(_BY_NAME[name].group, 0.0)) for name in present}


def parse_weights(text: str) -> dict[str, float]:
    """``name=w,name=w`` (command line) into a validated mapping."""
    weights: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep:
            raise ConfigError(f"--weights: {part!r} is not name=weight")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            raise ConfigError(f"--weights: weight of {name.strip()!r} is not a number: {value!r}") from None
    return validate_weights(weights, "--weights")


def validate_weights(weights: Mapping[str, float], where: str) -> dict[str, float]:
    for name, value in weights.items():
        if name not in _BY_NAME:
            raise ConfigError(f"{where}: unknown criterion {name!r}; known: {', '.join(CRITERION_NAMES)}")
        if not math.isfinite(value) or value < 0:
            raise ConfigError(f"{where}: weight of {name!r} must be a number >= 0, got {value!r}")
    if weights and not any(weights.values()):
        raise ConfigError(f"{where}: at least one weight must be > 0")
    return dict(weights)


def _usable(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def normalise(values: Mapping[str, float | None], higher_is_better: bool) -> dict[str, float | None]:
    """One column: contestant → 0..1 (best 1), None where the contestant has no figure."""
    present = {k: float(v) for k, v in values.items() if v is not None and _usable(v)}
    if not present:
        return {k: None for k in values}
    if all(v > 0 for v in present.values()):
        best = max(present.values()) if higher_is_better else min(present.values())
        scaled = {k: (v / best if higher_is_better else best / v) for k, v in present.items()}
    else:
        low, high = min(present.values()), max(present.values())
        span = high - low
        scaled = {k: 1.0 if span == 0 else ((v - low) / span if higher_is_better else (high - v) / span)
                  for k, v in present.items()}
    return {k: scaled.get(k) for k in values}


@dataclass(frozen=True)
class Ranking:
    criteria: tuple[str, ...]                         # columns used (someone had a figure)
    weights: dict[str, float]                         # normalised to sum 1 over `criteria`
    raw: dict[str, dict[str, float | None]]           # contestant → criterion → figure
    normalised: dict[str, dict[str, float | None]]    # contestant → criterion → 0..1
    scores: dict[str, float]                          # contestant → 0..1
    order: tuple[str, ...]                            # best first

    def rank_of(self, contestant: str) -> int:
        return self.order.index(contestant) + 1


def rank(table: Mapping[str, Mapping[str, float | None]], weights: Mapping[str, float]) -> Ranking:
    """Rank contestants (rows of `table`) by the weighted sum of normalised criteria."""
    contestants = list(table)
    used = [name for name in CRITERION_NAMES
            if any(_usable(table[c].get(name)) for c in contestants) and weights.get(name, 0) > 0]
    total = sum(weights[name] for name in used)
    norm_weights = {name: weights[name] / total for name in used} if total else {}
    columns = {name: normalise({c: table[c].get(name) for c in contestants}, _BY_NAME[name].higher_is_better)
               for name in used}
    normalised = {c: {name: columns[name][c] for name in used} for c in contestants}
    scores = {c: sum(norm_weights[name] * (normalised[c][name] or 0.0) for name in used) for c in contestants}
    order = tuple(sorted(contestants, key=lambda c: (-scores[c], c)))
    raw = {c: {name: table[c].get(name) for name in used} for c in contestants}
    return Ranking(tuple(used), norm_weights, raw, normalised, scores, order)


def rank_across_sets(table: Mapping[str, Mapping[str, float | None]],
                     extra: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, Ranking]:
    """The ranking under every named weight set whose emphasis has figures, plus `extra` sets."""
    present = [name for name in CRITERION_NAMES if any(_usable(row.get(name)) for row in table.values())]
    present_groups = {_BY_NAME[name].group for name in present}
    out: dict[str, Ranking] = {}
    for set_name, groups in WEIGHT_SETS.items():
        emphasis = max(groups, key=lambda g: groups[g])
        if set_name != "balanced" and emphasis not in present_groups:
            continue  # "disk-first" without disk figures would just repeat "balanced"
        out[set_name] = rank(table, weights_for_set(set_name, present))
    for set_name, weights in (extra or {}).items():
        out[set_name] = rank(table, weights)
    return out

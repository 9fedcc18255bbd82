# SPDX-License-Identifier: Apache-2.0
"""The growth trial's plan entry (`[measurements] growth`, hdbbench.aging.growth), apart from the
scenario so that the trial takes its plan entry and never reads the scenario."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GrowthLoad:
    """The growth trial: a fixed offered rate from an empty database until it is `until_memory_ratio`
    × the server's memory budget, or `until_bytes` without a budget, or `max_duration_s`, whichever
    comes first; figures per `interval_s`. `memory_bytes`: the scenario's `[stack] memory`, set by the
    plan, for when the stack records no confinement of the server."""

    rate: float = 20000.0
    until_memory_ratio: float = 10.0
    until_bytes: int | None = None
    interval_s: float = 10.0
    max_duration_s: float = 1200.0
    memory_bytes: int | None = None

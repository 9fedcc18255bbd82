# SPDX-License-Identifier: Apache-2.0
"""A scenario's `[measurements]` table: which insertion trials a run makes (throughput, the batch and
subscriber sweeps, the saturation search, the sustained and growth loads), read by hdbbench.scenario.scenario.
"""

from __future__ import annotations

from dataclasses import dataclass

from hdbbench.model.measure import MIN_SATURATION_STEP_S
from hdbbench.model.tomlfile import Table
from hdbbench.parts.aging.settings import parse_growth
from hdbbench.trials.search import MODES, Mode, SearchPlan
from hdbbench.trials.settings import GrowthLoad

MAX_RATE = 1e7            # offered events/s, all attributes together: far above what one machine archives


@dataclass(frozen=True)
class SaturationSearch:
    start_rate: float = 2000.0
    step: float = 0.10
    step_s: float = 10.0
    max_steps: int = 15
    mode: str = "step"           # hdbbench.trials.search.MODES
    resolution: float = 0.05     # bisect: the bracket's hi / lo - 1 at the end
    max_rate: float = MAX_RATE   # bisect: never offered above

    def plan(self) -> SearchPlan:
        mode: Mode = "bisect" if self.mode == "bisect" else "step"
        return SearchPlan(mode=mode, start_rate=self.start_rate, step=self.step, max_steps=self.max_steps,
                          resolution=self.resolution, max_rate=self.max_rate)


@dataclass(frozen=True)
class SustainedLoad:
    rate: float = 2000.0
    duration_s: float = 60.0


@dataclass(frozen=True)
class Measurements:
    throughput: bool = True
    batch_sweep: tuple[int, ...] = ()
    subscriber_sweep: tuple[int, ...] = ()
    saturation: SaturationSearch | None = None
    sustained: SustainedLoad | None = None
    growth: GrowthLoad | None = None


def int_list(reader: Table, key: str) -> tuple[int, ...]:
    return tuple(reader.list_of(key, int, [], minimum=1))


def parse_measurements(reader: Table) -> Measurements:
    throughput = reader.boolean("throughput", True)
    batch_sweep = int_list(reader, "batch_sweep")
    subscriber_sweep = int_list(reader, "subscriber_sweep")
    saturation = None
    if (sat := reader.optional_table("saturation")) is not None:
        step_s = sat.positive("step_s", 10.0)
        if step_s < MIN_SATURATION_STEP_S:
            raise sat.fail("step_s", f"must be >= {MIN_SATURATION_STEP_S:g} s, got {step_s:g}: Elettra's rule needs "
                                     "6 rises of the max-pending figure in a row, sampled at 1 Hz, within a step")
        mode = sat.choice("mode", MODES, "step")
        start_rate = sat.positive("start_rate", 2000.0)
        resolution = sat.number("resolution", 0.05, minimum=0.005, maximum=1.0)
        max_rate = sat.number("max_rate", MAX_RATE, minimum=start_rate, maximum=MAX_RATE)
        if mode == "step" and (sat.has("resolution") or sat.has("max_rate")):
            raise sat.fail("mode", 'resolution and max_rate belong to mode = "bisect" (a stepped search ends '
                                   "after max_steps steps of +step)")
        if mode == "bisect" and sat.has("step"):
            raise sat.fail("step", 'a bisect search has no fixed step: set its resolution (or mode = "step")')
        saturation = SaturationSearch(
            start_rate=start_rate, step=sat.positive("step", 0.10), step_s=step_s,
            max_steps=sat.count("max_steps", 15 if mode == "step" else 20), mode=mode, resolution=resolution,
            max_rate=max_rate)
        sat.finish()
    sustained = None
    if (sus := reader.optional_table("sustained")) is not None:
        sustained = SustainedLoad(rate=sus.positive("rate", 2000.0), duration_s=sus.positive("duration_s", 60.0))
        sus.finish()
    growth = None
    if (gro := reader.optional_table("growth")) is not None:
        growth = parse_growth(gro)
    reader.finish()
    return Measurements(throughput, batch_sweep, subscriber_sweep, saturation, sustained, growth)



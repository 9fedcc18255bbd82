# SPDX-License-Identifier: Apache-2.0
"""``hdbbench run --quick``: a scenario cut down for tuning loops, and said to be so.

The same parts on the same backends with the same seed, each shorter: the trials at half their
duration (never shorter than the warm-up plus 5 s), the batch sweep at its smallest and largest
size, a saturation search at twice its step or resolution (at least 10 %) and at most 12 steps,
extraction warm only on the first variant, disk usage at a quarter of the events on the first
variant. The scenario is recorded with ``quick = true`` and its name ends in ``-quick``, and the
report says so at the top: its figures are for seeing a change's direction, not for comparing with
full runs.
"""

from __future__ import annotations

import math
from dataclasses import replace

from hdbbench.scenario.measurements import Measurements, SaturationSearch
from hdbbench.scenario.scenario import Scenario

MAX_QUICK_STEPS = 12
MIN_DISK_EVENTS = 10_000  # the disk part's smallest fitted size


def _half(duration_s: float, warmup_s: float) -> float:
    return max(warmup_s + 5.0, duration_s / 2)


def _search(sat: SaturationSearch) -> SaturationSearch:
    if sat.mode == "bisect":
        return replace(sat, resolution=max(0.10, 2 * sat.resolution), max_steps=min(sat.max_steps, MAX_QUICK_STEPS))
    # A stepped search keeps its range: twice the step, half the steps.
    steps = max(2, math.ceil(math.log(1 + sat.step) * (sat.max_steps - 1) / math.log(1 + 2 * sat.step)) + 1)
    return replace(sat, step=2 * sat.step, max_steps=min(steps, MAX_QUICK_STEPS))


def quick(scenario: Scenario) -> Scenario:
    """The scenario as `--quick` runs it (see the module docstring)."""
    m = scenario.measurements
    sweep = m.batch_sweep if len(m.batch_sweep) <= 2 else (min(m.batch_sweep), max(m.batch_sweep))
    measurements = Measurements(
        throughput=m.throughput, batch_sweep=tuple(sweep), subscriber_sweep=m.subscriber_sweep,
        saturation=_search(m.saturation) if m.saturation else None,
        sustained=replace(m.sustained, duration_s=_half(m.sustained.duration_s, scenario.warmup_s))
        if m.sustained else None,
        growth=m.growth)
    extraction = scenario.extraction
    if extraction is not None:
        extraction = replace(extraction, cold=False, variants=extraction.variants[:1])
    disk = scenario.disk
    if disk is not None:
        disk = replace(disk, events=max(MIN_DISK_EVENTS, disk.events // 4),
                       variants=disk.variants[:1] if disk.variants else disk.variants)
    return replace(scenario, name=f"{scenario.name}-quick", quick=True, measurements=measurements,
                   duration_s=_half(scenario.duration_s, scenario.warmup_s), extraction=extraction, disk=disk)

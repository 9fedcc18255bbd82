# SPDX-License-Identifier: Apache-2.0
"""What one insertion trial is asked to do: its settings as the plan gives them (hdbbench.scenario.plan),
read by the trial (hdbbench.trials.insertion) and by its figures (hdbbench.trials.figures)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hdbbench.results.aging import HistoryRecord
from hdbbench.results.trials import TrialKind
from hdbbench.subscribers.kinds import DEFAULT_KIND, SubscriberKind
from hdbbench.trials.search import SearchPlan


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



@dataclass(frozen=True)
class TrialSettings:
    """One trial of a run: what it measures (`trial_kind`), on which backend and subscriber kind, at
    which rate and for how long; `label` names its series and database."""

    backend: str
    label: str
    trial_kind: TrialKind
    rate: float
    duration_s: float
    warmup_s: float
    subscribers: int = 1
    lib_overrides: dict[str, str] = field(default_factory=dict)
    schema_variant: str = "pk+2"
    search: SearchPlan | None = None    # a saturation search: its rates chosen step by step (hdbbench.trials.search)
    step_s: float = 0.0
    kind: SubscriberKind = DEFAULT_KIND  # which subscriber (hdbbench.subscribers.kinds): binary, environment
    history: HistoryRecord | None = None  # the aged history it archives onto (None: a fresh database)
    growth: GrowthLoad | None = None     # a growth trial's end and interval (hdbbench.parts.aging.growth)

    @property
    def is_search(self) -> bool:
        return self.search is not None

    @property
    def rate_steps(self) -> tuple[float, ...]:
        """A stepped search's rates after the first (a bisect search chooses its rates as it goes)."""
        if self.search is None or self.search.mode != "step":
            return ()
        return tuple(self.search.step_rates()[1:])

    @property
    def batch_size(self) -> int | None:
        """The LibConfiguration batch_size in force; None when not set (the library's default)."""
        value = str(self.lib_overrides.get("batch_size", "")).strip()
        return int(value) if value.isdigit() else None

# SPDX-License-Identifier: Apache-2.0
"""The record of one insertion trial, as results.json holds it (``results.trials[]``) and the report reads it.

`TrialSummary` is what `hdbbench.trials.insertion.Trial.run` returns, built in one place from typed parts:
the figures of `hdbbench.trials.insertion.summarise` (stored rate, pending queue, event ages, CPU), the
accounting with the loss by reason (`hdbbench.trials.insertion.loss_by_reason`), the saturation search
(`hdbbench.trials.saturation.summary`), the figures read from outside the subscriber
(`hdbbench.trials.outside.kind_figures`) and the placement. The records nest as the JSON nests and are
written and read by hdbbench.model.records, so the file holds exactly what these dataclasses say.

A trial says what it measured: its `kind` (the scenario's ``[measurements]`` entry it belongs to),
its `batch_size` (the LibConfiguration ``batch_size`` in force; None: the library's default), its
number of `subscribers` and its `subscriber_kind` (hdbbench.subscribers.kinds), all set from the trial's
settings. Its `label` names its series file and nothing else is read from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from hdbbench.model.measure import Distribution
from hdbbench.model.records import omitted, write
from hdbbench.results.aging import AgingResults
from hdbbench.results.maintenance import MaintenanceResults

TrialKind = Literal["throughput", "batch_sweep", "subscriber_sweep", "saturation", "sustained", "growth"]
TRIAL_KINDS: tuple[TrialKind, ...] = ("throughput", "batch_sweep", "subscriber_sweep", "saturation", "sustained",
                                      "growth")


# --- figures ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StoredRate(Distribution):
    """The per-second stored rate over the steady part, and the counter it was read from."""

    source: str | None = omitted()   # "database counter" or our subscriber's RowsStoredNumber


@dataclass(frozen=True)
class PendingEvents:
    """HDB++'s AttributePendingNumber (max, p99 over the samples) and AttributeMaxPendingNumber."""

    max: float | None
    p99: float | None
    high_water_mark: float | None = None
    source: str | None = None


@dataclass(frozen=True)
class PendingAge:
    """Our PendingEventAge over the samples (NaN when the kind does not publish it)."""

    max: float
    p99: float


@dataclass(frozen=True)
class AgeFigures:
    """A windowed duration of the subscribers (worst subscriber), read at the steady part's end."""

    window: str
    p50: float | None
    p99: float | None
    max: float | None


@dataclass(frozen=True)
class CpuShare:
    """One process group's (or thread group's) CPU over the steady part."""

    cores: float
    us_per_event: float


@dataclass(frozen=True)
class DatabaseBytes:
    before: int
    after: int
    growth: int


# --- unit costs: what one stored event cost, for a planner to scale to another rate ------------------
@dataclass(frozen=True, kw_only=True)
class ServerWrites:
    """A database server's writes over a window, per stored event, read from outside it."""

    write_bytes_per_s: float | None       # block-layer bytes written by its process tree (or its loop device)
    write_bytes_per_event: float | None
    write_iops: float | None              # write requests completed per second (loop device, or the device holding its data)
    write_ios_per_event: float | None
    log_bytes_per_s: float | None         # WAL (PostgreSQL) / redo (InnoDB) bytes, the server's own counter
    log_bytes_per_event: float | None
    source: str                           # which counters, in words


@dataclass(frozen=True, kw_only=True)
class UnitCosts:
    """What one stored event cost over a window (the trial's steady part, or a saturation step)
    (hdbbench.trials.costs). Events are the trial's stored counter, the one its rates are read from."""

    stored_rate: float                    # events stored per second over the window (the trial's counter)
    window_s: float
    attributes: int                       # attributes archived in the trial
    machine_work_ms: float | None         # median of the pace probe (hdbbench.model.sampling.calibration_ms) over the window
    cpu_cores: dict[str, float]           # per process group: subscribers, devices, each server kind
    cpu_us_per_event: dict[str, float]
    # Per process group: median memory over the window, PSS (a shared page counted once across the group's
    # processes) where it could be read, else the RSS sum (which counts shared buffers once per process).
    memory_bytes: dict[str, float]
    writes: dict[str, ServerWrites]       # per server kind


# --- accounting ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class AttributeCount:
    """One attribute: events its device emitted against rows stored."""

    attribute: str
    emitted: int
    stored: int
    lost: int
    extra: int


@dataclass(frozen=True)
class LostByReason:
    """Where the lost events were lost (hdbbench.trials.insertion.loss_by_reason); a reason without events is absent."""

    left_in_subscriber_queue: int | None = omitted()
    in_subscriber: int | None = omitted()
    event_delivery: int | None = omitted()
    unattributed: int | None = omitted()

    def items(self) -> list[tuple[str, int]]:
        """(reason, events) of the reasons that lost events, in the order they are taken."""
        return [(name, count) for name, count in write(self).items()]

    def total(self) -> int:
        return sum(count for _, count in self.items())


@dataclass(frozen=True)
class NotDrained:
    left_in_subscriber_queue: int
    not_stored: int


@dataclass(frozen=True)
class Accounting:
    """Emitted (the devices' counters) against stored (rows) per attribute, and the loss by reason.
    The loss fields are None in records of runs that did not yet record them."""

    emitted: int
    stored: int
    lost: int
    duplicates: int
    per_attribute: list[AttributeCount]
    lost_by_reason: LostByReason = field(default_factory=LostByReason)
    lost_in_subscriber: int | None = None       # our subscriber's own count; None for a kind without one
    lost_in_event_delivery: int | None = None
    error_events: int | None = None             # error rows stored, read from outside
    missed_event_errors: int | None = None      # of which Tango's "missed events"
    attributes_with_missed_events: int | None = None
    error_events_reported: int | None = None    # HDB++'s AttributeFailureFreq, summed
    not_drained: NotDrained | None = None


# --- the saturation search ----------------------------------------------------------------------
@dataclass
class StepFigures:
    """One step of a saturation search (hdbbench.trials.saturation.Step is the judge's working copy)."""

    offered_rate: float
    start_s: float | None = None
    end_s: float | None = None
    source_rate: float | None = None
    source_behind: bool = False
    stored_rate: float | None = None  # database counter over the step, after its first second
    stored_median: float | None = None  # median of the counter's per-second rates in the step
    emitted_events: int | None = None  # by source time (the devices' counters at the step's bounds)
    stored_events: int | None = None  # rows with source times in the step, after the drain
    lost: int | None = None
    error_events: int | None = None
    visibility_lag_p50_s: float | None = None
    visibility_lag_p99_s: float | None = None
    visibility_lag_growth_s: float | None = None
    max_pending: float | None = None  # HDB++ AttributeMaxPendingNumber at the step's end, if published
    machine_busy: float | None = None  # share of the CPUs of the machine hdbbench ran on busy in the step
    machine_work_ms: float | None = None  # median CPU time of the sampler's fixed work in the step (its pace)
    device_cpu_us: float | None = None  # the devices' CPU per event emitted in the step: fixed work at a given rate
    server_work: list[str] = field(default_factory=list)  # the database's background work that rose in it
    rules: list[str] = field(default_factory=list)
    unit_costs: UnitCosts | None = omitted()  # over the step's window: whether a cost per event holds with rate


@dataclass
class SearchStep(StepFigures):
    """A step as recorded: its figures, whether it saturated, and its error events again under the
    name readers of older runs know."""

    saturated: bool = False
    errors: int | None = None


@dataclass(frozen=True, kw_only=True)
class SaturationSearch:
    """results.json ``saturation`` of a search (hdbbench.trials.saturation.summary): the steps, the last
    sustainable rate and what ended it. `ended_by`, `lost` and `error_events` are empty or None in
    records of runs that did not yet record them."""

    steps: list[SearchStep]
    last_sustainable_rate: float | None
    limited_by: str             # subscriber | source | none (last step reached)
    ended_by: list[str] = field(default_factory=list)  # the rules of the lowest rate above the answer that saturated
    criterion: str
    lost: int | None = None
    error_events: int | None = None
    # How the rates were chosen (hdbbench.trials.search): "step" (Elettra's +step, the answer exact to one
    # step) or "bisect" (bracketed and bisected to `resolution`, hi / lo - 1). Older runs' records
    # lack both (read as None, and written back without them): stepped searches of the scenario's step.
    mode: str | None = omitted()
    resolution: float | None = omitted()


# --- read from outside the subscriber, and what the subscriber said ------------------------------
@dataclass(frozen=True)
class VisibilityLag:
    p50: float | None
    p99: float | None
    max: float | None
    count: int
    resolution_s: float | None
    probe_attributes: int


@dataclass(frozen=True)
class OutsideSummary:
    """The figures read from the database, the same for every subscriber kind (hdbbench.trials.outside)."""

    counter: str
    counter_resolution_s: float
    events_per_row: float
    stored_rate: Distribution
    rows_inserted: int | None
    visibility_lag_s: VisibilityLag
    visibility_poll_failures: int


@dataclass(frozen=True)
class SubscriberReported:
    """What our subscriber said of itself over the same stretch (absent for another kind)."""

    fields: list[str]
    published: bool
    rows_stored: float | None
    stored_rate: Distribution | None


@dataclass(frozen=True)
class KindFigures:
    """The parts of a trial that compare subscriber kinds (hdbbench.trials.outside.kind_figures)."""

    outside: OutsideSummary | None
    subscriber_reported: SubscriberReported


# --- placement ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProcessPlacement:
    pid: int
    name: str
    cpus: str
    thread_cpus: str


@dataclass(frozen=True)
class GroupPlacement:
    cpus: str
    processes: list[ProcessPlacement]


@dataclass(frozen=True)
class ArchivingPath:
    """The subscribers + the trial's database server over the cores they ran on (hdbbench.stack.placement)."""

    cores: str
    core_count: int
    us_per_event: float
    us_per_event_per_core: float
    utilisation_per_core: float


@dataclass(frozen=True)
class PlacementRecord:
    """CPUs requested and observed per group during the trial (hdbbench.stack.placement)."""

    requested: dict[str, str]
    observed: dict[str, GroupPlacement]
    machine_cpus: str
    archiving_path: ArchivingPath | None = None


# --- the trial ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrialFigures:
    """The measured figures of a trial (hdbbench.trials.insertion.summarise)."""

    stored_rate: StoredRate
    pending_events: PendingEvents
    pending_age_s: PendingAge
    event_age_at_commit_s: AgeFigures
    event_age_at_reception_s: AgeFigures
    time_in_subscriber_s: AgeFigures
    cpu: dict[str, CpuShare]
    subscriber_cpu_by_thread: dict[str, CpuShare]
    sustained_share: float | None


@dataclass(frozen=True, kw_only=True)
class TrialSummary:
    """results.json ``results.trials[]``: one insertion trial (see the module docstring)."""

    backend: str
    label: str                     # names series/<label>.csv
    kind: TrialKind
    batch_size: int | None
    offered_rate: float
    subscribers: int
    lib_overrides: dict[str, str]
    duration_s: float
    warmup_s: float
    stored_rate: StoredRate
    pending_events: PendingEvents
    pending_age_s: PendingAge
    event_age_at_commit_s: AgeFigures
    event_age_at_reception_s: AgeFigures
    time_in_subscriber_s: AgeFigures
    cpu: dict[str, CpuShare]                       # per process group
    subscriber_cpu_by_thread: dict[str, CpuShare]  # the subscribers' threads: writer, the rest
    accounting: Accounting
    drained: bool
    sampling_failures: dict[str, Any]
    subscriber_final: dict[str, dict[str, Any]]    # each subscriber's statistics at the end, as read
    database_bytes: DatabaseBytes
    saturation: SaturationSearch | None = omitted()   # the saturation search's trial only
    sustained_share: float | None = omitted()          # the other trials, when they had a steady part
    device_engine: str | None = omitted()              # the devices' generator engine
    placement: PlacementRecord | None = omitted()
    delivery_unproven: int | None = omitted()          # attributes without an event through Tango before the load
    delivery_unproven_cause: str | None = omitted()    # their likely cause (hdbbench.subscribers.kinds)
    subscriber_kind: str
    # The figures read from outside the subscriber, the same for every kind, and which figures above
    # are our subscriber's own statistics (missing for another kind).
    outside: OutsideSummary | None = omitted()
    subscriber_reported: SubscriberReported | None = omitted()
    # A trial whose settings were those of an earlier trial of the run (a sustained load equal to the
    # throughput trial's): that trial's label; its figures and series are that trial's, not run again.
    same_as: str | None = omitted()
    # What a stored event cost over the steady part (CPU, memory, the server's writes and log), read
    # from outside the subscriber: hdbbench.trials.costs. Older runs lack it.
    unit_costs: UnitCosts | None = omitted()


@dataclass(frozen=True, kw_only=True)
class InsertionResults:
    """results.json ``results`` of kind "insertion"."""

    device_engine: str | None = omitted()
    hosts: dict[str, Any] | None = omitted()   # hdbbench.scenario.hosts.describe
    trials: list[TrialSummary]
    # Memory budgets, storage classes, aged histories, load-order and growth trials (hdbbench.parts.aging).
    aging: AgingResults | None = omitted()
    # Maintenance jobs run while archiving, and the aggregate-vs-raw extraction (hdbbench.parts.maintenance).
    maintenance: MaintenanceResults | None = omitted()

# SPDX-License-Identifier: Apache-2.0
"""The run plan: a scenario resolved once, before anything starts, into what ``hdbbench run`` does.

`plan_run(scenario, options)` reads the scenario and nothing reads it after: the plan names the
device servers (a profile's, or an inventory's at its scale, with their phases) and the engine that
serves them, the stack to bring up (settings profile, Tango database, the servers a hosted run is
given), which host runs what, the CPU placement, the subscriber kinds, the insertion trials in the
order they run (per backend, per kind: throughput, batch sweep, subscriber sweep, saturation search,
sustained load) and the other parts with their own settings (faults, extraction, disk usage).

Every refusal the scenario can meet on this machine is made here, before a run directory is
written: a C++ device engine that is not built or cannot serve the devices, faults with components
on other hosts, a hosted run without HDBBENCH_TANGO_HOST, a stack the servers cannot make, a disk or
extraction variant that does not exist. ``hdbbench check --plan`` prints the same plan (`lines`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hdbbench.backends.registry import server_of
from hdbbench.load import devices as launcher
from hdbbench.load import facility
from hdbbench.load.devices import DevicePlan
from hdbbench.load.devices.plan import DevicesPlan
from hdbbench.load.inventory.model import load_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.units import human_bytes
from hdbbench.parts.aging.history import HistorySize
from hdbbench.parts.aging.settings import LoadOrderPart
from hdbbench.parts.disk import default_cases, variants_for
from hdbbench.parts.extraction.extraction import ExtractionOptions
from hdbbench.parts.extraction.queries import load_query_set
from hdbbench.parts.faults.part import FaultsPlan, FaultTrialPlan
from hdbbench.parts.maintenance.jobs import jobs_of
from hdbbench.parts.maintenance.run import MaintenancePlan
from hdbbench.parts.maintenance.trial import MaintenanceTrialPlan
from hdbbench.parts.replica_reads import ReplicaReadsPlan
from hdbbench.scenario import hosts as hosts_layout
from hdbbench.scenario.hosts import HostsLayout
from hdbbench.scenario.scenario import Scenario
from hdbbench.stack.placement import Placement
from hdbbench.stack.servers import registry as servers
from hdbbench.stack.servers.confine.lifecycle import confinement_words, refuse_unenforceable
from hdbbench.stack.settings import resolve_profile
from hdbbench.stack.stack import StackConfig
from hdbbench.subscribers.kinds import SubscriberKind, trial_label
from hdbbench.trials.settings import TrialSettings

if TYPE_CHECKING:
    from hdbbench.load.inventory.model import Inventory
    from hdbbench.parts.disk import Case
    from hdbbench.parts.extraction.queries import QuerySet


@dataclass(frozen=True)
class RunOptions:
    state_dir: Path = Path(".hdbbench")
    runs_root: Path = Path("runs")
    settings_overrides: dict[str, dict[str, str]] | None = None


@dataclass(frozen=True)
class ExtractionPlan:
    query_set: QuerySet
    options: ExtractionOptions
    cold: bool                             # restart the servers before the cold queries


@dataclass(frozen=True)
class DiskPlan:
    cases: tuple[Case, ...]
    variants: tuple[tuple[str, tuple[str, ...]], ...]   # backend -> the variants measured on it
    seed: int
    inventory: Inventory | None = None     # projected from the measured sizes (sizing.json)

    def chosen(self) -> dict[str, list[str]]:
        """The variants as hdbbench.parts.disk.run_measure takes them."""
        return {backend: list(names) for backend, names in self.variants}


@dataclass(frozen=True)
class HistoryPlan:
    """The aged history every insertion trial starts from (hdbbench.parts.aging.history), built per backend
    in the scenario's schema variant, and the load-order measurement (hdbbench.parts.aging.load_order)."""

    size: HistorySize
    variant: str
    seed: int
    backends: tuple[str, ...]
    load_order: LoadOrderPart | None = None


@dataclass(frozen=True)
class RunPlan:
    """Everything a run does, in order (the module docstring)."""

    name: str
    recorded: dict[str, Any] = field(compare=False)   # the resolved scenario as results files record it
    warnings: tuple[str, ...]
    stack: StackConfig
    devices: DevicesPlan
    hosts: HostsLayout
    placement: Placement
    kinds: tuple[SubscriberKind, ...]
    trials: tuple[TrialSettings, ...]      # the insertion trials, in the order they run
    faults: FaultsPlan | None = None
    extraction: ExtractionPlan | None = None
    disk: DiskPlan | None = None
    history: HistoryPlan | None = None
    maintenance: MaintenancePlan | None = None
    replica_reads: ReplicaReadsPlan | None = None

    def lines(self) -> list[str]:
        """The plan in a few lines, as ``hdbbench check --plan`` prints it."""
        return describe(self)


def plan_run(scenario: Scenario, options: RunOptions) -> RunPlan:
    """The scenario resolved into a run plan; ConfigError for anything the run would refuse here."""
    devices = plan_devices(scenario)  # a C++ engine that is not built is refused first
    layout = plan_hosts(scenario, devices.devices)
    # A hosted run starts no server: it uses those whose addresses it is given, and needs Tango's.
    components = _hosted_components(scenario) if layout.distributed else _needed_components(scenario)
    if layout.distributed and scenario.faults is not None:
        raise ConfigError("[faults] kills and restarts local processes: it cannot run with components on other hosts")
    if layout.distributed and scenario.maintenance is not None:
        raise ConfigError("[maintenance] backs up the database server's files on this machine: "
                          "it cannot run with components on other hosts")
    profile = resolve_profile(scenario.profile, options.settings_overrides)
    config = StackConfig(
        state_dir=options.state_dir, profile=profile, tango_db=scenario.tango_db, attached=True, keep_running=True,
        external=servers.external_from_environment(), components=components, confine=scenario.confine,
        serving=dict(scenario.stack_servers),
    )
    refuse_unenforceable(config.confine, config.components, config.external)  # root, controllers, external
    return RunPlan(
        name=scenario.name, recorded=scenario.to_dict(), warnings=scenario.warnings, stack=config,
        devices=devices, hosts=layout, placement=scenario.placement, kinds=scenario.kinds,
        trials=tuple(t for backend in scenario.backends for t in _trials(scenario, backend)),
        replica_reads=ReplicaReadsPlan(scenario.replica_reads, scenario.backends, scenario.lib_configuration)
        if scenario.replica_reads is not None else None,
        faults=_plan_faults(scenario), extraction=_plan_extraction(scenario), disk=_plan_disk(scenario),
        history=_plan_history(scenario, devices), maintenance=_plan_maintenance(scenario),
    )


def _needed_components(scenario: Scenario) -> tuple[str, ...]:
    """The servers a local run starts: Tango's (and what its flavour runs on) and those of its backends.
    A server no backend uses would only add its idle CPU to the run's samples."""
    tango = servers.kind("tango")
    wanted = {tango.name, *tango.needs.get(scenario.tango_db, ()), *(server_of(b) or "" for b in scenario.backends)}
    return tuple(k.name for k in servers.SERVER_KINDS if k.name in wanted)


def _hosted_components(scenario: Scenario) -> tuple[str, ...]:
    """A hosted run starts no server: it uses those whose addresses it is given, and needs Tango's
    (the kinds without a process, every stack has)."""
    given = servers.external_from_environment()
    if "tango" not in given:
        used = {server_of(b) for b in scenario.backends}
        others = " / ".join(k.external_env or "" for k in servers.external_kinds()
                            if k.name != "tango" and k.name in used)
        raise ConfigError("a scenario with components on hosts needs the Tango database's address: set "
                          f"{servers.kind('tango').external_env} (and {others} for its backends)")
    return tuple(given)


# --- devices and hosts --------------------------------------------------------------------------


def plan_devices(scenario: Scenario) -> DevicesPlan:
    """The scenario's device servers, with the engine settled (and a C++ engine that is not built, or
    that cannot serve them, refused)."""
    served, devices = _served(scenario)
    if scenario.facility is not None:
        engine = launcher.resolve_engine(scenario.device_engine)  # every facility attribute is pushed
    else:
        engine = launcher.resolve_engine(scenario.device_engine, scenario.device_profile)
    launcher.check_engine(served, engine)
    assignment = None
    if scenario.facility is not None:
        assignment = facility.assignment_of(load_inventory(scenario.facility.inventory), scenario.facility.scale,
                                            devices)
        counts = {scenario.subscribers, *scenario.measurements.subscriber_sweep}
        if assignment is not None and counts != {len(assignment)}:
            raise ConfigError(f"{scenario.facility.inventory}: its [[archivers]] assign the attributes to "
                              f"{len(assignment)} archivers: give [subscribers] count = {len(assignment)} "
                              "and no subscriber_sweep")
    return DevicesPlan(engine=engine, source=str(served.path), devices=devices,
                       scale=scenario.facility.scale if scenario.facility is not None else None, assignment=assignment)


def _served(scenario: Scenario) -> tuple[launcher.Profile, tuple[DevicePlan, ...]]:
    """The devices' attributes as one profile (what the engine must serve) and the device plans: the
    scenario's profile, or its inventory at its scale dealt over the devices with its phases."""
    if scenario.facility is not None:
        inventory = load_inventory(scenario.facility.inventory)
        plans = facility.plan_facility(inventory, scenario.facility.scale, scenario.servers,
                                       scenario.devices_per_server, scenario.seed, phases=scenario.facility.phases)
        return facility.engine_profile(inventory, plans), tuple(plans)
    assert scenario.device_profile is not None
    profile = launcher.load_profile(scenario.device_profile)
    return profile, tuple(launcher.plan_fleet(profile, scenario.servers, scenario.devices_per_server, scenario.seed))


def plan_hosts(scenario: Scenario, devices: Sequence[DevicePlan] | None = None) -> HostsLayout:
    """Which host runs what (`hosts up` on each host reads the same layout). `devices`: the scenario's
    device plans when made already."""
    plans = devices if devices is not None else _served(scenario)[1]
    # The hosts keep as many subscribers ready as the largest trial of the scenario uses.
    pool = max(scenario.subscribers, *scenario.measurements.subscriber_sweep, 1)
    return hosts_layout.deal(scenario.hosts or hosts_layout.Hosts(),
                             tuple(dict.fromkeys(p.server for p in plans)), pool)


# --- the insertion trials -----------------------------------------------------------------------


def _trials(scenario: Scenario, backend: str) -> list[TrialSettings]:
    """The trials a scenario asks for on one backend, in order: every trial for each subscriber kind."""
    trials = []
    for index, kind in enumerate(scenario.kinds):
        for settings in _kind_trials(scenario, backend, kind):
            label = trial_label(backend, index, kind, settings.label.removeprefix(f"{backend}_"))
            trials.append(replace(settings, label=label, kind=kind))
    return trials


def _kind_trials(scenario: Scenario, backend: str, kind: SubscriberKind) -> list[TrialSettings]:
    """The trials a scenario asks for on one backend with one subscriber kind, in order."""
    m = scenario.measurements
    # The kind's LibConfiguration lines are merged over the scenario's; a batch sweep still sets batch_size.
    lib = {**dict(scenario.lib_configuration), **dict(kind.lib_configuration)}
    base = TrialSettings(backend=backend, label=f"{backend}_throughput", trial_kind="throughput", rate=scenario.rate,
                         duration_s=scenario.duration_s, warmup_s=scenario.warmup_s, subscribers=scenario.subscribers,
                         lib_overrides=lib, schema_variant=scenario.schema_variant)
    trials = [base] if m.throughput else []
    # Sweeps are offered above capacity, so the stored rate shows the capacity.
    sweep = replace(base, rate=scenario.rate * 4, duration_s=max(scenario.warmup_s + 5, scenario.duration_s / 2))
    trials += [replace(sweep, label=f"{backend}_batch{batch}", trial_kind="batch_sweep",
                       lib_overrides={**lib, "batch_size": str(batch)}) for batch in m.batch_sweep]
    trials += [replace(sweep, label=f"{backend}_subs{count}", trial_kind="subscriber_sweep", subscribers=count)
               for count in m.subscriber_sweep]
    if m.saturation:
        sat = m.saturation
        search = sat.plan()
        trials.append(replace(base, label=f"{backend}_saturation", trial_kind="saturation", rate=sat.start_rate,
                              search=search, step_s=sat.step_s, warmup_s=0.0,
                              duration_s=sat.step_s * search.expected_steps()))
    if m.sustained:
        trials.append(replace(base, label=f"{backend}_sustained", trial_kind="sustained", rate=m.sustained.rate,
                              duration_s=m.sustained.duration_s))
    if m.growth:  # from an empty database until it has grown (hdbbench.parts.aging.growth); the first interval warms up
        trials.append(replace(base, label=f"{backend}_growth", trial_kind="growth", rate=m.growth.rate,
                              duration_s=m.growth.max_duration_s, warmup_s=m.growth.interval_s,
                              growth=replace(m.growth, memory_bytes=scenario.confine.memory.get(server_of(backend) or ""))))
    return trials


# --- the other parts ----------------------------------------------------------------------------


def _plan_faults(scenario: Scenario) -> FaultsPlan | None:
    """One trial per backend, subscriber kind and fault kind, in that order."""
    part = scenario.faults
    if part is None:
        return None
    trials = tuple(
        FaultTrialPlan(backend=backend, kind=kind, fault=fault, label=trial_label(backend, index, kind, f"fault_{fault}"),
                       schema_variant=scenario.schema_variant, subscribers=scenario.subscribers,
                       lib_overrides=tuple({**dict(scenario.lib_configuration), **dict(kind.lib_configuration)}.items()))
        for backend in scenario.backends for index, kind in enumerate(scenario.kinds) for fault in part.kinds)
    return FaultsPlan(part, trials)


def _plan_maintenance(scenario: Scenario) -> MaintenancePlan | None:
    """One trial per backend that has any of the part's jobs, with those jobs in the part's order,
    archived by the first subscriber kind (the reference)."""
    part = scenario.maintenance
    if part is None:
        return None
    kind = scenario.kinds[0]
    lib = tuple({**dict(scenario.lib_configuration), **dict(kind.lib_configuration)}.items())
    trials = []
    for backend in scenario.backends:
        jobs = tuple(j for j in part.jobs if j in jobs_of(backend))
        if jobs:
            trials.append(MaintenanceTrialPlan(backend=backend, kind=kind, label=trial_label(backend, 0, kind, "maintenance"),
                                               schema_variant=scenario.schema_variant, subscribers=scenario.subscribers,
                                               jobs=jobs, lib_overrides=lib))
    return MaintenancePlan(part, tuple(trials))


def _plan_extraction(scenario: Scenario) -> ExtractionPlan | None:
    """The extraction benchmark on the scenario's backends, its query set read once."""
    part = scenario.extraction
    if part is None:
        return None

    options = ExtractionOptions(backends=scenario.backends, variants=part.variants, cluster=part.cluster)
    options.check()
    return ExtractionPlan(load_query_set(part.query_set), options, part.cold)


MAX_HISTORY_ROWS = 2_000_000_000   # days at the mix's rates beyond this would build for a day or more


def _plan_history(scenario: Scenario, devices: DevicesPlan) -> HistoryPlan | None:
    """The history to build; `days` refused when the mix's rates make it more rows than can be built."""
    part = scenario.history
    if part is None:
        return None
    rate = sum(s.rate_hz for d in devices.devices for s in d.specs if s.mode == "push")
    days = part.size.days
    if days is not None and days * 86400 * rate > MAX_HISTORY_ROWS:
        raise ConfigError(f"{scenario.source}: [history] days: {days:g} days of the mix's {rate:,.0f} events/s "
                          f"are {days * 86400 * rate:,.0f} rows, more than {MAX_HISTORY_ROWS:,}: give rows = <N>")
    return HistoryPlan(part.size, scenario.schema_variant, scenario.seed,
                       scenario.backends, part.load_order)


def _plan_disk(scenario: Scenario) -> DiskPlan | None:
    """Bytes per event of each type on the scenario's backends and, with an inventory, its projection."""
    part = scenario.disk
    if part is None:
        return None

    cases = tuple(default_cases(part.events, part.attributes, list(part.array_sizes)))
    chosen = variants_for(scenario.backends, part.variants)
    return DiskPlan(cases=cases, variants=tuple((b, tuple(v)) for b, v in chosen.items()), seed=scenario.seed,
                    inventory=load_inventory(part.inventory) if part.inventory is not None else None)


# --- the plan in words --------------------------------------------------------------------------


def describe(plan: RunPlan) -> list[str]:
    """A few lines per part, then one line per insertion trial, in the order they run."""
    d = plan.devices
    origin = f"inventory {_shown(d.source)} at scale {d.scale:g}" if d.scale is not None else f"profile {_shown(d.source)}"
    phases = sorted({p.phases for p in d.devices})
    devices = (f"{len(d.servers)} server(s), {len(d.devices)} device(s), {d.attributes:,} attributes from {origin} "
               f"({d.engine} engine, {'/'.join(phases)} phases)")
    stack = (f"{plan.stack.profile.name} settings, Tango database {plan.stack.tango_db}, "
             f"servers {', '.join(plan.stack.components)}{confinement_words(plan.stack.confine, plan.stack.components)}")
    cpus = ", ".join(f"{group}={cpus}" for group, cpus in plan.placement.to_dict().items())
    lines = [f"plan of {plan.name}:",
             f"  devices: {devices}",
             f"  stack: {stack}",
             f"  hosts: {_hosts_line(plan.hosts)}",
             f"  placement: {cpus or 'none'}",
             f"  subscriber kinds: {', '.join(k.name for k in plan.kinds)}",
             f"  insertion trials: {len(plan.trials)}"]
    lines += [f"    {t.label}: {t.backend}, {t.kind.name}, {_rate(t)}, {t.subscribers} subscriber(s)"
              for t in plan.trials]
    if plan.faults is not None:
        part = plan.faults.part
        lines.append(f"  fault trials: {len(plan.faults.trials)}, each at {part.rate:g} events/s, the fault held "
                     f"{part.hold_s:g} s")
        lines += [f"    {t.label}: {t.backend}, {t.kind.name}, {t.fault}" for t in plan.faults.trials]
    if plan.replica_reads is not None:
        r = plan.replica_reads.part
        lines.append(f"  replica reads: {_shown(str(r.query_set))} on a standby by {r.readers} session(s), beside "
                     f"archiving at {r.rate:g} events/s, {r.duration_s:g} s without and with them, on "
                     f"{', '.join(plan.replica_reads.backends)}")
    if plan.extraction is not None:
        x = plan.extraction
        lines.append(f"  extraction: {_shown(x.query_set.source)} on {', '.join(x.options.backends)}, variants "
                     f"{', '.join(x.options.variants)}{', cold' if x.cold else ''}{', cluster' if x.options.cluster else ''}")
    if plan.history is not None:
        h = plan.history
        order = (f", load order at {', '.join(f'{r:,}' for r in h.load_order.rows)} rows of "
                 f"{h.load_order.attributes:,} attributes" if h.load_order is not None else "")
        rate = sum(s.rate_hz for d in plan.devices.devices for s in d.specs if s.mode == "push")
        rows = f" (≈ {h.size.days * 86400 * rate:,.0f} rows)" if h.size.days is not None else ""
        lines.append(f"  history: {h.size.words()}{rows} of the devices' mix per backend"
                     f"{', older chunks reordered' if h.size.cluster else ''}{order}")
    if plan.disk is not None:
        variants = "; ".join(f"{b} {' | '.join(v)}" for b, v in plan.disk.variants)
        sizing = f", sizing of {_shown(plan.disk.inventory.source)}" if plan.disk.inventory is not None else ""
        lines.append(f"  disk: {len(plan.disk.cases)} cases on {variants}{sizing}")
    if plan.maintenance is not None:
        m = plan.maintenance.part
        lines.append(f"  maintenance: one trial per backend at {m.rate:g} events/s, {m.gap_s:g} s quiet before each job")
        lines += [f"    {t.label}: {t.backend}, {', '.join(t.jobs)}" for t in plan.maintenance.trials]
    return lines


def _rate(t: TrialSettings) -> str:
    if t.growth is not None:
        g = t.growth
        until = f"{g.until_memory_ratio:g}× the memory budget"
        if g.memory_bytes:
            until += f" ({human_bytes(g.until_memory_ratio * g.memory_bytes)} of {human_bytes(g.memory_bytes)})"
        elif g.until_bytes:
            until += f" (without one {human_bytes(g.until_bytes)})"
        return (f"growth at {t.rate:g} events/s from an empty database until {until}, at most "
                f"{g.max_duration_s:g} s, intervals of {g.interval_s:g} s")
    if t.search is not None and t.search.mode == "bisect":
        return (f"saturation search from {t.rate:g} events/s, doubling up to {t.search.max_rate:g} then bisecting "
                f"to {t.search.resolution:.0%}, steps of {t.step_s:g} s (at most {t.search.max_steps})")
    if t.search is not None:
        return f"saturation search from {t.rate:g} events/s, {len(t.rate_steps) + 1} steps of {t.step_s:g} s"
    return f"{t.rate:g} events/s for {t.duration_s:g} s (warm-up {t.warmup_s:g} s)"


def _hosts_line(layout: HostsLayout) -> str:
    if not layout.distributed:
        return "every component on this machine"
    h = layout.hosts
    servers_at = ", ".join(f"{servers.kind(kind).label} {h.server(key)}" for key, kind in hosts_layout.SERVER_COMPONENTS.items())
    return (f"{servers_at}, devices {', '.join(h.devices)}, subscribers {', '.join(h.subscribers)}, "
            f"controller {h.controller}")


def _shown(path: str | Path) -> str:
    """A file as the user named it: relative to the working directory when it is under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)

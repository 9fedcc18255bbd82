# SPDX-License-Identifier: Apache-2.0
"""``hdbbench run <scenario>``: stack, devices, subscribers and measurements, then tear-down.

The order of work per backend and subscriber kind (hdbbench.kinds): the throughput trial at the scenario's rate, the batch-size sweep,
the subscriber-count sweep, the saturation search, the sustained-load trial — each only when the
scenario asks for it. Every backend gets the same seeded events (the devices are rewound between
trials). Everything started here is attached to this process and stopped in ``finally``, on
failure and Ctrl-C too; the run directory then says "interrupted" or "failed".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from hdbbench import devices as device_launcher
from hdbbench import hosts as hosts_layout
from hdbbench.errors import ConfigError
from hdbbench.insertion import LoadTarget, Trial, TrialSettings
from hdbbench.progress import TrialProgress, trial_line
from hdbbench.kinds import SubscriberKind, trial_label
from hdbbench.placement import PlacementControl
from hdbbench.results import RunDirectory, RunPart, environment_facts, results_document
from hdbbench.scenario import Scenario
from hdbbench.servers import registry as servers
from hdbbench.settings import resolve_profile
from hdbbench.stack import Stack, StackConfig, recorded_profile

RESULTS_KIND = "insertion"


@dataclass(frozen=True)
class RunOptions:
    state_dir: Path = Path(".hdbbench")
    runs_root: Path = Path("runs")
    settings_overrides: dict[str, dict[str, str]] | None = None


def _trials(scenario: Scenario, backend: str) -> list[TrialSettings]:
    """The trials a scenario asks for on one backend, in order: every trial for each subscriber kind."""
    trials = []
    for index, kind in enumerate(scenario.kinds):
        for settings in _kind_trials(scenario, backend, kind):
            label = trial_label(backend, index, kind, settings.label.removeprefix(f"{backend}_"))
            trials.append(dataclasses.replace(settings, label=label, kind=kind))
    return trials


def _kind_trials(scenario: Scenario, backend: str, kind: SubscriberKind) -> list[TrialSettings]:
    """The trials a scenario asks for on one backend with one subscriber kind, in order."""
    m = scenario.measurements
    # The kind's LibConfiguration lines are merged over the scenario's; a batch sweep still sets batch_size.
    base = dict(backend=backend, duration_s=scenario.duration_s, warmup_s=scenario.warmup_s,
                subscribers=scenario.subscribers,
                lib_overrides={**dict(scenario.lib_configuration), **dict(kind.lib_configuration)},
                schema_variant=scenario.schema_variant)
    trials = []
    if m.throughput:
        trials.append(TrialSettings(label=f"{backend}_throughput", trial_kind="throughput", rate=scenario.rate, **base))  # type: ignore[arg-type]
    sweep_s = max(scenario.warmup_s + 5, scenario.duration_s / 2)
    sweep_rate = scenario.rate * 4  # offered above capacity, so the stored rate shows the capacity
    for batch in m.batch_sweep:
        trials.append(TrialSettings(**{**base, "label": f"{backend}_batch{batch}", "trial_kind": "batch_sweep", "rate": sweep_rate,  # type: ignore[arg-type]
                                       "duration_s": sweep_s,
                                       "lib_overrides": {**base["lib_overrides"], "batch_size": str(batch)}}))  # type: ignore[dict-item]
    for count in m.subscriber_sweep:
        trials.append(TrialSettings(**{**base, "label": f"{backend}_subs{count}", "trial_kind": "subscriber_sweep", "rate": sweep_rate,  # type: ignore[arg-type]
                                       "duration_s": sweep_s, "subscribers": count}))
    if m.saturation:
        sat = m.saturation
        steps = [sat.start_rate * (1 + sat.step) ** k for k in range(1, sat.max_steps)]
        trials.append(TrialSettings(**{**base, "label": f"{backend}_saturation", "trial_kind": "saturation", "rate": sat.start_rate,  # type: ignore[arg-type]
                                       "rate_steps": steps, "step_s": sat.step_s, "warmup_s": 0.0,
                                       "duration_s": sat.step_s * sat.max_steps}))
    if m.sustained:
        trials.append(TrialSettings(**{**base, "label": f"{backend}_sustained", "trial_kind": "sustained", "rate": m.sustained.rate,  # type: ignore[arg-type]
                                       "duration_s": m.sustained.duration_s}))
    return trials


def run_scenario(scenario: Scenario, options: RunOptions, console: Console | None = None) -> Path:
    console = console or Console(stderr=True)
    # The device engine is settled (and a C++ engine that is not built refused) before anything is written.
    engine = _device_engine(scenario)
    hosted = hosts_layout.scenario_hosts(scenario).distributed  # every component runs on its host already
    components = {"components": _hosted_components()} if hosted else {}  # refused before anything is written
    if hosted and scenario.faults is not None:
        raise ConfigError("[faults] kills and restarts local processes: it cannot run with components on other hosts")
    run = RunDirectory.create(options.runs_root, scenario.name)
    run.write_json("scenario.json", scenario.to_dict())
    console.print(f"run directory: {run.path}")
    for warning in scenario.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    profile = resolve_profile(scenario.profile, options.settings_overrides)
    config = StackConfig(
        state_dir=options.state_dir, profile=profile, tango_db=scenario.tango_db, attached=True, keep_running=True,
        external=servers.external_from_environment(), **components,  # type: ignore[arg-type]
    )
    was_up = Stack(config).status()["all_ready"]
    # Servers this run starts die with it; a stack that was up stays up (also when a cold query restarts it).
    stack = Stack(dataclasses.replace(config, attached=not was_up))
    devices_dir = options.state_dir / "devices"
    placement = PlacementControl(scenario.placement, {})
    try:
        with console.status("starting servers..."):
            endpoints = stack.up()
        status = stack.status()
        server_pids = {name: [s["pid"]] for name, s in status["servers"].items()
                       if s.get("pid") and name in servers.archive_kinds()}
        versions = {name: s.get("version") for name, s in status["servers"].items() if servers.kind(name).process}
        assert endpoints.tango is not None
        placement = _placement(scenario, status)
        for group in ("controller", *placement.pids):
            placement.apply(group)
        if hosted:
            with console.status("reaching the device servers on their hosts..."):
                fleet = hosts_layout.hosted_fleet(scenario, endpoints.tango.tango_host, engine)
        else:
            with console.status(f"starting simulated devices ({engine} engine)..."):
                fleet = _start_devices(scenario, endpoints.tango.tango_host, devices_dir, engine)
        load = load_target(fleet, keep_rate_mix=scenario.facility is not None)
        placement.pids["devices"] = load.device_pids
        placement.apply("devices")
        # A stack that was already up is reused as it runs: record the settings in force, not the wish.
        in_force = stack.settings_in_force()
        profile_name = recorded_profile(options.state_dir) or profile.name
        environment = environment_facts(versions, {"profile": profile_name, "servers": in_force,
                                                   "reused_running_stack": was_up})
        run.write_json("environment.json", environment)
        results: dict[str, Any] = {"device_engine": engine, "hosts": hosts_layout.describe(scenario), "trials": []}
        fleet_factory = {"fleet_factory": hosts_layout.HostedSubscribers} if hosted else {}
        with TrialProgress(console) as progress:
            for backend in scenario.backends:
                for settings in _trials(scenario, backend):
                    progress.new_trial(settings.label)
                    trial = Trial(settings, endpoints, load, options.state_dir / "trials", server_pids, progress,
                                  placement=placement, **fleet_factory)
                    summary, series = trial.run()
                    if hosted:  # the devices' and subscribers' processes are on other hosts: not sampled here
                        summary = dataclasses.replace(summary, cpu={}, subscriber_cpu_by_thread={})
                    header, rows = series.as_table()
                    _write_series(run, settings.label, header, rows)
                    results["trials"].append(summary.to_dict())  # hdbbench.trials: the file's contract
                    run.write_json("results.json", results_document(RESULTS_KIND, scenario.to_dict(), environment,
                                                                    results))
                    console.print(trial_line(summary), highlight=False, soft_wrap=True)
        if not results["trials"]:  # a scenario of other parts only: the run directory keeps its layout
            run.write_json("results.json", results_document(RESULTS_KIND, scenario.to_dict(), environment, results))
        if scenario.faults is not None:
            _run_faults(scenario, run, endpoints, load, devices_dir, options.state_dir, environment, console)
        # The placement is the insertion trials': extraction and disk usage run unpinned (and a server
        # a cold query restarts must not inherit the controller's CPUs).
        placement.release(("databases", "tango"))
        if scenario.extraction is not None:
            _run_extraction(scenario, run, endpoints, stack, console)
        if scenario.disk is not None:
            _run_disk(scenario, run, endpoints, console)
        run.set_status("completed")
        console.print(f"results: {run.path / 'results.json'}")
        return run.path
    except KeyboardInterrupt:
        run.set_status("interrupted", error="interrupted by the user (Ctrl-C or SIGTERM)")
        raise
    except BaseException as exc:
        run.set_status("failed", error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        raise
    finally:
        device_launcher.down(devices_dir)
        # A stack that stays up gets every CPU back; the controller its own CPUs.
        placement.release(("databases", "tango") if was_up else ())
        if not was_up:
            stack.down()


def _hosted_components() -> tuple[str, ...]:
    """A hosted run starts no server: it uses those whose addresses it is given, and needs Tango's
    (the kinds without a process, every stack has)."""
    given = servers.external_from_environment()
    if "tango" not in given:
        others = " / ".join(k.external_env or "" for k in servers.external_kinds() if k.name != "tango")
        raise ConfigError("a scenario with components on hosts needs the Tango database's address: set "
                          f"{servers.kind('tango').external_env} (and {others} for its backends)")
    return tuple(given)


def _device_engine(scenario: Scenario) -> str:
    """The device engine, settled (and a C++ engine that is not built refused) before anything is written."""
    if scenario.facility is not None:
        from hdbbench import facility
        from hdbbench.sizing import load_inventory

        inventory = load_inventory(scenario.facility.inventory)
        plans = facility.plan_facility(inventory, scenario.facility.scale, scenario.servers,
                                       scenario.devices_per_server, scenario.seed,
                                       phases=scenario.facility.phases)
        engine = device_launcher.resolve_engine(scenario.device_engine)  # every facility attribute is pushed
        device_launcher.check_engine(facility.engine_profile(inventory, plans), engine)
        return engine
    assert scenario.device_profile is not None
    engine = device_launcher.resolve_engine(scenario.device_engine, scenario.device_profile)
    device_launcher.check_engine(device_launcher.load_profile(scenario.device_profile), engine)
    return engine


def _start_devices(scenario: Scenario, tango_host: str, devices_dir: Path, engine: str) -> Any:
    """The scenario's device servers: its profile's, or its inventory's at its scale."""
    if scenario.facility is not None:
        from hdbbench import facility

        return facility.up(tango_host, scenario.facility.inventory, scenario.facility.scale,
                           servers=scenario.servers, devices_per_server=scenario.devices_per_server,
                           seed=scenario.seed, engine=engine, phases=scenario.facility.phases,
                           state_dir=devices_dir, tie_to_parent=True)
    return device_launcher.up(tango_host, scenario.device_profile, servers=scenario.servers,
                              devices_per_server=scenario.devices_per_server, seed=scenario.seed,
                              state_dir=devices_dir, tie_to_parent=True, engine=engine)


def _placement(scenario: Scenario, status: dict[str, Any]) -> PlacementControl:
    """The run's placement with the stack's servers (a server given by URL has no pid: not placed)."""
    pids: dict[str, list[int]] = {}
    groups = servers.placement_groups()
    for name, server in status["servers"].items():
        if server.get("pid") and name in groups:
            pids.setdefault(groups[name], []).append(int(server["pid"]))
    return PlacementControl(scenario.placement, {group: (lambda p=p: p) for group, p in pids.items()})


def _run_faults(scenario: Scenario, run: RunDirectory, endpoints: Any, load: LoadTarget, devices_dir: Path,
                state_dir: Path, environment: dict[str, Any], console: Console) -> None:
    """The faults part (hdbbench.faults.run): faults.json, faults-table.csv and a series per trial."""
    from hdbbench.faults.run import run_faults

    with console.status("faults...") as status:
        run_faults(scenario, run, endpoints, load, devices_dir, state_dir, environment,
                   say=lambda text: status.update(text) if text.startswith("fault ") else console.print(text))


def _run_extraction(scenario: Scenario, run: RunDirectory, endpoints: Any, stack: Stack, console: Console) -> None:
    """The extraction benchmark on the scenario's backends; its results become extraction.json."""
    from hdbbench.extraction import ExtractionOptions, run_extraction
    from hdbbench.queries import load_query_set

    part = scenario.extraction
    assert part is not None
    options = ExtractionOptions(backends=scenario.backends, variants=part.variants, cluster=part.cluster)
    with console.status("extraction...") as status:
        run_extraction(load_query_set(part.query_set), endpoints, options, run.path, stack if part.cold else None,
                       progress=lambda text: status.update(f"extraction: {text}"), into=RunPart(run, "extraction"))


def _run_disk(scenario: Scenario, run: RunDirectory, endpoints: Any, console: Console) -> None:
    """Bytes per event of each type on the scenario's backends (disk.json) and, with an inventory, the
    sizing projection (sizing.json)."""
    from hdbbench import sizing
    from hdbbench.disk import default_cases, run_measure, variants_for
    from hdbbench.results import load_results

    part = scenario.disk
    assert part is not None
    cases = default_cases(part.events, part.attributes, list(part.array_sizes))
    disk = RunPart(run, "disk")
    with console.status("disk usage per type..."):
        run_measure(endpoints, variants_for(scenario.backends, part.variants), cases, scenario.seed, run.path, "disk",
                    progress=console.print, into=disk)
    if part.inventory is not None:
        inventory = sizing.load_inventory(part.inventory)
        projections = sizing.project(inventory, load_results(disk.results_path(), "disk"))
        run.write_json("sizing.json", results_document(
            "disk-plan", {"inventory": inventory.to_dict(), "from": "disk.json"}, {},
            {"projections": projections, "checks": []}))


def _write_series(run: RunDirectory, label: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    (run.path / "series").mkdir(exist_ok=True)
    run.write_csv(f"series/{label}.csv", header, rows)


def load_target(fleet: Any, keep_rate_mix: bool = False) -> LoadTarget:
    """What the insertion trials drive and sample: the fleet's devices and its code-pushed attributes.
    `keep_rate_mix`: attributes of several rates (a facility's mix) keep their proportions when the
    offered total changes; otherwise every attribute gets the same rate."""
    attributes = [f"tango://{fleet.tango_host}/{name}/{spec.name}".lower()
                  for name, plan in fleet.devices.items() for spec in plan.specs if spec.mode == "push"]

    def pids() -> list[int]:
        return [rec.pid for rec in fleet.servers if rec.process() is not None]

    rates = {name: {s.rate_hz for s in plan.specs if s.mode == "push"} for name, plan in fleet.devices.items()}
    mixed = keep_rate_mix and len(set().union(*rates.values())) > 1
    rate_mix = {name: [(rate, [s.name for s in plan.specs if s.mode == "push" and s.rate_hz == rate])
                       for rate in sorted(rates[name])] for name, plan in fleet.devices.items()} if mixed else None
    return LoadTarget(tango_host=fleet.tango_host, devices=list(fleet.devices), attributes=attributes,
                      device_pids=pids, engine=fleet.engine, rate_mix=rate_mix)



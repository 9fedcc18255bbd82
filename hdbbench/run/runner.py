# SPDX-License-Identifier: Apache-2.0
"""``hdbbench run <scenario>``: plan, stack, devices, subscribers and measurements, then tear-down.

The scenario is resolved once into a run plan (hdbbench.scenario.plan), which refuses what cannot run here
before anything is written; then the run directory is made, the stack and the devices come up as
planned and each part runs from its plan entry: the insertion trials in the plan's order (per
backend and subscriber kind: throughput, batch sweep, subscriber sweep, saturation search, sustained
load), then faults, extraction and disk usage. Every backend gets the same seeded events (the
devices are rewound between trials). Everything started here is attached to this process and
stopped in ``finally``, on failure and Ctrl-C too; the run directory then says "interrupted" or "failed".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from hdbbench.load import devices as device_launcher
from hdbbench.load.offered import LoadTarget
from hdbbench.model.errors import ConfigError
from hdbbench.model.records import write
from hdbbench.parts.aging import growth
from hdbbench.parts.aging.part import AgingRun, history_lines, run_history, write_csvs
from hdbbench.parts.disk import run_measure, sizing
from hdbbench.parts.extraction.extraction import run_extraction
from hdbbench.parts.faults.part import FaultsPlan
from hdbbench.parts.faults.run import run_faults
from hdbbench.parts.maintenance.run import run_maintenance
from hdbbench.parts.replica_reads import run_replica_reads
from hdbbench.results import openmetrics
from hdbbench.results.aging import confinement_only
from hdbbench.results.document import RunDirectory, RunPart, environment_facts, load_results, results_document
from hdbbench.scenario import hardware
from hdbbench.scenario import hosts as hosts_layout
from hdbbench.scenario.plan import DiskPlan, ExtractionPlan, RunOptions, RunPlan, plan_run
from hdbbench.scenario.scenario import Scenario
from hdbbench.stack.placement import Placement, PlacementControl
from hdbbench.stack.servers import registry as servers
from hdbbench.stack.servers.confine import lifecycle as confine
from hdbbench.stack.stack import Stack, recorded_profile
from hdbbench.subscribers.kinds import OURS
from hdbbench.trials.costs import without_processes
from hdbbench.trials.progress import PhaseProgress, TrialProgress, trial_line

RESULTS_KIND = "insertion"


def run_scenario(scenario: Scenario, options: RunOptions, console: Console | None = None) -> Path:
    console = console or Console(stderr=True)
    plan = plan_run(scenario, options)  # every refusal happens here, before anything is written
    run = RunDirectory.create(options.runs_root, plan.name)
    run.write_json("scenario.json", plan.recorded)
    console.print(f"run directory: {run.path}")
    for warning in plan.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    was_up = Stack(plan.stack).status()["all_ready"]
    # Servers this run starts die with it; a stack that was up stays up (also when a cold query restarts it).
    stack = Stack(dataclasses.replace(plan.stack, attached=not was_up))
    devices_dir = options.state_dir / "devices"
    placement = PlacementControl(plan.placement, {})
    try:
        with console.status("starting servers..."):
            endpoints = stack.up()
        status = stack.status()
        server_pids: dict[str, Sequence[int]] = {name: [s["pid"]] for name, s in status["servers"].items()
                                                 if s.get("pid") and name in servers.archive_kinds()}
        # A server without one process (the Patroni cluster) still has a version to record.
        versions = {name: s.get("version") for name, s in status["servers"].items()
                    if servers.kind(name).process or s.get("version")}
        assert endpoints.tango is not None
        placement = _placement(plan.placement, status)
        for group in ("controller", *placement.pids):
            placement.apply(group)
        load = _bring_up_devices(plan, endpoints.tango.tango_host, devices_dir, console)
        placement.pids["devices"] = load.device_pids
        placement.apply("devices")
        # A stack that was already up is reused as it runs: record the settings in force, not the wish.
        in_force = stack.settings_in_force()
        profile_name = recorded_profile(options.state_dir) or plan.stack.profile.name
        environment = environment_facts(versions, {"profile": profile_name, "servers": in_force,
                                                   "reused_running_stack": was_up})
        # Memory budgets and storage classes as the kernel enforces them (hdbbench.stack.servers.confine); the
        # insertion results take the same records (InsertionResults.aging: aging.records.confinement_only).
        confinement = stack.confinement()
        environment["confinement"] = confine.confinement_dicts(confinement)
        run.write_json("environment.json", environment)
        aging = _run_history(plan, endpoints, options.state_dir, console, confinement)
        results = _run_insertion(plan, run, endpoints, load, server_pids, placement, environment, options.state_dir,
                                 console, stack, confinement, aging)
        if plan.faults is not None:
            _run_faults(plan.faults, plan.recorded, run, endpoints, load, devices_dir, options.state_dir,
                        environment, console)
        if plan.replica_reads is not None:
            _run_replica_reads(plan.replica_reads, plan.recorded, run, stack, endpoints, load, options.state_dir,
                               environment, console)
        # The placement is the insertion trials': extraction and disk usage run unpinned (and a server
        # a cold query restarts must not inherit the controller's CPUs).
        placement.release(("databases", "tango"))
        if plan.extraction is not None:
            _run_extraction(_on_histories(plan.extraction, aging), run, endpoints, stack, console)
        if plan.disk is not None:
            _run_disk(plan.disk, run, endpoints, console)
        if plan.maintenance is not None:  # last: its jobs change the histories (hdbbench.parts.maintenance.run)
            _run_maintenance(plan, run, results, endpoints, load, options.state_dir, environment, aging, console)
        if plan.disk is not None and plan.disk.inventory is not None:
            _plan_hardware(plan.disk.inventory, run, console)
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


def _bring_up_devices(plan: RunPlan, tango_host: str, devices_dir: Path, console: Console) -> LoadTarget:
    """The planned device servers, started here or (a hosted run) reached on their hosts."""
    engine = plan.devices.engine
    if plan.hosts.distributed:
        with console.status("reaching the device servers on their hosts..."):
            fleet = hosts_layout.hosted_fleet(plan.devices, plan.hosts, tango_host)
    else:
        with console.status(f"starting simulated devices ({engine} engine)..."):
            fleet = device_launcher.up_plans(tango_host, plan.devices.devices, plan.devices.source,
                                             state_dir=devices_dir, tie_to_parent=True, engine=engine)
    return load_target(fleet, keep_rate_mix=plan.devices.keep_rate_mix, assignment=plan.devices.assignment)


def _run_history(plan: RunPlan, endpoints: Any, state_dir: Path, console: Console,
                 confinement: Sequence[Any]) -> AgingRun | None:
    """The aged histories and the load-order measurement (hdbbench.parts.aging.part), before the trials, on
    the servers' memory budgets and storage (`confinement`, read back from the kernel)."""
    if plan.history is None:
        return None
    assert endpoints.tango is not None
    with TrialProgress(console) as progress:
        aging = run_history(plan.history, plan.devices.devices, endpoints.tango.tango_host, endpoints, state_dir,
                            progress, confinement=list(confinement))
    for line in history_lines(aging.results):
        console.print(line, highlight=False, soft_wrap=True)
    return aging


def _run_insertion(plan: RunPlan, run: RunDirectory, endpoints: Any, load: LoadTarget,
                   server_pids: dict[str, Sequence[int]], placement: PlacementControl, environment: dict[str, Any],
                   state_dir: Path, console: Console, stack: Stack | None = None,
                   confinement: Sequence[Any] = (), aging: AgingRun | None = None) -> dict[str, Any]:
    """The planned insertion trials in order, on each backend's aged history when the run built them
    (a growth trial starts from an empty database); results.json rewritten after each (written also
    without any). The aging part holds the servers' confinement (when confined), the histories,
    load-order and growth records."""
    hosted = plan.hosts.distributed
    results: dict[str, Any] = {"device_engine": plan.devices.engine, "hosts": hosts_layout.describe(plan.hosts),
                               "trials": []}
    if aging is not None:
        results["aging"] = write(dataclasses.replace(aging.results, confinement=list(confinement)))
        write_csvs(run, aging.results)
    elif confinement:
        results["aging"] = write(confinement_only(list(confinement)))
    fleet_factory = {"fleet_factory": hosts_layout.HostedSubscribers} if hosted else {}
    ran: dict[str, tuple[Any, Any]] = {}  # a plain trial's settings (label and kind aside) -> its summary, series
    recorded: list[openmetrics.RecordedSeries] = []  # the series so far, for metrics.om
    with TrialProgress(console) as progress:
        for settings in plan.trials:
            if aging is not None and settings.trial_kind != "growth":
                settings = dataclasses.replace(settings, history=aging.histories[settings.backend])
            if (same := ran.get(_same_load(settings))) is not None:
                # The same load as an earlier trial (the default scenario's sustained load is its
                # throughput trial's): its figures stand for this one, said in the record.
                summary = dataclasses.replace(same[0], label=settings.label, kind=settings.trial_kind,
                                              same_as=same[0].label)
                _write_series(run, settings.label, *same[1])
                results["trials"].append(write(summary))
                run.write_json("results.json", results_document(RESULTS_KIND, plan.recorded, environment, results))
                console.print(trial_line(summary), highlight=False, soft_wrap=True)
                continue
            progress.new_trial(settings.label)
            trial = growth.make_trial(settings, stack, endpoints, load, state_dir / "trials",
                                      server_pids, progress, placement=placement, stack_dir=state_dir,
                                      **fleet_factory)
            summary, series = trial.run()
            if hosted:  # the devices' and subscribers' processes are on other hosts: not sampled here
                summary = dataclasses.replace(summary, cpu={}, subscriber_cpu_by_thread={},
                                              unit_costs=without_processes(summary.unit_costs))
            header, rows = series.as_table()
            _write_series(run, settings.label, header, rows)
            if series.started_epoch is not None:
                recorded.append(openmetrics.RecordedSeries(settings.label, settings.backend, settings.trial_kind,
                                                           series.started_epoch, header, rows))
                openmetrics.write(run.path, recorded)
            if settings.trial_kind in ("throughput", "sustained") and settings.history is None:
                ran.setdefault(_same_load(settings), (summary, (header, rows)))
            results["trials"].append(write(summary))  # hdbbench.results.trials: the file's contract
            growth.keep_record(results, trial, lambda name, head, body: _write_csv(run, name, head, body))
            run.write_json("results.json", results_document(RESULTS_KIND, plan.recorded, environment, results))
            console.print(trial_line(summary), highlight=False, soft_wrap=True)
    if not results["trials"]:  # a scenario of other parts only: the run directory keeps its layout
        run.write_json("results.json", results_document(RESULTS_KIND, plan.recorded, environment, results))
    return results


def _same_load(settings: Any) -> str:
    """What a plain trial measures, its label and kind aside: two trials with the same are one run."""
    return repr(dataclasses.replace(settings, label="", trial_kind="throughput"))


def _placement(placement: Placement, status: dict[str, Any]) -> PlacementControl:
    """The run's placement with the stack's servers (a server given by URL has no pid: not placed)."""
    pids: dict[str, list[int]] = {}
    groups = servers.placement_groups()
    for name, server in status["servers"].items():
        if server.get("pid") and name in groups:
            pids.setdefault(groups[name], []).append(int(server["pid"]))
    return PlacementControl(placement, {group: (lambda p=p: p) for group, p in pids.items()})


def _run_faults(part: FaultsPlan, recorded: dict[str, Any], run: RunDirectory, endpoints: Any, load: LoadTarget,
                devices_dir: Path, state_dir: Path, environment: dict[str, Any], console: Console) -> None:
    """The faults part (hdbbench.parts.faults.run): faults.json, faults-table.csv and a series per trial."""
    with console.status("faults...") as status:
        run_faults(part, recorded, run, endpoints, load, devices_dir, state_dir, environment,
                   say=lambda text: status.update(text) if text.startswith("fault ") else console.print(text))


def _run_replica_reads(plan: Any, recorded: dict[str, Any], run: RunDirectory, stack: Stack, endpoints: Any,
                       load: LoadTarget, state_dir: Path, environment: dict[str, Any], console: Console) -> None:
    """Reads from a standby while the primary archives (hdbbench.parts.replica_reads): replica.json."""
    with console.status("replica reads...") as status:
        run_replica_reads(plan, recorded, run, stack, endpoints, load, state_dir, environment,
                          say=lambda text: status.update(text) if text.startswith("replica ") else console.print(text))


def _run_maintenance(plan: RunPlan, run: RunDirectory, results: dict[str, Any], endpoints: Any, load: LoadTarget,
                     state_dir: Path, environment: dict[str, Any], aging: AgingRun | None, console: Console) -> None:
    """The maintenance part (hdbbench.parts.maintenance.run): its records into results.json, a timeline CSV per trial."""
    assert plan.maintenance is not None
    histories = aging.histories if aging is not None else {}
    with console.status("maintenance...") as status:
        def say(text: str) -> None:
            status.update(text)
            console.print(text, highlight=False)

        run_maintenance(
            plan.maintenance, results,
            lambda: run.write_json("results.json", results_document(RESULTS_KIND, plan.recorded, environment, results)),
            lambda name, head, body: _write_csv(run, name, head, body), endpoints, load, state_dir, histories, say=say)


def _on_histories(part: ExtractionPlan, aging: AgingRun | None) -> ExtractionPlan:
    """With aged histories the extraction part queries them instead of generated data sets."""
    if aging is None:
        return part
    histories = tuple((backend, record.database) for backend, record in aging.histories.items())
    variant = next(iter(aging.histories.values())).variant
    options = dataclasses.replace(part.options, histories=histories, variants=(variant,), cluster=False, validate=False)
    return dataclasses.replace(part, options=options)


def _run_extraction(part: ExtractionPlan, run: RunDirectory, endpoints: Any, stack: Stack, console: Console) -> None:
    """The extraction benchmark on the scenario's backends; its results become extraction.json."""
    with PhaseProgress(console, "extraction") as progress:
        run_extraction(part.query_set, endpoints, part.options, run.path, stack if part.cold else None,
                       progress=progress, into=RunPart(run, "extraction"))


def _run_disk(part: DiskPlan, run: RunDirectory, endpoints: Any, console: Console) -> None:
    """Bytes per event of each type on the scenario's backends (disk.json) and, with an inventory, the
    sizing projection (sizing.json)."""
    disk = RunPart(run, "disk")
    with PhaseProgress(console, "disk usage") as progress:
        run_measure(endpoints, part.chosen(), list(part.cases), part.seed, run.path, "disk",
                    progress=progress, into=disk)
    if part.inventory is not None:
        inventory = part.inventory
        projections = sizing.project(inventory, load_results(disk.results_path(), "disk"))
        run.write_json("sizing.json", results_document(
            "disk-plan", {"inventory": inventory.to_dict(), "from": "disk.json"}, {},
            {"projections": projections, "checks": []}))


def _plan_hardware(inventory: Any, run: RunDirectory, console: Console) -> None:
    """hardware.json: the hardware the disk part's inventory needs on each backend whose trials recorded unit
    costs (hdbbench.scenario.hardware), DEFAULT_YEARS of archive at half of every resource."""
    try:
        made = hardware.plan_hardware(inventory, (), OURS, [run.path], hardware.DEFAULT_YEARS, 0.5,
                                      skip_unmeasured=True)
    except ConfigError as exc:  # e.g. no trial that kept up: the run's other results stand without a plan
        console.print(f"no hardware plan: {exc}", highlight=False, soft_wrap=True)
        return
    if made.backends:
        hardware.write_plan(run.path, made, {"inventory": str(inventory.source), "from": [str(run.path)]})


def _write_series(run: RunDirectory, label: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    _write_csv(run, f"series/{label}.csv", header, rows)


def _write_csv(run: RunDirectory, name: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    (run.path / name).parent.mkdir(parents=True, exist_ok=True)
    run.write_csv(name, header, rows)


def load_target(fleet: Any, keep_rate_mix: bool = False,
                assignment: Sequence[Sequence[str]] | None = None) -> LoadTarget:
    """What the insertion trials drive and sample: the fleet's devices and its code-pushed attributes.
    `keep_rate_mix`: attributes of several rates (a facility's mix) keep their proportions when the
    offered total changes; otherwise every attribute gets the same rate. `assignment`: each
    subscriber's attributes as "device/attribute" (hdbbench.load.facility.assignment_of)."""
    attributes = [f"tango://{fleet.tango_host}/{name}/{spec.name}".lower()
                  for name, plan in fleet.devices.items() for spec in plan.specs if spec.mode == "push"]

    def pids() -> list[int]:
        return [rec.pid for rec in fleet.servers if rec.process() is not None]

    rates = {name: {s.rate_hz for s in plan.specs if s.mode == "push"} for name, plan in fleet.devices.items()}
    mixed = keep_rate_mix and len(set().union(*rates.values())) > 1
    rate_mix = {name: [(rate, [s.name for s in plan.specs if s.mode == "push" and s.rate_hz == rate])
                       for rate in sorted(rates[name])] for name, plan in fleet.devices.items()} if mixed else None
    dealt = ([[f"tango://{fleet.tango_host}/{path}" for path in names] for names in assignment]
             if assignment is not None else None)
    return LoadTarget(tango_host=fleet.tango_host, devices=list(fleet.devices), attributes=attributes,
                      device_pids=pids, engine=fleet.engine, rate_mix=rate_mix, assignment=dealt)



# SPDX-License-Identifier: Apache-2.0
"""`hdbbench plan archivers INVENTORY --backend B`: how many archivers, and which attributes go where.

    hdbbench plan archivers inventories/example-facility.toml --backend timescaledb --from runs/<run>
    hdbbench plan archivers FILE --backend mysql --rate 12000 [--kind hdbpp-es --binary PATH]
                            [--headroom 0.5] [--output DIR] [--validate [--duration-s 60]]
    hdbbench plan archivers FILE --backend timescaledb --calibrate
    hdbbench plan hardware INVENTORY --backend timescaledb --from runs/<run> [--from RUN ...] --years 5
                            [--headroom 0.5] [--scale 0.5] [--output DIR] [--check RUN [--tolerance 0.3]]

The sustainable rate of one archiver comes from a run's saturation search (--from), a figure
(--rate), or a short calibration run the command starts (--calibrate): the facility scenario with
this inventory's mix (scaled down to what one archiver may hold) and one archiver of the kind, whose
saturation search, +25 % steps of 8 s from half the mix's own rate, ends where it falls behind, or
at the rate the plan needs no more than (the mix's rate over the headroom: one archiver then holds
as many attributes as it may).

It writes into DIR (default plans/<inventory>-<backend>): archivers.toml (the inventory with its
[[archivers]]: the facility scenario runs exactly that layout), attribute-add.txt (one `AttributeAdd`
per attribute, for hdbpp-es or the configuration manager) and archivers.yaml; and prints the plan.
--validate runs the facility scenario with that layout at the inventory's own rates and says whether
it keeps up with nothing lost (exit 1 when not). hdbbench.scenario.archivers says how the plan is made.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from hdbbench.backends import BACKENDS
from hdbbench.cli.options import Finite, state_dir_option
from hdbbench.load import facility
from hdbbench.load.inventory.model import load_inventory
from hdbbench.load.inventory.write import write_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.units import human_bytes
from hdbbench.results.document import read_trials
from hdbbench.results.hardware import years_text
from hdbbench.run.runner import RunOptions, run_scenario
from hdbbench.scenario import archivers as planner
from hdbbench.scenario import hardware as hardware_planner
from hdbbench.scenario.scenario import parse_scenario
from hdbbench.subscribers.kinds import OURS

console = Console(stderr=True)
# --validate: the median per-second stored rate at least this share of the offered one. Not the share of
# seconds at the offered rate: at a facility's slow rates one second's count swings with the polling phases.
KEPT_UP_RATE = 0.95
# --calibrate: +25 % steps of 8 s from half the mix's own rate, up to the rate the plan needs (at most 14 steps).
CALIBRATION_STEP, CALIBRATION_STEP_S, CALIBRATION_MAX_STEPS = 0.25, 8, 14


@click.group()
def plan() -> None:
    """Plans from measured figures: the archivers and the hardware a facility needs."""


@plan.command("archivers")
@click.argument("inventory_path", metavar="INVENTORY", type=click.Path(path_type=Path))
@click.option("--backend", type=click.Choice(BACKENDS), required=True)
@click.option("--kind", default=OURS, show_default=True, help="the subscriber kind the plan is for")
@click.option("--binary", type=click.Path(path_type=Path), help="its executable (a kind other than ours)")
@click.option("--safe-attributes", type=click.IntRange(min=1),
              help="attributes one archiver keeps (default: HDB++'s 10,000; another kind Tango's 5,000)")
@click.option("--from", "run_dir", type=click.Path(path_type=Path), help="a run whose saturation search measured the kind")
@click.option("--rate", type=Finite(min=0, min_open=True), help="events/s one archiver sustains, as measured")
@click.option("--calibrate", is_flag=True, help="measure it: a short saturation search of one archiver on this mix")
@click.option("--headroom", type=Finite(0, 1, min_open=True), default=0.5, show_default=True,
              help="each archiver at most this share of its sustainable rate")
@click.option("--output", type=click.Path(path_type=Path), help="the plan's directory [plans/<inventory>-<backend>]")
@click.option("--validate", is_flag=True, help="run the facility scenario with this layout and say if it keeps up")
@click.option("--duration-s", type=Finite(min=20), default=60.0, show_default=True,
              help="--validate: the trial's length")
@state_dir_option
def archivers(inventory_path: Path, backend: str, kind: str, binary: Path | None, safe_attributes: int | None,
              run_dir: Path | None, rate: float | None, calibrate: bool, headroom: float, output: Path | None,
              validate: bool, duration_s: float, state_dir: Path) -> None:
    """The archivers INVENTORY needs on BACKEND, and an assignment of its attributes."""
    if sum((run_dir is not None, rate is not None, calibrate)) != 1:
        raise ConfigError("give exactly one of --from RUN (a measured saturation), --rate EVENTS_PER_S and --calibrate")
    if kind != OURS and binary is None and (validate or calibrate):
        raise ConfigError(f"--{'validate' if validate else 'calibrate'} with kind {kind} needs its --binary")
    inventory = load_inventory(inventory_path)
    limit = safe_attributes or planner.safe_attributes(kind)
    where = output or Path("plans") / planner.safe_name(f"{inventory.name}-{backend}")
    if rate is not None:
        sustainable, source = float(rate), "stated with --rate"
    elif calibrate:
        run = _calibrate(inventory_path, inventory, backend, kind, binary, limit, headroom, where, state_dir)
        sustainable, source = planner.sustainable_from_run(run, backend, kind)
        source = f"calibration run {run}: {source}"
    else:
        assert run_dir is not None
        sustainable, source = planner.sustainable_from_run(run_dir, backend, kind)
    made = planner.plan_archivers(inventory, backend, kind, sustainable, source, limit, headroom)
    planned = write_inventory(where / "archivers.toml", planner.planned_inventory(inventory, made),
                              [f"archiver plan of {inventory.source} on {backend} for {kind}: {made.limits()}"])
    (where / "attribute-add.txt").write_text("\n".join(planner.attribute_add_lines(made)) + "\n")
    (where / "archivers.yaml").write_text(planner.plan_yaml(made))
    _show(made)
    console.print(f"plan: {planned} (+ attribute-add.txt, archivers.yaml)", soft_wrap=True)
    if validate:
        _validate(planned, made, binary, duration_s, state_dir)


def _show(made: Any) -> None:
    table = Table(title=f"{len(made.archivers)} archiver(s) on {made.backend}: {made.limits()}")
    for column in ("archiver", "attributes", "events/s", "share of sustainable"):
        table.add_column(column, justify="left" if column == "archiver" else "right")
    for a in made.archivers:
        table.add_row(a.name, f"{len(a.attributes):,}", f"{a.rate:,.1f}", f"{a.rate / made.sustainable_rate:.0%}")
    Console().print(table)


def _facility_run(name: str, inventory_path: Path, backend: str, kind: str, binary: Path | None, archivers: int,
                  scale: float, load: dict[str, float], measurements: dict[str, Any], where: Path,
                  state_dir: Path) -> Path:
    """Run the facility scenario on `inventory_path`'s mix at `scale`, with `archivers` of the kind; its run directory."""
    subscribers: dict[str, Any] = {"count": archivers, "lib_configuration": {"batch_size": "1000"}}
    if binary is not None:
        subscribers["kinds"] = [{"name": kind, "binary": str(binary)}]
    document = {"name": name, "seed": 42, "backends": [backend], "stack": {"profile": "relaxed"},
                "schema": {"variant": "pk+2"}, "devices": {"inventory": str(inventory_path.resolve()), "scale": scale},
                "subscribers": subscribers, "load": load, "measurements": measurements}
    scenario = parse_scenario(document, where / f"{name}.toml")
    return run_scenario(scenario, RunOptions(state_dir=state_dir, runs_root=where / "runs"), console)


def _calibrate(inventory_path: Path, inventory: Any, backend: str, kind: str, binary: Path | None, limit: int,
               headroom: float, where: Path, state_dir: Path) -> Path:
    """A saturation search of one archiver of the kind on the inventory's mix, scaled down to `limit`
    attributes where it has more (the mix's shares of types and rates stay)."""

    attributes = sum(g.count for g in inventory.groups)
    scale = min(1.0, limit / attributes)
    # The mix without today's [[archivers]]: one archiver takes every (scaled) attribute.
    mix = write_inventory(where / "calibration-mix.toml", replace(inventory, archivers=()),
                          [f"the mix of {inventory_path} without its [[archivers]], for `plan archivers --calibrate`"])
    mix_rate = facility.natural_rate(inventory, scale)
    start = round(mix_rate / 2, 3)
    # Beyond mix_rate / headroom the plan would not change: stop the search there.
    steps = 1 + math.ceil(math.log(mix_rate / headroom / start) / math.log(1 + CALIBRATION_STEP))
    steps = max(2, min(CALIBRATION_MAX_STEPS, steps))
    console.print(f"calibrating: one {kind} archiver on {backend}, {scale:.3g} x the inventory's attributes, "
                  f"saturation search from {start:,.0f} events/s", highlight=False, soft_wrap=True)
    return _facility_run(f"calibrate-{where.name}", mix, backend, kind, binary, 1, scale,
                         {"rate": start, "duration_s": 20, "warmup_s": 4},
                         {"throughput": False,
                          "saturation": {"start_rate": start, "step": CALIBRATION_STEP, "step_s": CALIBRATION_STEP_S,
                                         "max_steps": steps}}, where, state_dir)


def _validate(planned: Path, made: Any, binary: Path | None, duration_s: float, state_dir: Path) -> None:
    """The facility scenario with exactly the plan's layout, at the inventory's own rates."""
    inventory = load_inventory(planned)
    offered = facility.natural_rate(inventory, 1.0)
    run = _facility_run(f"validate-{planned.parent.name}", planned, made.backend, made.kind, binary,
                        len(made.archivers), 1.0,
                        {"rate": round(offered, 3), "duration_s": duration_s, "warmup_s": min(10.0, duration_s / 4)},
                        {"throughput": True}, planned.parent, state_dir)
    trials = read_trials(run / "results.json")[1].trials
    trial = trials[-1]
    lost, unproven = trial.accounting.lost, trial.delivery_unproven or 0
    median = trial.stored_rate.median
    kept = (lost == 0 and unproven == 0 and trial.accounting.stored >= trial.accounting.emitted
            and median >= KEPT_UP_RATE * trial.offered_rate)
    words = (f"{len(made.archivers)} archiver(s) at {offered:,.0f} events/s on {made.backend}: stored "
             f"{trial.accounting.stored:,} of {trial.accounting.emitted:,}, lost {lost:,}, {unproven:,} attributes "
             f"unproven, median stored rate {median:,.0f} events/s")
    console.print(("keeps up: " if kept else "does NOT keep up: ") + words + f" (run {run})", highlight=False,
                  soft_wrap=True)
    if not kept:
        raise SystemExit(1)


@plan.command("hardware")
@click.argument("inventory_path", metavar="INVENTORY", type=click.Path(path_type=Path))
@click.option("--backend", "backends", multiple=True, type=click.Choice(BACKENDS),
              help="a backend to plan (repeatable; default: every backend the runs measured)")
@click.option("--from", "run_dirs", multiple=True, required=True, type=click.Path(path_type=Path),
              help="a run whose insertion trials recorded unit costs (repeatable; its disk.json gives the disk)")
@click.option("--years", type=Finite(min=0, min_open=True), default=hardware_planner.DEFAULT_YEARS, show_default=True,
              help="years of archive (each group's retention caps them)")
@click.option("--headroom", type=Finite(0, 1, min_open=True), default=0.5, show_default=True,
              help="every resource used at most this share of what is provided")
@click.option("--kind", default=OURS, show_default=True, help="the subscriber kind the plan is for")
@click.option("--scale", type=Finite(min=0, min_open=True), default=1.0, show_default=True,
              help="the inventory's attribute counts times this (as the facility scenario's [devices] scale)")
@click.option("--output", type=click.Path(path_type=Path), help="the plan's directory [plans/<inventory>-hardware]")
@click.option("--check", "check_run", type=click.Path(path_type=Path),
              help="a run at the planned scale: compare the planned CPU and write IOPS with its measured ones")
@click.option("--tolerance", type=Finite(min=0, min_open=True), default=0.3, show_default=True,
              help="--check: the largest relative error that passes")
def hardware(inventory_path: Path, backends: tuple[str, ...], run_dirs: tuple[Path, ...], years: float,
             headroom: float, kind: str, scale: float, output: Path | None, check_run: Path | None,
             tolerance: float) -> None:
    """The hardware INVENTORY needs: archivers, cores, memory, write IOPS and disk, from measured unit costs."""
    inventory = load_inventory(inventory_path)
    made = hardware_planner.plan_hardware(inventory, backends, kind, list(run_dirs), years, headroom, scale)
    if check_run is not None:
        made = replace(made, checks=hardware_planner.check(made, check_run, tolerance, kind))
    where = output or Path("plans") / planner.safe_name(f"{inventory.name}-hardware")
    settings = {"inventory": str(inventory_path), "from": [str(r) for r in run_dirs],
                "check": str(check_run) if check_run else None}
    written = hardware_planner.write_plan(where, made, settings)
    _show_hardware(made)
    console.print(f"plan: {written} (+ hardware.toml)", soft_wrap=True)
    if made.checks and not all(c.within for c in made.checks if c.within is not None):
        raise SystemExit(1)


def _show_hardware(made: Any) -> None:
    """One column per backend (a facility compares them), one row per figure: needed → to provide."""
    table = Table(title=f"hardware for {made.inventory} (scale {made.scale:g}), {years_text(made.years)}, "
                        f"headroom {made.headroom:.0%}: needed → to provide")
    table.add_column("")
    for p in made.backends:
        table.add_column(p.backend, justify="right")
    rows = [("events/s", lambda p: f"{p.events_per_s:,.0f}"), ("archivers", lambda p: _amount(p.archivers)),
            ("archiver cores", lambda p: _amount(p.archiver_cores)),
            ("database cores", lambda p: _amount(p.database_cores)), ("hot set", lambda p: _amount(p.hot_set)),
            ("memory", lambda p: _amount(p.memory)), ("write IOPS", lambda p: _amount(p.write_iops)),
            ("storage class", lambda p: p.storage_class or "–"),
            ("WAL/redo per s", lambda p: _amount(p.log_bytes_per_s)),
            (f"disk, {years_text(made.years)}", lambda p: _amount(p.disk))]
    for label, cell in rows:
        table.add_row(label, *(cell(p) for p in made.backends))
    Console().print(table)
    for p in made.backends:
        console.print(p.sentence, highlight=False, soft_wrap=True)
        for line in p.unknown:
            console.print(f"  not known: {line}", highlight=False, soft_wrap=True)
    console.print(made.cannot_know, highlight=False, soft_wrap=True)
    if made.checks:
        checks = Table(title=f"planned against measured ({made.checks[0].tolerance:.0%} tolerance)")
        for column in ("backend", "quantity", "at events/s", "planned", "measured", "error", "within"):
            checks.add_column(column, justify="left" if column in ("backend", "quantity") else "right")
        for c in made.checks:
            checks.add_row(c.backend, c.quantity, f"{c.rate:,.0f}", _number(c.planned), _number(c.measured),
                           f"{c.error:+.0%}" if c.error is not None else "–",
                           "–" if c.within is None else ("yes" if c.within else "NO"))
        Console().print(checks)


def _amount(f: Any) -> str:
    """A planned figure: needed → to provide."""
    if f.needed is None:
        return "–"
    if f.unit in ("bytes", "bytes/s"):
        return f"{human_bytes(f.needed)} → {human_bytes(f.provide)}"
    if f.unit == "archivers":
        return f"{f.needed:,.0f}"
    return f"{f.needed:,.2f} → {f.provide:,.0f}" if f.unit == "cores" else f"{f.needed:,.0f} → {f.provide:,.0f}"


def _number(x: float | None) -> str:
    return "–" if x is None else f"{x:,.3g}"

# SPDX-License-Identifier: Apache-2.0
"""``hdbbench run <scenario>``: the insertion benchmark of a scenario file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from hdbbench.cli.options import state_dir_option
from hdbbench.run.quick import quick as cut_down
from hdbbench.run.runner import RunOptions, run_scenario
from hdbbench.scenario.hosts import load_hosts_file
from hdbbench.scenario.inputs import load_as
from hdbbench.stack.placement import parse_cli
from hdbbench.stack.servers.registry import settings_example
from hdbbench.stack.settings import PROFILE_NAMES, parse_overrides


@click.command("run")
@click.argument("scenario_file", type=click.Path(path_type=Path))
@state_dir_option
@click.option("--runs", "runs_root", type=click.Path(path_type=Path), default=Path("runs"), show_default=True,
              help="Where run directories are created.")
@click.option("--set", "overrides", multiple=True, metavar="SERVER.NAME=VALUE",
              help=f"Override a server setting for this run, e.g. {settings_example()}.")
@click.option("--profile", type=click.Choice(PROFILE_NAMES), default=None,
              help="Settings profile for this run instead of the scenario's [stack] profile.")
@click.option("--hosts", "hosts_file", type=click.Path(path_type=Path), default=None,
              help="A TOML file with a [hosts] table (each component's host), instead of the scenario's.")
@click.option("--cpus", "cpus", multiple=True, metavar="GROUP=CPUS[,GROUP=CPUS...]",
              help="Pin component groups to CPUs (taskset lists), over the scenario's [placement.cpus]; groups: "
                   "devices, subscribers, databases, tango, controller. E.g. devices=0,subscribers=1,databases=1.")
@click.option("--quick", is_flag=True,
              help="Fewer and shorter trials for tuning loops (hdbbench.run.quick); the report says it was quick.")
def run(scenario_file: Path, state_dir: Path, runs_root: Path, overrides: tuple[str, ...],
        profile: str | None, hosts_file: Path | None, cpus: tuple[str, ...], quick: bool) -> None:
    """Run SCENARIO_FILE: start everything, measure each backend in turn, stop everything."""
    scenario = load_as(scenario_file, "scenario")  # refused before anything starts
    if quick:
        scenario = cut_down(scenario)
    if hosts_file is not None:
        scenario = dataclasses.replace(scenario, hosts=load_hosts_file(hosts_file))
    if profile:
        scenario = dataclasses.replace(scenario, profile=profile, name=f"{scenario.name}-{profile}")
    if cpus:
        scenario = dataclasses.replace(scenario, placement=scenario.placement.merged(parse_cli(cpus)))
    path = run_scenario(scenario, RunOptions(state_dir=state_dir, runs_root=runs_root,
                                             settings_overrides=parse_overrides(overrides)))
    click.echo(str(path))

    # deferred: the report stage loads matplotlib (~1 s); only the commands that write a report need it
    from hdbbench.report.page import write_report

    click.echo(f"report: {write_report(path)}")

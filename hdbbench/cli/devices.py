# SPDX-License-Identifier: Apache-2.0
"""`hdbbench devices up|status|down`: simulated device servers (HdbBenchGen or HdbBenchSim) from a profile
(hdbbench.load.devices) or from an inventory's mix at a scale (hdbbench.load.facility).

They register in the stack's Tango database (or the one given) and are recorded in
``<state dir>/devices/``, where `subscribers up --from-devices` and `stack down` find them.
"""

from __future__ import annotations

from pathlib import Path

import click

from hdbbench.cli.options import SEED, Finite, find_tango_host, state_dir_option, tango_host_option
from hdbbench.load import devices as dev
from hdbbench.load import facility
from hdbbench.load.emitter import PHASE_MODES
from hdbbench.model.errors import ConfigError
from hdbbench.scenario.inputs import load_as


@click.group("devices")
def devices() -> None:
    """Simulated Tango devices (HdbBenchSim) that emit archive events."""


@devices.command("up")
@click.option("--profile", type=click.Path(path_type=Path), help="profile TOML (devices/profiles/)")
@click.option("--inventory", type=click.Path(path_type=Path),
              help="instead of a profile: an inventory TOML (inventories/), its mix of types, formats, array "
                   "sizes and rates (archive periods as push rates of 1/period)")
@click.option("--scale", type=Finite(), default=1.0, show_default=True,
              help="with --inventory: multiplies each group's attribute count (at least one per group)")
@click.option("--phases", type=click.Choice(PHASE_MODES),
              help="with --inventory: schedule phases, seeded (default: each attribute offset by its own "
                   "fraction of its period) or aligned (every attribute of a rate at once); a profile sets "
                   "[profile] phases")
@click.option("--servers", type=int, help="server processes (default: the profile's)")
@click.option("--devices-per-server", type=int, help="devices per server (default: the profile's)")
@click.option("--seed", type=SEED, help="seed (default: the profile's)")
@tango_host_option
@click.option("--start/--no-start", default=True, show_default=True,
              help="emit at once, or hold until each device's Start command")
@click.option("--engine", type=click.Choice(("auto", *dev.ENGINES)), default="auto", show_default=True,
              help="device server: C++ HdbBenchGen, Python HdbBenchSim, or auto (C++ when built and the "
                   "profile polls nothing)")
@click.option("--push-threads", type=int, default=1, show_default=True,
              help="pushing threads per server process (C++ engine)")
@click.option("--timeout", "timeout_s", type=Finite(), default=60.0, show_default=True, help="s to wait for export")
@state_dir_option
def up_cmd(profile: Path | None, inventory: Path | None, scale: float, phases: str | None,
           servers: int | None, devices_per_server: int | None, seed: int | None, tango_host: str | None,
           start: bool, engine: str, push_threads: int, timeout_s: float, state_dir: Path) -> None:
    """Validate the profile (or inventory), register the devices, start the servers and wait until they answer."""
    if (profile is None) == (inventory is None):
        raise ConfigError("devices up: give exactly one of --profile and --inventory")
    if inventory is None and scale != 1.0:
        raise ConfigError("devices up: --scale applies to --inventory only")
    if inventory is None and phases is not None:
        raise ConfigError("devices up: --phases applies to --inventory only "
                          "(a profile sets [profile] phases)")
    common = dict(servers=servers, devices_per_server=devices_per_server, state_dir=dev.fleet_dir(state_dir),
                  auto_start=start, timeout_s=timeout_s, push_threads=push_threads)
    if inventory is not None:
        load_as(inventory, "inventory")  # refused before anything starts
        fleet = facility.up(find_tango_host(state_dir, tango_host), inventory, scale,
                            seed=1 if seed is None else seed, engine=engine,
                            phases=phases or facility.FACILITY_PHASES, **common)  # type: ignore[arg-type]
    else:
        load_as(profile, "device profile")  # type: ignore[arg-type]  # refused before anything starts
        fleet = dev.up(find_tango_host(state_dir, tango_host), profile, seed=seed,  # type: ignore[arg-type]
                       engine=dev.resolve_engine(engine, profile), **common)  # type: ignore[arg-type]
    n_attr = sum(len(d.specs) for d in fleet.devices.values())
    click.echo(f"{_count(len(fleet.servers), 'server')}, {_count(len(fleet.devices), 'device')}, "
               f"{_count(n_attr, 'attribute')} up, {'emitting' if start else 'holding (Start to emit)'} "
               f"(recorded in {dev.fleet_dir(state_dir)})")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@devices.command("status")
@state_dir_option
def status_cmd(state_dir: Path) -> None:
    """Show whether each recorded server runs and its devices answer."""
    rows = dev.status(dev.fleet_dir(state_dir))
    if not rows:
        click.echo("no devices recorded")
        return
    for row in rows:
        click.echo(row.line())
    if not all(r.alive for r in rows):
        raise SystemExit(1)


@devices.command("down")
@click.option("--timeout", "timeout_s", type=Finite(), default=10.0, show_default=True,
              help="s between SIGTERM and SIGKILL")
@click.option("--unregister", is_flag=True, help="also delete the servers from the Tango database")
@state_dir_option
def down_cmd(timeout_s: float, unregister: bool, state_dir: Path) -> None:
    """Stop every recorded server."""
    stopped = dev.down(dev.fleet_dir(state_dir), timeout_s=timeout_s, unregister=unregister)
    click.echo(f"stopped {len(stopped)} servers" + (f": {', '.join(stopped)}" if stopped else ""))

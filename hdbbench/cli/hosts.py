# SPDX-License-Identifier: Apache-2.0
"""``hdbbench hosts``: start a host's own components of a scenario with components on several hosts.

Run on each host (the ansible roles do it over ssh): ``up servers`` on the hosts of the Tango
database and the database servers, then ``up devices`` and ``up subscribers`` with the Tango
database's address. Each command is idempotent: what already runs is kept, and its last line says
``started ...`` or ``unchanged ...`` (the playbook reports a change only for the first).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import click

from hdbbench.cli.options import state_dir_option, tango_host_option
from hdbbench.model.errors import ConfigError
from hdbbench.scenario import hosts as layout
from hdbbench.scenario.plan import plan_devices, plan_hosts
from hdbbench.scenario.scenario import Scenario, load_scenario
from hdbbench.stack.servers.endpoints import StackEndpoints
from hdbbench.stack.servers.ports import check_address
from hdbbench.stack.servers.registry import external_kinds
from hdbbench.stack.settings import resolve_profile
from hdbbench.stack.stack import COMPONENTS, Stack, StackConfig

SERVERS_FILE = "servers.json"  # what the controller needs to reach this host's servers (mode 600)

_scenario = click.argument("scenario_file", type=click.Path(path_type=Path))
_hosts_file = click.option("--hosts", "hosts_file", type=click.Path(path_type=Path), default=None,
                           help="A TOML file with a [hosts] table, instead of the scenario's.")
_address = click.option("--address", required=True, help="This host's address (local, or one of 198.18.0.0/15).")


@click.group("hosts")
def hosts() -> None:
    """Components of a scenario on several hosts (each host starts its own)."""


def _load(scenario_file: Path, hosts_file: Path | None) -> Scenario:
    scenario = load_scenario(scenario_file)
    if hosts_file is not None:
        scenario = dataclasses.replace(scenario, hosts=layout.load_hosts_file(hosts_file))
    return scenario


@hosts.command("show")
@_scenario
@_hosts_file
def show(scenario_file: Path, hosts_file: Path | None) -> None:
    """Print which host runs which component (JSON)."""
    click.echo(json.dumps(layout.describe(plan_hosts(_load(scenario_file, hosts_file))), indent=1))


@hosts.command("up")
@click.argument("role", type=click.Choice(["servers", "devices", "subscribers"]))
@_scenario
@_hosts_file
@_address
@tango_host_option
@click.option("--only", type=click.Choice(list(layout.SERVER_COMPONENTS)), default=None,
              help="servers: only this one of the host's servers (one ansible role per server).")
@click.option("--foreground", is_flag=True,
              help="Stay in the foreground until SIGTERM or Ctrl-C, then stop this host's components (containers).")
@state_dir_option
def up(role: str, scenario_file: Path, hosts_file: Path | None, address: str, tango_host: str | None,
       only: str | None, foreground: bool, state_dir: Path) -> None:
    """Start this host's ROLE components of SCENARIO_FILE (servers, devices or subscribers)."""
    scenario = _load(scenario_file, hosts_file)
    address = check_address(address, "--address")
    if role == "servers":
        started, kept = _servers_up(scenario, address, state_dir, only)
    else:
        if not tango_host:
            raise ConfigError(f"hosts up {role}: give --tango-host (the Tango database's host:port, as the "
                              "servers' host wrote it in servers.json)")
        if role == "devices":
            devices = plan_devices(scenario)  # the engine as this host settles it, refused before anything starts
            started, kept = layout.devices_up(devices, plan_hosts(scenario, devices.devices), tango_host, address,
                                              state_dir)
        else:
            started, kept = layout.subscribers_up(plan_hosts(scenario), tango_host, address, state_dir)
    if started:
        click.echo(f"started {role} on {address}: {', '.join(started)}")
    else:
        click.echo(f"unchanged {role} on {address}: {', '.join(kept) or 'none of this host'}")
    if foreground:
        _hold(state_dir)


def _hold(state_dir: Path) -> None:
    """Wait for SIGTERM (raised as KeyboardInterrupt by the CLI) or Ctrl-C, then stop what runs here."""
    try:
        while True:
            time.sleep(3600)
    finally:
        Stack(StackConfig(state_dir=state_dir)).down()


def _servers_up(scenario: Scenario, address: str, state_dir: Path,
                only: str | None) -> tuple[list[str], list[str]]:
    mine = plan_hosts(scenario).hosts.servers_on(address)
    if only is not None:
        mine = tuple(c for c in mine if c == layout.SERVER_COMPONENTS[only])
    components = tuple(c for c in COMPONENTS if c in mine)
    if not components:
        return [], []
    try:
        config = StackConfig(state_dir=state_dir, profile=resolve_profile(scenario.profile), components=components,
                             tango_db=scenario.tango_db, keep_running=True, address=address)
    except ConfigError as exc:  # a server that runs on another: both on this host
        raise ConfigError(f"[stack] tango_db = {scenario.tango_db!r}: {exc}; put both on the same host "
                          "in [hosts]") from None
    stack = Stack(config)
    before = {name for name, s in stack.status()["servers"].items() if s["ready"] and s.get("address") == address}
    endpoints = stack.up()
    _write_servers_file(state_dir / SERVERS_FILE, endpoints)
    started = [c for c in components if c not in before]
    return started, [c for c in components if c in before]


def _write_servers_file(path: Path, endpoints: StackEndpoints) -> None:
    """The variables `hdbbench run` reads to use these servers (they hold passwords: mode 600), with
    those of the host's servers started by an earlier call."""
    try:
        values: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        values = {}
    before = dict(values)
    for kind in external_kinds():
        endpoint = endpoints.get(kind.name)
        if endpoint is not None and kind.external_env:
            values[kind.external_env] = endpoint.external_value()
    if values == before and path.exists():
        return
    text = json.dumps(values, indent=1, sort_keys=True)
    fd = os.open(path.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    path.with_suffix(".tmp").replace(path)


@hosts.command("down")
@state_dir_option
def down(state_dir: Path) -> None:
    """Stop this host's components started by `hosts up` (devices, subscribers, then servers)."""
    stopped = Stack(StackConfig(state_dir=state_dir)).down()  # devices and subscribers first, from the records
    (state_dir / SERVERS_FILE).unlink(missing_ok=True)
    click.echo(f"stopped: {', '.join(stopped) or 'nothing'}")

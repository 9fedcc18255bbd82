# SPDX-License-Identifier: Apache-2.0
"""``hdbbench stack up | status | down``: the private database servers and the Tango database."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from hdbbench.cli.options import external_server_options, external_servers, state_dir_option
from hdbbench.servers.registry import settings_example
from hdbbench.settings import PROFILE_NAMES, parse_overrides, resolve_profile
from hdbbench.stack import COMPONENTS, TANGO_DATABASES, Stack, StackConfig

console = Console(stderr=True)


def _stack_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        state_dir_option,
        click.option("--profile", type=click.Choice(PROFILE_NAMES), default="durable", show_default=True,
                     help="Server settings profile."),
        click.option("--set", "overrides", multiple=True, metavar="SERVER.NAME=VALUE",
                     help=f"Override a server setting, e.g. {settings_example()}."),
        click.option("--only", "components", multiple=True, type=click.Choice(COMPONENTS),
                     help="Start only these servers (repeatable); the process-less ones are always there."),
        *external_server_options(),
        click.option("--tango-db", type=click.Choice(TANGO_DATABASES), default=TANGO_DATABASES[0], show_default=True,
                     help="Private Tango database: PyTango's on sqlite, or Debian's C++ DataBaseds on the stack's "
                          "database server."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _stack(state_dir: Path, profile: str, overrides: tuple[str, ...], components: tuple[str, ...],
           tango_db: str, **external: str | None) -> Stack:
    """`external`: the values of the external-server options, by parameter name (external_server_options)."""
    return Stack(StackConfig(
        state_dir=state_dir, profile=resolve_profile(profile, parse_overrides(overrides)),
        components=components or COMPONENTS, external=external_servers(external), tango_db=tango_db,
    ))


@click.group()
def stack() -> None:
    """Private database servers and Tango database: up, status, down."""


@stack.command("up")
@_stack_options
@click.option("--json", "as_json", is_flag=True, help="Print the endpoints as JSON.")
def stack_up(as_json: bool, **kwargs: Any) -> None:
    """Start the stack (reuses servers that already run with the same settings)."""
    the_stack = _stack(**kwargs)
    with console.status("starting servers..."):
        endpoints = the_stack.up()
    if as_json:
        click.echo(json.dumps(endpoints.to_dict(), indent=2))
    else:
        click.echo(status_text(the_stack.status()))


@stack.command("status")
@_stack_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable status with connection strings.")
def stack_status(as_json: bool, **kwargs: Any) -> None:
    """Show which servers run, where, where their data is, and how to connect. Exit 1 when not all are ready."""
    status = _stack(**kwargs).status()
    if as_json:
        click.echo(json.dumps(status, indent=2))
    else:
        click.echo(status_text(status))
    sys.exit(0 if status["all_ready"] else 1)


@stack.command("down")
@_stack_options
def stack_down(**kwargs: Any) -> None:
    """Stop every server, device and subscriber of the state directory; remove the servers' data
    directories kept outside it."""
    stopped = _stack(**kwargs).down()
    click.echo(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}")


def status_text(status: dict[str, Any]) -> str:
    """Two lines per server: state, process, address and version; then where its data is."""
    owner = status.get("state_dir_owner") or "not created yet"
    lines = [f"stack in {status['state_dir']} (owner {owner}), profile {status['profile']}"]
    for name, server in status["servers"].items():
        state = "ready" if server["ready"] else ("running" if server["running"] else "down")
        where = server.get("where") or (f"{server.get('address')}:{server['port']}" if server.get("port") else "-")
        process = "external" if server.get("external") else (f"pid {server['pid']}" if server.get("pid") else "-")
        about = server.get("version") or server.get("error") or "-"
        lines.append(f"{name:9s} {state:7s} {process:10s} {where:16s} {about}")
        if server.get("data"):
            lines.append(f"{'':9s} data {server['data']}")
    return "\n".join(lines)

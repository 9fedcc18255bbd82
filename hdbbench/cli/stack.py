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
from hdbbench.model.errors import ConfigError
from hdbbench.stack.servers.confine.spec import CLASS_NAMES, parse_spec
from hdbbench.stack.servers.registry import confinable_kinds, settings_example
from hdbbench.stack.settings import PROFILE_NAMES, parse_overrides, resolve_profile
from hdbbench.stack.stack import COMPONENTS, DEFAULT_COMPONENTS, TANGO_DATABASES, Stack, StackConfig

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
           tango_db: str, memory: tuple[str, ...] = (), storage: str | None = None,
           storage_size: str | None = None, **external: str | None) -> Stack:
    """`external`: the values of the external-server options, by parameter name (external_server_options)."""
    return Stack(StackConfig(
        state_dir=state_dir, profile=resolve_profile(profile, parse_overrides(overrides)),
        components=components or DEFAULT_COMPONENTS, external=external_servers(external), tango_db=tango_db,
        confine=parse_spec(_memory_option(memory), _storage_option(storage), storage_size, confinable_kinds(),
                           prefix="--"),
    ))


def _memory_option(values: tuple[str, ...]) -> str | dict[str, str] | None:
    """`--memory 1GiB` (every database server) or `--memory postgres=1GiB` (repeatable)."""
    if not values:
        return None
    if len(values) == 1 and "=" not in values[0]:
        return values[0]
    table = {}
    for value in values:
        server, sep, size = value.partition("=")
        if not sep:
            raise ConfigError(f"--memory: give one size for all, or SERVER=SIZE for each, got {value!r}")
        table[server.strip()] = size.strip()
    return table


def _storage_option(value: str | None) -> str | dict[str, int] | None:
    """`--storage ssd` or `--storage read_iops=2000,write_iops=2000,read_mb_s=200,write_mb_s=150`."""
    if value is None or "=" not in value:
        return value
    table = {}
    for item in value.split(","):
        key, _, number = item.partition("=")
        try:
            table[key.strip()] = int(number)
        except ValueError:
            raise ConfigError(f"--storage.{key.strip()}: must be a positive integer, got {number!r}") from None
    return table


@click.group()
def stack() -> None:
    """Private database servers and Tango database: up, status, down."""


@stack.command("up")
@_stack_options
@click.option("--memory", multiple=True, metavar="SIZE|SERVER=SIZE",
              help="Memory budget of every database server (e.g. 1GiB), or of one (postgres=1GiB; repeatable).")
@click.option("--storage", metavar="CLASS|FIGURES",
              help=f"Storage class of the database servers' data: {' | '.join(CLASS_NAMES)}, or "
                   "read_iops=N,write_iops=N,read_mb_s=N,write_mb_s=N. Needs root.")
@click.option("--storage-size", metavar="SIZE", help="Size of each server's sparse file-system image (20GiB).")
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
    for item in status.get("confinement", []):
        lines.append(confinement_text(item))
    return "\n".join(lines)


def confinement_text(item: dict[str, Any]) -> str:
    """One line per confined server: its memory limit and storage as read back from the kernel."""
    limit = item.get("memory_limit_bytes")
    memory = f"memory {limit / 2**20:.0f} MiB" if limit else "memory unlimited"
    storage = f"storage {item['storage_class']}"
    if item.get("device"):
        storage += f" on {item['device']} (limits: {item.get('read_iops_limit')} read IOPS"
        probe = item.get("probe")
        storage += f", probe {probe['read_iops']:.0f} read IOPS)" if probe else ")"
    return f"{item['server']:9s} {memory}, {storage}" + (f"; {item['warning']}" if item.get("warning") else "")

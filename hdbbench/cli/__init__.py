# SPDX-License-Identifier: Apache-2.0
"""The ``hdbbench`` command: a thin layer over the modules, one group per concern.

Errors the user can act on (HdbbenchError) print as one line ``hdbbench: error: ...`` and exit 2;
Ctrl-C and SIGTERM unwind through the modules' clean-up and exit 130.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table

from hdbbench.errors import HdbbenchError
from hdbbench.settings import PROFILE_NAMES, parse_overrides, resolve_profile
from hdbbench.stack import COMPONENTS, DEFAULT_STATE_DIR, TANGO_DATABASES, Stack, StackConfig

console = Console(stderr=True)

state_dir_option = click.option(
    "--state-dir", type=click.Path(path_type=Path), envvar="HDBBENCH_STATE_DIR", default=DEFAULT_STATE_DIR,
    show_default=True, help="Where private servers keep their data, logs and records.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hdbbench")
def main() -> None:
    """hdbbench: the HDB++ archiving testbed."""


# --- stack ------------------------------------------------------------------------------------
def _stack_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        state_dir_option,
        click.option("--profile", type=click.Choice(PROFILE_NAMES), default="durable", show_default=True,
                     help="Server settings profile."),
        click.option("--set", "overrides", multiple=True, metavar="SERVER.NAME=VALUE",
                     help="Override a server setting, e.g. postgres.shared_buffers=512MB."),
        click.option("--only", "components", multiple=True, type=click.Choice(COMPONENTS),
                     help="Start only these servers (repeatable)."),
        click.option("--postgres-url", envvar="HDBBENCH_POSTGRES_URL",
                     help="Use this external PostgreSQL/TimescaleDB (postgresql://user:pw@host:port/db)."),
        click.option("--mariadb-url", envvar="HDBBENCH_MARIADB_URL",
                     help="Use this external MariaDB/MySQL (mysql://user:pw@host:port)."),
        click.option("--tango-host", envvar="HDBBENCH_TANGO_HOST",
                     help="Use this external Tango database (host:port)."),
        click.option("--tango-db", type=click.Choice(TANGO_DATABASES), default="pytango", show_default=True,
                     help="Private Tango database: PyTango's on sqlite, or Debian's C++ DataBaseds on the private MariaDB."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _stack(state_dir: Path, profile: str, overrides: tuple[str, ...], components: tuple[str, ...],
           postgres_url: str | None, mariadb_url: str | None, tango_host: str | None, tango_db: str) -> Stack:
    return Stack(StackConfig(
        state_dir=state_dir, profile=resolve_profile(profile, parse_overrides(overrides)),
        components=components or COMPONENTS, postgres_url=postgres_url, mariadb_url=mariadb_url,
        tango_host=tango_host, tango_db=tango_db,
    ))


@main.group()
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
        _print_status(the_stack.status())


@stack.command("status")
@_stack_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable status with connection strings.")
def stack_status(as_json: bool, **kwargs: Any) -> None:
    """Show which servers run, where, and how to connect. Exit 1 when not all are ready."""
    status = _stack(**kwargs).status()
    if as_json:
        click.echo(json.dumps(status, indent=2))
    else:
        _print_status(status)
    sys.exit(0 if status["all_ready"] else 1)


@stack.command("down")
@_stack_options
def stack_down(**kwargs: Any) -> None:
    """Stop every private server of the stack (also after a crash of the CLI)."""
    stopped = _stack(**kwargs).down()
    console.print(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}")


def _print_status(status: dict[str, Any]) -> None:
    table = Table(title=f"stack in {status['state_dir']} (profile {status['profile']})")
    for column in ("server", "state", "pid", "where", "version"):
        table.add_column(column)
    for name, server in status["servers"].items():
        state = "ready" if server["ready"] else ("running" if server["running"] else "down")
        where = server.get("where") or (f"127.0.0.1:{server['port']}" if server.get("port") else "-")
        kind = "external" if server.get("external") else str(server.get("pid") or "-")
        table.add_row(name, state, kind, where, str(server.get("version") or server.get("error") or "-"))
    Console().print(table)


# --- entry point --------------------------------------------------------------------------------
def _sigterm_as_interrupt(signum: int, frame: Any) -> NoReturn:
    raise KeyboardInterrupt


def _register_groups() -> None:
    """Groups that live beside their modules join here, one line each."""
    for module, name in (("hdbbench.cli_schema", "schema"), ("hdbbench.cli_devices", "devices"),
                         ("hdbbench.cli_subscribers", "subscribers"), ("hdbbench.cli_run", "run"),
                         ("hdbbench.cli_size", "size"), ("hdbbench.cli_report", "report"),
                         ("hdbbench.cli_report", "compare"),
                         ("hdbbench.cli_extract", "data"), ("hdbbench.cli_extract", "extract")):
        try:
            imported = __import__(module, fromlist=[name])
        except ModuleNotFoundError as exc:
            if exc.name == module:
                continue
            raise
        main.add_command(getattr(imported, name))


def run() -> None:
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    _register_groups()
    try:
        main(standalone_mode=False)
    except HdbbenchError as exc:
        click.echo(f"hdbbench: error: {exc}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("hdbbench: interrupted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("hdbbench: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)

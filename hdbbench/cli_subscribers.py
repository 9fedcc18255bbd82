# SPDX-License-Identifier: Apache-2.0
"""``hdbbench subscribers up | status | down``: HDB++ event subscribers on the running stack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from hdbbench.backends.registry import BACKENDS
from hdbbench.errors import ConfigError
from hdbbench.stack import DEFAULT_STATE_DIR, load_endpoints
from hdbbench.subscribers import DEFAULT_BINARY, SubscriberFleet, SubscriberSpec, lib_configuration

_state_dir = click.option("--state-dir", type=click.Path(path_type=Path), envvar="HDBBENCH_STATE_DIR",
                          default=DEFAULT_STATE_DIR, show_default=True)
_binary = click.option("--binary", type=click.Path(path_type=Path), default=DEFAULT_BINARY, show_default=True,
                       help="Subscriber executable (a real hdbpp-es works too).")


def _fleet(state_dir: Path, binary: Path, attached: bool = False) -> SubscriberFleet:
    endpoints = load_endpoints(state_dir)
    if endpoints.tango is None:
        raise ConfigError("the stack has no Tango database")
    return SubscriberFleet(endpoints.tango.tango_host, state_dir, binary=binary, attached=attached)


@click.group()
def subscribers() -> None:
    """HDB++ event subscribers (class HdbEventSubscriber): up, status, down."""


@subscribers.command("up")
@_state_dir
@_binary
@click.option("--backend", type=click.Choice(BACKENDS), required=True)
@click.option("--database", default="hdbpp", show_default=True, help="Database holding the HDB++ schema.")
@click.option("--count", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Extra LibConfiguration line, e.g. batch_size=1000 (repeatable).")
@click.option("--attribute", "attributes", multiple=True, help="Attribute to archive (repeatable).")
def subscribers_up(state_dir: Path, binary: Path, backend: str, database: str, count: int,
                   overrides: tuple[str, ...], attributes: tuple[str, ...]) -> None:
    """Register and start COUNT subscribers writing to BACKEND."""
    endpoints = load_endpoints(state_dir)
    extra = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"LibConfiguration override must be key=value, got {item!r}")
        extra[key] = value
    lines = lib_configuration(backend, database, postgres=endpoints.postgres, mariadb=endpoints.mariadb,
                              overrides=extra)
    fleet = _fleet(state_dir, binary)
    specs = [SubscriberSpec(instance=n, lib_configuration=tuple(lines), attributes=attributes)
             for n in range(1, count + 1)]
    for device in fleet.up(specs):
        click.echo(device)


@subscribers.command("status")
@_state_dir
@_binary
@click.option("--json", "as_json", is_flag=True)
def subscribers_status(state_dir: Path, binary: Path, as_json: bool) -> None:
    """Statistics of every running subscriber."""
    fleet = _fleet(state_dir, binary)
    report: dict[str, Any] = {}
    for record in sorted(fleet.dir.glob("*/process.json")):
        device = f"archiving/hdbbench-es/{record.parent.name}"
        try:
            report[device] = fleet.statistics(device)
        except Exception as exc:  # a stopped subscriber is reported, not fatal
            report[device] = {"error": str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)}
    if as_json:
        click.echo(json.dumps(report, indent=2, default=str))
    else:
        for device, stats in report.items():
            click.echo(f"{device}: " + ", ".join(f"{k}={v}" for k, v in stats.items()))


@subscribers.command("down")
@_state_dir
@_binary
def subscribers_down(state_dir: Path, binary: Path) -> None:
    """Stop every subscriber process."""
    click.echo(f"stopped {_fleet(state_dir, binary).down()} subscriber(s)")

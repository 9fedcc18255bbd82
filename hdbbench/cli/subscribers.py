# SPDX-License-Identifier: Apache-2.0
"""``hdbbench subscribers up | status | down``: HDB++ event subscribers on the running stack.

Subscribers are numbered per backend (``archiving/hdbbench-es/<backend>-<n>``), so subscribers of
several backends run side by side; ``up`` for a backend whose subscribers already run is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from hdbbench.backends import BACKENDS
from hdbbench.cli.options import database_option, find_tango_host, state_dir_option, tango_host_option
from hdbbench.load import devices as dev
from hdbbench.load.offered import spread
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.stack.servers.ports import LOOPBACK
from hdbbench.stack.stack import load_endpoints
from hdbbench.subscribers.launcher import (
    DEFAULT_BINARY,
    DEVICE_PREFIX,
    SubscriberFleet,
    SubscriberSpec,
    lib_configuration,
)

_binary = click.option("--binary", type=click.Path(path_type=Path), default=DEFAULT_BINARY, show_default=True,
                       help="Subscriber executable (a real hdbpp-es works too).")


def _fleet(state_dir: Path, tango_host: str | None, binary: Path) -> SubscriberFleet:
    return SubscriberFleet(find_tango_host(state_dir, tango_host), state_dir, binary=binary, attached=False)


@click.group()
def subscribers() -> None:
    """HDB++ event subscribers (class HdbEventSubscriber): up, status, down."""


@subscribers.command("up")
@state_dir_option
@tango_host_option
@_binary
@click.option("--backend", type=click.Choice(BACKENDS), required=True)
@database_option
@click.option("--count", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Extra LibConfiguration line, e.g. batch_size=1000 (repeatable).")
@click.option("--env", "env", multiple=True, metavar="KEY=VALUE",
              help="Environment variable of the subscriber processes, e.g. LD_LIBRARY_PATH=/opt/hdbpp/lib (repeatable).")
@click.option("--attribute", "attributes", multiple=True,
              help="Attribute to archive (repeatable); the attributes are shared out among the COUNT subscribers.")
@click.option("--from-devices", is_flag=True,
              help="Archive every attribute of the simulated devices running beside the stack (hdbbench devices up).")
def subscribers_up(state_dir: Path, tango_host: str | None, binary: Path, backend: str, database: str, count: int,
                   overrides: tuple[str, ...], env: tuple[str, ...], attributes: tuple[str, ...],
                   from_devices: bool) -> None:
    """Register and start COUNT subscribers writing to BACKEND."""
    extra = _pairs(overrides, "--set")
    environment = _pairs(env, "--env")
    endpoints = load_endpoints(state_dir)
    lines = lib_configuration(backend, database, endpoints, overrides=extra)
    wanted = [*attributes, *(dev.running_attributes(dev.fleet_dir(state_dir)) if from_devices else [])]
    fleet = _fleet(state_dir, tango_host, binary)
    fleet.env = environment
    running = fleet.running(backend)
    if running:
        raise ConfigError(f"subscribers for {backend} already run ({', '.join(running)}); "
                          f"stop them first: hdbbench subscribers down --backend {backend}")
    specs = [SubscriberSpec(instance=n, lib_configuration=tuple(lines), attributes=assigned, group=backend)
             for n, assigned in enumerate(spread(wanted, count), start=1)]
    fleet.up(specs)
    for spec in specs:
        click.echo(f"{spec.device}: {len(spec.attributes)} attributes to {backend} database {database}")


def _pairs(items: tuple[str, ...], option: str) -> dict[str, str]:
    """KEY=VALUE items of a repeatable option; a malformed one is refused in one line."""
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} takes KEY=VALUE, got {item!r}")
        pairs[key.strip()] = value
    return pairs


@subscribers.command("status")
@state_dir_option
@tango_host_option
@_binary
@click.option("--json", "as_json", is_flag=True, help="Every statistic of every subscriber.")
def subscribers_status(state_dir: Path, tango_host: str | None, binary: Path, as_json: bool) -> None:
    """A line per subscriber (of every backend): state, attributes, pending events, rows stored."""
    fleet = _fleet(state_dir, tango_host, binary)
    report: dict[str, Any] = {}
    for record in sorted(fleet.dir.glob("*/process.json")):
        device = f"{DEVICE_PREFIX}/{record.parent.name}"
        try:
            report[device] = fleet.statistics(device, ("PendingEventNumber", "RowsStoredNumber"))
        except Exception as exc:  # a stopped subscriber is reported, not fatal
            report[device] = {"error": str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)}
    if as_json:
        click.echo(json.dumps(report, indent=2, default=str))
    elif not report:
        click.echo("no subscribers recorded")
    else:
        for device, stats in report.items():
            click.echo(f"{device}: {_summary(stats)}")


def _summary(stats: dict[str, Any]) -> str:
    if "error" in stats:
        return f"not answering ({stats['error']})"

    def count(name: str) -> str:
        value = stats.get(name)
        return "-" if value is None else f"{int(value)}"

    pending = stats.get("PendingEventNumber", stats.get("AttributePendingNumber"))
    return (f"{stats.get('State')}, {count('AttributeStartedNumber')}/{count('AttributeNumber')} attributes "
            f"started, {count('AttributeNokNumber')} failing, {'-' if pending is None else int(pending)} pending, "
            f"{count('RowsStoredNumber')} rows stored")


@subscribers.command("down")
@state_dir_option
@tango_host_option
@_binary
@click.option("--backend", type=click.Choice(BACKENDS), help="Only the subscribers of this backend.")
def subscribers_down(state_dir: Path, tango_host: str | None, binary: Path, backend: str | None) -> None:
    """Stop the subscriber processes (every backend's unless --backend)."""
    try:
        host = find_tango_host(state_dir, tango_host)
    except ServerError:
        host = f"{LOOPBACK}:0"  # the stack is gone; stopping needs the process records only
    fleet = SubscriberFleet(host, state_dir, binary=binary, attached=False)
    click.echo(f"stopped {fleet.down(backend or '')} subscriber(s)")

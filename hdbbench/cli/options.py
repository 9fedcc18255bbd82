# SPDX-License-Identifier: Apache-2.0
"""The options every command group shares, defined once, and how a command finds the stack.

Every command finds the stack the same way: the state directory from ``--state-dir`` or
``HDBBENCH_STATE_DIR`` (default ``.hdbbench``); the Tango database from ``--tango-host`` or
``HDBBENCH_TANGO_HOST`` when given, else the stack's (the one ``hdbbench stack up`` started or was
given), else ``TANGO_HOST`` when no stack is up. A ``TANGO_HOST`` set for a facility never wins over
the stack's own Tango database.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from hdbbench.model.errors import ServerError
from hdbbench.model.tomlfile import SEED_MAX
from hdbbench.stack.servers.registry import ServerKind, external_kinds
from hdbbench.stack.stack import DEFAULT_STATE_DIR, load_endpoints

state_dir_option = click.option(
    "--state-dir", type=click.Path(file_okay=False, path_type=Path), envvar="HDBBENCH_STATE_DIR",
    default=DEFAULT_STATE_DIR, show_default=True,
    help="The stack's state directory: records, logs and links to the servers' data [env HDBBENCH_STATE_DIR].",
)


class Finite(click.FloatRange):
    """A number option: click's float takes 'nan' and 'inf', which no rate, time or share can be."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


# A seed of the generators: an unsigned 64-bit integer, as the devices and the data generator take it.
SEED = click.IntRange(0, SEED_MAX)

def _external_option(kind: ServerKind) -> Callable[[Any], Any]:
    """`--<kind's option>`: an existing server of that kind instead of the stack's own."""
    assert kind.external_option is not None
    return click.option(f"--{kind.external_option}", _parameter(kind), envvar=kind.external_env,
                        metavar="HOST:PORT" if kind.name == "tango" else "URL",
                        help=f"{kind.external_help} [env {kind.external_env}]")


def _parameter(kind: ServerKind) -> str:
    return (kind.external_option or kind.name).replace("-", "_")


def external_server_options() -> list[Callable[[Any], Any]]:
    """One option per server kind that can be external (hdbbench.stack.servers.registry), in registry order."""
    return [_external_option(k) for k in external_kinds() if k.external_option]


def external_servers(values: Mapping[str, str | None]) -> dict[str, str]:
    """Kind -> URL from the external_server_options' values (by parameter name); those not given left out."""
    return {k.name: str(values[_parameter(k)]) for k in external_kinds() if values.get(_parameter(k))}


tango_host_option = next(_external_option(k) for k in external_kinds() if k.name == "tango")

database_option = click.option("--database", default="hdbpp", show_default=True,
                               help="The database holding the HDB++ schema.")


def find_tango_host(state_dir: Path, given: str | None) -> str:
    """The Tango database a command uses: the one given, else the stack's, else $TANGO_HOST."""
    if given:
        return given
    try:
        endpoints = load_endpoints(state_dir)
    except ServerError as no_stack:
        fallback = os.environ.get("TANGO_HOST")
        if fallback:
            return fallback
        raise ServerError(f"{no_stack}; or give --tango-host") from None
    if endpoints.tango is None:
        raise ServerError(f"the stack in {Path(state_dir).resolve()} has no Tango database; give --tango-host")
    return endpoints.tango.tango_host

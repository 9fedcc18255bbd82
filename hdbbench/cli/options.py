# SPDX-License-Identifier: Apache-2.0
"""The options every command group shares, defined once, and how a command finds the stack.

Every command finds the stack the same way: the state directory from ``--state-dir`` or
``HDBBENCH_STATE_DIR`` (default ``.hdbbench``); the Tango database from ``--tango-host`` or
``HDBBENCH_TANGO_HOST`` when given, else the stack's (the one ``hdbbench stack up`` started or was
given), else ``TANGO_HOST`` when no stack is up. A ``TANGO_HOST`` set for a facility never wins over
the stack's own Tango database.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from hdbbench.errors import ServerError
from hdbbench.stack import DEFAULT_STATE_DIR, load_endpoints

state_dir_option = click.option(
    "--state-dir", type=click.Path(file_okay=False, path_type=Path), envvar="HDBBENCH_STATE_DIR",
    default=DEFAULT_STATE_DIR, show_default=True,
    help="The stack's state directory: records, logs and links to the servers' data [env HDBBENCH_STATE_DIR].",
)

tango_host_option = click.option(
    "--tango-host", envvar="HDBBENCH_TANGO_HOST", metavar="HOST:PORT",
    help="An existing Tango database instead of the stack's own [env HDBBENCH_TANGO_HOST].",
)

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

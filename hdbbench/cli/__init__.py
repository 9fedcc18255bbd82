# SPDX-License-Identifier: Apache-2.0
"""The ``hdbbench`` command: a thin layer over the modules, one module per command group.

Errors the user can act on (HdbbenchError) print as one line ``hdbbench: error: ...`` and exit 2;
Ctrl-C and SIGTERM unwind through the modules' clean-up and exit 130. The shared options (state
directory, Tango host) are defined once, in hdbbench.cli.options.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, NoReturn

import click

from hdbbench.cli import check as check_cli
from hdbbench.cli import devices as devices_cli
from hdbbench.cli import exporter as exporter_cli
from hdbbench.cli import extract as extract_cli
from hdbbench.cli import hosts as hosts_cli
from hdbbench.cli import inventory as inventory_cli
from hdbbench.cli import migrate as migrate_cli
from hdbbench.cli import plan as plan_cli
from hdbbench.cli import report as report_cli
from hdbbench.cli import runs as runs_cli
from hdbbench.cli import schema as schema_cli
from hdbbench.cli import size as size_cli
from hdbbench.cli import stack as stack_cli
from hdbbench.cli import subscribers as subscribers_cli
from hdbbench.model.errors import HdbbenchError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hdbbench")
def main() -> None:
    """hdbbench: the HDB++ archiving testbed."""


for command in (stack_cli.stack, schema_cli.schema, devices_cli.devices, subscribers_cli.subscribers,
                runs_cli.run, size_cli.size, report_cli.report, report_cli.compare, extract_cli.data,
                extract_cli.extract, hosts_cli.hosts, check_cli.check, migrate_cli.migrate,
                exporter_cli.exporter_command, inventory_cli.inventory, plan_cli.plan):
    main.add_command(command)


def _sigterm_as_interrupt(signum: int, frame: Any) -> NoReturn:
    raise KeyboardInterrupt


def _redeliver_swallowed_interrupt(unraisable: Any) -> None:
    """Send a swallowed Ctrl-C again, to land where it can unwind the command.

    Python runs some code where an exception cannot propagate: the at-fork hooks (logging's
    `_releaseLock` runs in the parent after every fork that `subprocess` makes with a
    `preexec_fn`), finalisers, weakref callbacks. A Ctrl-C that lands there is printed as
    "Exception ignored" and lost, and the command went on to finish and exit 0 (CI, stop 44).
    The signal is sent again from another thread, a moment later: sent from here, its handler would
    run here, at the hook's next call. Should it land in such a place again, it comes back here.
    """
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        if os.getpid() == _interrupts_pid:  # not in a child between fork and exec
            timer = threading.Timer(REDELIVERY_DELAY_S, os.kill, args=(os.getpid(), signal.SIGINT))
            timer.daemon = True
            timer.start()
        return
    sys.__unraisablehook__(unraisable)


_interrupts_pid = 0
REDELIVERY_DELAY_S = 0.05  # long past the hook's return; short against a person's reaction


def deliver_interrupts() -> None:
    """SIGTERM unwinds like Ctrl-C, and no Ctrl-C is lost in code that cannot raise."""
    global _interrupts_pid
    _interrupts_pid = os.getpid()
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    sys.unraisablehook = _redeliver_swallowed_interrupt


def run() -> None:
    deliver_interrupts()
    try:
        main(standalone_mode=False)
    except HdbbenchError as exc:
        click.echo(f"hdbbench: error: {exc}", err=True)
        sys.exit(2)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("hdbbench: interrupted", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        # One line, as every other error: what is wrong, and where the command's options are told.
        command = exc.ctx.command_path if exc.ctx is not None else "hdbbench"
        click.echo(f"hdbbench: error: {exc.format_message().rstrip('.')} (see: {command} -h)", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)

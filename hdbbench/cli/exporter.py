# SPDX-License-Identifier: Apache-2.0
"""``hdbbench exporter``: HDB++ event subscribers' statistics for Prometheus (hdbbench.subscribers.exporter).

Any HdbEventSubscriber (the real hdbpp-es, hdbbench-es): the devices given with ``--device``, or
every exported device of class HdbEventSubscriber of the Tango database. A device given that cannot be
reached at start, or a port in use, is refused in one line (exit 2); a device found in the database
that does not answer (exported, but its process died) is a warning; a device that does not answer a
scrape is reported as ``hdbbench_exporter_up 0`` while the exporter runs on.
"""

from __future__ import annotations

from pathlib import Path

import click

from hdbbench.cli.options import find_tango_host, state_dir_option, tango_host_option
from hdbbench.model.errors import ConfigError, HdbbenchError
from hdbbench.subscribers import exporter


@click.command("exporter")
@state_dir_option
@tango_host_option
@click.option("--device", "devices", multiple=True, metavar="NAME",
              help="Subscriber device, d/f/m or tango://host:port/d/f/m (repeatable); default: every "
                   "exported device of class HdbEventSubscriber in the Tango database.")
@click.option("--port", type=click.IntRange(1, 65535),
              help="Serve /metrics on 127.0.0.1:PORT (required unless --once).")
@click.option("--timeout-ms", default=exporter.DEFAULT_TIMEOUT_MS, show_default=True,
              type=click.IntRange(min=1), help="Tango timeout of each device read.")
@click.option("--once", is_flag=True, help="Print one scrape on standard output and exit (no server).")
def exporter_command(state_dir: Path, tango_host: str | None, devices: tuple[str, ...], port: int | None,
                     timeout_ms: int, once: bool) -> None:
    """Serve HdbEventSubscriber statistics at http://127.0.0.1:PORT/metrics, read through Tango per scrape."""
    if port is None and not once:
        raise ConfigError("give --port PORT (or --once to print one scrape)")
    # A Tango database is needed to find the devices or to complete a plain name, not for full names.
    plain = not devices or any(not d.startswith("tango://") for d in devices)
    host = find_tango_host(state_dir, tango_host) if plain else tango_host
    if devices:  # named on purpose: each must answer now
        subscribers = [exporter.connect(exporter.full_name(d, host), timeout_ms) for d in devices]
    else:  # found in the database: one that is exported but down (it crashed) must not stop the others
        subscribers = [exporter.Subscriber(name, timeout_ms) for name in exporter.discover(host or "")]
        for sub in subscribers:
            try:
                sub.ensure()
            except HdbbenchError as exc:
                click.echo(f"hdbbench: warning: {exc}; exported as {exporter.UP_METRIC} 0 until it answers",
                           err=True)
    if once:
        click.echo(exporter.scrape(subscribers), nl=False)
        return

    def ready(bound: int) -> None:
        click.echo(f"exporting {len(subscribers)} subscriber(s) at http://127.0.0.1:{bound}/metrics: "
                   f"{', '.join(s.label for s in subscribers)}", err=True)

    assert port is not None
    exporter.serve(port, lambda: exporter.scrape(subscribers), on_ready=ready)

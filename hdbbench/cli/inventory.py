# SPDX-License-Identifier: Apache-2.0
"""`hdbbench inventory ...`: an inventory (the file `size plan`, the facility scenario and `plan
archivers` read) written from what a facility already has (hdbbench.inventory)."""

from __future__ import annotations

import click


@click.group()
def inventory() -> None:
    """Inventories from a live HDB++ archive, a Tango database or an archiving configuration."""


# --- from-hdb: a live HDB++ archive (hdbbench.inventory.from_hdb)

from pathlib import Path

from rich.console import Console

from hdbbench.inventory import from_hdb as hdb


@inventory.command("from-hdb")
@click.argument("url")
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path),
              help="The inventory file to write.")
@click.option("--window-h", type=click.FloatRange(min=0, min_open=True), default=hdb.DEFAULT_WINDOW_H,
              show_default=True, help="Rates over this many hours ending at the archive's newest event.")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=hdb.DEFAULT_MAX_SECONDS,
              show_default=True, help="Stop, writing nothing, when the read takes longer.")
@click.option("--rows-per-attribute", type=click.IntRange(min=2), default=hdb.DEFAULT_ROWS_PER_ATTRIBUTE,
              show_default=True, help="Rows read per attribute at most (its newest in the window).")
@click.option("--name", help="The inventory's name (default: the database's).")
def from_hdb(url: str, output: Path, window_h: float, max_seconds: float, rows_per_attribute: int,
             name: str | None) -> None:
    """An inventory of the live HDB++ archive at URL (postgresql://user:pw@host:port/db or
    mysql://user:pw@host:port/db), read in read-only sessions: attributes grouped by type, format,
    write type, array length and rate, with their error, invalid and value statistics."""
    console = Console(stderr=True)
    done = hdb.from_hdb(url, output, window_h=window_h, max_seconds=max_seconds,
                        rows_per_attribute=rows_per_attribute, name=name, console=console)
    for line in done.warnings:
        console.print(f"hdbbench: warning: {line}", highlight=False, soft_wrap=True, markup=False)
    click.echo(done.summary())

# SPDX-License-Identifier: Apache-2.0
"""`hdbbench inventory ...`: an inventory (the file `size plan`, the facility scenario and `plan
archivers` read) written from what a facility already has (hdbbench.load.inventory).

    hdbbench inventory from-hdb URL --output FILE [--window-h 24] [--max-seconds 600]
    hdbbench inventory from-tango HOST:PORT --output FILE [--url ARCHIVE_URL] [--default-period S]
    hdbbench inventory from-yaml CONFIG.yaml --output FILE --types-from HOST:PORT [--url ARCHIVE_URL]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from hdbbench.cli.options import Finite
from hdbbench.load.inventory import from_hdb as hdb
from hdbbench.load.inventory.from_tango import read_tango, write_reading
from hdbbench.load.inventory.from_yaml import read_yaml


@click.group()
def inventory() -> None:
    """Inventories from a live HDB++ archive, a Tango database or an archiving configuration."""


# --- from-hdb: a live HDB++ archive (hdbbench.load.inventory.from_hdb)


# Rates from an archive: from-hdb's, and from-tango's and from-yaml's with --url.
_window = click.option("--window-h", type=Finite(min=0, min_open=True), default=hdb.DEFAULT_WINDOW_H,
                       show_default=True, help="Rates over this many hours ending at the archive's newest event.")


@inventory.command("from-hdb")
@click.argument("url")
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path),
              help="The inventory file to write.")
@_window
@click.option("--max-seconds", type=Finite(min=0, min_open=True), default=hdb.DEFAULT_MAX_SECONDS,
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


def _written(reading: Any, output: Path) -> None:
    """Warnings as lines on stderr, the inventory into `output`, and one line saying what it holds."""
    for line in reading.warnings:
        click.echo(f"hdbbench: warning: {line}", err=True)
    path = write_reading(reading, output)
    inv = reading.inventory
    attributes = sum(g.count for g in inv.groups)
    click.echo(f"{path}: {attributes} attributes in {len(inv.groups)} groups, "
               f"{len(inv.archivers)} archivers with {sum(len(a.attributes) for a in inv.archivers)} attributes")


_output = click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), required=True,
                       help="the inventory TOML to write (replaced whole, atomically)")
_url = click.option("--url", metavar="ARCHIVE_URL",
                    help="an HDB++ archive (postgresql://... or mysql://...): the rates it measured (read as "
                         "`inventory from-hdb` reads them) instead of the attributes' configuration")
_name = click.option("--name", help="the inventory's name [the output file's stem]")
_default_period = click.option("--default-period", type=Finite(min=0, min_open=True), default=10.0,
                               show_default=True, metavar="SECONDS",
                               help="the period of an attribute that states none (code-pushed, not polled)")


@inventory.command("from-tango")
@click.argument("database", metavar="TANGO_HOST")  # not `tango_host`: that name is the shared option's
@_output
@_url
@_window
@_name
@_default_period
def from_tango_cmd(database: str, output: Path, url: str | None, window_h: float, name: str | None,
                   default_period: float) -> None:
    """What the HDB++ archivers registered in the Tango database at TANGO_HOST (HOST:PORT) archive: each
    HdbEventSubscriber's AttributeList, the configuration manager's ArchiverList, and the attributes'
    types and rates from their devices. Contacts that database and the devices it lists, nothing else."""
    _written(read_tango(database, name or output.stem, url, default_period, window_h), output)


@inventory.command("from-yaml")
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@_output
@click.option("--types-from", metavar="TANGO_HOST",
              help="the live Tango database (HOST:PORT) whose devices give the attributes' types and a class's devices")
@_url
@_window
@_name
@_default_period
def from_yaml_cmd(path: Path, output: Path, types_from: str | None, url: str | None, window_h: float,
                  name: str | None, default_period: float) -> None:
    """The attributes a yaml2archiving configuration FILE (db, manager, archiver, configuration)
    archives, and its archiver assignment. Types from the devices of --types-from (the only Tango
    database contacted; also the one that lists a class's devices), or from the archive at --url.
    Rates: the file's archive_period or polling_period where it gives one, else the archive's, else
    the device's configuration."""
    _written(read_yaml(path, name or output.stem, types_from, url, default_period, window_h), output)

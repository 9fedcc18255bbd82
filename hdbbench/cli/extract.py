# SPDX-License-Identifier: Apache-2.0
"""`hdbbench data generate | dump | load | count` and `hdbbench extract <query set>`.

    hdbbench data generate query_sets/small.toml --backend timescaledb --create --order time
    hdbbench data dump --backend mysql --type devdouble --order pk dumps/devdouble-pk.csv
    hdbbench data load --backend postgresql --create dumps/devdouble-pk.csv
    hdbbench data count --backend timescaledb [--per-attribute]
    hdbbench extract query_sets/small.toml --backend timescaledb --backend mysql --variant pk --variant pk+2

Everything runs against the stack of `--state-dir` (`hdbbench stack up`); `extract` restarts its
servers for cold runs, so it needs a private stack there.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from hdbbench.backends import BACKENDS, DEFAULT_BACKENDS, Backend, backend_for_stack
from hdbbench.cli.options import database_option, state_dir_option
from hdbbench.parts.datagen import ORDERS, generate, load_data_set
from hdbbench.parts.extraction.dumps import dump, load
from hdbbench.parts.extraction.extraction import ExtractionOptions, run_extraction
from hdbbench.scenario.inputs import load_as
from hdbbench.stack.servers.registry import archive_kinds
from hdbbench.stack.settings import SettingsProfile
from hdbbench.stack.stack import Stack, StackConfig, load_endpoints
from hdbbench.trials.progress import PhaseProgress

console = Console(stderr=True)
_create_opt = click.option("--create", is_flag=True, help="Create the database and schema first (refuses an existing one).")
_variant_opt = click.option("--variant", default=None, help="Schema variant with --create (pk | pk+2, ...).")


def _backend(name: str, state_dir: Path, database: str, create: bool, variant: str | None) -> Backend:
    backend = backend_for_stack(name, load_endpoints(state_dir), database)
    if create:
        backend.create_schema(variant)
    return backend


@click.group()
def data() -> None:
    """Generate HDB++ data, dump a data table to CSV, bulk-load a dump, count the rows stored."""


@data.command("generate")
@click.argument("inventory", type=click.Path(path_type=Path))
@click.option("--backend", "backend_name", type=click.Choice(BACKENDS), required=True)
@click.option("--order", type=click.Choice(ORDERS), default=None, help="pk = by (att_conf_id, data_time); time = by data_time. Default: the inventory's.")
@_create_opt
@_variant_opt
@database_option
@state_dir_option
def generate_cmd(inventory: Path, backend_name: str, order: str | None, create: bool, variant: str | None,
                 database: str, state_dir: Path) -> None:
    """Write the data set of INVENTORY (a TOML file; a query set's [data] table works) into a backend."""
    inv = load_data_set(inventory)
    backend = _backend(backend_name, state_dir, database, create, variant)
    with _progress() as progress:
        task = progress.add_task(f"{backend_name} {order or inv.order} order", total=inv.expected_rows())
        result = generate(backend, inv, order, progress=lambda n: progress.advance(task, n))
    click.echo(json.dumps(result.to_dict(), indent=2))


@data.command("dump")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--backend", "backend_name", type=click.Choice(BACKENDS), required=True)
@click.option("--type", "tango_type", default="devdouble", show_default=True, help="Tango type suffix of the scalar table.")
@click.option("--order", type=click.Choice(ORDERS), default="pk", show_default=True)
@database_option
@state_dir_option
def dump_cmd(out: Path, backend_name: str, tango_type: str, order: str, database: str, state_dir: Path) -> None:
    """Dump the scalar table of one type to OUT (CSV) and OUT's .json sidecar."""
    backend = _backend(backend_name, state_dir, database, False, None)
    with console.status(f"dumping {tango_type} from {backend_name} by {order}..."):
        result = dump(backend, tango_type, order, out)
    click.echo(json.dumps(result.to_dict(), indent=2))


@data.command("load")
@click.argument("dump_file", type=click.Path(path_type=Path))
@click.option("--backend", "backend_name", type=click.Choice(BACKENDS), required=True)
@_create_opt
@_variant_opt
@database_option
@state_dir_option
def load_cmd(dump_file: Path, backend_name: str, create: bool, variant: str | None, database: str, state_dir: Path) -> None:
    """Bulk-load DUMP_FILE (COPY / LOAD DATA); print the load time and the size after it."""
    backend = _backend(backend_name, state_dir, database, create, variant)
    with console.status(f"loading {dump_file} into {backend_name}..."):
        result = load(backend, dump_file)
    click.echo(json.dumps(result.to_dict(), indent=2))


@data.command("count")
@click.option("--backend", "backend_name", type=click.Choice(BACKENDS), required=True)
@click.option("--per-attribute", is_flag=True, help="Also print one line per attribute.")
@database_option
@state_dir_option
def count_cmd(backend_name: str, per_attribute: bool, database: str, state_dir: Path) -> None:
    """Count the rows stored per attribute (every data table; an array counts once per event)."""
    counts = _backend(backend_name, state_dir, database, False, None).count_rows_by_attribute()
    if per_attribute:
        for name, rows in sorted(counts.items()):
            click.echo(f"{rows:>12} {name}")
    click.echo(f"{backend_name} database {database}: {sum(counts.values())} rows of {len(counts)} attributes")


@click.command("extract")
@click.argument("query_set", type=click.Path(path_type=Path))
@click.option("--backend", "backends", multiple=True, type=click.Choice(BACKENDS), help="Repeatable; default: all three.")
@click.option("--variant", "variants", multiple=True, help="Index variant(s), repeatable; default: pk and pk+2.")
@click.option("--order", type=click.Choice(ORDERS), default=None, help="Load order of the data set (default: its own).")
@click.option("--no-cluster", is_flag=True, help="Measure only the data as loaded.")
@click.option("--no-cold", is_flag=True, help="Never restart servers (first runs instead of cold ones).")
@click.option("--no-drop-caches", is_flag=True, help="Restart servers but leave the OS page cache alone.")
@click.option("--keep", is_flag=True, help="Keep the databases afterwards.")
@click.option("--runs", "runs_root", type=click.Path(path_type=Path), default=Path("runs"), show_default=True)
@state_dir_option
def extract(query_set: Path, backends: tuple[str, ...], variants: tuple[str, ...], order: str | None, no_cluster: bool,
            no_cold: bool, no_drop_caches: bool, keep: bool, runs_root: Path, state_dir: Path) -> None:
    """Measure QUERY_SET on each backend: cold/warm, unclustered/clustered, per index variant."""
    qs = load_as(query_set, "query set")  # refused before anything starts
    options = ExtractionOptions(backends=backends or DEFAULT_BACKENDS, variants=variants or ("pk", "pk+2"), order=order,
                                cluster=not no_cluster, drop_caches=not no_drop_caches, keep=keep)
    options.check()
    endpoints = load_endpoints(state_dir)
    stack = None if no_cold else _running_stack(state_dir)
    with PhaseProgress(console, "extraction") as progress:
        path = run_extraction(qs, endpoints, options, runs_root, stack, progress=progress)
    click.echo(str(path))


def _running_stack(state_dir: Path) -> Stack:
    """The stack `hdbbench stack up` started in state_dir, with the settings it runs with (for restarts)."""
    recorded = json.loads((Path(state_dir) / "stack.json").read_text())["profile"]
    return Stack(StackConfig(state_dir=state_dir, profile=SettingsProfile.from_dict(recorded),
                             components=archive_kinds(), keep_running=True))


class _RateColumn(ProgressColumn):
    """Events per second of a task."""

    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:,.0f} ev/s" if task.speed else "- ev/s")


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), _RateColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(), console=console)

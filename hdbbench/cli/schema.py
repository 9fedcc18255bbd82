# SPDX-License-Identifier: Apache-2.0
"""`hdbbench schema create | drop | verify | cluster | sql`: HDB++ schemas on the stack's servers.

Errors are raised as hdbbench errors (one line); the main CLI prints them and exits 2.
`verify` prints every difference and exits 1 when there is any.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hdbbench.backends import BACKENDS, Backend, backend_class, backend_for_stack, get_backend
from hdbbench.backends.base import SQL_SCHEMA
from hdbbench.cli.options import database_option, state_dir_option
from hdbbench.stack.stack import load_endpoints

_backend_opt = click.option("--backend", "backend_name", type=click.Choice(BACKENDS), required=True)
_variant_opt = click.option(
    "--variant", default=None, help="pk | pk+2, plus ',partitioned' and/or ',interval=<N>d' (default: the published HDB++ one)"
)


def _backend(backend_name: str, state_dir: Path, database: str) -> Backend:
    return backend_for_stack(backend_name, load_endpoints(state_dir), database)


@click.group()
def schema() -> None:
    """Create, verify and drop HDB++ schemas (TimescaleDB, PostgreSQL, MySQL/MariaDB)."""


@schema.command()
@_backend_opt
@_variant_opt
@state_dir_option
@database_option
def create(backend_name: str, variant: str | None, state_dir: Path, database: str) -> None:
    """Create the database, the HDB++ schema and its roles/users."""
    backend = _backend(backend_name, state_dir, database)
    resolved = backend.resolve_variant(variant)
    backend.create_schema(resolved)
    click.echo(f"created {backend_name} schema in {database} (variant {resolved})")


@schema.command()
@_backend_opt
@state_dir_option
@database_option
def drop(backend_name: str, state_dir: Path, database: str) -> None:
    """Drop the database and its grants (roles/users too unless another database uses them)."""
    _backend(backend_name, state_dir, database).drop_schema()
    click.echo(f"dropped {backend_name} database {database}")


@schema.command()
@_backend_opt
@_variant_opt
@state_dir_option
@database_option
def verify(backend_name: str, variant: str | None, state_dir: Path, database: str) -> None:
    """Compare the live database with the expected schema; list every difference."""
    backend = _backend(backend_name, state_dir, database)
    diffs = backend.verify_schema(variant)
    for line in diffs:
        click.echo(line)
    if diffs:
        raise click.exceptions.Exit(1)
    click.echo(f"{backend_name} schema in {database} matches variant {backend.resolve_variant(variant)}")


@schema.command()
@_backend_opt
@state_dir_option
@database_option
def cluster(backend_name: str, state_dir: Path, database: str) -> None:
    """Physically order the data tables by (att_conf_id, data_time)."""
    for line in _backend(backend_name, state_dir, database).cluster():
        click.echo(line)


@schema.command("sql")
@_backend_opt
@_variant_opt
def sql_(backend_name: str, variant: str | None) -> None:
    """Print the schema DDL (no server needed)."""
    backend: Any = get_backend(backend_name, None, "hdbpp")
    click.echo(backend.schema_sql(variant), nl=False)


def schema_files(backend_name: str) -> dict[str, str]:
    """The files of schemas/<backend>/: the default-variant DDL and the roles/users script."""
    backend: Any = get_backend(backend_name, None, "hdbpp")
    return {"schema.sql": backend.schema_sql(None)} | backend.account_files()


@schema.command("files")
@click.option("--out", type=click.Path(path_type=Path), default=Path("schemas"), show_default=True)
def files_(out: Path) -> None:
    """Regenerate the SQL files of schemas/<backend>/ from the schema model."""
    for backend_name in BACKENDS:
        if backend_class(backend_name).refusal(SQL_SCHEMA) is not None:
            continue  # no DDL: nothing to write
        for name, text in schema_files(backend_name).items():
            path = out / backend_name / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            click.echo(f"wrote {path}")

# SPDX-License-Identifier: Apache-2.0
"""``hdbbench check FILE...``: validate input files of any kind without starting anything.

Each file's kind (scenario, device profile, inventory, query set) is recognised by its content
(hdbbench.inputs) and validated by the same loader `run`, `devices up`, `size plan` and `extract`
use. A good file prints ``ok: <file> (<kind>)``; the first bad one prints one line naming the file,
the key and the problem on stderr, and the command exits 2 without looking at the files after it.
"""

from __future__ import annotations

from pathlib import Path

import click

from hdbbench.errors import HdbbenchError
from hdbbench.inputs import load_input


@click.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(files: tuple[Path, ...]) -> None:
    """Validate each FILE (scenario, device profile, inventory or query set) completely."""
    for path in files:
        try:
            kind, loaded = load_input(path)
        except HdbbenchError as exc:
            # Printed here rather than by the top-level handler, so that the one line is the same
            # whichever way the command is invoked (also in-process, through click's test runner).
            click.echo(f"hdbbench: error: {exc}", err=True)
            raise SystemExit(2) from None
        click.echo(f"ok: {path} ({kind})")
        for warning in getattr(loaded, "warnings", ()):
            click.echo(f"hdbbench: warning: {path}: {warning}", err=True)

# SPDX-License-Identifier: Apache-2.0
"""``hdbbench migrate RUN_DIR [--to DEST]``: a run directory of an older results format in today's.

The run directory is only read; DEST (default ``<RUN_DIR>-format<N>`` beside it, N today's format)
must not exist and appears complete or not at all. hdbbench.results.migration says what is carried and how; ``migration.json``
in DEST lists what was dropped and what the older format did not record.
"""

from __future__ import annotations

from pathlib import Path

import click

from hdbbench.results.document import FORMAT_VERSION
from hdbbench.results.migration import default_destination, migrate_run, summary_line


@click.command("migrate")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--to", "dest", type=click.Path(path_type=Path), default=None,
              help=f"Where to write the migrated run directory (default: RUN_DIR-format{FORMAT_VERSION} beside "
                   "RUN_DIR).")
def migrate(run_dir: Path, dest: Path | None) -> None:
    """Convert RUN_DIR (results format 1 or 2) into a run directory of today's format that report and compare read."""
    target = dest if dest is not None else default_destination(run_dir)
    click.echo(summary_line(target, migrate_run(run_dir, target)))

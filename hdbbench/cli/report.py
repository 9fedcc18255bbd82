# SPDX-License-Identifier: Apache-2.0
"""``hdbbench report <run dir>`` and ``hdbbench compare <run> <run> ...``."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from hdbbench.model.errors import ConfigError
from hdbbench.report.ranking import parse_weights

_RUN_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command("report")
@click.argument("run_dir", type=_RUN_DIR)
@click.option("--weights", default=None, metavar="NAME=W,...",
              help="Ranking weights per criterion (default: the scenario's [report] weights, else balanced).")
def report(run_dir: Path, weights: str | None) -> None:
    """Write RUN_DIR/report.html: figures, words and ranking from the run's results files."""
    # deferred: the report stage loads matplotlib (~1 s); only the commands that write a report need it
    from hdbbench.report.page import write_report

    path = write_report(run_dir, parse_weights(weights) if weights else None)
    click.echo(str(path))


@click.command("compare")
@click.argument("run_dirs", nargs=-1, type=_RUN_DIR)
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=Path("compare.html"),
              show_default=True, help="Where to write the HTML page.")
def compare(run_dirs: tuple[Path, ...], output: Path) -> None:
    """Compare the figures of RUN_DIRS, as ratios to the first; 'not significant' within the spread."""
    if len(run_dirs) < 2:
        raise ConfigError("compare needs at least two run directories")
    # deferred: the report stage loads matplotlib (~1 s); only the commands that write a report need it
    from hdbbench.report import compare as comparison

    labels = comparison.run_labels(run_dirs)
    rows = comparison.compare_rows([comparison.run_figures(p) for p in run_dirs])
    Console().print(comparison.terminal_table(rows, labels))
    for warning in comparison.pace_warnings([comparison.device_pace(p) for p in run_dirs], labels):
        click.echo(f"warning: {warning}")
    for sentence in comparison.paced_limits([comparison.limit_paces(p) for p in run_dirs], labels):
        click.echo(sentence)
    click.echo(str(comparison.write_html(run_dirs, output)))

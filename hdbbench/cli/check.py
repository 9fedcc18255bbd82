# SPDX-License-Identifier: Apache-2.0
"""``hdbbench check FILE...``: validate input files of any kind without starting anything.

Each file's kind (scenario, device profile, inventory, query set) is recognised by its content
(hdbbench.scenario.inputs) and validated by the same loader `run`, `devices up`, `size plan` and `extract`
use. A good file prints ``ok: <file> (<kind>)``; the first bad one prints one line naming the file,
the key and the problem on stderr, and the command exits 2 without looking at the files after it.

``--plan`` also prints, under each scenario, the run plan ``hdbbench run`` would follow on this
machine (hdbbench.scenario.plan: devices, stack, hosts, trials in order, parts), made by the same `plan_run`;
what the plan refuses here (a C++ engine not built, a hosted run without HDBBENCH_TANGO_HOST) is
then an error as for a bad file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from hdbbench.model.errors import ConfigError, HdbbenchError
from hdbbench.scenario.inputs import load_input
from hdbbench.scenario.plan import RunOptions, plan_run

if TYPE_CHECKING:
    from hdbbench.scenario.scenario import Scenario


@click.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--plan", "show_plan", is_flag=True,
              help="Also print each scenario's run plan on this machine (devices, stack, hosts, trials in order).")
def check(files: tuple[Path, ...], show_plan: bool) -> None:
    """Validate each FILE (scenario, device profile, inventory or query set) completely."""
    for path in files:
        try:
            kind, loaded = load_input(path)
            plan = _plan_lines(path, loaded) if show_plan and kind == "scenario" else []
        except HdbbenchError as exc:
            # Printed here rather than by the top-level handler, so that the one line is the same
            # whichever way the command is invoked (also in-process, through click's test runner).
            click.echo(f"hdbbench: error: {exc}", err=True)
            raise SystemExit(2) from None
        click.echo(f"ok: {path} ({kind})")
        for warning in getattr(loaded, "warnings", ()):
            click.echo(f"hdbbench: warning: {path}: {warning}", err=True)
        for line in plan:
            click.echo(line)


def _plan_lines(path: Path, scenario: Scenario) -> list[str]:
    """The scenario's run plan as `hdbbench run` makes it (default options), in lines; what the plan
    refuses is a ConfigError naming the file."""
    try:
        return plan_run(scenario, RunOptions()).lines()
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None

# SPDX-License-Identifier: Apache-2.0
"""`hdbbench size measure | plan`: disk usage per Tango type, and sizing for facility planning.

    hdbbench size measure [--backend timescaledb ...] [--variant pk+2 | --variant mysql=pk,page_compressed ...]
                          [--case devdouble --case spectrum:devdouble:1000 ...] [--events 200000 --span 20]
                          [--inventory inventories/example-facility.toml --simulated-s 3600 --scale 0.01]
    hdbbench size plan inventories/example-facility.toml --from runs/<run>/results.json [--check runs/<run>]
                       [--replicas 2 --log-retention-days 7]
    hdbbench size validate [--backend mysql ...] [--rows 10000000] [--fit-events 1000000] [--order time --order pk]

`measure` writes a run directory (results.json of kind "disk", sizes.csv, fits.csv, inventory.csv);
`plan` writes one of kind "disk-plan" (projection.csv, check.csv) and prints the projection; with
--check it exits 1 when a projection misses the measured size by more than 10 %. `validate` loads
scalar devdouble at `--rows` and compares the size with the default-scale fit (kind "disk-validate",
validate.csv); it exits 1 when one misses by more than 10 %.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from hdbbench.backends import BACKENDS, DEFAULT_BACKENDS
from hdbbench.cli.options import SEED, Finite, state_dir_option
from hdbbench.load.inventory.model import load_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.units import human_bytes as human
from hdbbench.parts.disk import (
    array_events,
    default_cases,
    default_span,
    parse_case,
    run_measure,
    sizing,
    variants_for,
)
from hdbbench.parts.disk.validate import validate, write_validation
from hdbbench.parts.disk.variants import storage_of
from hdbbench.results.document import RunDirectory, environment_facts, load_results, results_document
from hdbbench.scenario.inputs import load_as
from hdbbench.stack.stack import load_endpoints
from hdbbench.trials.progress import PhaseProgress

console = Console(stderr=True)


@click.group()
def size() -> None:
    """Disk usage per Tango type and backend; projections for a facility inventory."""


@size.command("measure")
@state_dir_option
@click.option("--backend", "backends", multiple=True, type=click.Choice(BACKENDS), help="Default: all three.")
@click.option("--variant", "variants", multiple=True, metavar="[BACKEND=]VARIANT",
              help="pk | pk+2 [,partitioned|,interval=<N>d]; storage options: " + "; ".join(
                  f"{b} ,{' | ,'.join(storage_of(b))}" for b in BACKENDS if storage_of(b)) + ".")
@click.option("--case", "cases", multiple=True, metavar="SPEC",
              help="[scalar|spectrum|image:]<type>[:<n>|<x>x<y>][:ro|rw]; default: every scalar type + devdouble spectra.")
@click.option("--events", default=200_000, show_default=True, help="Events per scalar case (its largest size).")
@click.option("--span", type=Finite(), help="Each case is measured at sizes from events/SPAN to events and fitted "
              "(1: one size); default: 100, less when events/100 < 10000.")
@click.option("--attributes", default=4, show_default=True, help="Attributes per case.")
@click.option("--array-sizes", default="10,100,1000", show_default=True, help="Default devdouble spectrum sizes.")
@click.option("--inventory", type=click.Path(path_type=Path), help="Also load this inventory (for plan --check).")
@click.option("--simulated-s", type=Finite(min=0, min_open=True), default=3600.0, show_default=True, help="Inventory run: seconds of archiving loaded.")
@click.option("--scale", type=Finite(min=0, min_open=True), default=0.01, show_default=True, help="Inventory run: share of each group's attributes.")
@click.option("--seed", type=SEED, default=42, show_default=True)
@click.option("--runs", "runs_root", type=click.Path(path_type=Path), default=Path("runs"), show_default=True)
@click.option("--name", default="disk", show_default=True, help="Run directory name suffix.")
def measure(state_dir: Path, backends: tuple[str, ...], variants: tuple[str, ...], cases: tuple[str, ...], events: int,
            span: float | None, attributes: int, array_sizes: str, inventory: Path | None, simulated_s: float, scale: float, seed: int,
            runs_root: Path, name: str) -> None:
    """Bytes per event of each type/format/write table on each backend and variant."""
    inv = load_inventory(inventory) if inventory else None
    sizes = [int(s) for s in array_sizes.split(",") if s.strip()]
    span = default_span(events) if span is None else span
    parsed = [parse_case(c, events, attributes, span) for c in cases]
    case_list = [replace(c, events=array_events(events, c.elements, attributes)) if c.elements > 1 else c
                 for c in parsed] or default_cases(events, attributes, sizes, span)
    chosen = variants_for(backends or DEFAULT_BACKENDS, variants)
    endpoints = load_endpoints(state_dir)
    with PhaseProgress(console, "disk usage") as progress:
        path = run_measure(endpoints, chosen, case_list, seed, runs_root, name,
                           (inv, simulated_s, scale) if inv else None, progress=progress)
    click.echo(str(path))


@size.command("validate")
@state_dir_option
@click.option("--backend", "backends", multiple=True, type=click.Choice(BACKENDS), help="Default: all three.")
@click.option("--variant", "variants", multiple=True, type=click.Choice(["pk", "pk+2"]), help="Default: both.")
@click.option("--order", "orders", multiple=True, type=click.Choice(["time", "pk"]), help="Load order; default: both.")
@click.option("--rows", default=10_000_000, show_default=True, help="Events of scalar devdouble loaded.")
@click.option("--fit-events", default=100_000, show_default=True,
              help="Largest size of the default-scale fit ([disk] events of scenarios/default.toml).")
@click.option("--span", type=Finite(), help="Sizes of the fit: from fit-events/SPAN up; default as size measure.")
@click.option("--attributes", default=4, show_default=True, help="Attributes ([disk] attributes of the default).")
@click.option("--seed", type=SEED, default=42, show_default=True)
@click.option("--runs", "runs_root", type=click.Path(path_type=Path), default=Path("runs"), show_default=True)
def validate_(state_dir: Path, backends: tuple[str, ...], variants: tuple[str, ...], orders: tuple[str, ...], rows: int,
              fit_events: int, span: float | None, attributes: int, seed: int, runs_root: Path) -> None:
    """Load ROWS events of scalar devdouble and compare the size with the default-scale fit (target ±10 %)."""
    span = default_span(fit_events) if span is None else span
    endpoints = load_endpoints(state_dir)
    settings = {"backends": list(backends or DEFAULT_BACKENDS), "variants": list(variants or ("pk", "pk+2")),
                "orders": list(orders or ("time", "pk")), "rows": rows, "fit_events": fit_events, "span": span,
                "attributes": attributes, "seed": seed}
    results = validate(endpoints, settings["backends"], settings["variants"], settings["orders"], rows, fit_events,
                       span, attributes, seed, progress=console.print)
    path = write_validation(runs_root, "validate", endpoints, settings, results)
    _print_validation(results)
    click.echo(str(path))
    if not all(v.within_tolerance for v in results):
        raise SystemExit(1)


def _print_validation(results: list[Any]) -> None:
    table = Table(title="projection from the default-scale fit versus measured (target ±10 %)")
    for col in ("backend", "variant", "order", "rows", "marginal B/event", "projected", "measured", "error",
                "files", "error vs files"):
        table.add_column(col)
    for v in results:
        table.add_row(v.backend, v.variant, v.order, str(v.rows), f"{v.marginal_bytes_per_event:.1f}",
                      human(v.projected_bytes), human(v.measured_bytes), f"{100 * v.error:+.1f} %",
                      human(v.file_bytes), f"{100 * v.file_error:+.1f} %")
    Console(width=160).print(table)


@size.command("plan")
@click.argument("inventory_file", type=click.Path(path_type=Path))
@click.option("--from", "results_file", type=click.Path(path_type=Path), required=True,
              help="results.json of a `size measure` run (or its run directory).")
@click.option("--check", "check_dir", type=click.Path(path_type=Path),
              help="A `size measure --inventory` run directory to compare the projection with (target ±10 %).")
@click.option("--replicas", default=1.0, show_default=True, type=Finite(min=1.0),
              help="Copies of the database kept (primary included): every figure times this.")
@click.option("--log-retention-days", default=0.0, show_default=True, type=Finite(min=0.0),
              help="Days of write-ahead / binary log kept (backups, replication), added to the total.")
@click.option("--runs", "runs_root", type=click.Path(path_type=Path), default=Path("runs"), show_default=True)
def plan(inventory_file: Path, results_file: Path, check_dir: Path | None, replicas: float,
         log_retention_days: float, runs_root: Path) -> None:
    """Project disk per backend and variant for INVENTORY_FILE from measured bytes per event."""

    inventory = load_as(inventory_file, "inventory")  # refused before anything else
    results = _load(results_file)
    projections = sizing.project(inventory, results, replicas, log_retention_days)
    if not projections:
        raise ConfigError(f"{results_file}: holds no measured cases")
    checks = sizing.check(inventory, results, _load(check_dir)) if check_dir else []
    path = _write_plan(runs_root, inventory, results_file, check_dir, projections, checks)
    _print_plan(inventory, projections, checks)
    click.echo(str(path))
    if check_dir and not all(c["within_tolerance"] for c in checks):
        raise SystemExit(1)


def _load(path: Path) -> dict[str, Any]:
    path = Path(path)
    target = path / "results.json" if path.is_dir() else path
    if not target.exists():
        raise ConfigError(f"no results file at {target}")
    try:
        data = load_results(target)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if data.get("kind") != "disk":
        raise ConfigError(f"{target}: results of kind {data.get('kind')!r}, expected 'disk' (hdbbench size measure)")
    return data


def _write_plan(runs_root: Path, inventory: Any, results_file: Path, check_dir: Path | None,
                projections: list[dict[str, Any]], checks: list[dict[str, Any]]) -> Path:
    run = RunDirectory.create(runs_root, f"plan-{inventory.name}")
    scenario = {"inventory": inventory.to_dict(), "from": str(results_file), "check": str(check_dir) if check_dir else None}
    run.write_json("results.json", results_document("disk-plan", scenario, environment_facts(),
                                                    {"projections": projections, "checks": checks}))
    run.write_csv("projection.csv", ["backend", "variant", "group", "events_per_day", "bytes_per_event", "source",
                                     "bytes_per_day", "retention_days", "bytes_at_retention", "share_at_retention"],
                  ([p["backend"], p["variant"], g["label"], g["events_per_day"], g["bytes_per_event"], g["source"],
                    g["bytes_per_day"], g["retention_days"], g["bytes_at_retention"], g["share_at_retention"]]
                   for p in projections for g in p["groups"]))
    run.write_csv("check.csv", ["backend", "variant", "projected_bytes", "measured_bytes", "error", "within_tolerance"],
                  ([c["backend"], c["variant"], c["projected_bytes"], c["measured_bytes"], c["error"],
                    c["within_tolerance"]] for c in checks))
    run.set_status("completed")
    return run.path


def _print_plan(inventory: Any, projections: list[dict[str, Any]], checks: list[dict[str, Any]]) -> None:
    table = Table(title=f"projected disk for {inventory.name} (binary units)", expand=False)
    for col in ("backend", "variant", "per day", "per month", "per year", "at retention", "log/day", "logs kept",
                "total x replicas", "complete"):
        table.add_column(col)
    for p in projections:
        logs = ", ".join(f"{k} {human(v)}" for k, v in p["log_bytes_per_day"].items())
        table.add_row(p["backend"], p["variant"], human(p["bytes_per_day"]), human(p["bytes_per_month"]),
                      human(p["bytes_per_year"]), human(p["bytes_at_retention"]), logs or "-",
                      human(p["log_bytes_retained"]), f"{human(p['total_bytes'])} (x{p['replicas']:g})",
                      "yes" if p["complete"] else "NO")
    Console(width=160).print(table)
    if checks:
        ct = Table(title="projection versus measured run (target ±10 %)")
        for col in ("backend", "variant", "projected", "measured", "error"):
            ct.add_column(col)
        for c in checks:
            err = f"{100 * c['error']:+.1f} %" if c["error"] is not None else "n/a " + ",".join(c["unmeasured_groups"])
            ct.add_row(c["backend"], c["variant"], human(c["projected_bytes"]), human(c["measured_bytes"]), err)
        Console(width=160).print(ct)

# SPDX-License-Identifier: Apache-2.0
"""Sizing for facility planning: an attribute inventory's projected disk from measured bytes per event.

The inventory (its TOML format and its one reader) is hdbbench.load.inventory.model.

Projection: for every backend and variant of a `size measure` results file, bytes per event of each
group are the measured figure of the same type/format/write (scalars), or the fitted line
a + b * elements of that type's arrays (two or more measured sizes; one measured size only when it
matches). A group without a measurement is listed as unmeasured and left out of the totals, which
are then flagged incomplete. Disk at retention = bytes per day x retention days (the steady state once
old data is dropped); per month (30.44 days) and per year (365.25 days) assume no expiry yet.
Log growth (WAL / binary log) per day is reported beside it; kept for `log_retention_days`, it adds
that many days of log; `total_bytes` = (disk at retention + logs kept) x `replicas` (copies kept).
Each group also gives the chunks / partitions its table holds at retention (`parts_at_retention`),
from the backend's partition widths (TimescaleDB chunks, native or MariaDB partitions).

Bytes per event are the *marginal* figures of `size measure` (the slope of bytes = fixed + marginal
x events over each case's sizes): what a table costs per event once it is large. A case whose sizes
do not lie on a line is flagged there (`fit_ok` false) and not used here: its group is unmeasured.

Check: a `size measure --inventory` run loads a (scaled) inventory into one database; the projection
of exactly the events it stored (marginal x events, plus each table's fixed part once) is compared
with the pages in use it measured: error = projected / measured - 1, target within ±10 %.
"""

from __future__ import annotations

import math
from typing import Any

from hdbbench.backends import get_backend
from hdbbench.load.inventory.model import Group, Inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, WriteType
from hdbbench.model.records import write
from hdbbench.parts.disk.cases import Case
from hdbbench.parts.disk.variants import MeasureVariant
from hdbbench.results.sizing import Projection

DAYS_PER_MONTH = 30.44
DAYS_PER_YEAR = 365.25
CHECK_TOLERANCE = 0.10


# -------------------------------------------------------------------------------- projection


def group_case(group: Group, simulated_s: float, scale: float) -> Case:
    """The events of `simulated_s` seconds of `scale` x count attributes (at least one)."""
    attributes = max(1, round(group.count * scale))
    per_attr = max(1, round(group.rate_hz * simulated_s))
    write = WriteType.READ if group.write == "ro" else WriteType.READ_WRITE
    return Case(group.type, group.format, write, group.dim_x, group.dim_y, attributes * per_attr, attributes,
                1.0 / group.rate_hz, group.string_chars)



def _points(results: dict[str, Any]) -> list[dict[str, Any]]:
    return list(results.get("results", {}).get("cases", []))


def bytes_per_event(results: dict[str, Any], backend: str, variant: str, group: Group) -> tuple[float | None, str]:
    """(bytes per event, how it was obtained) for one group from a `size measure` results document."""
    fmt = group.format.name.lower()
    matching = [r for r in _points(results) if r["backend"] == backend and r["variant"] == variant
                and r["case_type"] == group.type.suffix and r["case_format"] == fmt and r["case_write"] == group.write]
    rows = [r for r in matching if r.get("fit_ok", True)]
    if not rows and matching:
        return None, f"not used: {matching[0].get('fit_note') or 'its sizes do not fit a line'}"
    if group.format == AttrFormat.SCALAR:
        return (rows[0]["bytes_per_event"], _how(rows[0])) if rows else (None, "not measured")
    exact = [r for r in rows if r["case_elements"] == group.elements]
    fits = [f for f in results.get("results", {}).get("fits", []) if f["backend"] == backend and f["variant"] == variant
            and f["type"] == group.type.suffix and f["format"] == fmt and f["write"] == group.write]
    if fits and math.isfinite(fits[0]["b_bytes_per_element"]):
        f = fits[0]
        return f["a_bytes"] + f["b_bytes_per_element"] * group.elements, f"fit over {f['elements']} elements"
    if exact:
        return exact[0]["bytes_per_event"], _how(exact[0])
    return None, "not measured (measure two or more array sizes of this type)"


def _how(row: dict[str, Any]) -> str:
    sizes = row.get("fit_sizes") or []
    if len(sizes) >= 2:
        return f"marginal over {len(sizes)} sizes, {sizes[0]}-{sizes[-1]} events"
    return "measured at one size" + (" (after CLUSTER)" if "clustered" in str(row.get("variant")) else "")


def fixed_bytes(results: dict[str, Any], backend: str, variant: str, group: Group) -> float:
    """The fitted fixed part of the group's table (0 when unknown): what a table costs before it grows."""
    fmt = group.format.name.lower()
    rows = [r for r in _points(results) if r["backend"] == backend and r["variant"] == variant
            and r["case_type"] == group.type.suffix and r["case_format"] == fmt and r["case_write"] == group.write]
    return max((float(r.get("fixed_bytes") or 0.0) for r in rows), default=0.0)


def _log_per_event(results: dict[str, Any], backend: str, variant: str, group: Group) -> dict[str, float]:
    rows = [r for r in _points(results) if r["backend"] == backend and r["variant"] == variant
            and r["case_type"] == group.type.suffix and r["case_format"] == group.format.name.lower()
            and r["case_write"] == group.write and r.get("log_per_event")]
    if not rows:
        return {}
    best = min(rows, key=lambda r: abs(r["case_elements"] - group.elements))
    scale = group.elements / best["case_elements"] if best["case_elements"] else 1.0
    return {k: v * scale for k, v in best["log_per_event"].items() if v is not None}


def variants_in(results: dict[str, Any]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((r["backend"], r["variant"]) for r in _points(results)))


def project(inventory: Inventory, results: dict[str, Any], replicas: float = 1.0,
            log_retention_days: float = 0.0) -> list[dict[str, Any]]:
    """One projection per (backend, variant) measured in `results`, with the per-group breakdown;
    `replicas` copies of everything, and the logs (WAL / binary log) kept `log_retention_days`."""
    out = []
    for backend, variant in variants_in(results):
        groups, complete = [], True
        for g in inventory.groups:
            parts = parts_at_retention(backend, variant, g)
            bpe, how = bytes_per_event(results, backend, variant, g)
            complete &= bpe is not None
            per_day = g.events_per_day * bpe if bpe is not None else None
            logs = {k: v * g.events_per_day for k, v in _log_per_event(results, backend, variant, g).items()}
            groups.append({"label": g.label, "events_per_day": g.events_per_day, "bytes_per_event": bpe, "source": how,
                           "bytes_per_day": per_day, "retention_days": g.retention_days,
                           "bytes_at_retention": per_day * g.retention_days if per_day is not None else None,
                           "log_bytes_per_day": logs, "parts_at_retention": parts})
        out.append(_with_logs_and_replicas(_totals(backend, variant, groups, complete), replicas, log_retention_days))
    return out


def parts_at_retention(backend: str, variant: str, group: Group) -> int | None:
    """Chunks / partitions the group's table holds at retention (None: not partitioned, or unknown)."""
    try:
        schema = MeasureVariant.parse(backend, variant).schema
        planner = get_backend(backend, None, "plan")  # no server: table names and partition widths only
        table = planner.table_for(AttributeInfo(group.label, group.type, group.format, _write_type(group.write)))
        return planner.parts_for(table, schema, group.retention_days)
    except ConfigError:
        return None


def _write_type(side: str) -> WriteType:
    return WriteType.READ if side == "ro" else WriteType.READ_WRITE


def _with_logs_and_replicas(p: dict[str, Any], replicas: float, log_retention_days: float) -> dict[str, Any]:
    """The logs kept for a stated time (transient, but they need the disk while kept), and every
    figure times the number of copies (primary + replicas)."""
    logs = sum(p["log_bytes_per_day"].values()) * log_retention_days
    return p | {"replicas": replicas, "log_retention_days": log_retention_days, "log_bytes_retained": logs,
                "total_bytes": (p["bytes_at_retention"] + logs) * replicas}


def _totals(backend: str, variant: str, groups: list[dict[str, Any]], complete: bool) -> dict[str, Any]:
    per_day = sum(g["bytes_per_day"] or 0.0 for g in groups)
    at_retention = sum(g["bytes_at_retention"] or 0.0 for g in groups)
    for g in groups:
        g["share_at_retention"] = (g["bytes_at_retention"] or 0.0) / at_retention if at_retention else None
    logs: dict[str, float] = {}
    for g in groups:
        for k, v in g["log_bytes_per_day"].items():
            logs[k] = logs.get(k, 0.0) + v
    return write(Projection(backend, variant, complete, per_day, per_day * DAYS_PER_MONTH, per_day * DAYS_PER_YEAR,
                            at_retention, logs, groups))  # type: ignore[arg-type]  # groups: dicts, written as they are


# ------------------------------------------------------------------------------------ check


def check(inventory: Inventory, results: dict[str, Any], run: dict[str, Any]) -> list[dict[str, Any]]:
    """Projection of the events a `size measure --inventory` run stored versus the size it measured."""
    by_label = {g.label: g for g in inventory.groups}
    out = []
    for measured in run.get("results", {}).get("inventory_runs", []):
        if measured.get("unavailable"):
            continue
        backend, variant = measured["backend"], measured["variant"]
        projected, missing, tables = 0.0, [], {}
        for stored in measured["groups"]:
            group = by_label.get(stored["label"])
            if group is None:
                raise ConfigError(f"the run holds group {stored['label']!r}, which {inventory.source} does not list")
            bpe, _ = bytes_per_event(results, backend, variant, group)
            if bpe is None:
                missing.append(group.label)
            else:
                projected += bpe * stored["events"]
                # Groups of one type, format and write side share a table, and its fixed part once.
                key = (group.type, group.format, group.write)
                tables[key] = max(tables.get(key, 0.0), fixed_bytes(results, backend, variant, group))
        projected += sum(tables.values())
        actual = measured["measured_bytes"]
        error = projected / actual - 1.0 if actual and not missing else None
        out.append({"backend": backend, "variant": variant, "projected_bytes": projected, "measured_bytes": actual,
                    "error": error, "within_tolerance": error is not None and abs(error) <= CHECK_TOLERANCE,
                    "unmeasured_groups": missing})
    return out

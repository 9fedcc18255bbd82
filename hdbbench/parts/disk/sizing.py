# SPDX-License-Identifier: Apache-2.0
"""Sizing for facility planning: an attribute inventory, measured bytes per event, projected disk.

An inventory (TOML) lists groups of archived attributes:

    name = "example-facility"
    retention_days = 730            # default for every group

    [[attributes]]
    label = "BPM positions"         # optional, defaults to <format>_<type>_<write>
    type = "devdouble"              # Tango type: devdouble, DevDouble or DEV_DOUBLE
    format = "scalar"               # scalar | spectrum | image
    write = "ro"                    # ro (READ) | rw (READ_WRITE and the other written types)
    count = 4000                    # attributes in the group
    rate_hz = 1.0                   # archive events per attribute per second ...
    # period_s = 10                 # ... or one event every period_s (exactly one of the two)
    elements = 1000                 # spectrum length (spectrum only)
    # dims = [640, 480]             # image width and height (image only)
    # string_chars = 20             # devstring only: characters per value
    # retention_days = 365          # overrides the default

Validation is complete before anything else: an unknown key, a wrong type or an impossible value is
a ConfigError naming the file, the line and the key
(``inventories/x.toml:9: [[attributes]] #3 rate_hz: must be > 0, got 0``).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.parts.disk import Case, parse_type
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType, WriteType
from hdbbench.results.document import Projection
from hdbbench.model.tomlfile import Table, from_values, read_document, suggestion

DAYS_PER_MONTH = 30.44
DAYS_PER_YEAR = 365.25
CHECK_TOLERANCE = 0.10
MAX_RATE_HZ = 1e6           # per attribute: an archive event every microsecond
MAX_ELEMENTS = 1 << 24      # per spectrum or image, as for the simulated devices: more is surely a typo


@dataclass(frozen=True)
class Group:
    label: str
    type: TangoType
    format: AttrFormat
    write: str  # ro | rw
    count: int
    rate_hz: float
    dim_x: int = 1
    dim_y: int = 0
    string_chars: int = 20
    retention_days: float = 365.0
    # What a live archive says of the group's values (hdbbench inventory from-hdb); None: not known.
    error_share: float | None = None     # events stored with an error instead of a value
    invalid_share: float | None = None   # events of INVALID quality (no value)
    value_step: float | None = None      # mean |value - previous value| of a scalar numeric attribute
    repeat_share: float | None = None    # events whose value equals the previous one
    names: tuple[str, ...] = ()          # the archive's attribute names (count of them), where read

    @property
    def elements(self) -> int:
        if self.format == AttrFormat.SCALAR:
            return 1
        return self.dim_x * (self.dim_y if self.format == AttrFormat.IMAGE else 1)

    @property
    def events_per_day(self) -> float:
        return self.count * self.rate_hz * 86400.0

    def case(self, simulated_s: float, scale: float) -> Case:
        """The events of `simulated_s` seconds of `scale` x count attributes (at least one)."""
        attributes = max(1, round(self.count * scale))
        per_attr = max(1, round(self.rate_hz * simulated_s))
        write = WriteType.READ if self.write == "ro" else WriteType.READ_WRITE
        return Case(self.type, self.format, write, self.dim_x, self.dim_y, attributes * per_attr, attributes,
                    1.0 / self.rate_hz, self.string_chars)

    def to_dict(self) -> dict[str, Any]:
        out = {"label": self.label, "type": self.type.suffix, "format": self.format.name.lower(), "write": self.write,
               "count": self.count, "rate_hz": self.rate_hz, "elements": self.elements, "dim_x": self.dim_x,
               "dim_y": self.dim_y, "string_chars": self.string_chars, "retention_days": self.retention_days}
        for key in VALUE_STATISTICS:
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


VALUE_STATISTICS = ("error_share", "invalid_share", "value_step", "repeat_share")


@dataclass(frozen=True)
class Archiver:
    """One archiver (an HdbEventSubscriber device) and the attributes assigned to it."""

    name: str
    attributes: tuple[str, ...]


@dataclass(frozen=True)
class Inventory:
    name: str
    source: Path
    groups: tuple[Group, ...]
    archivers: tuple[Archiver, ...] = ()   # today's assignment, where the source records one

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "source": str(self.source), "groups": [g.to_dict() for g in self.groups]}
        if self.archivers:
            out["archivers"] = [{"name": a.name, "attributes": len(a.attributes)} for a in self.archivers]
        return out


# ----------------------------------------------------------------------------------- parsing


def load_inventory(path: str | Path) -> Inventory:
    """Read and validate an inventory completely; ConfigError "file:line: key: problem" otherwise."""
    return _parse(read_document(path, "inventory").root())


def parse_inventory(document: dict[str, Any], source: str | Path) -> Inventory:
    """An inventory from values already parsed (no line numbers in its errors)."""
    return _parse(from_values(document, source).root())


def _parse(top: Table) -> Inventory:
    name = top.string("name")
    if not name:
        raise top.fail("name", "must not be empty")
    retention = top.positive("retention_days", 365.0)
    if not top.has("attributes"):
        raise top.fail("attributes", "is missing: give at least one [[attributes]] group")
    groups = [_parse_group(entry, retention) for entry in top.tables("attributes", required=True, name_key="label")]
    archivers = tuple(_parse_archiver(entry) for entry in top.tables("archivers", name_key="name"))
    top.finish()
    labels = [g.label for g in groups]
    duplicate = next((x for x in labels if labels.count(x) > 1), None)
    if duplicate:
        raise top.fail("attributes", f"has two groups labelled {duplicate!r}; give them distinct labels")
    names = [a.name for a in archivers]
    if twice := next((x for x in names if names.count(x) > 1), None):
        raise top.fail("archivers", f"names the archiver {twice!r} twice")
    seen: set[str] = set()
    for attribute in (n for a in archivers for n in a.attributes):
        if attribute in seen:
            raise top.fail("archivers", f"assigns {attribute!r} to two archivers")
        seen.add(attribute)
    return Inventory(name, top.document.source, tuple(groups), archivers)


def _parse_archiver(r: Table) -> Archiver:
    name = r.string("name")
    if not name:
        raise r.fail("name", "must not be empty")
    attributes = tuple(r.list_of("attributes", str, [], non_empty=False))
    r.finish()
    return Archiver(name, attributes)


def _parse_group(r: Table, default_retention: float) -> Group:
    type_text = r.string("type")
    try:
        ttype = parse_type(type_text)
    except ConfigError:
        raise r.fail("type", f"is not a Tango type: {type_text!r}"
                             + suggestion(type_text.lower(), [t.suffix for t in TangoType])) from None
    fmt = AttrFormat[r.choice("format", ("scalar", "spectrum", "image"), "scalar").upper()]
    write = r.choice("write", ("ro", "rw"), "ro")
    count = r.count("count", 1)
    rate = _rate(r)
    dim_x, dim_y = _dims(r, fmt)
    if fmt != AttrFormat.SCALAR and ttype == TangoType.DEV_ENCODED:
        raise r.fail("format", "must be scalar for devencoded (Tango allows DevEncoded only as a scalar)")
    chars = r.count("string_chars", 20)
    if r.has("string_chars") and ttype != TangoType.DEV_STRING:
        raise r.fail("string_chars", "applies to devstring only")
    retention = r.positive("retention_days", default_retention)
    shares = {key: r.number(key, None, minimum=0.0, maximum=1.0) if r.has(key) else None
              for key in ("error_share", "invalid_share", "repeat_share")}
    step = r.number("value_step", None, minimum=0.0) if r.has("value_step") else None
    names = tuple(r.list_of("names", str, [], non_empty=False))
    if names and len(names) != count:
        raise r.fail("names", f"lists {len(names)} names for a group of count = {count}")
    default_label = f"{fmt.name.lower()}_{ttype.suffix}_{write}" + (f"_x{dim_x}" if fmt == AttrFormat.SPECTRUM else "")
    label = r.string("label", default_label)
    r.finish()
    return Group(label, ttype, fmt, write, count, rate, dim_x, dim_y, chars, retention, value_step=step, names=names,
                 **shares)


def _rate(r: Table) -> float:
    has_rate, has_period = r.has("rate_hz"), r.has("period_s")
    r.known("rate_hz", "period_s")
    if has_rate == has_period:
        raise r.fail("rate_hz", "give exactly one of rate_hz and period_s")
    if has_rate:
        return r.number("rate_hz", positive=True, maximum=MAX_RATE_HZ)
    return 1.0 / r.number("period_s", positive=True, minimum=1.0 / MAX_RATE_HZ)


def _dims(r: Table, fmt: AttrFormat) -> tuple[int, int]:
    r.known("elements", "dims")  # which one applies depends on the format
    if fmt == AttrFormat.SCALAR:
        for key in ("elements", "dims"):
            if r.has(key):
                raise r.fail(key, "applies to spectrum/image groups only")
        return 1, 0
    if fmt == AttrFormat.SPECTRUM:
        if r.has("dims"):
            raise r.fail("dims", "applies to images; give a spectrum's length as elements")
        if not r.has("elements"):
            raise r.fail("elements", "is missing (the spectrum length)")
        return r.integer("elements", minimum=1, maximum=MAX_ELEMENTS), 0
    if r.has("elements"):
        raise r.fail("elements", "applies to spectra; give an image's size as dims = [width, height]")
    if not r.has("dims"):
        raise r.fail("dims", "is missing (dims = [width, height])")
    dims = r.list_of("dims", int, minimum=1)
    if len(dims) != 2:
        raise r.fail("dims", f"must be [width, height] with integers >= 1, got {dims!r}")
    if dims[0] * dims[1] > MAX_ELEMENTS:
        raise r.fail("dims", f"{dims[0]} x {dims[1]} is more than {MAX_ELEMENTS} elements")
    return int(dims[0]), int(dims[1])


# -------------------------------------------------------------------------------- projection


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
    from hdbbench.backends import get_backend
    from hdbbench.parts.disk import MeasureVariant

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
    return Projection(backend, variant, complete, per_day, per_day * DAYS_PER_MONTH, per_day * DAYS_PER_YEAR,
                      at_retention, logs, groups).to_dict()


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

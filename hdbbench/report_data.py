# SPDX-License-Identifier: Apache-2.0
"""What a run directory holds, read for the report: defensive, never guessing.

A run directory may hold, beside ``scenario.json``, ``environment.json`` and ``status.json``:

* ``results.json`` — kind "insertion": ``results.trials[]`` and ``series/<label>.csv``;
* ``extraction.json`` — kind "extraction": query times. Read from ``results.queries`` (or
  ``results.groups`` / ``results.trials``), one record per backend × interval × cache × layout, with
  ``backend``, an interval length (``interval_s``, ``interval_length_s`` or ``length_s``; or
  ``interval`` as "1h"/"1d"/"1w"), the cache state (``cache`` "cold"/"warm" or ``cold`` true/false),
  the layout (``clustered`` true/false or ``layout`` "clustered"/"unclustered") and times in seconds
  (``p50_s``/``p95_s``, or ``time_s``/``times_s``/``seconds`` as {p50, p95}), optionally ``count``;
* ``disk.json`` — kind "disk": ``results.tables`` (or ``results.sizes``), one record per backend ×
  table with ``backend``, ``table`` (or ``type``), ``data_bytes``, ``index_bytes``, ``toast_bytes``
  and ``events`` or ``bytes_per_event``;
* ``sizing.json`` — from ``hdbbench size plan``: ``results.backends`` as {backend: {total_bytes,
  per_type: {type: bytes}}} or ``results.projection`` as [{backend, total_bytes | bytes}].

A file that is missing makes its section say so; a file whose shape is not recognised makes its
section say which keys it found. Nothing is invented to fill a gap.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench import measure
from hdbbench.backends.registry import server_of
from hdbbench.results import FORMAT_VERSION

FILES = {"insertion": "results.json", "extraction": "extraction.json", "disk": "disk.json", "sizing": "sizing.json"}
_LABEL = re.compile(r"^(?P<backend>.+)_(?P<kind>throughput|batch(?P<batch>\d+)|subs(?P<subs>\d+)|saturation|sustained)$")


@dataclass
class Loaded:
    """One results file: its document, or why there is none."""

    name: str
    document: dict[str, Any] | None = None
    problem: str | None = None
    warnings: list[str] = field(default_factory=list)


KINDS = {"results.json": ("insertion",), "extraction.json": ("extraction",), "disk.json": ("disk",),
         "sizing.json": ("disk-plan", "sizing")}


def load_file(run_dir: Path, name: str) -> Loaded:
    """`name` from the run directory; else ``results.json`` when its kind is the one `name` holds
    (``hdbbench size measure`` and ``size plan`` write their own run directories)."""
    path = run_dir / name
    if name != "results.json" and not path.exists():
        fallback = load_json(run_dir / "results.json")
        if fallback.get("kind") in KINDS.get(name, ()):
            path = run_dir / "results.json"
    if not path.exists():
        return Loaded(name, problem=f"{name} is not in this run directory")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return Loaded(name, problem=f"{name} cannot be read: {exc}")
    if not isinstance(data, dict):
        return Loaded(name, problem=f"{name} is not a JSON object")
    kinds = KINDS.get(name, ())
    if kinds and data.get("kind") not in kinds:
        return Loaded(name, problem=f"{path.name} holds results of kind {data.get('kind')!r}, not {kinds[0]!r}")
    loaded = Loaded(name, document=data)
    if data.get("format_version") != FORMAT_VERSION:
        loaded.warnings.append(f"{name}: format_version {data.get('format_version')!r}, this report reads "
                               f"{FORMAT_VERSION}; figures shown as found")
    return loaded


def load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def num(value: Any) -> float | None:
    """A finite float, or None (missing, null, NaN, not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


# --- insertion ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrialRef:
    backend: str
    kind: str            # throughput | batch | subs | saturation | sustained | other
    batch: int | None
    subscribers: int | None
    trial: dict[str, Any]

    @property
    def label(self) -> str:
        return str(self.trial.get("label", "?"))


def classify(trial: Mapping[str, Any]) -> TrialRef:
    label = str(trial.get("label", ""))
    match = _LABEL.match(label)
    backend = str(trial.get("backend") or (match.group("backend") if match else "?"))
    if not match:
        return TrialRef(backend, "other", None, None, dict(trial))
    kind = re.sub(r"\d+$", "", match.group("kind"))
    batch = int(match.group("batch")) if match.group("batch") else None
    subs = int(match.group("subs")) if match.group("subs") else None
    return TrialRef(backend, kind, batch, subs, dict(trial))


@dataclass
class Insertion:
    trials: list[TrialRef]
    backends: list[str]
    series_dir: Path
    warmup_s: float

    def of_kind(self, kind: str) -> list[TrialRef]:
        return [t for t in self.trials if t.kind == kind]

    def one(self, backend: str, kind: str) -> TrialRef | None:
        return next((t for t in self.trials if t.backend == backend and t.kind == kind), None)


def insertion_view(run_dir: Path, document: Mapping[str, Any]) -> Insertion:
    trials = [classify(t) for t in dig(document, "results", "trials") or [] if isinstance(t, Mapping)]
    order = list(dig(document, "scenario", "backends") or [])
    backends = [b for b in order if any(t.backend == b for t in trials)]
    backends += [t.backend for t in trials if t.backend not in backends]
    backends = list(dict.fromkeys(backends))
    warmup = num(dig(document, "scenario", "warmup_s")) or 0.0
    return Insertion(trials, backends, run_dir / "series", warmup)


def read_series(path: Path) -> dict[str, list[float]]:
    """A series CSV as columns of floats (empty cells become NaN); {} when absent."""
    try:
        with open(path, newline="") as handle:
            rows = list(csv.reader(handle))
    except OSError:
        return {}
    if not rows:
        return {}
    columns: dict[str, list[float]] = {name: [] for name in rows[0]}
    for row in rows[1:]:
        for name, cell in zip(rows[0], row):
            try:
                columns[name].append(float(cell))
            except ValueError:
                columns[name].append(math.nan)
    return columns


def stored_rates(series: Mapping[str, Sequence[float]]) -> list[tuple[float, float]]:
    """(t_s, rows stored per second) from the cumulative RowsStoredNumber."""
    times, rows = series.get("t_s") or [], series.get("sub.RowsStoredNumber") or []
    pairs = [(t, r) for t, r in zip(times, rows) if math.isfinite(t) and math.isfinite(r)]
    return measure.rates_per_second([p[0] for p in pairs], [p[1] for p in pairs])


def column(series: Mapping[str, Sequence[float]], name: str) -> list[tuple[float, float]]:
    times, values = series.get("t_s") or [], series.get(name) or []
    return [(t, v) for t, v in zip(times, values) if math.isfinite(t) and math.isfinite(v)]


def archiving_cpu_us(trial: Mapping[str, Any], backend: str) -> float | None:
    """CPU µs per stored event of the archiving path: subscribers + this backend's database server."""
    cpu = trial.get("cpu") or {}
    parts = [num(dig(cpu, "subscribers", "us_per_event")), num(dig(cpu, server_of(backend) or "", "us_per_event"))]
    found = [p for p in parts if p is not None]
    return sum(found) if found else None


# --- extraction ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class QueryFigure:
    backend: str
    interval_s: float
    cold: bool | None
    clustered: bool | None
    p50_s: float | None
    p95_s: float | None
    count: int | None


_UNITS_S = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "day": 86400, "w": 604800, "week": 604800}


def _interval_s(record: Mapping[str, Any]) -> float | None:
    for key in ("interval_s", "interval_length_s", "length_s", "range_s"):
        if (value := num(record.get(key))) is not None:
            return value
    text = record.get("interval") or record.get("interval_length")
    if isinstance(text, str) and (m := re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*", text.lower())):
        factor = _UNITS_S.get(m.group(2)) or _UNITS_S.get(m.group(2).rstrip("s"))
        return float(m.group(1)) * factor if factor else None
    return num(text)


def _flag(record: Mapping[str, Any], key: str, alt_key: str, yes: str, no: str) -> bool | None:
    if isinstance(record.get(key), bool):
        return bool(record[key])
    text = str(record.get(alt_key) or record.get(key) or "").lower()
    return True if text == yes else False if text == no else None


def _times(record: Mapping[str, Any]) -> tuple[float | None, float | None]:
    p50, p95 = num(record.get("p50_s")), num(record.get("p95_s"))
    for key in ("client_s", "time_s", "times_s", "seconds", "duration_s"):
        nested = record.get(key)
        if isinstance(nested, Mapping):
            p50 = p50 if p50 is not None else num(nested.get("p50") if "p50" in nested else nested.get("median"))
            p95 = p95 if p95 is not None else num(nested.get("p95"))
    return p50, p95


def extraction_figures(document: Mapping[str, Any]) -> list[QueryFigure]:
    results = document.get("results") or {}
    # hdbbench extract writes per-group statistics in "summary" (its "queries" lists the query plan).
    records = next((results[k] for k in ("summary", "queries", "groups", "trials")
                    if isinstance(results.get(k), list) and results[k]), [])
    out = []
    for record in records:
        if not isinstance(record, Mapping) or (interval := _interval_s(record)) is None:
            continue
        p50, p95 = _times(record)
        if p50 is None and p95 is None:
            continue
        cold = _flag(record, "cold", "temperature" if "temperature" in record else "cache", "cold", "warm")
        nested = record.get("client_s")
        count = num(nested.get("count") if isinstance(nested, Mapping) else
                    record.get("count") if "count" in record else record.get("queries"))
        layout_key = "state" if "state" in record else "layout"
        out.append(QueryFigure(str(record.get("backend", "?")), interval, cold,
                               _flag(record, "clustered", layout_key, "clustered", "unclustered"),
                               p50, p95, int(count) if count is not None else None))
    return out


# --- disk and sizing -----------------------------------------------------------------------------
@dataclass(frozen=True)
class TableSize:
    backend: str
    variant: str
    table: str
    data_bytes: float
    index_bytes: float
    toast_bytes: float
    bytes_per_event: float | None


def _case_name(r: Mapping[str, Any]) -> str:
    parts = [str(r[k]) for k in ("case_type", "case_format", "case_write") if r.get(k)]
    if num(r.get("case_elements")) and (num(r.get("case_elements")) or 0) > 1:
        parts.append(f"×{r['case_elements']}")
    return " ".join(parts) or str(r.get("table") or r.get("type") or "?")


def _part_bytes(r: Mapping[str, Any], part: str, events: float | None) -> float:
    """Bytes of one part: ``<part>_bytes``, or ``<part>_per_event`` × events (hdbbench size measure)."""
    if (value := num(r.get(f"{part}_bytes"))) is not None:
        return value
    per_event = num(r.get(f"{part}_per_event"))
    return per_event * events if per_event is not None and events else 0.0


def disk_figures(document: Mapping[str, Any]) -> list[TableSize]:
    results = document.get("results") or {}
    records = next((results[k] for k in ("tables", "cases", "sizes", "per_table") if isinstance(results.get(k), list)),
                   [])
    out = []
    for r in records:
        if not isinstance(r, Mapping) or r.get("fit_ok") is False:  # sizes off a line: no usable marginal
            continue
        events = num(r.get("events"))
        data, index, toast = (_part_bytes(r, k, events) for k in ("data", "index", "toast"))
        if data + index + toast <= 0:
            continue
        per_event = num(r.get("bytes_per_event"))
        if per_event is None and events:
            per_event = (data + index + toast) / events
        out.append(TableSize(str(r.get("backend", "?")), str(r.get("variant") or ""), _case_name(r),
                             data, index, toast, per_event))
    return out


def sizing_figures(document: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """contestant (backend, with its variant) → {"total": bytes at retention, "per_year": ..., "per_day": ...}."""
    results = document.get("results") or {}
    out: dict[str, dict[str, float]] = {}
    for entry in results.get("projections") or results.get("projection") or []:
        if not isinstance(entry, Mapping):
            continue
        total = num(entry.get("bytes_at_retention") or entry.get("total_bytes") or entry.get("bytes"))
        if total is None:
            continue
        name = " ".join(str(entry[k]) for k in ("backend", "variant") if entry.get(k)) or "?"
        out[name] = {"total": total, **{k: v for k in ("bytes_per_day", "bytes_per_year")
                                         if (v := num(entry.get(k))) is not None}}
        if entry.get("complete") is False:
            out[name]["incomplete"] = 1.0
    return out

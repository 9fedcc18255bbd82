# SPDX-License-Identifier: Apache-2.0
"""What a run directory holds, read for the report: defensive, never guessing.

A run directory may hold, beside ``scenario.json``, ``environment.json`` and ``status.json``:

* ``results.json`` — kind "insertion": ``results.trials[]``, `TrialSummary` records (hdbbench.results.trials),
  and ``series/<label>.csv``;
* ``extraction.json`` — kind "extraction": ``results.summary[]``, `QuerySummary` records;
* ``disk.json`` — kind "disk": ``results.cases[]``, `CaseSize` records;
* ``sizing.json`` — kind "disk-plan": ``results.projections[]``, `Projection` records.

Each is read in the one shape its producer writes (the dataclasses of hdbbench.results.document and
hdbbench.results.trials, format 3).
The directory of ``hdbbench extract`` or ``size measure`` holds its results as ``results.json``;
the report reads it there too. A file that is missing makes its section say so; a file of another
format_version or kind makes its section say which. Nothing is invented to fill a gap.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.model import measure
from hdbbench.backends.registry import server_of
from hdbbench.trials.outside import STORED_EVENTS_COLUMN
from hdbbench.results.document import (
    FORMAT_VERSION,
    CaseSize,
    QuerySummary,
    ResultsDocument,
    ResultsFormatError,
    insertion_results,
    read_results,
)
from hdbbench.results.trials import InsertionResults, SaturationSearch, SearchStep, TrialKind, TrialSummary

FILES = {"insertion": "results.json", "extraction": "extraction.json", "disk": "disk.json", "sizing": "sizing.json"}


@dataclass
class Loaded:
    """One results file: its document, or why there is none; an insertion file's trials typed."""

    name: str
    document: dict[str, Any] | None = None
    problem: str | None = None
    warnings: list[str] = field(default_factory=list)
    insertion: InsertionResults | None = None


KINDS = {"results.json": ("insertion",), "extraction.json": ("extraction",), "disk.json": ("disk",),
         "sizing.json": ("disk-plan",)}


def load_file(run_dir: Path, name: str) -> Loaded:
    """`name` from the run directory; else ``results.json`` when its kind is the one `name` holds
    (``hdbbench extract``, ``size measure`` and ``size plan`` write their own run directories)."""
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
    try:  # one format, one kind: a file of another is refused, never read half-way
        document = ResultsDocument.from_dict(data, path, kinds[0] if kinds else None)
        typed = insertion_results(document) if document.kind == "insertion" else None
        return Loaded(name, document=document.to_dict(), insertion=typed)
    except ResultsFormatError as exc:
        return Loaded(name, problem=str(exc))


def refuse_older_formats(run_dir: Path) -> None:
    """ResultsFormatError (one line) when a results file of the run is of another format_version."""
    for name in FILES.values():
        path = run_dir / name
        if path.exists() and load_json(path).get("format_version") != FORMAT_VERSION:
            read_results(path)  # raises, naming the file and both versions


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
@dataclass
class Insertion:
    """The insertion trials of one subscriber kind, the backends in the scenario's order, and where
    the trials' series are."""

    trials: list[TrialSummary]
    backends: list[str]
    series_dir: Path
    warmup_s: float
    saturation_step: float | None = None  # the scenario's step: an older stepped search's resolution

    def of_kind(self, kind: TrialKind) -> list[TrialSummary]:
        return [t for t in self.trials if t.kind == kind]

    def one(self, backend: str, kind: TrialKind) -> TrialSummary | None:
        return next((t for t in self.trials if t.backend == backend and t.kind == kind), None)


def search_precision(search: SaturationSearch, scenario_step: float | None) -> tuple[str, float | None]:
    """How a saturation search chose its rates and how close its answer is to the limit: ("bisect",
    resolution) or ("step", step); an older run's record has neither, its scenario's step then."""
    if search.mode == "bisect":
        return "bisect", search.resolution
    return "step", search.resolution if search.resolution is not None else scenario_step


def search_gap(search: SaturationSearch) -> float | None:
    """A bisect search's bracket as recorded: the lowest failing rate above the answer over the
    answer, less 1 (None: no answer or nothing failed above it). Wider than the resolution when a
    rate near the answer passed only on its repeat, or a verdict changed after the drain (events of
    a step found lost, error events counted)."""
    last = search.last_sustainable_rate
    above = [s.offered_rate for s in search.steps if s.saturated and last is not None and s.offered_rate > last]
    return min(above) / last - 1 if above and last else None


LIMIT_BAND = 1.25  # steps within this factor of a search's answer, either way, show the pace at its limit
DEVICE_PACE_SPREAD = 0.15  # the devices' CPU per event this far from another run's: another pace, in effect


def near_limit(search: SaturationSearch) -> list[SearchStep]:
    """The steps of a search within LIMIT_BAND of its answer (all its steps when it has none), the
    source-behind ones left out: the steps that decided the answer and the machine's pace they met."""
    last = search.last_sustainable_rate
    steps = [s for s in search.steps if not s.source_behind]
    if last is None:
        return steps
    return [s for s in steps if last / LIMIT_BAND <= s.offered_rate <= last * LIMIT_BAND]


def pace_at_limit(search: SaturationSearch) -> float | None:
    """The devices' CPU per event (µs) in the steps near the answer (near_limit), their median. The
    devices' work per event at a given rate is fixed, so this is the pace the machine ran at where
    the search found its limit; it falls a little with the rate (the devices' fixed cost per second
    under load spreads over more events: 4.4 µs at 40k and 3.7 µs at 80k on a quiet 2-core machine),
    so it compares runs whose limits lie within LIMIT_BAND of each other."""
    cpu = [c for s in near_limit(search) if (c := num(s.device_cpu_us)) is not None and c > 0]
    return measure.percentile(cpu, 50) if cpu else None


def rows_before(search: SaturationSearch) -> list[float | None]:
    """Per step, the rows the search had stored before it (the steps' stored events summed; None from
    a step that did not record them on). A limit can move as the tables grow, and two searches meet
    the same rate after different numbers of steps."""
    out: list[float | None] = []
    total: float | None = 0.0
    for step in search.steps:
        out.append(total)
        stored = num(step.stored_events)
        total = None if total is None or stored is None else total + stored
    return out


def rows_at_limit(search: SaturationSearch) -> tuple[float, float] | None:
    """The fewest and the most rows stored before the steps near the answer (near_limit, rows_before)."""
    near = near_limit(search)
    rows = [r for step, r in zip(search.steps, rows_before(search)) if r is not None and step in near]
    return (min(rows), max(rows)) if rows else None


def search_words(search: SaturationSearch, scenario_step: float | None) -> str:
    mode, precision = search_precision(search, scenario_step)
    if mode == "bisect":
        shown = f"{precision:.0%}" if precision is not None else "unknown"
        return f"bracketed by doubling, then bisected: resolution {shown} (limit between it and {shown} above)"
    shown = f"+{precision:.0%}" if precision is not None else "fixed"
    return f"stepped ({shown} per step): resolution one step"


def subscriber_kinds(loaded: Loaded) -> list[str]:
    """The subscriber kinds of a run's trials, in run order (the first is the reference)."""
    trials = loaded.insertion.trials if loaded.insertion else []
    return list(dict.fromkeys(t.subscriber_kind for t in trials))


def insertion_view(run_dir: Path, loaded: Loaded, kind: str | None = None) -> Insertion:
    """The trials of one subscriber kind (default: the first, so that every section compares backends
    on one subscriber; hdbbench.report.kinds sets the kinds side by side)."""
    kinds = subscriber_kinds(loaded)
    kind = kind if kind is not None else (kinds[0] if kinds else None)
    trials = [t for t in (loaded.insertion.trials if loaded.insertion else []) if t.subscriber_kind == kind]
    order = list(dig(loaded.document, "scenario", "backends") or [])
    backends = [b for b in order if any(t.backend == b for t in trials)]
    backends += [t.backend for t in trials if t.backend not in backends]
    backends = list(dict.fromkeys(backends))
    warmup = num(dig(loaded.document, "scenario", "warmup_s")) or 0.0
    step = num(dig(loaded.document, "scenario", "measurements", "saturation", "step"))
    return Insertion(trials, backends, run_dir / "series", warmup, step)


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
    """(t_s, events stored per second): from the database's counter in events (the same for every
    kind, hdbbench.trials.outside.STORED_EVENTS_COLUMN), else (older runs) our RowsStoredNumber."""
    name = STORED_EVENTS_COLUMN if series.get(STORED_EVENTS_COLUMN) else "sub.RowsStoredNumber"
    times, rows = series.get("t_s") or [], series.get(name) or []
    pairs = [(t, r) for t, r in zip(times, rows) if math.isfinite(t) and math.isfinite(r)]
    return measure.rates_per_second([p[0] for p in pairs], [p[1] for p in pairs])


def recorded_window(rates: Sequence[tuple[float, float]], warmup_s: float, count: int) -> list[float]:
    """The per-second rates the trial's recorded distribution counted (`count` of them, from the
    warm-up on): not the load's last second, which a counter published in flushes reads low
    (hdbbench.trials.outside.steady_end), so a plot of them shows what the table says."""
    return measure.steady(rates, warmup_s)[:count]


def column(series: Mapping[str, Sequence[float]], name: str) -> list[tuple[float, float]]:
    times, values = series.get("t_s") or [], series.get(name) or []
    return [(t, v) for t, v in zip(times, values) if math.isfinite(t) and math.isfinite(v)]


def step_points(trial: TrialSummary) -> list[tuple[float, float, bool]]:
    """(offered, stored, saturated) per step of a search: the counter's rate over the step where recorded
    (older runs: the per-second median), steps the devices could not offer left out."""
    steps = trial.saturation.steps if trial.saturation is not None else []
    return [(num(s.offered_rate) or 0.0, num(s.stored_rate if s.stored_rate is not None else s.stored_median) or 0.0,
             s.saturated or bool(s.errors)) for s in steps if not s.source_behind]


def archiving_cpu_us(trial: TrialSummary, backend: str) -> float | None:
    """CPU µs per stored event of the archiving path: subscribers + this backend's database server."""
    groups = [trial.cpu.get("subscribers"), trial.cpu.get(server_of(backend) or "")]
    found = [us for g in groups if g is not None and (us := num(g.us_per_event)) is not None]
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


def extraction_figures(document: Mapping[str, Any]) -> list[QueryFigure]:
    out = []
    for record in dig(document, "results", "summary") or []:
        q = QuerySummary.from_dict(record)
        out.append(QueryFigure(q.backend, q.interval_s, q.temperature == "cold", q.state == "clustered",
                               num(q.client_s.p50), num(q.client_s.p95), q.client_s.count))
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


def _case_name(c: CaseSize) -> str:
    name = f"{c.case_type} {c.case_format} {c.case_write}"
    return name + (f" ×{c.case_elements}" if c.case_elements > 1 else "")


def disk_figures(document: Mapping[str, Any]) -> list[TableSize]:
    out = []
    for record in dig(document, "results", "cases") or []:
        if isinstance(record, Mapping) and record.get("fit_ok") is False:  # sizes off a line: no usable marginal
            continue
        c = CaseSize.from_dict(record)
        data, index, toast = (v * c.events for v in (c.data_per_event, c.index_per_event, c.toast_per_event))
        out.append(TableSize(c.backend, c.variant, _case_name(c), data, index, toast, num(c.bytes_per_event)))
    return out


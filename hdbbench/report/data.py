# SPDX-License-Identifier: Apache-2.0
"""What a run directory holds, read for the report: typed records only, never guessing.

A run directory may hold, beside ``scenario.json``, ``environment.json`` and ``status.json``:

* ``results.json`` — kind "insertion": `InsertionResults` (hdbbench.results.trials), its trials'
  ``series/<label>.csv`` beside it;
* ``extraction.json`` — kind "extraction": `ExtractionResults` (hdbbench.results.extraction);
* ``disk.json`` — kind "disk": `DiskResults` (hdbbench.results.disk);
* ``sizing.json`` — kind "disk-plan": `PlanResults` (hdbbench.results.sizing);
* ``faults.json``, ``replica.json`` — read by hdbbench.report.faults and hdbbench.report.replica.

Each is read whole into its records by hdbbench.results.document.read_results (the one strict reader,
format 3), or not at all. The directory of ``hdbbench extract`` or ``size measure`` holds its results as
``results.json``; the report reads it there too. A file that is missing makes its section say so; a
file of another format_version or kind, or one that does not fit its records, makes its section say
which. Nothing is invented to fill a gap.

The scenario and environment are the facts a run was given and found, recorded as JSON objects (the
scenario as hdbbench.scenario wrote it, the machine as hdbbench.results.document.environment_facts did);
the few the report computes with are taken from them in one place, `run_facts`, typed.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from hdbbench.backends.registry import server_of
from hdbbench.model import measure
from hdbbench.results.disk import CaseSize, DiskResults
from hdbbench.results.document import (
    FORMAT_VERSION,
    ResultsDocument,
    ResultsFormatError,
    peek_results,
    read_results,
)
from hdbbench.results.extraction import ExtractionResults
from hdbbench.results.kinds import ResultRecord
from hdbbench.results.trials import InsertionResults, SaturationSearch, SearchStep, TrialKind, TrialSummary
from hdbbench.trials.outside import STORED_EVENTS_COLUMN

FILES = {"insertion": "results.json", "extraction": "extraction.json", "disk": "disk.json", "sizing": "sizing.json"}
R = TypeVar("R")


@dataclass
class Loaded:
    """One results file: its document, or why there is none."""

    name: str
    document: ResultsDocument[ResultRecord] | None = None
    problem: str | None = None
    warnings: list[str] = field(default_factory=list)

    def results(self, record: type[R]) -> R | None:
        """The file's records when they are of `record`'s kind."""
        found = self.document.results if self.document is not None else None
        return found if isinstance(found, record) else None

    @property
    def insertion(self) -> InsertionResults | None:
        return self.results(InsertionResults)


KINDS = {"results.json": ("insertion",), "extraction.json": ("extraction",), "disk.json": ("disk",),
         "sizing.json": ("disk-plan",), "hardware.json": ("hardware-plan",)}


def load_file(run_dir: Path, name: str) -> Loaded:
    """`name` from the run directory; else ``results.json`` when its kind is the one `name` holds
    (``hdbbench extract``, ``size measure`` and ``size plan`` write their own run directories)."""
    path = run_dir / name
    kinds = KINDS.get(name, ())
    if name != "results.json" and not path.exists() and peek_results(run_dir / "results.json")[1] in kinds:
        path = run_dir / "results.json"
    if not path.exists():
        return Loaded(name, problem=f"{name} is not in this run directory")
    try:  # one format, one kind: a file of another is refused, never read half-way
        return Loaded(name, document=read_results(path, kinds[0] if kinds else None))
    except ResultsFormatError as exc:
        return Loaded(name, problem=str(exc))


def refuse_older_formats(run_dir: Path) -> None:
    """ResultsFormatError (one line) when a results file of the run is of another format_version."""
    for name in FILES.values():
        path = run_dir / name
        if path.exists() and peek_results(path)[0] != FORMAT_VERSION:
            read_results(path)  # raises, naming the file and both versions


def load_json(path: Path) -> dict[str, Any]:
    """A run's recorded JSON object (scenario, environment, status); {} when absent or not an object."""
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


# --- the recorded scenario and machine ------------------------------------------------------------
@dataclass(frozen=True)
class RunFacts:
    """What the report computes with from a run's recorded scenario and environment (each None or
    empty when not recorded: a scenario of ``hdbbench extract`` or ``size plan`` has none of the run's keys)."""

    name: str | None = None
    seed: int | None = None
    profile: str | None = None
    schema_variant: str | None = None
    backends: tuple[str, ...] = ()
    rate: float | None = None
    warmup_s: float | None = None
    saturation_step: float | None = None       # the scenario's step: an older stepped search's resolution
    quick: bool = False
    weights: tuple[tuple[str, float], ...] = ()  # [report] weights
    subscribers: int | None = None
    subscriber_kinds: tuple[str, ...] = ()
    lib_configuration: str | None = None
    inventory: str | None = None               # the sizing inventory's name
    # The parts the scenario asked for, by section key; None where the scenario does not say (a
    # scenario of an older hdbbench, or of another command).
    asked: tuple[tuple[str, bool | None], ...] = ()
    host: str | None = None
    cpu_model: str | None = None
    cores: int | None = None
    disk_type: str | None = None
    kernel: str | None = None
    settings_profile: str | None = None


def run_facts(scenario: Mapping[str, Any], environment: Mapping[str, Any]) -> RunFacts:
    """The facts (RunFacts) of a recorded scenario and environment: the one place the report reads them."""
    measurements, report = _object(scenario.get("measurements")), _object(scenario.get("report"))
    machine = _object(environment.get("disk"))
    kinds = scenario.get("subscriber_kinds")
    lib = scenario.get("lib_configuration")
    return RunFacts(
        name=_text(scenario.get("name")), seed=_whole(scenario.get("seed")), profile=_text(scenario.get("profile")),
        schema_variant=_text(scenario.get("schema_variant")),
        backends=tuple(str(b) for b in scenario.get("backends") or [] if isinstance(b, str)),
        rate=num(scenario.get("rate")), warmup_s=num(scenario.get("warmup_s")),
        saturation_step=num(_object(measurements.get("saturation")).get("step")),
        quick=scenario.get("quick") is True,
        weights=tuple((str(k), float(v)) for k, v in _object(report.get("weights")).items() if num(v) is not None),
        subscribers=_whole(scenario.get("subscribers")),
        subscriber_kinds=tuple(str(_object(k).get("name", "?")) for k in kinds) if isinstance(kinds, list) else (),
        lib_configuration=str(lib) if lib is not None else None,
        inventory=_text(_object(scenario.get("inventory")).get("name")),
        asked=tuple((key, _asked(scenario, part, sub)) for key, (part, sub) in _SCENARIO_PARTS.items()),
        host=_text(environment.get("hostname")), cpu_model=_text(environment.get("cpu_model")),
        cores=_whole(environment.get("cores")), disk_type=_text(machine.get("type")),
        kernel=_text(environment.get("kernel")),
        settings_profile=_text(_object(environment.get("settings")).get("profile")),
    )


# The scenario key (and key within it) behind each section of a part a scenario may leave out.
_SCENARIO_PARTS = {"extraction": ("extraction", None), "disk": ("disk", None), "sizing": ("disk", "inventory")}


def _asked(scenario: Mapping[str, Any], part: str, sub: str | None) -> bool | None:
    """Whether the scenario asked for a part (its table, and the key within it, not null); None when
    the scenario does not have the part's key at all (it is then not taken to have left the part out)."""
    if part not in scenario:
        return None
    value = scenario.get(part)
    return value is not None and (sub is None or _object(value).get(sub) is not None)


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def facts_of(run_dir: Path, document: ResultsDocument[Any] | None = None) -> RunFacts:
    """The run's facts: its scenario.json and environment.json, else those its results file recorded."""
    scenario = load_json(run_dir / "scenario.json") or (document.scenario if document is not None else {})
    environment = load_json(run_dir / "environment.json") or (document.environment if document is not None else {})
    return run_facts(scenario, environment)


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
    facts = run_facts(loaded.document.scenario, {}) if loaded.document is not None else RunFacts()
    backends = [b for b in facts.backends if any(t.backend == b for t in trials)]
    backends += [t.backend for t in trials if t.backend not in backends]
    backends = list(dict.fromkeys(backends))
    return Insertion(trials, backends, run_dir / "series", facts.warmup_s or 0.0, facts.saturation_step)


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


def extraction_figures(results: ExtractionResults) -> list[QueryFigure]:
    return [QueryFigure(q.backend, q.interval_s, q.temperature == "cold", q.state == "clustered",
                        num(q.client_s.p50), num(q.client_s.p95), q.client_s.count) for q in results.summary]


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


def disk_figures(results: DiskResults) -> list[TableSize]:
    out = []
    for c in results.cases:
        if c.fit_ok is False:  # sizes off a line: no usable marginal
            continue
        data, index, toast = (v * c.events for v in (c.data_per_event, c.index_per_event, c.toast_per_event))
        out.append(TableSize(c.backend, c.variant, _case_name(c), data, index, toast, num(c.bytes_per_event)))
    return out

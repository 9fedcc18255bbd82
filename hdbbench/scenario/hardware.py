# SPDX-License-Identifier: Apache-2.0
"""The hardware an inventory needs on a backend, planned from measured unit costs.

For each backend, from the runs given (their insertion trials' unit costs, saturation search and disk
part; hdbbench.scenario.unit_costs says which windows count and how a cost becomes a line over the rate):

* **archivers**: hdbbench.scenario.archivers.plan_archivers, from the saturation search's sustainable
  rate of one subscriber and the kind's safe attribute count;
* **archiver cores**: the subscribers' CPU line at the inventory's rate, its fixed part once per archiver;
* **database cores**: the database server's CPU line at the inventory's rate;
* **memory**: the hot set of the backend's memory model (hdbbench.backends.abilities.memory: the pages a
  steady insert stream touches at once, from the backend's own table and index geometry), which must stay
  cached for inserts not to fall off the knee of the aged-database trials: the smallest memory budget of
  the server whose cache (the stack's buffer rule, less the server's own memory) holds it;
* **write IOPS** and **bytes written**: the server's block-layer write lines; the storage class is the
  smallest of hdbbench.stack's classes whose published write IOPS and bandwidth hold them;
* **log bytes**: WAL / redo per second, what replication and log backups carry;
* **disk**: the inventory's bytes per day on the backend (hdbbench.parts.disk.sizing.project, from the
  disk part's measured bytes per event) over min(years, each group's retention).

Every resource is provided at `headroom` (used at most that share of it). Each figure keeps the unit cost
it came from and that cost's spread over the windows; a figure the runs cannot give is None and named in
the backend's `unknown`. Costs are the measuring machine's: the plan states its pace.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hdbbench.backends.model import SchemaVariant
from hdbbench.backends.registry import backend_class, server_of
from hdbbench.load.facility import group_count
from hdbbench.load.inventory.model import Inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.records import save
from hdbbench.model.units import human_bytes
from hdbbench.parts.disk import sizing
from hdbbench.results.document import ResultsFormatError, environment_facts, load_results, results_document
from hdbbench.results.hardware import BackendHardware, HardwareCheck, HardwarePlanResults, PlannedFigure, years_text
from hdbbench.scenario import archivers as planner
from hdbbench.scenario import unit_costs as uc
from hdbbench.stack.servers.confine.spec import CLASSES

DAYS_PER_YEAR = 365.25
DEFAULT_YEARS = 5.0
CANNOT_KNOW = ("What the plan cannot know: replicas and backups (their CPU, disk and network), a query load "
               "beyond the measured query set, other services on the same hosts, the inventory's growth, and a "
               "machine of another pace (the costs are the measuring machine's).")


def scaled(inventory: Inventory, scale: float) -> Inventory:
    """The inventory with every group's attribute count times `scale` (as the facility scenario scales it)."""
    if scale == 1.0:
        return inventory
    groups = tuple(dataclasses.replace(g, count=group_count(g, scale), names=()) for g in inventory.groups)
    return dataclasses.replace(inventory, groups=groups, archivers=())


def plan_hardware(inventory: Inventory, backends: Sequence[str], kind: str, run_dirs: Sequence[Path],
                  years: float, headroom: float, scale: float = 1.0,
                  skip_unmeasured: bool = False) -> HardwarePlanResults:
    """The plan (the module docstring) of `inventory` × `scale` on each backend (none named: every backend
    of the runs; `skip_unmeasured` then leaves out one without usable unit costs rather than refuse)."""
    if not (years > 0 and math.isfinite(years)):
        raise ConfigError(f"years must be a finite number > 0, got {years!r}")
    if not (0 < headroom <= 1):
        raise ConfigError(f"headroom must be in (0, 1], got {headroom!r}")
    if not (scale > 0 and math.isfinite(scale)):
        raise ConfigError(f"scale must be a finite number > 0, got {scale!r}")
    target = scaled(inventory, scale)
    runs = uc.read_runs(run_dirs)
    # Costs per event depend on the mix: the runs measured on this inventory, where any was, give them alone.
    own = [r for r in runs if _measured_on(r, inventory)]
    measured = sorted({t.backend for run in (own or runs) for t in run.trials})
    chosen = list(backends) or measured
    plans = []
    for backend in chosen:
        found = uc.windows(own or runs, backend, kind)
        if not found and not backends and skip_unmeasured:
            continue  # every backend of the runs: one whose trials recorded no usable costs is left out
        if not found:
            where = ", ".join(str(r.path) for r in runs)
            raise ConfigError(f"{where}: no insertion trial of {backend} with subscriber "
                              f"kind {kind} that recorded its unit costs and kept up (measured here: "
                              f"{', '.join(measured) or 'none'})")
        plans.append(_plan_backend(target, backend, kind, runs, own, found, years, headroom))
    return HardwarePlanResults(inventory=inventory.name, scale=scale, years=years, headroom=headroom,
                               runs=[str(r.path) for r in runs], backends=plans, cannot_know=CANNOT_KNOW)


def _plan_backend(inventory: Inventory, backend: str, kind: str, runs: Sequence[uc.MeasuredRun],
                  own: Sequence[uc.MeasuredRun], found: Sequence[uc.Window], years: float,
                  headroom: float) -> BackendHardware:
    rate = sum(g.count * g.rate_hz for g in inventory.groups)
    attributes = sum(g.count for g in inventory.groups)
    server = server_of(backend) or backend
    variant = next((r.variant for r in runs if r.variant and any(t.backend == backend for t in r.trials)), "pk+2")
    unknown: list[str] = []
    archivers = _archivers(inventory, backend, kind, own or runs, headroom, unknown)
    count = int(archivers.needed or 1)
    subscribers = uc.fit(found, lambda w: w.costs.cpu_cores.get(uc.SUBSCRIBERS), per_subscriber=True)
    database = uc.fit(found, lambda w: w.costs.cpu_cores.get(server))
    iops = uc.fit(found, lambda w: _writes(w, server, "write_iops"))
    written = uc.fit(found, lambda w: _writes(w, server, "write_bytes_per_s"))
    logged = uc.fit(found, lambda w: _writes(w, server, "log_bytes_per_s"))
    archiver_cores = _figure(subscribers, rate, headroom, "cores", 1e6, "µs CPU", count, unknown,
                             "the subscribers' CPU")
    database_cores = _figure(database, rate, headroom, "cores", 1e6, "µs CPU", None, unknown,
                             "the database server's CPU")
    write_iops = _figure(iops, rate, headroom, "IOPS", 1.0, "write requests", None, unknown,
                         "the server's write requests")
    write_bytes = _figure(written, rate, headroom, "bytes/s", 1.0, "bytes written", None, unknown,
                          "the server's bytes written")
    log_bytes = _figure(logged, rate, headroom, "bytes/s", 1.0, "log bytes", None, unknown, "the server's WAL/redo")
    hot_set, model = _hot_set(inventory, backend, variant, headroom, unknown)
    memory = _memory(hot_set, model, found, server)
    storage = _storage_class(write_iops.provide, write_bytes.provide)
    disk = _disk(inventory, backend, variant, runs, years, headroom, unknown)
    if not own:
        unknown.append(f"the unit costs come from the runs' own device mix, not {inventory.name}'s: an event of "
                       "another type or size costs another amount (measure this mix with the facility scenario)")
    plan = BackendHardware(
        backend=backend, subscriber_kind=kind, variant=variant, events_per_s=rate, attributes=attributes,
        archivers=archivers, archiver_cores=archiver_cores, database_cores=database_cores, hot_set=hot_set,
        memory=memory, write_iops=write_iops, storage_class=storage, write_bytes_per_s=write_bytes,
        log_bytes_per_s=log_bytes, disk=disk, machine=uc.machine_of(found), sentence="", unknown=unknown)
    return dataclasses.replace(plan, sentence=sentence(plan, years))


def _writes(w: uc.Window, server: str, name: str) -> float | None:
    writes = w.costs.writes.get(server)
    return getattr(writes, name) if writes is not None else None


def _figure(f: Any, rate: float, headroom: float, unit: str, scale: float, cost_unit: str,
            archivers: int | None, unknown: list[str], what: str) -> PlannedFigure:
    """A quantity's line at `rate`; its fixed part once per archiver when `archivers` is given, else once."""
    if f is None:
        unknown.append(f"{what}: not measured in the runs given")
        return PlannedFigure(needed=None, provide=None, unit=unit, source=f"{what}: not measured")
    per_archiver = archivers is not None
    needed = uc.at_rate(f, rate, archivers if archivers is not None else 1)
    provide = math.ceil(needed / headroom) if unit == "cores" else needed / headroom
    fixed = f" + {f.fixed:,.3g} {unit} fixed" + (" per archiver" if per_archiver else "")
    source = (f"{f.per_event * scale:,.3g} {cost_unit} per event{fixed if f.fixed else ''} ({f.how}); all-in "
              f"{uc.spread_words(f, scale, cost_unit)}")
    if not f.constant:
        source += "; the cost per event changed with rate, so the line, not one window, carries it to this rate"
    return PlannedFigure(needed=needed, provide=provide, unit=unit, source=source, fit=f)


def _archivers(inventory: Inventory, backend: str, kind: str, runs: Sequence[uc.MeasuredRun], headroom: float,
               unknown: list[str]) -> PlannedFigure:
    limit = planner.safe_attributes(kind)
    for run in reversed(runs):
        try:
            sustainable, source = planner.sustainable_from_run(run.path, backend, kind)
        except ConfigError:
            continue
        made = planner.plan_archivers(inventory, backend, kind, sustainable, source, limit, headroom)
        count = len(made.archivers)
        return PlannedFigure(needed=count, provide=count, unit="archivers",
                             source=f"plan archivers: {made.limits()}")
    by_attributes = max(1, math.ceil(sum(g.count for g in inventory.groups) / limit))
    unknown.append("archivers: no saturation search in the runs given, so counted from the attribute limit only")
    return PlannedFigure(needed=by_attributes, provide=by_attributes, unit="archivers",
                         source=f"{limit:,} attributes per archiver at most (no saturation search measured the rate)")


def _hot_set(inventory: Inventory, backend: str, variant: str, headroom: float,
             unknown: list[str]) -> tuple[PlannedFigure, Any]:
    """The hot set (needed, and over the headroom) and the backend's memory model (None: it has none)."""
    model = backend_class(backend).memory_model()
    if model is None:
        unknown.append("memory: the backend has no memory model of its hot set")
        return PlannedFigure(needed=None, provide=None, unit="bytes", source="no memory model for this backend"), None
    counts: dict[Any, int] = {}
    for g in inventory.groups:
        counts[(g.type, g.format)] = counts.get((g.type, g.format), 0) + g.count
    hot = model.hot_set(counts, SchemaVariant.parse(variant))
    largest = sorted(hot.parts, key=lambda p: -p.bytes)[:2]
    return PlannedFigure(needed=hot.bytes, provide=hot.bytes / headroom, unit="bytes",
                         source=f"memory model, {variant}: " + "; ".join(f"{p.what} {human_bytes(p.bytes)}"
                                                                           for p in largest)), model


def _memory(hot_set: PlannedFigure, model: Any, found: Sequence[uc.Window], server: str) -> PlannedFigure:
    """The smallest memory budget of the server (its page cache included) whose cache, under the stack's
    buffer rule for it, holds the hot set: needed for the hot set, provided for the hot set over the headroom."""
    if model is None or hot_set.needed is None or hot_set.provide is None:
        return PlannedFigure(needed=None, provide=None, unit="bytes", source="needs the memory model's hot set")
    needed, provide = _budget_for(model, hot_set.needed), _budget_for(model, hot_set.provide)
    own = [w.costs.memory_bytes[server] for w in found if w.costs.memory_bytes.get(server)]
    measured = (f"; its processes' PSS in the trials was {human_bytes(statistics.median(own))} (median), with the "
                "run's buffer settings" if own else "")
    return PlannedFigure(needed=needed, provide=provide, unit="bytes",
                         source="the smallest budget whose cache (the stack's buffer rule for the server, less its own "
                                f"memory) holds the hot set {human_bytes(hot_set.needed)}{measured}")


def _budget_for(model: Any, cache: float) -> float:
    """The least budget (to a MiB) under which model.cache_bytes is at least `cache`."""
    def holds(budget_mib: int) -> bool:
        try:
            return bool(model.cache_bytes(float(budget_mib << 20)) >= cache)
        except ConfigError:  # below the least budget the server runs in
            return False

    low, high = 0, 1
    while not holds(high):
        low, high = high, high * 2
        if high > 1 << 30:  # a PiB: no budget holds it
            return math.inf
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return float(high << 20)


def _storage_class(iops: float | None, bytes_per_s: float | None) -> str | None:
    if iops is None:
        return None
    for c in sorted((c for c in CLASSES.values() if c.write_iops), key=lambda c: c.write_iops or 0):
        if (c.write_iops or 0) >= iops and (bytes_per_s is None or c.write_mb_s is None
                                             or c.write_mb_s * 1e6 >= bytes_per_s):
            return c.name
    return None


def _disk(inventory: Inventory, backend: str, variant: str, runs: Sequence[uc.MeasuredRun], years: float,
          headroom: float, unknown: list[str]) -> PlannedFigure:
    for run in runs:
        path = run.path / "disk.json"
        if not path.exists():
            continue
        try:
            results = load_results(path, "disk")
        except ResultsFormatError as exc:
            raise ConfigError(str(exc)) from None
        projections = [p for p in sizing.project(inventory, results) if p["backend"] == backend]
        projection = next((p for p in projections if p["variant"] == variant), projections[0] if projections else None)
        if projection is None:
            continue
        days = years * DAYS_PER_YEAR
        needed = sum((g["bytes_per_day"] or 0.0) * min(days, g["retention_days"]) for g in projection["groups"])
        complete = "" if projection["complete"] else " (incomplete: a group's type was not measured)"
        return PlannedFigure(needed=needed, provide=needed / headroom, unit="bytes",
                             source=f"size plan from {path}, {projection['variant']}: "
                                    f"{human_bytes(projection['bytes_per_day'])} a day over min({years_text(years)}, "
                                    f"each group's retention){complete}")
    unknown.append("disk: no disk measurement (disk.json) in the runs given")
    return PlannedFigure(needed=None, provide=None, unit="bytes", source="no disk measurement in the runs given")


def _measured_on(run: uc.MeasuredRun, inventory: Inventory) -> bool:
    """Whether the run's devices emitted this inventory's mix (the facility scenario of the same file or name)."""
    if run.inventory is None:
        return False
    source = Path(inventory.source)
    return run.inventory.stem in (source.stem, inventory.name) or run.inventory.resolve() == source.resolve()


def sentence(p: BackendHardware, years: float) -> str:
    """The plan of one backend in one sentence."""
    def cores(f: PlannedFigure) -> str:
        return f"{f.needed:,.2f} cores ({f.provide:,.0f} to provide)" if f.needed is not None else "cores unknown"

    memory = f"{human_bytes(p.memory.provide)} of memory" if p.memory.provide is not None else "memory unknown"
    iops = (f"{p.write_iops.needed:,.0f} write IOPS ({p.storage_class or 'beyond every class'})"
            if p.write_iops.needed is not None else "write IOPS unknown")
    disk = (f"{human_bytes(p.disk.provide)} of disk for {years_text(years)}" if p.disk.provide is not None
            else "disk unknown")
    return (f"{p.backend}: {p.events_per_s:,.0f} events/s from {p.attributes:,} attributes need "
            f"{p.archivers.needed:,.0f} archiver(s) using {cores(p.archiver_cores)}, a database server using "
            f"{cores(p.database_cores)}, {memory}, {iops} and {disk}.")


# --- checking a plan against a run at the planned scale --------------------------------------------------
CHECKED = (("subscribers' CPU, cores", "archiver_cores"), ("database server's CPU, cores", "database_cores"),
           ("database server's write IOPS", "write_iops"))


def check(plan: HardwarePlanResults, run_dir: Path, tolerance: float, kind: str) -> list[HardwareCheck]:
    """Each backend's planned CPU and write IOPS against the run's measured, at the stored rate and with the
    subscriber count of its throughput trial (the plan's lines evaluated there)."""
    runs = uc.read_runs([run_dir])
    out = []
    for p in plan.backends:
        trials = [t for t in runs[0].trials if t.backend == p.backend and t.kind in ("throughput", "sustained")
                  and getattr(t, "unit_costs", None) is not None and (t.subscriber_kind or uc.DEFAULT_KIND) == kind]
        if not trials:
            raise ConfigError(f"{run_dir}: no throughput or sustained trial of {p.backend} with unit costs to check "
                              "the plan against")
        trial = trials[0]
        costs, server = trial.unit_costs, server_of(p.backend) or p.backend
        measured = {"archiver_cores": costs.cpu_cores.get(uc.SUBSCRIBERS),
                    "database_cores": costs.cpu_cores.get(server),
                    "write_iops": getattr(costs.writes.get(server), "write_iops", None)}
        for quantity, name in CHECKED:
            figure: PlannedFigure = getattr(p, name)
            planned = (uc.at_rate(figure.fit, costs.stored_rate, trial.subscribers if name == "archiver_cores" else 1)
                       if figure.fit is not None else None)
            seen = measured[name]
            error = (planned - seen) / seen if planned is not None and seen else None
            out.append(HardwareCheck(backend=p.backend, quantity=quantity, rate=costs.stored_rate, planned=planned,
                                     measured=seen, error=error, tolerance=tolerance,
                                     within=abs(error) <= tolerance if error is not None else None))
    return out


# --- the plan's files ------------------------------------------------------------------------------------
def write_plan(where: Path, plan: HardwarePlanResults, settings: dict[str, Any]) -> Path:
    """hardware.json (a results document of kind "hardware-plan") and hardware.toml into `where`."""
    where.mkdir(parents=True, exist_ok=True)
    document = results_document("hardware-plan", settings, environment_facts(), plan)
    path = save(where / "hardware.json", document)
    text = toml_text(plan)
    staged = where / "hardware.toml.tmp"
    staged.write_text(text)
    staged.replace(where / "hardware.toml")
    return path


def toml_text(plan: HardwarePlanResults) -> str:
    """The plan as TOML: per backend its figures (needed, provide, unit) and sentences, for tools and people."""
    lines = [f"# hardware plan of {plan.inventory}: written by `hdbbench plan hardware`; hardware.json holds the "
             "unit costs and their spread", f"inventory = {_toml(plan.inventory)}", f"scale = {plan.scale!r}",
             f"years = {plan.years!r}", f"headroom = {plan.headroom!r}",
             f"runs = [{', '.join(_toml(r) for r in plan.runs)}]", f"cannot_know = {_toml(plan.cannot_know)}"]
    for p in plan.backends:
        lines += ["", "[[backends]]", f"backend = {_toml(p.backend)}", f"subscriber_kind = {_toml(p.subscriber_kind)}",
                  f"variant = {_toml(p.variant)}", f"events_per_s = {p.events_per_s!r}", f"attributes = {p.attributes}",
                  f"storage_class = {_toml(p.storage_class or '')}", f"sentence = {_toml(p.sentence)}",
                  f"unknown = [{', '.join(_toml(u) for u in p.unknown)}]"]
        for name in FIGURES:
            figure: PlannedFigure = getattr(p, name)
            lines += [f"{name} = {{ needed = {_toml_number(figure.needed)}, provide = {_toml_number(figure.provide)}, "
                      f"unit = {_toml(figure.unit)}, source = {_toml(figure.source)} }}"]
    for c in plan.checks:
        lines += ["", "[[checks]]", f"backend = {_toml(c.backend)}", f"quantity = {_toml(c.quantity)}",
                  f"rate = {c.rate!r}", f"planned = {_toml_number(c.planned)}",
                  f"measured = {_toml_number(c.measured)}",
                  f"error = {_toml_number(c.error)}", f"tolerance = {c.tolerance!r}",
                  f"within = {'true' if c.within else 'false'}"]
    return "\n".join(lines) + "\n"


FIGURES = ("archivers", "archiver_cores", "database_cores", "hot_set", "memory", "write_iops", "write_bytes_per_s",
           "log_bytes_per_s", "disk")


def _toml(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def _toml_number(x: float | None) -> str:
    # TOML has no null: an unknown figure is nan, which TOML 1.0 allows and every reader reads as unknown.
    return "nan" if x is None else repr(float(x))

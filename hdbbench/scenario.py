# SPDX-License-Identifier: Apache-2.0
"""Scenario files: what to start, what load to offer, what to measure.

A scenario is a TOML file, validated completely before anything starts: an unknown key, a wrong
type or an impossible value is a ConfigError naming the file, the line and the key
(``scenarios/x.toml:12: [load] rate: must be > 0, got -5``), read by hdbbench.tomlfile.
The resolved scenario (every default filled in) is saved in the run directory.

    name = "default"
    seed = 42
    backends = ["timescaledb", "postgresql", "mysql"]

    [stack]
    profile = "relaxed"          # durable | relaxed
    tango_db = "pytango"         # pytango | cpp

    [schema]
    variant = "pk+2"

    [devices]
    profile = "devices/profiles/scalar-heavy-accelerator.toml"
    servers = 1
    devices_per_server = 1
    engine = "auto"              # auto (the C++ HdbBenchGen when built and no attribute is polled) | cpp | python

    [subscribers]
    count = 1
    lib_configuration = { batch_size = "1000" }

    [[subscribers.kinds]]        # optional, repeatable: the subscribers to compare (hdbbench.kinds);
    name = "hdbbench-es"         # without it the one kind is ours
    [[subscribers.kinds]]
    name = "hdbpp-es"
    binary = "/usr/bin/hdb++es-srv"
    env = { LD_LIBRARY_PATH = "/opt/hdbpp/lib" }
    lib_configuration = { libname = "libhdb++timescale.so.2" }

    [load]
    rate = 2000                  # offered events/s, all attributes together
    duration_s = 60
    warmup_s = 10

    [measurements]
    throughput = true
    batch_sweep = [64, 256, 1024]
    subscriber_sweep = [1, 2]
    saturation = { start_rate = 2000, step = 0.10, step_s = 10, max_steps = 15 }
    sustained = { rate = 2000, duration_s = 60 }

    [report]
    weights = { saturation_rate = 2, event_age_p99 = 1 }   # ranking criteria (hdbbench.report.ranking), >= 0
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.backends.registry import BACKENDS
from hdbbench.errors import ConfigError
from hdbbench.kinds import DEFAULT_KIND, SubscriberKind, parse_kinds
from hdbbench.measure import MIN_SATURATION_STEP_S
from hdbbench.settings import PROFILE_NAMES
from hdbbench.tomlfile import REQUIRED, Table, from_values, read_document, suggestion

KNOWN_BACKENDS = BACKENDS
DEVICE_ENGINES = ("auto", "cpp", "python")


@dataclass(frozen=True)
class SaturationSearch:
    start_rate: float = 2000.0
    step: float = 0.10
    step_s: float = 10.0
    max_steps: int = 15


@dataclass(frozen=True)
class SustainedLoad:
    rate: float = 2000.0
    duration_s: float = 60.0


@dataclass(frozen=True)
class Measurements:
    throughput: bool = True
    batch_sweep: tuple[int, ...] = ()
    subscriber_sweep: tuple[int, ...] = ()
    saturation: SaturationSearch | None = None
    sustained: SustainedLoad | None = None


@dataclass(frozen=True)
class ReportOptions:
    weights: tuple[tuple[str, float], ...] = ()  # ranking criterion -> weight; empty: the balanced set


@dataclass(frozen=True)
class ExtractionPart:
    """The extraction benchmark of a run (hdbbench.extraction), on the scenario's backends."""

    query_set: Path
    variants: tuple[str, ...] = ("pk", "pk+2")
    cold: bool = True          # restart servers (and drop the OS cache when allowed) before cold queries
    cluster: bool = True


@dataclass(frozen=True)
class DiskPart:
    """Disk usage per Tango type (hdbbench.disk) and, with an inventory, a sizing projection."""

    events: int = 20_000
    attributes: int = 20
    array_sizes: tuple[int, ...] = (100, 1000)
    inventory: Path | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    source: Path
    seed: int = 42
    backends: tuple[str, ...] = KNOWN_BACKENDS
    profile: str = "relaxed"
    tango_db: str = "pytango"
    schema_variant: str = "pk+2"
    device_profile: Path = Path("devices/profiles/scalar-heavy-accelerator.toml")
    servers: int = 1
    devices_per_server: int = 1
    device_engine: str = "auto"        # generator engine: DEVICE_ENGINES
    subscribers: int = 1
    lib_configuration: tuple[tuple[str, str], ...] = ()
    rate: float = 2000.0
    duration_s: float = 60.0
    warmup_s: float = 10.0
    measurements: Measurements = field(default_factory=Measurements)
    report: ReportOptions = field(default_factory=ReportOptions)
    extraction: ExtractionPart | None = None
    disk: DiskPart | None = None
    subscriber_kinds: tuple[SubscriberKind, ...] = ()  # [[subscribers.kinds]]; () = ours alone

    @property
    def kinds(self) -> tuple[SubscriberKind, ...]:
        """The subscriber kinds measured on every backend, the reference first."""
        return self.subscriber_kinds or (DEFAULT_KIND,)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["subscriber_kinds"] = [kind.to_dict() for kind in self.kinds]
        data["source"] = str(self.source)
        if self.extraction:
            data["extraction"]["query_set"] = str(self.extraction.query_set)
        if self.disk and self.disk.inventory:
            data["disk"]["inventory"] = str(self.disk.inventory)
        data["device_profile"] = str(self.device_profile)
        data["lib_configuration"] = dict(self.lib_configuration)
        data["report"] = {"weights": dict(self.report.weights)}
        return data


def load_scenario(path: Path) -> Scenario:
    """Read and validate a scenario file completely; ConfigError "file:line: key: problem" otherwise."""
    document = read_document(path, "scenario")
    return _parse(document.root())


def parse_scenario(document: dict[str, Any], source: Path) -> Scenario:
    """A scenario from values already parsed (no line numbers in its errors)."""
    return _parse(from_values(document, source).root())


def _parse(top: Table) -> Scenario:
    source = top.document.source
    name = top.string("name")
    if not name:
        raise top.fail("name", "must not be empty")
    seed = top.integer("seed", 42)
    backends = tuple(top.list_of("backends", str, list(KNOWN_BACKENDS)))
    for backend in backends:
        if backend not in KNOWN_BACKENDS:
            raise top.fail("backends", f"names an unknown backend {backend!r}"
                                       + suggestion(backend, KNOWN_BACKENDS))
    if not backends:
        raise top.fail("backends", "must name at least one backend")

    stack = top.table("stack")
    profile = stack.choice("profile", PROFILE_NAMES, "relaxed")
    tango_db = stack.choice("tango_db", ("pytango", "cpp"), "pytango")
    stack.finish()

    schema = top.table("schema")
    variant = schema.string("variant", "pk+2")
    schema.finish()

    devices = top.table("devices")
    device_profile = _device_profile(devices)
    servers = devices.count("servers", 1)
    per_server = devices.count("devices_per_server", 1)
    engine = devices.choice("engine", DEVICE_ENGINES, "auto")
    devices.finish()

    subs = top.table("subscribers")
    subscribers = subs.count("count", 1)
    lib = subs.mapping("lib_configuration", {})
    lib_configuration = tuple((str(k), str(v)) for k, v in lib.items())
    kinds = parse_kinds(subs, backends, dict(lib_configuration))
    subs.finish()

    load = top.table("load")
    rate = load.positive("rate", 2000.0)
    duration = load.positive("duration_s", 60.0)
    warmup = load.positive("warmup_s", 10.0, allow_zero=True)
    if warmup >= duration:
        raise load.fail("warmup_s", f"must be shorter than duration_s ({duration:g}), got {warmup:g}")
    load.finish()

    measurements = _parse_measurements(top.table("measurements"))
    report = _parse_report(top.table("report"))
    extraction = _parse_extraction(sub) if (sub := top.optional_table("extraction")) is not None else None
    disk = _parse_disk(sub) if (sub := top.optional_table("disk")) is not None else None
    top.finish()
    return Scenario(
        name=name, source=source, seed=seed, backends=backends, profile=profile, tango_db=tango_db,
        schema_variant=variant, device_profile=device_profile, servers=servers, devices_per_server=per_server,
        device_engine=engine,
        subscribers=subscribers, lib_configuration=lib_configuration, rate=rate, duration_s=duration,
        warmup_s=warmup, measurements=measurements, report=report, extraction=extraction, disk=disk,
        subscriber_kinds=kinds,
    )


def _file(reader: Table, key: str, default: Any = REQUIRED) -> Path:
    """A file named relative to the scenario, the working directory or the repository; must exist."""
    given = Path(reader.string(key, default))
    candidates = [given] if given.is_absolute() else [
        reader.document.source.parent / given, Path.cwd() / given, Path(__file__).resolve().parent.parent / given]
    found = next((c for c in candidates if c.exists()), None)
    if found is None:
        raise reader.fail(key, f"names a file that does not exist: {given}")
    return found


def _device_profile(reader: Table) -> Path:
    from hdbbench.devices import load_profile

    path = _file(reader, "profile", "devices/profiles/scalar-heavy-accelerator.toml")
    load_profile(path)  # refused now, before anything starts
    return path


def _parse_extraction(reader: Table) -> ExtractionPart:
    from hdbbench.queries import load_query_set

    query_set = _file(reader, "query_set")
    load_query_set(query_set)  # refused now, before anything starts
    variants = tuple(reader.list_of("variants", str, ["pk", "pk+2"], non_empty=True))
    part = ExtractionPart(query_set=query_set, variants=variants, cold=reader.boolean("cold", True),
                          cluster=reader.boolean("cluster", True))
    reader.finish()
    return part


def _parse_disk(reader: Table) -> DiskPart:
    events = reader.count("events", 20_000)
    attributes = reader.count("attributes", 20)
    sizes = _int_list(reader, "array_sizes") or (100, 1000)
    inventory = None
    if reader.has("inventory"):
        from hdbbench.sizing import load_inventory

        inventory = _file(reader, "inventory")
        load_inventory(inventory)  # refused now, before anything starts
    reader.finish()
    return DiskPart(events=events, attributes=attributes, array_sizes=sizes, inventory=inventory)


def _int_list(reader: Table, key: str) -> tuple[int, ...]:
    return tuple(reader.list_of(key, int, [], minimum=1))


def _parse_measurements(reader: Table) -> Measurements:
    throughput = reader.boolean("throughput", True)
    batch_sweep = _int_list(reader, "batch_sweep")
    subscriber_sweep = _int_list(reader, "subscriber_sweep")
    saturation = None
    if (sat := reader.optional_table("saturation")) is not None:
        step_s = sat.positive("step_s", 10.0)
        if step_s < MIN_SATURATION_STEP_S:
            raise sat.fail("step_s", f"must be >= {MIN_SATURATION_STEP_S:g} s, got {step_s:g}: Elettra's rule needs "
                                     "6 rises of the max-pending figure in a row, sampled at 1 Hz, within a step")
        saturation = SaturationSearch(
            start_rate=sat.positive("start_rate", 2000.0), step=sat.positive("step", 0.10),
            step_s=step_s, max_steps=sat.count("max_steps", 15))
        sat.finish()
    sustained = None
    if (sus := reader.optional_table("sustained")) is not None:
        sustained = SustainedLoad(rate=sus.positive("rate", 2000.0), duration_s=sus.positive("duration_s", 60.0))
        sus.finish()
    reader.finish()
    return Measurements(throughput, batch_sweep, subscriber_sweep, saturation, sustained)


def _parse_report(reader: Table) -> ReportOptions:
    from hdbbench.report.ranking import CRITERION_NAMES

    weights = reader.mapping("weights", {})
    for name, value in weights.items():
        if name not in CRITERION_NAMES:
            raise reader.fail("weights", f"names an unknown criterion {name!r}"
                                         + suggestion(name, CRITERION_NAMES))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise reader.fail("weights", f"weight of {name!r} must be a number >= 0, got {value!r}")
    if weights and not any(weights.values()):
        raise reader.fail("weights", "must give at least one weight > 0")
    reader.finish()
    return ReportOptions(tuple((str(k), float(v)) for k, v in weights.items()))

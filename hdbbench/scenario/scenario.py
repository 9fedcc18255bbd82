# SPDX-License-Identifier: Apache-2.0
"""Scenario files: what to start, what load to offer, what to measure.

A scenario is a TOML file, validated completely before anything starts: an unknown key, a wrong
type or an impossible value is a ConfigError naming the file, the line and the key
(``scenarios/x.toml:12: [load] rate: must be > 0, got -5``), read by hdbbench.model.tomlfile.
The resolved scenario (every default filled in) is saved in the run directory.

    name = "default"
    seed = 42
    backends = ["timescaledb", "postgresql", "mysql"]

    [stack]
    profile = "relaxed"          # durable | relaxed
    tango_db = "pytango"         # pytango | cpp
    memory = "1GiB"              # optional: every database server's memory budget, or a table per server
                                 # { postgres = "1GiB", mariadb = "512MiB" } (hdbbench.stack.servers.confine)
    storage = "ram"              # ram (default) | nvme | ssd | hdd | { read_iops, write_iops, read_mb_s, write_mb_s }
    storage_size = "20GiB"       # each server's sparse file-system image (with a storage class)
    servers = { postgres = "patroni" }  # optional: a server kind in another's place (docs/ha.md)

    [schema]
    variant = "pk+2"

    [devices]
    profile = "devices/profiles/scalar-heavy-accelerator.toml"
    servers = 1
    devices_per_server = 1
    engine = "auto"              # auto (the C++ HdbBenchGen when built and no attribute is polled) | cpp | python
    # instead of profile: a facility's inventory at a scale (hdbbench.load.facility; exactly one of the two)
    # inventory = "inventories/example-facility.toml"
    # scale = 0.5                # multiplies each group's attribute count; rates keep the mix's proportions
    # phases = "seeded"          # seeded (default: each attribute offset by its own fraction of its period,
                                 # as a facility's polling) | aligned (every attribute of a rate at once);
                                 # a profile's devices take [profile] phases (default aligned)

    [subscribers]
    count = 1
    lib_configuration = { batch_size = "1000" }

    [[subscribers.kinds]]        # optional, repeatable: the subscribers to compare (hdbbench.subscribers.kinds);
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
                                 # Elettra's +10 % steps; or bracket by doubling, then bisect to 5 %, each
                                 # bound confirmed by a repeat (hdbbench.trials.search):
                                 # { mode = "bisect", start_rate = 2000, resolution = 0.05, max_rate = 100000, step_s = 10 }
    sustained = { rate = 2000, duration_s = 60 }
    growth = { rate = 20000, until_memory_ratio = 10, interval_s = 10, max_duration_s = 1200 }
                                 # from an empty database until it is that many times the server's memory
                                 # budget (or until_bytes = "2GiB" without a budget), hdbbench.parts.aging.growth

    [extraction]                 # optional: the extraction benchmark after insertion
    query_set = "query_sets/default.toml"
    variants = ["pk", "pk+2"]
    cold = true                  # restart the server (and drop the OS cache where allowed) before cold runs
    cluster = true               # also measure after CLUSTER (PostgreSQL/TimescaleDB)

    [disk]                       # optional: bytes per event per Tango type, fitted as fixed + marginal
    events = 200000              # largest size of each scalar case (also measured at smaller sizes)
    attributes = 4               # attributes per case
    array_sizes = [100, 1000]    # devdouble spectrum sizes
    variants = ["pk", "pk+2"]    # as `size measure --variant`; default: every backend's disk variants
    inventory = "inventories/example-facility.toml"   # optional: project this facility's disk

    [replica_reads]              # optional, backends on a cluster: its query set on a standby while the
    query_set = "query_sets/default.toml"  # primary archives at `rate`, against the same without readers
    rate = 500                   # (hdbbench.parts.replica_reads; also warmup_s, duration_s, readers)

    [faults]                     # optional: faults under load (hdbbench.parts.faults.part: every key and default)
    kinds = ["database_stop", "subscriber_kill"]

    [placement.cpus]             # optional CPU lists as taskset takes them (hdbbench.stack.placement)
    devices = "0"                # groups: devices, subscribers, databases, tango, controller
    subscribers = "1"

    [report]
    weights = { saturation_rate = 2, event_age_p99 = 1 }   # ranking criteria (hdbbench.report.ranking), >= 0

    [history]                    # optional: an aged history the trials start from (hdbbench.parts.aging.history)
    days = 180                   # or rows = 10_000_000 (exactly one of them)
    cluster = true               # older chunks reordered as the official reorder job does
    load_order = { rows = [1_000_000], attributes = 2000, repeat = 1, variants = ["pk", "pk+2"] }  # optional:
                                 # Elettra's load-order table (variants: default the scenario's)

    [maintenance]                # optional: jobs while a subscriber archives (hdbbench.parts.maintenance.part)
    jobs = ["reorder", "retention", "aggregates", "backup"]   # default: every job
    rate = 2000                  # events/s offered through the trial; gap_s, settle_s, warmup_s, queries

    [hosts]                      # optional: each component's host (hdbbench.scenario.hosts); "local" by default
    tango_db = "198.18.0.1"
    devices = ["198.18.0.2"]
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.backends import base as abilities
from hdbbench.backends.model import SchemaVariant
from hdbbench.backends.registry import BACKENDS, DEFAULT_BACKENDS, backend_class
from hdbbench.load import facility as fac
from hdbbench.load.devices import load_profile
from hdbbench.load.emitter import PHASE_MODES
from hdbbench.load.facility import FACILITY_PHASES, FacilityDevices
from hdbbench.load.inventory.model import load_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, parse_type
from hdbbench.model.paths import REPO
from hdbbench.model.tomlfile import REQUIRED, Table, from_values, read_document, suggestion
from hdbbench.parts.aging.settings import HistoryPart, parse_history
from hdbbench.parts.disk import MeasureVariant, variants_for
from hdbbench.parts.extraction.queries import load_query_set
from hdbbench.parts.faults.part import DATABASE_FAULTS, FaultsPart, parse_faults, server_fault_problem
from hdbbench.parts.maintenance.part import MaintenancePart, parse_maintenance
from hdbbench.parts.replica_reads import (
    DEFAULT_QUERY_SET,
    ReplicaReadsPart,
    parse_replica_reads,
    replica_problem,
)
from hdbbench.report.ranking import CRITERION_NAMES
from hdbbench.scenario.hosts import parse_hosts
from hdbbench.scenario.measurements import MAX_RATE, Measurements, int_list, parse_measurements
from hdbbench.stack.placement import Placement, placement_from
from hdbbench.stack.servers.confine.spec import ConfineSpec, parse_spec
from hdbbench.stack.servers.registry import confinable_kinds, serving_problem
from hdbbench.stack.settings import PROFILE_NAMES
from hdbbench.subscribers.kinds import DEFAULT_KIND, SubscriberKind, parse_kinds

KNOWN_BACKENDS = BACKENDS
DEVICE_ENGINES = ("auto", "cpp", "python")
# The name becomes part of the run directory's name: one path component of plain characters.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
# LibConfiguration lines are "key=value": a key is a word, a value has no line break.
LIB_KEY_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_DURATION_S = 7 * 86400.0


@dataclass(frozen=True)
class ReportOptions:
    weights: tuple[tuple[str, float], ...] = ()  # ranking criterion -> weight; empty: the balanced set


@dataclass(frozen=True)
class ExtractionPart:
    """The extraction benchmark of a run (hdbbench.parts.extraction.extraction), on the scenario's backends."""

    query_set: Path
    variants: tuple[str, ...] = ("pk", "pk+2")
    cold: bool = True          # restart servers (and drop the OS cache when allowed) before cold queries
    cluster: bool = True


@dataclass(frozen=True)
class DiskPart:
    """Disk usage per Tango type (hdbbench.parts.disk) and, with an inventory, a sizing projection."""

    events: int = 20_000
    attributes: int = 20
    array_sizes: tuple[int, ...] = (100, 1000)
    inventory: Path | None = None
    variants: tuple[str, ...] = ()  # as `size measure --variant`; empty: every backend's disk variants


@dataclass(frozen=True)
class Scenario:
    name: str
    source: Path
    seed: int = 42
    backends: tuple[str, ...] = DEFAULT_BACKENDS
    profile: str = "relaxed"
    tango_db: str = "pytango"
    schema_variant: str = "pk+2"
    device_profile: Path | None = Path("devices/profiles/scalar-heavy-accelerator.toml")  # None with an inventory
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
    hosts: Any = None                  # hdbbench.scenario.hosts.Hosts when the scenario names hosts
    facility: FacilityDevices | None = None       # [devices] inventory + scale instead of a profile
    placement: Placement = field(default_factory=Placement)   # [placement.cpus]
    subscriber_kinds: tuple[SubscriberKind, ...] = ()  # [[subscribers.kinds]]; () = ours alone
    faults: FaultsPart | None = None   # [faults]: hdbbench.parts.faults
    replica_reads: ReplicaReadsPart | None = None  # [replica_reads]: hdbbench.parts.replica_reads
    history: HistoryPart | None = None  # [history]: hdbbench.parts.aging
    maintenance: MaintenancePart | None = None  # [maintenance]: hdbbench.parts.maintenance
    warnings: tuple[str, ...] = ()     # found while reading: `check` and `run` print them, a run records them
    confine: ConfineSpec = field(default_factory=ConfineSpec)  # [stack] memory, storage, storage_size
    stack_servers: tuple[tuple[str, str], ...] = ()  # [stack] servers: kind -> the kind started in its place
    quick: bool = False                # cut down by `hdbbench run --quick` (hdbbench.run.quick)

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
        data["device_profile"] = str(self.device_profile) if self.device_profile else None
        if self.facility:
            data["facility"]["inventory"] = str(self.facility.inventory)
        data["placement"] = {"cpus": self.placement.to_dict()}
        data["lib_configuration"] = dict(self.lib_configuration)
        data["report"] = {"weights": dict(self.report.weights)}
        data["hosts"] = self.hosts.to_dict() if self.hosts is not None else None
        data["confine"] = self.confine.to_dict()
        data["stack_servers"] = dict(self.stack_servers)
        if self.replica_reads:
            data["replica_reads"] = self.replica_reads.to_dict()
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
    name = top.string("name", pattern=NAME_PATTERN,
                      describe="1 to 64 letters, digits, '_', '.', '+' or '-' (it names the run directory)")
    seed = top.seed("seed", 42)
    backends = tuple(top.list_of("backends", str, list(DEFAULT_BACKENDS)))
    for backend in backends:
        if backend not in KNOWN_BACKENDS:
            raise top.fail("backends", f"names an unknown backend {backend!r}"
                                       + suggestion(backend, KNOWN_BACKENDS))
    if not backends:
        raise top.fail("backends", "must name at least one backend")
    twice = next((b for b in backends if backends.count(b) > 1), None)
    if twice:
        raise top.fail("backends", f"names {twice!r} twice")

    stack = top.table("stack")
    profile = stack.choice("profile", PROFILE_NAMES, "relaxed")
    tango_db = stack.choice("tango_db", ("pytango", "cpp"), "pytango")
    confine = _parse_confine(stack)
    stack_servers = _stack_servers(stack)
    stack.finish()

    schema = top.table("schema")
    variant = schema.string("variant", "pk+2")
    try:
        SchemaVariant.parse(variant)
    except ConfigError as exc:
        raise schema.fail("variant", str(exc)) from None
    schema.finish()

    devices = top.table("devices")
    facility = _facility_devices(devices)
    device_profile = None if facility else _device_profile(devices)
    layout = _facility_layout(facility) if facility else (1, 1)
    servers = devices.count("servers", layout[0])
    per_server = devices.count("devices_per_server", layout[1])
    engine = devices.choice("engine", DEVICE_ENGINES, "auto")
    devices.finish()

    subs = top.table("subscribers")
    subscribers = subs.count("count", 1)
    lib_configuration = _lib_configuration(subs)
    kinds = parse_kinds(subs, backends, dict(lib_configuration))
    subs.finish()

    load = top.table("load")
    rate = load.number("rate", 2000.0, positive=True, maximum=MAX_RATE)
    duration = load.number("duration_s", 60.0, positive=True, maximum=MAX_DURATION_S)
    warmup = load.positive("warmup_s", 10.0, allow_zero=True)
    if warmup >= duration:
        raise load.fail("warmup_s", f"must be shorter than duration_s ({duration:g}), got {warmup:g}")
    load.finish()

    measurements = parse_measurements(top.table("measurements"))
    report = _parse_report(top.table("report"))
    extraction = _parse_extraction(sub) if (sub := top.optional_table("extraction")) is not None else None
    disk = _parse_disk(sub) if (sub := top.optional_table("disk")) is not None else None
    hosts = _parse_hosts(sub) if (sub := top.optional_table("hosts")) is not None else None
    placement = _parse_placement(sub) if (sub := top.optional_table("placement")) is not None else Placement()
    faults_table = top.optional_table("faults")
    faults = parse_faults(faults_table) if faults_table is not None else None
    replica_table = top.optional_table("replica_reads")
    replica_reads = parse_replica_reads(replica_table, _file(replica_table, "query_set", DEFAULT_QUERY_SET)) \
        if replica_table is not None else None
    if replica_table is not None and (problem := replica_problem(backends, dict(stack_servers))):
        raise replica_table.fail(None, problem)
    history = parse_history(sub, backends) if (sub := top.optional_table("history")) is not None else None
    maintenance = parse_maintenance(sub, backends) if (sub := top.optional_table("maintenance")) is not None else None
    top.finish()
    _refuse_lacking(top, backends, extraction, disk, faults)
    _refuse_unholdable(top, backends, device_profile, facility)
    _refuse_variants(schema, "variant", backends, (variant,))
    if extraction is not None:
        _refuse_variants(top.table("extraction"), "variants", backends, extraction.variants)
    if faults_table is not None and faults is not None and (
            problem := server_fault_problem(faults.kinds, backends, dict(stack_servers))):
        raise faults_table.fail("kinds", problem)
    attributes = _check_subscriber_limit(subs, device_profile, facility, servers * per_server,
                                         (subscribers, *measurements.subscriber_sweep))
    warnings = _event_consumer_warnings(kinds or (DEFAULT_KIND,), attributes, subscribers, dict(lib_configuration))
    return Scenario(
        name=name, source=source, seed=seed, backends=backends, profile=profile, tango_db=tango_db,
        schema_variant=variant, device_profile=device_profile, servers=servers, devices_per_server=per_server,
        device_engine=engine,
        subscribers=subscribers, lib_configuration=lib_configuration, rate=rate, duration_s=duration,
        warmup_s=warmup, measurements=measurements, report=report, extraction=extraction, disk=disk,
        hosts=hosts, facility=facility, placement=placement, subscriber_kinds=kinds, faults=faults,
        history=history, maintenance=maintenance, warnings=warnings, confine=confine, stack_servers=stack_servers,
        replica_reads=replica_reads,
    )


def _stack_servers(stack: Table) -> tuple[tuple[str, str], ...]:
    """[stack] servers: kind -> the kind started in its place (hdbbench.stack.servers.registry `serves`)."""
    given = stack.mapping("servers", {})
    for role, name in given.items():
        problem = serving_problem(role, name) if isinstance(name, str) else f"{role}: must be a server kind's name"
        if problem is not None:
            raise stack.fail("servers", problem)
    return tuple(given.items())


def _parse_confine(stack: Table) -> ConfineSpec:
    """[stack] memory, storage, storage_size (hdbbench.stack.servers.confine.spec); errors name the key."""
    values = [stack.raw(key) for key in ("memory", "storage", "storage_size")]
    try:
        return parse_spec(*values, confinable_kinds())
    except ConfigError as exc:
        key, _, problem = str(exc).partition(": ")
        raise stack.fail(key, problem) from None


def _refuse_lacking(top: Table, backends: Sequence[str], extraction: ExtractionPart | None, disk: DiskPart | None,
                    faults: FaultsPart | None) -> None:
    """A part the scenario asks for, refused (one line) when one of its backends lacks the ability it
    needs (hdbbench.backends.base.ABILITIES): before anything starts, not in the middle of the run."""
    needs = [(table, ability) for table, ability, asked in (
        ("[extraction]", abilities.EXTRACTION, extraction is not None),
        ("[disk]", abilities.DISK, disk is not None),
        ("[faults] (kinds " + ", ".join(k for k in DATABASE_FAULTS if faults and k in faults.kinds) + ")",
         abilities.DATABASE_FAULTS, faults is not None and bool(set(faults.kinds) & set(DATABASE_FAULTS))),
    ) if asked]
    for backend in backends:
        for table, ability in needs:
            if (refusal := backend_class(backend).refusal(ability)) is not None:
                raise top.fail("backends", f"{refusal}; {table} needs it")


def _refuse_variants(table: Table, key: str, backends: Sequence[str], variants: Sequence[str]) -> None:
    """A schema variant that one of the backends cannot build (`Backend.check_variant`), refused in one
    line before anything starts."""
    for backend in backends:
        for variant in variants:
            try:
                backend_class(backend).check_variant(SchemaVariant.parse(variant))
            except ConfigError as exc:
                raise table.fail(key, f"{variant!r} on backend {backend}: {exc}") from None


def _refuse_unholdable(top: Table, backends: Sequence[str], device_profile: Path | None,
                       facility: FacilityDevices | None) -> None:
    """A device mix with an attribute one of the backends cannot store (a what-if engine's limits,
    `Backend.cannot_hold`), refused in one line before anything starts."""
    if facility is not None:
        shapes = {(g.type, g.format) for g in load_inventory(facility.inventory).groups}
    elif device_profile is not None:
        shapes = {(parse_type(a.type), AttrFormat[a.format]) for a in load_profile(device_profile).attributes}
    else:
        return
    for backend in backends:
        for tango_type, fmt in sorted(shapes):
            if (why := backend_class(backend).cannot_hold(tango_type, fmt)) is not None:
                raise top.fail("backends", f"backend {backend} cannot hold {tango_type.suffix} "
                                           f"{fmt.name.lower()} attributes of the device mix ({why})")


def _event_consumer_warnings(kinds: Sequence[SubscriberKind], attributes: int, subscribers: int,
                             lib_configuration: dict[str, str]) -> tuple[str, ...]:
    """A kind that would hold more attributes per process than it can subscribe without loss (Tango's
    event consumer limit, hdbbench.subscribers.kinds) is warned of before anything starts; a kind's
    `safe_attributes` overrides the limit assumed for it."""
    per_process = math.ceil(attributes / max(1, subscribers))
    out = []
    for kind in kinds:
        limit = kind.attribute_limit(lib_configuration)
        if limit is not None and per_process > limit:
            out.append(f"subscriber kind {kind.name!r}: {per_process:,} attributes per process > its safe {limit:,} "
                       "(Tango's event consumer drops the subscriptions to the device servers connected later past "
                       f"{limit * 2:,} topics): use at least {math.ceil(attributes / limit)} subscribers, or set "
                       "safe_attributes in its [[subscribers.kinds]] table if it lifts the limit")
    return tuple(out)


def _parse_hosts(reader: Table) -> Any:
    return parse_hosts(reader)


def _lib_configuration(subs: Table) -> tuple[tuple[str, str], ...]:
    """The LibConfiguration overrides: word keys, scalar values without line breaks."""
    lib = subs.mapping("lib_configuration", {})
    for key, value in lib.items():
        if not LIB_KEY_PATTERN.match(key):
            raise subs.fail("lib_configuration", f"key {key!r} must be a word (letters, digits, '_')")
        if isinstance(value, (dict, list)) or "\n" in str(value) or "\r" in str(value):
            raise subs.fail("lib_configuration", f"value of {key!r} must be one line of text or a number, got {value!r}")
    return tuple((str(k), str(v)) for k, v in lib.items())


def _file(reader: Table, key: str, default: Any = REQUIRED) -> Path:
    """A file named relative to the scenario, the working directory or the repository; must exist."""
    given = Path(reader.string(key, default))
    candidates = [given] if given.is_absolute() else [
        reader.document.source.parent / given, Path.cwd() / given, REPO / given]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise reader.fail(key, f"names a file that does not exist: {given}")
    return found


def _device_profile(reader: Table) -> Path:
    path = _file(reader, "profile", "devices/profiles/scalar-heavy-accelerator.toml")
    load_profile(path)  # refused now, before anything starts
    return path


def _facility_devices(reader: Table) -> FacilityDevices | None:
    """[devices] inventory + scale + phases (hdbbench.load.facility), refused together with a profile."""
    if not reader.has("inventory"):
        if reader.has("scale"):
            raise reader.fail("scale", "applies to an inventory only (give inventory = \"...\")")
        if reader.has("phases"):
            raise reader.fail("phases", "applies to an inventory only "
                                        "(a profile's devices take [profile] phases)")
        return None
    if reader.has("profile"):
        raise reader.fail("inventory", "give exactly one of profile and inventory")

    path = _file(reader, "inventory")
    load_inventory(path)  # refused now, before anything starts
    return FacilityDevices(path, reader.positive("scale", 1.0),
                           reader.choice("phases", PHASE_MODES, FACILITY_PHASES))


def _facility_layout(facility: FacilityDevices) -> tuple[int, int]:
    """Servers and devices per server for an inventory's devices when the scenario does not say."""
    return fac.default_layout(fac.attribute_count(load_inventory(facility.inventory), facility.scale))


def _check_subscriber_limit(subs: Table, profile: Path | None, facility: FacilityDevices | None, devices: int,
                            counts: tuple[int, ...]) -> int:
    """No subscriber of any trial gets more attributes than HDB++ archives per subscriber; the
    number of attributes archived."""
    if facility is not None:
        attributes = fac.attribute_count(load_inventory(facility.inventory), facility.scale)
    else:
        assert profile is not None
        attributes = len(load_profile(profile).attributes) * devices
    fac.check_subscribers(attributes, counts, lambda problem: subs.fail("count", problem))
    return attributes


def _parse_placement(reader: Table) -> Placement:
    cpus = reader.table("cpus")
    for group in cpus.values:
        cpus.string(group)  # a CPU list is a string, as taskset takes it: "0", "0-3", "0,2"
    placement = placement_from(cpus.values, cpus.fail)
    cpus.finish()
    reader.finish()
    return placement


def _parse_extraction(reader: Table) -> ExtractionPart:
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
    sizes = int_list(reader, "array_sizes") or (100, 1000)
    variants = tuple(reader.list_of("variants", str, [], non_empty=False))
    if variants:
        try:
            for backend, names in variants_for(BACKENDS, variants).items():
                for name in names:
                    MeasureVariant.parse(backend, name)
        except ConfigError as exc:
            raise reader.fail("variants", str(exc)) from None
    inventory = None
    if reader.has("inventory"):
        inventory = _file(reader, "inventory")
        load_inventory(inventory)  # refused now, before anything starts
    reader.finish()
    return DiskPart(events=events, attributes=attributes, array_sizes=sizes, inventory=inventory, variants=variants)


def _parse_report(reader: Table) -> ReportOptions:
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

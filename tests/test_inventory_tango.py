# SPDX-License-Identifier: Apache-2.0
"""Inventories from a Tango database (`hdbbench inventory from-tango`) and from a yaml2archiving
configuration (`hdbbench inventory from-yaml`), against real processes.

A Tango database of its own (no SQL server: the subscribers use the null backend), the all-types
simulated device (every type x format x write type, two polled attributes) and two hdbbench-es
subscribers, the device's attributes dealt between them by AttributeAdd as the harness assigns them.
The commands run as a user runs them (`python -m hdbbench`); what they write must read back with
hdbbench.load.inventory.model.load_inventory and equal what was started: the groups' counts, types, formats, write
sides and sizes, the rates the attributes' configuration states, and the assignment. Then a manager's
ArchiverList and an archiver whose device does not answer; rates and types from a real HDB++ archive
of those attributes (written with a backend's bulk writer, read as HDB++'s read-only account), and
without one; then the bad inputs, one line each.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.load.inventory.archive import masked
from hdbbench.load.inventory.from_tango import read_tango
from hdbbench.load.inventory.from_yaml import read_yaml
from hdbbench.load.inventory.model import load_inventory
from hdbbench.load.offered import spread
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Encoded, Event, TangoType, WriteType
from hdbbench.stack.servers.ports import pick_free_port
from hdbbench.subscribers.launcher import DEFAULT_BINARY, SubscriberFleet, SubscriberSpec
from tests.harness import REPO, eventually, seen
from tests.harness.databases import fresh_backend, read_only_url
from tests.harness.devices import tango_database
from tests.harness.runs import hdbbench
from tests.harness.servers import tango_alone

PROFILE = REPO / "devices" / "profiles" / "all-types.toml"
# Attributes that share a shape: a group of six, and one shape in two rate bands (1 Hz and 0.33 Hz).
GROUPS_PROFILE = """
[profile]
name = "inventory-groups"
seed = 3
servers = 1
devices_per_server = 1
device_prefix = "sim/invgroups"

[defaults]
rate_hz = 2.0
p_alarm = 0.0
p_warning = 0.0
p_invalid = 0.0
p_error = 0.0

[[attribute]]
name = "d"
type = "DevDouble"
count = 6

[[attribute]]
name = "fast"
type = "DevLong"
mode = "poll"
archive_period_ms = 1000
count = 3

[[attribute]]
name = "slow"
type = "DevLong"
mode = "poll"
archive_period_ms = 3000
count = 2
"""
INSTANCES = (61, 62)
WAIT_S = 60.0
DEFAULT_PERIOD_S = 10.0   # the commands' default for attributes that state no period

pytestmark = pytest.mark.subscriber


@dataclass
class Bed:
    tango_host: str
    device: str                         # the simulated device
    specs: dict[str, Any]               # full attribute name -> its AttrSpec
    assignment: dict[str, tuple[str, ...]]  # subscriber device -> its attributes

    def shape(self, name: str) -> tuple[TangoType, AttrFormat, str, int, int]:
        s = self.specs[name]
        fmt = AttrFormat[s.format]
        return (TangoType(s.info.number), fmt, "ro" if s.write == "READ" else "rw",
                1 if fmt == AttrFormat.SCALAR else s.dim_x, s.dim_y if fmt == AttrFormat.IMAGE else 0)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, (result.returncode, result.stderr)
    assert lines[0].startswith("hdbbench: error: "), lines
    return lines[0]


@pytest.fixture(scope="module")
def bed(own_tango_host: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    """The all-types device and two subscribers, its attributes dealt between them by AttributeAdd;
    ready once each subscriber's AttributeList property lists its attributes."""
    from hdbbench.load import devices

    tmp = tmp_path_factory.mktemp("inventory-bed")
    fleet = SubscriberFleet(own_tango_host, tmp, binary=DEFAULT_BINARY, attached=True)
    try:
        sims = devices.up(own_tango_host, PROFILE, state_dir=tmp / "devices", tie_to_parent=True)
        (plan,) = sims.devices.values()
        (tmp / "groups.toml").write_text(GROUPS_PROFILE)
        more = devices.up(own_tango_host, tmp / "groups.toml", state_dir=tmp / "devices-groups", tie_to_parent=True)
        specs = {f"tango://{own_tango_host}/{p.name}/{s.name}".lower(): s
                 for p in (plan, *more.devices.values()) for s in p.specs}
        dealt = spread(sorted(specs), len(INSTANCES))
        subscriber_specs = [SubscriberSpec(n, ("backend=null",), attrs) for n, attrs in zip(INSTANCES, dealt)]
        fleet.up(subscriber_specs)
        assignment = {s.device: s.attributes for s in subscriber_specs}
        db = tango_database(own_tango_host)

        def listed() -> Any:
            got = {d: sorted(x.split(";")[0] for x in db.get_device_property(d, ["AttributeList"])["AttributeList"])
                   for d in assignment}
            return seen(all(got[d] == sorted(a) for d, a in assignment.items()), {d: len(v) for d, v in got.items()})

        eventually(listed, WAIT_S, "each subscriber's AttributeList lists its attributes")
        yield Bed(own_tango_host, plan.name, specs, assignment)
    finally:
        fleet.down()
        devices.down(tmp / "devices")
        devices.down(tmp / "devices-groups")


def expected_rate(spec: Any) -> float:
    """What the attribute's configuration states: archive_period, else the polling period, else the default."""
    if spec.mode == "push":
        return 1 / DEFAULT_PERIOD_S
    if spec.archive_period_ms:
        return 1000 / spec.archive_period_ms
    return 1000 / max(1, round(1000 / spec.rate_hz))


def expected_groups(bed: Bed, names: Any, bands: bool = False) -> Counter[tuple[Any, ...]]:
    return Counter(bed.shape(n) + ((float(f"{expected_rate(bed.specs[n]):.2g}"),) if bands else ()) for n in names)


def read_groups(inventory: Any, bands: bool = False) -> Counter[tuple[Any, ...]]:
    out: Counter[tuple[Any, ...]] = Counter()
    for g in inventory.groups:
        assert len(g.names) == g.count, g.label
        out[(g.type, g.format, g.write, g.dim_x, g.dim_y) + ((float(f"{g.rate_hz:.2g}"),) if bands else ())] += g.count
    return out


def rates_by_name(inventory: Any) -> dict[str, float]:
    return {name: g.rate_hz for g in inventory.groups for name in g.names}


def test_from_tango_gives_what_was_started(bed: Bed, tmp_path: Path) -> None:
    out = tmp_path / "facility.toml"
    result = hdbbench("inventory", "from-tango", bed.tango_host, "--output", str(out))
    assert result.returncode == 0, result.stderr
    inventory = load_inventory(out)
    assert inventory.name == "facility"
    everything = [n for attrs in bed.assignment.values() for n in attrs]
    # every attribute, in groups of its type, format, write side and size, each name once
    assert read_groups(inventory) == expected_groups(bed, everything)
    assert sorted(n for g in inventory.groups for n in g.names) == sorted(everything)
    assert {a.name: a.attributes for a in inventory.archivers} == bed.assignment
    # rates: archive_period (ms) where set, else the polling period; the code-pushed ones state none
    rates = rates_by_name(inventory)
    assert rates == pytest.approx({n: expected_rate(bed.specs[n]) for n in everything})
    poll_counter = f"tango://{bed.tango_host}/{bed.device}/poll_counter".lower()
    assert rates[poll_counter] == pytest.approx(10.0)  # polled every 100 ms, no archive_period
    # by rate band too: the second device's six doubles join the first's code-pushed double; its
    # polled longs are two groups, 1 Hz and 0.33 Hz
    assert read_groups(inventory, bands=True) == expected_groups(bed, everything, bands=True)
    assert Counter(g.count for g in inventory.groups if g.type == TangoType.DEV_LONG and g.format == AttrFormat.SCALAR
                   and g.write == "ro") == Counter({1: 2, 3: 1, 2: 1})
    text = out.read_text()
    assert "# rates: 6 from the attribute's archive_period; 1 from the attribute's polling period; 86 at a " \
           "default period of 10 s" in text, text[:800]
    assert "no configuration manager" in text
    warnings = result.stderr.splitlines()
    assert len(warnings) == 1 and "86 attributes state no archive_period" in warnings[0], result.stderr
    groups = len(expected_groups(bed, everything, bands=True))
    assert f"93 attributes in {groups} groups" in result.stdout and "2 archivers with 93 attributes" in result.stdout


def test_a_manager_and_an_archiver_whose_device_does_not_answer(bed: Bed, tmp_path: Path) -> None:
    import tango

    db = tango_database(bed.tango_host)
    ghost_device, ghost_es, manager = "sim/ghost/1", "archiving/hdbbench-es/ghost", "archiving/hdbpp/cm-test"
    ghost_attribute = f"tango://{bed.tango_host}/{ghost_device}/position"
    servers = {"HdbBenchSim/ghost": ("HdbBenchSim", ghost_device), "hdbbench-es/ghost": ("HdbEventSubscriber", ghost_es),
               "hdbpp-cm/test": ("HdbConfigurationManager", manager)}
    try:
        for server, (klass, device) in servers.items():
            info = tango.DbDevInfo()
            info.name, info._class, info.server = device, klass, server
            db.add_device(info)
        # registered, never started: its AttributeList as hdbpp-es writes it (strategy and ttl after the name)
        db.put_device_property(ghost_es, {"AttributeList": [f"{ghost_attribute};strategy=ALWAYS;ttl=24"]})
        es61, es62 = sorted(bed.assignment)
        db.put_device_property(manager, {"ArchiverList": [f"tango://{bed.tango_host}/{es61}", es62.upper(),
                                                          "archiving/hdbpp/gone"]})
        out = tmp_path / "with-ghost.toml"
        result = hdbbench("inventory", "from-tango", bed.tango_host, "-o", str(out), "--default-period", "60")
        assert result.returncode == 0, result.stderr
        inventory = load_inventory(out)
        archivers = {a.name: a.attributes for a in inventory.archivers}
        assert archivers == {**bed.assignment, ghost_es: (ghost_attribute,)}
        assert ghost_attribute not in {n for g in inventory.groups for n in g.names}
        assert sum(g.count for g in inventory.groups) == len(bed.specs)
        warnings = result.stderr.splitlines()
        silent = [w for w in warnings if "do not answer" in w]
        assert len(silent) == 1 and "1 attributes unknown" in silent[0] and ghost_device in silent[0], warnings
        assert any("lists 1 archivers the database does not have" in w and "archiving/hdbpp/gone" in w
                   for w in warnings), warnings
        assert any("in no manager's ArchiverList" in w and ghost_es in w for w in warnings), warnings
        assert any("one event every 60 s" in w for w in warnings), warnings
        text = out.read_text()
        assert f"configuration manager {manager}: ArchiverList of 3" in text
        assert "94 attributes; 93 described by their devices, 1 unknown" in text
    finally:
        for server in servers:
            db.delete_server(server)


def short(names: Any) -> list[str]:
    return [n.rsplit("/", 1)[1] for n in names]


def yaml_config(bed: Bed) -> str:
    """The assignment as a yaml2archiving file: an entry per device and subscriber, the first subscriber
    the file's archiver, the second named by its entries; one attribute with an archive_period of its own,
    one device found by a regular expression."""
    lines = [f'db: "{bed.tango_host}"', "manager: archiving/hdbpp/cm-test", f"archiver: {min(bed.assignment)}", "",
             "configuration:"]
    for n, (es, names) in enumerate(sorted(bed.assignment.items())):
        by_device: dict[str, list[str]] = {}
        for name in names:
            device, _, attr = name.partition(f"tango://{bed.tango_host}/".lower())[2].rpartition("/")
            by_device.setdefault(device, []).append(attr)
        for device, attrs in sorted(by_device.items()):
            lines += ["  - class: HdbBenchSim"] + ([f"    archiver: {es}"] if n else [])
            pattern = device if device == bed.device else device.rsplit("/", 1)[0] + "/.*"
            lines += ["    filtering:", f'      device: "{pattern}"', "    attributes:"]
            for attr in attrs:
                own = n == 0 and device == bed.device and attr == short(names)[0]
                lines += [f"      {attr}:"] + (["        archive_period: 2000", "        polling_period: 1000"]
                                               if own else ["        code_push_event: true"] if n == 0 else [])
    return "\n".join(lines) + "\n"


def test_from_yaml_gives_the_same_names_and_assignment(bed: Bed, tmp_path: Path) -> None:
    config = tmp_path / "attribute_config.yaml"
    config.write_text(yaml_config(bed))
    out = tmp_path / "from-yaml.toml"
    result = hdbbench("inventory", "from-yaml", str(config), "--output", str(out), "--types-from", bed.tango_host)
    assert result.returncode == 0, result.stderr
    inventory = load_inventory(out)
    assert {a.name: a.attributes for a in inventory.archivers} == bed.assignment
    everything = [n for attrs in bed.assignment.values() for n in attrs]
    assert read_groups(inventory) == expected_groups(bed, everything)
    first = sorted(bed.assignment.items())[0][1][0]
    rates = rates_by_name(inventory)
    assert rates.pop(first) == pytest.approx(0.5)   # the file's archive_period wins
    assert rates == pytest.approx({n: expected_rate(bed.specs[n]) for n in everything if n != first})
    assert "yaml2archiving configuration for db" in out.read_text()
    # without a live Tango database there are no types: one line says so
    line = one_error_line(hdbbench("inventory", "from-yaml", str(config), "-o", str(tmp_path / "x.toml")))
    assert str(config) in line and "--types-from" in line and not (tmp_path / "x.toml").exists()


def test_bad_inputs_are_one_line_each(own_tango_host: str, tmp_path: Path) -> None:
    out = tmp_path / "never.toml"
    closed = pick_free_port(29500)  # nothing listens there
    line = one_error_line(hdbbench("inventory", "from-tango", f"127.0.0.1:{closed}", "-o", str(out)))
    assert f"127.0.0.1:{closed} does not answer" in line
    line = one_error_line(hdbbench("inventory", "from-tango", "no-port-here", "-o", str(out)))
    assert "HOST:PORT" in line
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  tango-db:\n    image: mariadb\n")
    line = one_error_line(hdbbench("inventory", "from-yaml", str(compose), "-o", str(out), "--types-from", own_tango_host))
    assert str(compose) in line and "not a yaml2archiving configuration" in line and "`configuration`" in line
    broken = tmp_path / "broken.yaml"
    broken.write_text("db: [unclosed\n")
    line = one_error_line(hdbbench("inventory", "from-yaml", str(broken), "-o", str(out)))
    assert str(broken) in line and "not YAML" in line
    assert not out.exists()


def test_a_database_without_archivers_is_one_line(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    with tango_alone(tmp_path_factory.mktemp("empty-stack")) as empty:
        line = one_error_line(hdbbench("inventory", "from-tango", empty, "-o", str(tmp_path / "x.toml")))
        assert f"{empty} has no HdbEventSubscriber device" in line


ARCHIVE_PERIOD_S = 0.4          # 2.5 Hz: the archive's rate, unlike any configured one
ARCHIVE_EVENTS = 12


def scalar_value(ttype: TangoType, k: int) -> Any:
    if ttype == TangoType.DEV_STRING:
        return f"v{k}"
    if ttype == TangoType.DEV_ENCODED:
        return Encoded("raw", bytes([k % 256]))
    if ttype == TangoType.DEV_BOOLEAN:
        return k % 2 == 0
    return float(k) if ttype in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE) else k % 2


def archived_events(name: str, shape: tuple[TangoType, AttrFormat, str, int, int], write: WriteType,
                    end: datetime) -> list[Event]:
    """ARCHIVE_EVENTS events of one attribute every ARCHIVE_PERIOD_S up to `end`, arrays at full size."""
    ttype, fmt, _, dim_x, dim_y = shape
    out = []
    for k in range(ARCHIVE_EVENTS):
        v: Any = scalar_value(ttype, k)
        if fmt == AttrFormat.SPECTRUM:
            v = [v] * dim_x
        elif fmt == AttrFormat.IMAGE:
            v = [[v] * dim_x for _ in range(dim_y)]
        at = end - timedelta(seconds=(ARCHIVE_EVENTS - 1 - k) * ARCHIVE_PERIOD_S)
        out.append(Event(name, at, v if write != WriteType.WRITE else None, v if write != WriteType.READ else None))
    return out


@pytest.fixture(scope="module")
def archive_url(bed: Bed, endpoint_of: Callable[[str], Any]) -> Iterator[str]:
    """A real HDB++ archive (the first default backend) holding every attribute of the bed but the last,
    written with the backend's bulk writer; its URL as HDB++'s read-only account."""
    backend_name = DEFAULT_BACKENDS[0]
    end = datetime.now(timezone.utc).replace(microsecond=0)
    with fresh_backend(backend_name, endpoint_of(backend_name), prefix="h3invt") as backend:
        with backend.bulk_writer() as writer:
            for name in sorted(bed.specs)[:-1]:
                shape, write = bed.shape(name), WriteType[bed.specs[name].write]
                writer.register_attribute(AttributeInfo(name, shape[0], shape[1], write))
                writer.write(archived_events(name, shape, write, end))
        yield read_only_url(backend)


def test_rates_and_types_from_the_archive(bed: Bed, archive_url: str, tmp_path: Path) -> None:
    left_out = sorted(bed.specs)[-1]
    reading = read_tango(bed.tango_host, "archived", archive_url)
    rates = rates_by_name(reading.inventory)
    assert rates.pop(left_out) == pytest.approx(expected_rate(bed.specs[left_out]))  # not in the archive
    assert rates == pytest.approx({n: 1 / ARCHIVE_PERIOD_S for n in rates})
    shown = masked(archive_url)
    assert any(f"1 attributes have no events in the archive {shown}" in w for w in reading.warnings), reading.warnings
    assert any(line.startswith(f"rates: {len(rates)} from the archive {shown}") for line in reading.header), \
        reading.header
    password = urlsplit(archive_url).password
    assert password and password not in " ".join(reading.header + reading.warnings)
    # from-yaml with the archive alone: types from it; the device found by a pattern needs the Tango database
    config = tmp_path / "attribute_config.yaml"
    config.write_text(yaml_config(bed))
    reading = read_yaml(config, "archived", url=archive_url)
    on_first = sorted(n for n in bed.specs if f"/{bed.device}/" in n)
    assert sorted(n for g in reading.inventory.groups for n in g.names) == [n for n in on_first if n != left_out]
    assert read_groups(reading.inventory) == expected_groups(bed, [n for n in on_first if n != left_out])
    first = sorted(bed.assignment.items())[0][1][0]
    assert rates_by_name(reading.inventory)[first] == pytest.approx(0.5)  # the file's period wins over the archive
    assert any("its devices need the Tango database" in w for w in reading.warnings), reading.warnings
    assert any(f"types from the archive {shown}" in line for line in reading.header)
    # the command line, as a user runs it
    output = tmp_path / "from-tango.toml"
    result = hdbbench("inventory", "from-tango", bed.tango_host, "--url", archive_url, "-o", str(output))
    assert result.returncode == 0, result.stderr
    assert rates_by_name(load_inventory(output)) == pytest.approx({**rates, left_out: rates_by_name(
        read_tango(bed.tango_host, "configured").inventory)[left_out]})
    # without an archive: the configuration's rates; from-yaml cannot type attributes without one or the other
    reading = read_tango(bed.tango_host, "configured")
    assert rates_by_name(reading.inventory) == pytest.approx({n: expected_rate(s) for n, s in bed.specs.items()})
    with pytest.raises(ConfigError, match="--types-from"):
        read_yaml(config, "archived")

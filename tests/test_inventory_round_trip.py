# SPDX-License-Identifier: Apache-2.0
"""The round trip of a facility through the real chain: an inventory's devices archived by two of our
subscribers into a real HDB++ database, then read back by `inventory from-hdb` (the archive) and
`inventory from-tango --url` (the Tango database and the archive).

A Tango database of its own (so that from-tango sees only these archivers), the session's first
default backend for the archive. The inventory's groups must come back: the same shapes and counts,
rates within 5 % (each attribute's first stored event is Tango's event on subscription, at a random
phase: the rate leaves it out), and from-tango records the two archivers' assignment as dealt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.load import facility
from hdbbench.load.inventory.from_hdb import from_hdb
from hdbbench.load.inventory.from_tango import read_tango
from hdbbench.load.inventory.model import Inventory, load_inventory
from hdbbench.load.offered import spread
from tests.harness import eventually, seen
from tests.harness.composed import Harness
from tests.harness.databases import read_only_url
from tests.harness.servers import private_stack

pytestmark = pytest.mark.subscriber

# Rates fast enough for a short archive: the slowest group still stores EVENTS events in it.
FACILITY = """name = "round-trip"
[[attributes]]
label = "readbacks"
type = "devdouble"
count = 8
rate_hz = 2.0
[[attributes]]
label = "set points"
type = "devdouble"
write = "rw"
count = 4
period_s = 2
[[attributes]]
label = "interlocks"
type = "devboolean"
count = 6
period_s = 3
[[attributes]]
label = "states"
type = "devstate"
count = 3
period_s = 4
[[attributes]]
label = "orbit"
type = "devdouble"
format = "spectrum"
elements = 64
count = 2
period_s = 4
"""
EVENTS = 5          # stored events of every attribute before reading (the first on subscription)
WAIT_S = 90.0


def shapes(inventory: Inventory) -> Counter[tuple[Any, ...]]:
    return Counter({(g.type, g.format, g.write, g.dim_x, g.dim_y, float(f"{g.rate_hz:.2g}")): g.count
                    for g in inventory.groups})


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory, endpoint_of: Callable[[str], Any]) -> Iterator[tuple[Any, ...]]:
    """(source inventory, Tango host, read-only archive URL, the assignment) once every attribute
    has EVENTS stored events."""
    tmp = tmp_path_factory.mktemp("round-trip")
    (tmp / "facility.toml").write_text(FACILITY)
    source = load_inventory(tmp / "facility.toml")
    with private_stack(tmp / "stack", components=("tango",), private=False) as stack:
        endpoints = stack.up()
        with Harness(endpoints, tmp / "harness") as h:
            db = h.database(DEFAULT_BACKENDS[0], endpoint=endpoint_of(DEFAULT_BACKENDS[0]), prefix="h3rt")
            fleet = facility.up(h.tango_host, tmp / "facility.toml", 1.0, state_dir=tmp / "devices",
                                tie_to_parent=True, auto_start=True)
            try:
                names = sorted(f"tango://{h.tango_host}/{p.name}/{s.name}".lower()
                               for p in fleet.devices.values() for s in p.specs)
                assignment = {h.subscriber(instance, db, attributes).dev_name(): tuple(attributes)
                              for instance, attributes in enumerate(spread(names, 2), start=1)}

                def stored() -> Any:
                    counts = db.count_rows_by_attribute()
                    return seen(len(counts) == len(names) and min(counts.values()) >= EVENTS,
                                f"{len(counts)} attributes, fewest rows {min(counts.values(), default=0)}")

                eventually(stored, WAIT_S, f"every attribute stored {EVENTS} events")
                yield source, h.tango_host, read_only_url(db), assignment
            finally:
                from hdbbench.load import devices

                devices.down(tmp / "devices")


def test_from_hdb_gives_the_facility_back(archived: tuple[Any, ...], tmp_path: Path) -> None:
    source, _, url, _ = archived
    done = from_hdb(url, tmp_path / "from-hdb.toml", window_h=1)
    got = load_inventory(tmp_path / "from-hdb.toml")
    assert shapes(got) == shapes(source), [g.label for g in got.groups]
    for g in got.groups:
        (want,) = [s for s in source.groups if (s.type, s.format, s.write, s.dim_x) == (g.type, g.format, g.write, g.dim_x)]
        assert g.rate_hz == pytest.approx(want.rate_hz, rel=0.05), g.label
    assert done.warnings == ()


def test_from_tango_gives_the_facility_and_its_archivers_back(archived: tuple[Any, ...]) -> None:
    source, tango_host, url, assignment = archived
    reading = read_tango(tango_host, "round-trip", url)
    assert shapes(reading.inventory) == shapes(source), [g.label for g in reading.inventory.groups]
    got = {a.name: tuple(sorted(n.lower() for n in a.attributes)) for a in reading.inventory.archivers}
    assert got == {name: tuple(sorted(a)) for name, a in assignment.items()}
    assert any(line.startswith(f"rates: {sum(s.count for s in source.groups)} from the archive") for line in reading.header), \
        reading.header

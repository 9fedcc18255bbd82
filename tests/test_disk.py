# SPDX-License-Identifier: Apache-2.0
"""Disk usage per type (hdbbench.disk) and facility sizing (hdbbench.sizing) against the session's servers.

Sizes are small and only their bookkeeping is asserted (every table has a figure, parts add up to the
server's total, every event is accounted for); bytes-per-event figures come from benchmarks/disk_per_type.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hdbbench import sizing
from hdbbench.backends.base import TableSize
from hdbbench.disk import run_measure
from hdbbench.disk import CaseResult, measure_variant, parse_case
from hdbbench.errors import ConfigError
from hdbbench.results import load_results
from hdbbench.servers.endpoints import StackEndpoints
from tests.conftest import REPO

SMALL_CASES = ("devdouble", "devstring:rw", "devboolean", "spectrum:devdouble:4", "spectrum:devdouble:16")
DEFAULT_VARIANT = {"timescaledb": "pk+2", "postgresql": "pk", "mysql": "pk"}


def _endpoint(stack_endpoints: StackEndpoints, backend: str) -> Any:
    endpoint = stack_endpoints.mariadb if backend == "mysql" else stack_endpoints.postgres
    if endpoint is None:
        pytest.skip(f"the stack has no server for {backend}")
    return endpoint


def _check_size(size: TableSize) -> None:
    parts = size.data_bytes + size.index_bytes + size.toast_bytes + size.free_bytes
    assert parts == size.total_bytes, size
    assert min(size.data_bytes, size.index_bytes, size.toast_bytes, size.free_bytes) >= 0, size


@pytest.mark.parametrize("backend", ["timescaledb", "postgresql", "mysql"])
def test_every_table_has_a_split_that_adds_up(stack_endpoints: StackEndpoints, backend: str) -> None:
    cases = [parse_case(c, 300 if c.startswith("spectrum") else 1000, 5) for c in SMALL_CASES]
    outcome = measure_variant(backend, _endpoint(stack_endpoints, backend), DEFAULT_VARIANT[backend], cases, seed=7)
    assert outcome.unavailable is None
    variants = [DEFAULT_VARIANT[backend]] + ([] if backend == "mysql" else [DEFAULT_VARIANT[backend] + ",clustered"])
    for variant in variants:
        got = {r.case.label: r for r in outcome.results if r.variant == variant}
        assert sorted(got) == sorted(c.label for c in cases), variant
        for case in cases:
            r: CaseResult = got[case.label]
            _check_size(r.before)
            _check_size(r.after)
            assert r.events == case.events and r.raw_bytes > 0
            assert r.after.total_bytes > r.before.total_bytes, (variant, case.label, r.before, r.after)
            row = r.to_dict()
            assert row["bytes_per_event"] > 0 and row["ratio_disk_to_raw"] > 0
            assert row["documented_min_row_bytes"] is not None and row["documented_min_row_bytes"] > 18
    spectrum_rows = [r.to_dict() for r in outcome.results if r.case.elements > 1]
    assert all(r["rows"] == r["events"] * (r["case_elements"] if backend == "mysql" else 1) for r in spectrum_rows)


def test_myrocks_is_measured_or_said_unavailable(stack_endpoints: StackEndpoints) -> None:
    cases = [parse_case("devlong", 200, 2)]
    outcome = measure_variant("mysql", _endpoint(stack_endpoints, "mysql"), "pk,myrocks", cases)
    if outcome.unavailable:
        assert "ROCKSDB" in outcome.unavailable or "myrocks" in outcome.unavailable.lower()
        assert outcome.results == []
    else:
        assert [r.case.label for r in outcome.results] == ["scalar_devlong_ro"]


def test_plan_projects_and_checks_a_measured_inventory(stack_endpoints: StackEndpoints, tmp_path: Path) -> None:
    inventory = sizing.load_inventory(REPO / "inventories" / "small-test.toml")
    cases = [parse_case(c, 600, 5) for c in ("devdouble", "devstring:rw", "spectrum:devdouble:10",
                                             "spectrum:devdouble:100")]
    run_dir = run_measure(stack_endpoints, {"postgresql": ["pk"]}, cases, 42, tmp_path, "disk",
                          (inventory, 60.0, 0.5))
    results = load_results(run_dir / "results.json")
    assert results["kind"] == "disk" and (run_dir / "sizes.csv").exists() and (run_dir / "fits.csv").exists()
    projections = sizing.project(inventory, results)
    assert {(p["backend"], p["variant"]) for p in projections} == {("postgresql", "pk"), ("postgresql", "pk,clustered")}
    for p in projections:
        assert p["complete"] and p["bytes_at_retention"] > 0
        assert abs(sum(g["share_at_retention"] for g in p["groups"]) - 1.0) < 1e-9
    checks = sizing.check(inventory, results, results)
    assert len(checks) == 2 and all(c["measured_bytes"] > 0 and c["error"] is not None for c in checks)


BROKEN = [
    ('retention_days = 10\n[[attributes]]\ntype = "devdouble"\nrate_hz = 1\n', "name"),
    ('name = "x"\n', "attributes"),
    ('name = "x"\n[[attributes]]\ntype = "devdoubel"\nrate_hz = 1\n', "[[attributes]] #1 type"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\nrate_hz = -1\n', "[[attributes]] #1 rate_hz"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\n', "[[attributes]] #1 rate_hz"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\nrate_hz = 1\nperiod_s = 2\n', "[[attributes]] #1 rate_hz"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\nformat = "spectrum"\nrate_hz = 1\n', "[[attributes]] #1 elements"),
    ('name = "x"\n[[attributes]]\ntype = "devdouble"\nformat = "image"\ndims = [3]\nrate_hz = 1\n', "dims"),
    ('name = "x"\n[[attributes]]\ntype = "devlong"\ncount = 0\nrate_hz = 1\n', "[[attributes]] #1 count"),
    ('name = "x"\n[[attributes]]\ntype = "devlong"\nrate_hz = 1\ncolour = "red"\n', "[[attributes]] #1 colour"),
    ('name = "x"\n[[attributes]]\ntype = "devlong"\nrate_hz = 1\n[[attributes]]\ntype = "devlong"\nrate_hz = 2\n',
     "attributes"),
    ('name = "x"\n[[attributes]]\ntype = "devencoded"\nformat = "spectrum"\nelements = 3\nrate_hz = 1\n', "format"),
    ('name = "x"\n[[attributes]\n', "not valid TOML"),
]


@pytest.mark.parametrize(("text", "key"), BROKEN)
def test_plan_refuses_a_broken_inventory(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        sizing.load_inventory(path)
    message = str(info.value)
    assert str(path) in message and key in message and "\n" not in message


def test_plan_command_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\n[[attributes]]\ntype = "devdouble"\nrate_hz = 0\n')
    proc = subprocess.run([sys.executable, "-m", "hdbbench", "size", "plan", str(path), "--from", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "[[attributes]] #1 rate_hz: must be > 0" in proc.stderr


def test_shipped_inventories_are_valid() -> None:
    for path in sorted((REPO / "inventories").glob("*.toml")):
        assert sizing.load_inventory(path).groups

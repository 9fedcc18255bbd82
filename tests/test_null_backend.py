# SPDX-License-Identifier: Apache-2.0
"""The null backend: its registry entry alone makes a scenario on it valid (and parts it cannot serve
refused in one line); its "database" is a directory; the counts the real null writer leaves there
read back exactly (through hdbbench-es-write-records, no server); and a real subscriber on it, fed by
a real simulated device, counts every event the device emitted.

The endpoint is the server registry's `LocalEndpoint`: a directory of this host (here a test's own).
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hdbbench.backends import BACKENDS, DEFAULT_BACKENDS, get_backend
from hdbbench.backends.base import EXTRACTION
from hdbbench.backends.null import NullBackend
from hdbbench.backends.registry import lib_configuration
from hdbbench.cli.check import check
from hdbbench.model.errors import ConfigError, SchemaError
from hdbbench.stack.servers.endpoints import LocalEndpoint
from hdbbench.subscribers import delivery
from hdbbench.subscribers.launcher import DEFAULT_BINARY, SubscriberFleet, SubscriberSpec
from hdbbench.trials.outside import VisibilityWatch, outside_reader
from tests.harness import REPO, eventually, seen
from tests.harness.runs import scenario_document, write_scenario

DRIVER = REPO / "build" / "subscriber" / "hdbbench-es-write-records"
EPOCH_US = 1_700_000_000_000_000
A = "tango://h:1/sim/null/1/a"
B = "tango://h:1/sim/null/1/b"
NULL_ONLY = scenario_document(["null"], name="null-only")


def null_backend(directory: Path) -> Any:
    return get_backend("null", LocalEndpoint(str(directory)), f"null_{uuid.uuid4().hex[:8]}")


# ------------------------------------------------------------------------------ no server needed


def test_the_registry_entry_alone_makes_a_scenario_on_null_valid(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, [str(write_scenario(tmp_path / "null.toml", NULL_ONLY))])
    assert result.exit_code == 0, result.output
    assert "ok:" in result.output and "(scenario)" in result.output
    # ...but not in the defaults: a scenario that names no backend does not run it.
    assert "null" in BACKENDS and "null" not in DEFAULT_BACKENDS


@pytest.mark.parametrize(("extra", "lacking"), [
    (f'[extraction]\nquery_set = "{REPO / "query_sets/small.toml"}"\n', "extraction"),
    ("[disk]\nevents = 100\n", "disk"),
    ("[faults]\n", "database faults"),
])
def test_parts_null_cannot_serve_are_refused_at_check_time(tmp_path: Path, extra: str, lacking: str) -> None:
    result = CliRunner().invoke(check, [str(write_scenario(tmp_path / "null.toml", NULL_ONLY, extra))])
    assert result.exit_code == 2
    assert f"backend null has no {lacking} (" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_process_faults_alone_are_accepted(tmp_path: Path) -> None:
    path = write_scenario(tmp_path / "null.toml", NULL_ONLY, '[faults]\nkinds = ["subscriber_kill"]\n')
    result = CliRunner().invoke(check, [str(path)])
    assert result.exit_code == 0, result.output


def test_the_schema_is_a_directory(tmp_path: Path) -> None:
    backend = null_backend(tmp_path)
    assert backend.verify_schema() == [f"missing database {backend.database} ({backend.directory})"]
    backend.create_schema("pk+2")
    assert backend.verify_schema() == []
    with pytest.raises(SchemaError, match="already exists"):
        backend.create_schema()
    assert backend.count_rows_by_attribute() == {} and backend.size_bytes() == 0
    (backend.directory / "stray.txt").write_text("x")
    assert backend.verify_schema() == ["unexpected file stray.txt"]
    backend.drop_schema()
    assert not backend.directory.exists()
    with pytest.raises(ConfigError, match="plain name"):
        NullBackend(LocalEndpoint(str(tmp_path)), "../elsewhere")


def test_what_it_lacks_is_refused_in_one_line(tmp_path: Path) -> None:
    backend = null_backend(tmp_path)
    assert backend.refusal(EXTRACTION) == "backend null has no extraction (it keeps no values to read back)"
    for call in (backend.bulk_writer, lambda: backend.table_sizes(["att_scalar_devdouble"]),
                 lambda: backend.fetch_events(A)):
        with pytest.raises(ConfigError, match="^backend null has no"):
            call()


def test_lib_configuration_points_the_writer_at_the_directory(tmp_path: Path) -> None:
    backend = null_backend(tmp_path)
    lines = lib_configuration("null", backend.database, {"local": backend.endpoint}, {"batch_size": "100"})
    assert lines == ["backend=null", f"counts_dir={backend.directory.resolve()}", "batch_size=100"]


def _record(att: str, t_us: int, error: str | None = None) -> str:
    """One line of hdbbench-es-write-records (a scalar DevDouble, read only)."""
    text = error.encode().hex() if error else "-"
    value = "none" if error else "d:1:3ff0000000000000"
    return f"{1 if error else 0} 5 0 0 0 {att.encode().hex()} {t_us} 1 0 0 0 {text} {value} none"


@pytest.fixture()
def written(tmp_path: Path) -> Any:
    """Records written by the real null writer (hdbbench-es-write-records) into a fresh database."""
    if not DRIVER.exists():
        pytest.skip(f"driver not built: {DRIVER}")
    backend = null_backend(tmp_path)
    backend.create_schema()
    records = [_record(A, EPOCH_US + k * 250) for k in range(8)]          # 0, .25, ... 1.75 ms
    # A duplicate delivery (a re-subscription's first value): the source time of A's previous event.
    records += [_record(A, EPOCH_US + 1_750), _record(B, EPOCH_US + 5_000)]
    records += [_record(B, EPOCH_US + 6_000, 'gone "away"\n'), _record(B, EPOCH_US + 7_000, 'gone "away"\n')]
    lines = lib_configuration("null", backend.database, {"local": backend.endpoint})
    out = subprocess.run([str(DRIVER), *(x for line in lines for x in ("--lib", line))], input="\n".join(records),
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == '{"stored": 11, "duplicates": 1, "rejected": 0}', (out.stdout, out.stderr)
    return backend


def at(us: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=us)


def test_counts_read_back_from_the_writers_files(written: Any) -> None:
    backend = written
    assert backend.verify_schema() == []
    assert backend.count_rows_by_attribute() == {A: 8, B: 3}  # error events are rows too
    # since <= source time < until, to the millisecond: A's events fall 4 to a millisecond.
    assert backend.count_rows_by_attribute(since=at(EPOCH_US + 1_000)) == {A: 4, B: 3}
    assert backend.count_rows_by_attribute(until=at(EPOCH_US + 1_000)) == {A: 4}
    assert backend.count_error_events(since=at(EPOCH_US)) == {B: {'gone "away"\n': 2}}
    assert backend.count_error_events(since=at(EPOCH_US + 7_000)) == {B: {'gone "away"\n': 1}}


def test_the_outside_reader_sees_the_writers_counter_and_times(written: Any) -> None:
    figures = written.outside_figures()
    assert figures is not None
    reader = figures.reader(written)
    try:
        assert reader.rows_inserted() == reader.baseline() == 11
        # The file lists the times of the last two rewrite periods: written at close, right after the
        # batch, these are normally all of them (a slow machine may have aged some out: never others).
        times = reader.event_times_after({A: at(EPOCH_US + 1_000), B: at(0), "tango://h:1/never/seen/x": at(0)})
        assert set(times.get(A, [])) <= {at(EPOCH_US + k * 250) for k in range(5, 8)}, times
        assert set(times.get(B, [])) <= {at(EPOCH_US + 5_000), at(EPOCH_US + 6_000), at(EPOCH_US + 7_000)}, times
        assert set(times) <= {A, B} and all(t == sorted(t) for t in times.values())
    finally:
        reader.close()


# ------------------------------------------------------------------------------ a real subscriber


@dataclass
class Load:
    """What delivery.confirm needs of the load (hdbbench.load.offered.LoadTarget's shape)."""

    tango_host: str
    devices: list[str]
    attributes: list[str]
    _proxies: list[Any]

    def proxies(self) -> list[Any]:
        return self._proxies


@pytest.fixture()
def subscribed(stack_endpoints: Any, tmp_path: Path) -> Iterator[tuple[Any, SubscriberFleet, Load]]:
    """A null database, one simulated device of a few attributes, and our subscriber on them, every
    attribute's event path proven (delivery.confirm)."""
    import tango

    from hdbbench.load import devices

    if stack_endpoints.tango is None:
        pytest.skip("the test stack has no Tango database")
    tango_host = stack_endpoints.tango.tango_host
    profile = tmp_path / "null-test.toml"
    profile.write_text((REPO / "devices/profiles/insertion-devdouble.toml").read_text()
                       .replace("count = 100", "count = 6").replace('"sim/insert"', '"sim/nulltest"'))
    backend = null_backend(tmp_path / "local")
    backend.create_schema()
    sims = devices.up(tango_host, profile, state_dir=tmp_path / "devices", tie_to_parent=True, auto_start=False)
    fleet = SubscriberFleet(tango_host, tmp_path, binary=DEFAULT_BINARY, attached=True)
    try:
        names = list(sims.devices)
        attributes = [f"tango://{tango_host}/{name}/{spec.name}".lower()
                      for name, plan in sims.devices.items() for spec in plan.specs]
        lines = lib_configuration("null", backend.database, {"local": backend.endpoint}, {"flush_interval_ms": "20"})
        subscriber = fleet.up([SubscriberSpec(91, tuple(lines), tuple(attributes))])
        load = Load(tango_host, names, attributes, [tango.DeviceProxy(f"tango://{tango_host}/{n}") for n in names])
        unproven = delivery.confirm(fleet, subscriber, load)
        assert not unproven, f"no event through Tango for {sorted(unproven)}"
        yield backend, fleet, load
    finally:
        fleet.down()
        devices.down(tmp_path / "devices")
        backend.drop_schema()


@pytest.mark.subscriber
def test_a_subscriber_on_null_counts_every_emitted_event(subscribed: tuple[Any, SubscriberFleet, Load]) -> None:
    backend, _, load = subscribed
    burst = 40
    started = datetime.now(timezone.utc)  # the proofs' events are older: counted apart
    watch = VisibilityWatch(outside_reader(backend), load.attributes[:2]).start(since=started)
    try:
        for device, proxy in zip(load.devices, load.proxies()):
            shorts = [a.rpartition("/")[2] for a in load.attributes if a.startswith(f"tango://{load.tango_host}/{device}/")]
            proxy.command_inout("BurstAttributes", ([burst], shorts))
        want = {a: burst for a in load.attributes}

        def counted() -> Any:
            got = backend.count_rows_by_attribute(since=started)
            return seen(got == want, got)

        eventually(counted, 30, "every burst event counted by the null writer (per attribute)")
    finally:
        watch.stop()
    # The visibility watch saw the probes' events appear, after their source times.
    lags = watch.lags_between(started.timestamp(), datetime.now(timezone.utc).timestamp())
    assert lags and all(lag >= 0 for _, lag in lags), lags
    assert backend.count_error_events(since=started) == {}
    assert backend.verify_schema() == []

# SPDX-License-Identifier: Apache-2.0
"""Both generator engines through the harness: the small scenario via the runner, and through a real
subscriber into a real database and back.

The runner test runs scenarios/small.toml cut to one backend and its throughput trial (the full small
run is tests/test_run.py's, which now uses the C++ engine by default), once per engine, and checks the
run records its engine and accounts for every event. The database test sends the same seeded events
from each engine in turn into one HDB++ database per engine and compares the stored rows: values,
qualities, set points and error rows must be identical, and what the seed predicts. The devices
run at a rate (not a burst) there: HDB++ stamps an error row at reception, and rows of a burst collide.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hdbbench import devices as launcher
from hdbbench import emitter as em
from hdbbench.results import load_results
from hdbbench.subscribers import DEFAULT_BINARY, SubscriberFleet, SubscriberSpec, lib_configuration
from tests.test_generator import PROFILE, eventually
from tests.test_subscriber import db_connect, fetch_events, row_counts

REPO = Path(__file__).resolve().parents[1]
BACKEND = "postgresql"
RATE_HZ = 20.0
EVENTS = 25

pytestmark = [
    pytest.mark.skipif(not launcher.cpp_engine_built(), reason=f"HdbBenchGen not built ({launcher.gen_binary()})"),
    pytest.mark.skipif(not DEFAULT_BINARY.exists(), reason=f"subscriber not built ({DEFAULT_BINARY})"),
]


def reduced_small_scenario(engine: str, root: Path) -> Path:
    """scenarios/small.toml with the engine set, one backend, the throughput trial only."""
    text = (REPO / "scenarios" / "small.toml").read_text()
    text = text.replace('backends = ["timescaledb", "postgresql", "mysql"]', f'backends = ["{BACKEND}"]')
    text = text.replace("[devices]\n", f'[devices]\nengine = "{engine}"\n')
    text = re.sub(r"\[measurements\].*", "[measurements]\nthroughput = true\n", text, flags=re.S)
    path = root / f"small-{engine}.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("engine", ["cpp", "python"])
def test_the_runner_drives_either_engine_through_the_small_scenario(
        engine: str, stack_endpoints: Any, test_state_dir: Path, tmp_path: Path) -> None:
    from hdbbench.runner import RunOptions, run_scenario
    from hdbbench.scenario import load_scenario

    scenario = load_scenario(reduced_small_scenario(engine, tmp_path))
    assert scenario.device_engine == engine
    run = run_scenario(scenario, RunOptions(state_dir=test_state_dir, runs_root=tmp_path / "runs"))
    assert json.loads((run / "status.json").read_text())["state"] == "completed"
    doc = load_results(run / "results.json")
    assert doc["results"]["device_engine"] == engine
    (trial,) = doc["results"]["trials"]
    assert trial["device_engine"] == engine
    acc = trial["accounting"]
    assert acc["emitted"] > 0 and acc["lost"] == 0 and acc["duplicates"] == 0
    assert acc["emitted"] == acc["stored"]
    header = (run / "series" / f"{trial['label']}.csv").read_text().splitlines()[0]
    assert "dev.max_lag_s" in header


def test_insertion_scenarios_default_to_the_built_cpp_engine(tmp_path: Path) -> None:
    from hdbbench.scenario import load_scenario

    scenario = load_scenario(REPO / "scenarios" / "small.toml")
    assert scenario.device_engine == "auto" and launcher.resolve_engine(scenario.device_engine) == "cpp"
    bad = tmp_path / "bad.toml"
    bad.write_text((REPO / "scenarios" / "small.toml").read_text().replace("[devices]\n", '[devices]\nengine = "go"\n'))
    from hdbbench.errors import ConfigError

    with pytest.raises(ConfigError, match=r"bad\.toml:\d+: \[devices\] engine: must be one of auto, cpp, python"):
        load_scenario(bad)


# ------------------------------------------------------------------------------------ database round trip


def row_digest(spec: em.AttrSpec, row: Any) -> tuple[Any, ...]:
    """What a stored row says about its event: error-ness, quality, value digest, set point digest."""
    if row.error_desc is not None:
        return ("error", em.ERROR_DESC in row.error_desc)
    value = None if row.value_r is None else em.event_digest(spec.type, spec.format, row.value_r, row.quality)
    w = None if row.value_w is None else em.event_digest(spec.type, spec.format, row.value_w, em.VALID)
    return ("value", row.quality, value, w)


def expected_stored(events: list[em.Event]) -> list[em.Event]:
    """HDB++ stores only the first error event after a good one."""
    out: list[em.Event] = []
    for e in events:
        if not (e.is_error and out and out[-1].is_error):
            out.append(e)
    return out


def archive_engine(engine: str, stack: Any, root: Path) -> dict[str, Any]:
    from hdbbench.backends import backend_for_stack

    tango_host = stack.tango.tango_host
    backend = backend_for_stack(BACKEND, stack, f"gen_{engine}_{uuid.uuid4().hex[:6]}")
    backend.create_schema()
    conn = db_connect(stack, BACKEND, backend.database)
    profile = root / "pytest-gen.toml"
    profile.write_text(PROFILE)
    subs = SubscriberFleet(tango_host, root / f"es-{engine}", binary=DEFAULT_BINARY, attached=True)
    try:
        with launcher.running_fleet(tango_host, profile, state_dir=root / f"devices-{engine}", engine=engine) as fleet:
            (device, plan), = fleet.devices.items()
            names = {s.name: f"tango://{tango_host}/{device}/{s.name}".lower() for s in plan.specs}
            lib = lib_configuration(BACKEND, backend.database, stack,
                                    overrides={"flush_interval_ms": "50", "spool_dir": str(root / f"spool-{engine}")})
            subs.up([SubscriberSpec(80, tuple(lib), tuple(names.values()), properties={"SubscribeRetryPeriod": ["5"]})])
            es = subs.proxy("archiving/hdbbench-es/80")
            eventually(lambda: len(row_counts(conn, BACKEND)) == len(names), 60,
                       lambda: f"the initial row of every attribute: {len(row_counts(conn, BACKEND))} of {len(names)}")
            time.sleep(2.0)  # ZeroMQ subscription filters reach the publisher asynchronously
            import tango

            proxy = tango.DeviceProxy(fleet.device_url(device))
            proxy.Reset()
            proxy.SetRate(RATE_HZ)
            proxy.Start()  # at a rate, not a burst: error rows are stamped on reception and must not collide
            eventually(lambda: min(int(x) for x in proxy.EventsEmittedList) >= EVENTS, 60,
                       lambda: f"{min(int(x) for x in proxy.EventsEmittedList)} of {EVENTS} events per attribute")
            proxy.Stop()
            emitted = dict(zip(proxy.GeneratedAttributes, (int(x) for x in proxy.EventsEmittedList)))
            want = {s.name: 1 + len(expected_stored(list(em.predict_events(plan.seed, plan.name, s, 0, emitted[s.name]))))
                    for s in plan.specs}

            def complete() -> bool:
                time.sleep(0.25)
                got = row_counts(conn, BACKEND)
                return all(got.get(names[a]) == n for a, n in want.items())

            eventually(complete, 90, lambda: "stored rows = 1 initial + the emitted events")
            rows = {a: fetch_events(conn, BACKEND, n)[1:] for a, n in names.items()}
            lost = int(es.LostEventNumber)
            return {"plan": plan, "rows": rows, "lost": lost, "emitted": emitted}
    finally:
        subs.down()
        conn.close()
        backend.drop_schema()


@pytest.fixture(scope="module")
def archived(stack_endpoints: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if stack_endpoints.get("postgres") is None or stack_endpoints.tango is None:
        pytest.skip("the test stack needs PostgreSQL and Tango")
    root = tmp_path_factory.mktemp("gen-db")
    yield {engine: archive_engine(engine, stack_endpoints, root) for engine in ("python", "cpp")}


def expected_digest(spec: em.AttrSpec, exp: em.Event) -> tuple[Any, ...]:
    if exp.is_error:
        return ("error", True)
    value = None if exp.quality == em.INVALID else em.event_digest(spec.type, spec.format, exp.value, exp.quality)
    return ("value", exp.quality, value)


def test_both_engines_store_identical_rows(archived: dict[str, Any]) -> None:
    """Value rows in order, error rows by count: HDB++ stamps an error row when it is received, so where
    it sorts among the value rows (stamped by the device) depends on the pusher's lateness."""
    plan = archived["cpp"]["plan"]
    assert archived["cpp"]["lost"] == archived["python"]["lost"] == 0
    mismatches = []
    for spec in plan.specs:
        set_point = None
        if spec.write == "READ_WRITE" and spec.kind != "encoded":
            set_point = em.event_digest(spec.type, spec.format,
                                        em.EventStream(plan.seed, "placeholder", spec).raw_value(0), em.VALID)
        stored = {}
        for engine in ("cpp", "python"):
            events = em.predict_events(plan.seed, plan.name, spec, 0, archived[engine]["emitted"][spec.name])
            expected = [expected_digest(spec, e) for e in expected_stored(list(events))]
            rows = [row_digest(spec, r) for r in archived[engine]["rows"][spec.name]]
            values = [r for r in rows if r[0] == "value"]
            stored[engine] = values
            if [v[:3] for v in values] != [e for e in expected if e[0] == "value"]:
                mismatches.append((engine, spec.name, "values", values[:3], expected[:3]))
            if [r for r in rows if r[0] == "error"] != [e for e in expected if e[0] == "error"]:
                mismatches.append((engine, spec.name, "error rows"))
            if set_point is not None and any(v[1] != em.INVALID and v[3] != set_point for v in values):
                mismatches.append((engine, spec.name, "set point"))
        common = min(len(stored["cpp"]), len(stored["python"]))
        assert common >= EVENTS // 2, spec.name
        if stored["cpp"][:common] != stored["python"][:common]:
            mismatches.append(("cpp != python", spec.name))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]}"


def test_a_cpp_engine_that_is_not_built_is_refused_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hdbbench.errors import ConfigError
    from hdbbench.runner import RunOptions, run_scenario
    from hdbbench.scenario import load_scenario

    monkeypatch.setenv("HDBBENCH_GEN_BINARY", str(tmp_path / "no-such-HdbBenchGen"))
    scenario = load_scenario(reduced_small_scenario("cpp", tmp_path))
    with pytest.raises(ConfigError, match="device engine 'cpp': .*no-such-HdbBenchGen is not built"):
        run_scenario(scenario, RunOptions(state_dir=tmp_path / "state", runs_root=tmp_path / "runs"))
    assert not (tmp_path / "runs").exists() and not (tmp_path / "state").exists()

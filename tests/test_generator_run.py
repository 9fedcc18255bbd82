# SPDX-License-Identifier: Apache-2.0
"""Both generator engines through the harness: the small scenario via the runner, and through a real
subscriber into a real database and back.

The runner test reads the session's run of scenarios/small.toml for the C++ engine (the default, when
built: tests/conftest.py's `small_run_dir`, shared with tests/test_run.py) and runs small.toml cut to
one backend and its throughput trial for the Python engine, and checks that each run records its engine
and accounts for every event. The database test sends the same seeded events
from each engine in turn into one HDB++ database per engine and compares the stored rows: values,
qualities, set points and error rows must be identical, and what the seed predicts. The devices
run at a rate (not a burst) there: HDB++ stamps an error row at reception, and rows of a burst collide.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hdbbench.load import devices as launcher
from hdbbench.load import emitter as em
from hdbbench.results.document import load_results
from hdbbench.scenario.scenario import load_scenario
from tests.harness import REPO, eventually, seen
from tests.harness.composed import GENERATOR_PROFILE, Harness, expected_stored, last_was_error, rewound
from tests.harness.runs import run

BACKEND = "postgresql"
RATE_HZ = 20.0
EVENTS = 25

pytestmark = [
    pytest.mark.skipif(not launcher.cpp_engine_built(), reason=f"HdbBenchGen not built ({launcher.gen_binary()})"),
    pytest.mark.subscriber,
]


def reduced_small_scenario(engine: str, root: Path) -> Path:
    """scenarios/small.toml with the engine set, one backend, the throughput trial only."""
    text = (REPO / "scenarios" / "small.toml").read_text()
    text = re.sub(r"(?m)^backends = \[.*\]$", f'backends = ["{BACKEND}"]', text)
    text = text.replace("[devices]\n", f'[devices]\nengine = "{engine}"\n')
    text = re.sub(r"\[measurements\].*", "[measurements]\nthroughput = true\n", text, flags=re.S)
    path = root / f"small-{engine}.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("engine", ["cpp", "python"])
def test_the_runner_drives_either_engine_through_the_small_scenario(
        engine: str, request: pytest.FixtureRequest, test_state_dir: Path, tmp_path: Path) -> None:
    if engine == "cpp":  # the default: the session's run of scenarios/small.toml as shipped (tests/conftest.py)
        run_dir: Path = request.getfixturevalue("small_run_dir")
    else:
        request.getfixturevalue("stack_endpoints")
        scenario = load_scenario(reduced_small_scenario(engine, tmp_path))
        assert scenario.device_engine == engine
        run_dir = run(scenario, test_state_dir, tmp_path)
    assert json.loads((run_dir / "status.json").read_text())["state"] == "completed"
    doc = load_results(run_dir / "results.json")
    assert doc["results"]["device_engine"] == engine
    trials = doc["results"]["trials"]
    assert {f"{b}_throughput" for b in doc["scenario"]["backends"]} <= {t["label"] for t in trials}
    for trial in trials:
        assert trial["device_engine"] == engine
        acc = trial["accounting"]
        assert acc["emitted"] > 0 and acc["lost"] == 0 and acc["duplicates"] == 0
        assert acc["emitted"] == acc["stored"]
        header = (run_dir / "series" / f"{trial['label']}.csv").read_text().splitlines()[0]
        assert "dev.max_lag_s" in header


def test_insertion_scenarios_default_to_the_built_cpp_engine(tmp_path: Path) -> None:
    scenario = load_scenario(REPO / "scenarios" / "small.toml")
    assert scenario.device_engine == "auto" and launcher.resolve_engine(scenario.device_engine) == "cpp"
    bad = tmp_path / "bad.toml"
    bad.write_text((REPO / "scenarios" / "small.toml").read_text().replace("[devices]\n", '[devices]\nengine = "go"\n'))
    from hdbbench.model.errors import ConfigError

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


def archive_engine(engine: str, stack: Any, root: Path) -> dict[str, Any]:
    """The generator profile on `engine` through a subscriber into a fresh database: the rows stored
    of EVENTS events per attribute (emitted at a rate after the event path is proven and the
    devices rewound). A harness of its own: the engines' devices have the same names."""
    profile = root / "pytest-gen.toml"
    profile.write_text(GENERATOR_PROFILE)
    with Harness(stack, root / engine) as h:
        db = h.database(BACKEND, prefix=f"gen_{engine}")
        sims = h.devices(profile, engine=engine)
        es = h.subscriber(80, db, sims.names, flush_interval_ms=50, spool_dir=str(root / f"spool-{engine}"),
                          properties={"SubscribeRetryPeriod": ["5"]})
        h.archiving(es, db, sims, rewind=False)
        after_error = last_was_error(sims)
        since = rewound(sims)
        proxy = sims.proxy()
        proxy.SetRate(RATE_HZ)
        proxy.Start()  # at a rate, not a burst: error rows are stamped on reception and must not collide
        eventually(lambda: (lambda got: seen(min(got) >= EVENTS, got))([int(x) for x in proxy.EventsEmittedList]),
                   60, f"{EVENTS} events per attribute")
        proxy.Stop()
        emitted = dict(zip(proxy.GeneratedAttributes, (int(x) for x in proxy.EventsEmittedList)))
        plan = sims.plan
        want = {sims.full_name(s.name): len(expected_stored(
            em.predict_events(plan.seed, plan.name, s, 0, emitted[s.name]), after_error[s.name])) for s in plan.specs}
        eventually(lambda: (lambda got: seen(all(got.get(n) == k for n, k in want.items()), got))(
            db.count_rows_by_attribute(since)), 90, "stored rows = the emitted events")
        rows = {s.name: [e for e in db.fetch_events(sims.full_name(s.name)) if e.data_time >= since]
                for s in plan.specs}
        return {"plan": plan, "rows": rows, "lost": int(es.LostEventNumber), "emitted": emitted,
                "after_error": after_error}


@pytest.fixture(scope="module")
def archived(stack_endpoints: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("gen-db")
    return {engine: archive_engine(engine, stack_endpoints, root) for engine in ("python", "cpp")}


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
            kept = expected_stored(events, archived[engine]["after_error"][spec.name])
            expected = [expected_digest(spec, e) for e in kept]
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
    from hdbbench.model.errors import ConfigError
    from hdbbench.run.runner import RunOptions, run_scenario

    monkeypatch.setenv("HDBBENCH_GEN_BINARY", str(tmp_path / "no-such-HdbBenchGen"))
    scenario = load_scenario(reduced_small_scenario("cpp", tmp_path))
    with pytest.raises(ConfigError, match="device engine 'cpp': .*no-such-HdbBenchGen is not built"):
        run_scenario(scenario, RunOptions(state_dir=tmp_path / "state", runs_root=tmp_path / "runs"))
    assert not (tmp_path / "runs").exists() and not (tmp_path / "state").exists()

# SPDX-License-Identifier: Apache-2.0
"""Benchmark of the generator engines (not a test): the C++ HdbBenchGen against the Python HdbBenchSim.

1. CPU per pushed event of one generator process (one device, 100 scalar DevDouble attributes,
   code-pushed, a ZeroMQ subscription on every attribute so each push is really serialised and
   sent): at a fixed offered rate both engines can keep, and flat out (offered far above what the
   process pushes). Figures: pushed events/s, CPU cores of the server process, µs of CPU per event,
   and the device's own lag behind its schedule (MaxLag).
2. The highest rate 2 generator processes offer to the bare C++ counting client
   (build/subscriber/hdbbench-count-events) with nothing lost: rates ascend until events go missing
   or the devices fall 3 % behind the offered rate (the source's limit), as benchmarks/tango_ceiling.py.

One run, on a private Tango database:

    .venv/bin/python benchmarks/generator.py [--engines cpp,python] [--seconds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from hdbbench.load import devices as launcher  # noqa: E402
from hdbbench.run.runner import load_target  # noqa: E402
from hdbbench.stack.settings import resolve_profile  # noqa: E402
from hdbbench.stack.stack import Stack, StackConfig  # noqa: E402
from tango_ceiling import COUNTER, PROFILE, count_at  # noqa: E402

CPU_PROFILE = """
[profile]
name = "bench-gen-cpu"
device_prefix = "bench/gen"

[[attribute]]
name = "a"
count = 100
type = "DevDouble"
rate_hz = 10
model = "walk"
amplitude = 5.0
step = 0.01
"""
FIXED_RATE = 10_000.0       # events/s, all attributes: both engines keep it on one process
FLAT_OUT_RATE = 400_000.0   # far above what one process pushes


def cpu_per_event(tango_host: str, engine: str, seconds: float) -> list[dict[str, Any]]:
    import tango

    out = []
    with tempfile.TemporaryDirectory(prefix="hdbbench-bench-gen-") as tmp:
        profile = Path(tmp) / "cpu.toml"
        profile.write_text(CPU_PROFILE)
        with launcher.running_fleet(tango_host, profile, state_dir=Path(tmp) / "state", engine=engine) as fleet:
            (name, plan), = fleet.devices.items()
            proxy = tango.DeviceProxy(fleet.device_url(name))
            proxy.set_timeout_millis(10000)
            proc = psutil.Process(fleet.servers[0].pid)
            # Events land in cppTango's queue of this client (no Python callback): every push is sent.
            ids = [proxy.subscribe_event(s.name, tango.EventType.ARCHIVE_EVENT, 100) for s in plan.specs]
            try:
                for label, rate in (("fixed", FIXED_RATE), ("flat-out", FLAT_OUT_RATE)):
                    proxy.Reset()
                    proxy.SetRate(rate / len(plan.specs))
                    proxy.Start()
                    time.sleep(1.0)  # warm-up
                    n0, c0, t0 = int(proxy.EventsEmittedTotal), proc.cpu_times(), time.monotonic()
                    time.sleep(seconds)
                    n1, c1, t1 = int(proxy.EventsEmittedTotal), proc.cpu_times(), time.monotonic()
                    lag = float(proxy.MaxLag)
                    proxy.Stop()
                    events, cpu = n1 - n0, (c1.user + c1.system) - (c0.user + c0.system)
                    out.append({"engine": engine, "case": label, "offered_per_s": rate,
                                "pushed_per_s": events / (t1 - t0), "cpu_cores": cpu / (t1 - t0),
                                "cpu_us_per_event": 1e6 * cpu / events if events else None,
                                "events_per_cpu_s": events / cpu if cpu else None, "max_lag_s": lag})
                    print(json.dumps(out[-1]), flush=True)
            finally:
                for i in ids:
                    proxy.unsubscribe_event(i)
    return out


def zero_loss_rate(tango_host: str, engine: str, rates: list[float], step_s: float, state: Path) -> dict[str, Any]:
    fleet = launcher.up(tango_host, PROFILE, servers=2, seed=1, state_dir=state / engine, tie_to_parent=True,
                        engine=engine)
    steps = []
    best = None
    try:
        load = load_target(fleet)
        for rate in rates:
            row = {"engine": engine, **count_at(load, rate, step_s), "max_lag_s": load.max_lag_s()}
            steps.append(row)
            print(json.dumps(row), flush=True)
            if row["missed"] > 0 or row["missed_event_errors"] > 0:
                break  # delivery lost events: the client or Tango set the limit
            if row["achieved_rate"] < 0.97 * rate:
                break  # the devices could offer no more: the source set the limit
            best = row["achieved_rate"]
    finally:
        launcher.down(state / engine)
    return {"engine": engine, "zero_loss_events_per_s": best, "ended_by": _ended_by(steps), "steps": steps}


def _ended_by(steps: list[dict[str, Any]]) -> str:
    if not steps:
        return "nothing measured"
    last = steps[-1]
    if last["missed"] > 0 or last["missed_event_errors"] > 0:
        return "loss (Tango delivery or the client)"
    if last["achieved_rate"] < 0.97 * last["offered"]:
        return "the devices (source could not offer the rate)"
    return "the highest rate asked for"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default="cpp,python")
    ap.add_argument("--seconds", type=float, default=5.0, help="measured seconds per CPU case")
    ap.add_argument("--step-s", type=float, default=5.0, help="seconds per offered rate of the zero-loss search")
    ap.add_argument("--cpp-rates", default="50000,100000,150000,200000,250000,300000")
    ap.add_argument("--python-rates", default="20000,35000,50000,65000,80000")
    ap.add_argument("--state-dir", type=Path, default=REPO / ".hdbbench" / "bench-generator")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        launcher.resolve_engine(e)
    if "cpp" in engines and not launcher.cpp_engine_built():
        sys.exit(f"{launcher.gen_binary()} is not built: run cmake --build build")
    if not COUNTER.exists():
        sys.exit(f"{COUNTER} is not built: run cmake --build build")
    stack = Stack(StackConfig(state_dir=args.state_dir, profile=resolve_profile("relaxed"), components=("tango",),
                              attached=True))
    started = time.monotonic()
    try:
        endpoints = stack.up()
        assert endpoints.tango is not None
        host = endpoints.tango.tango_host
        cpu = [row for e in engines for row in cpu_per_event(host, e, args.seconds)]
        rates = {"cpp": args.cpp_rates, "python": args.python_rates}
        ceilings = [zero_loss_rate(host, e, [float(r) for r in rates[e].split(",")], args.step_s,
                                   args.state_dir / "devices") for e in engines]
    finally:
        stack.down()
    print(f"\n{'engine':7} {'case':9} {'offered/s':>10} {'pushed/s':>10} {'cores':>6} {'µs/event':>9} {'lag s':>7}")
    for r in cpu:
        us = "-" if r["cpu_us_per_event"] is None else f"{r['cpu_us_per_event']:.1f}"
        print(f"{r['engine']:7} {r['case']:9} {r['offered_per_s']:10.0f} {r['pushed_per_s']:10.0f} "
              f"{r['cpu_cores']:6.2f} {us:>9} {r['max_lag_s']:7.3f}")
    for c in ceilings:
        rate = "none" if c["zero_loss_events_per_s"] is None else f"{c['zero_loss_events_per_s']:,.0f} events/s"
        print(f"{c['engine']}: 2 processes, zero-loss rate to the bare C++ client {rate}; ended by {c['ended_by']}")
    result = {"format": 1, "benchmark": "generator", "seconds_total": time.monotonic() - started,
              "host": {"cpus": psutil.cpu_count(), "platform": platform.platform(), "load_avg": os.getloadavg()},
              "cpu_per_event": cpu, "zero_loss": ceilings}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

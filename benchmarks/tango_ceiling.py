# SPDX-License-Identifier: Apache-2.0
"""The ceiling of Tango event delivery on this machine: a bare C++ client that only counts.

The same simulated devices and the same offered rates as the insertion benchmark; instead of a
subscriber that stores, ``hdbbench-count-events`` subscribes to every attribute and counts. For each
offered rate (ascending) the device-side emitted count is compared with the events received; the
highest rate with nothing missed is the ceiling the subscriber is measured against (the
subscriber should reach >= 0.8 of it).

    .venv/bin/python benchmarks/tango_ceiling.py --rates 5000,10000,20000,30000 --step-s 10 --servers 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hdbbench.load import devices  # noqa: E402
from hdbbench.trials.insertion import SETTLE_S  # noqa: E402
from hdbbench.load.offered import LoadTarget  # noqa: E402
from hdbbench.run.runner import load_target  # noqa: E402
from hdbbench.stack.settings import resolve_profile  # noqa: E402
from hdbbench.stack.stack import Stack, StackConfig  # noqa: E402

COUNTER = REPO / "build" / "subscriber" / "hdbbench-count-events"
PROFILE = REPO / "devices" / "profiles" / "insertion-devdouble.toml"


def count_at(load: LoadTarget, rate: float, step_s: float) -> dict[str, float]:
    load.prepare(rate)
    counter = subprocess.Popen([str(COUNTER), str(step_s + 2 * SETTLE_S + 2)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env={"TANGO_HOST": load.tango_host, "PATH": "/usr/bin"})
    assert counter.stdin and counter.stdout
    counter.stdin.write("\n".join(load.attributes) + "\n")
    counter.stdin.close()
    json.loads(counter.stdout.readline())  # {"subscribed": n}
    time.sleep(SETTLE_S)
    proc = psutil.Process(counter.pid)
    cpu_before = sum(proc.cpu_times()[:2])
    load.start()
    time.sleep(step_s)
    load.stop()
    time.sleep(1.0)  # the last events in flight
    cpu_used = sum(proc.cpu_times()[:2]) - cpu_before
    emitted = load.emitted_total()
    result = json.loads(counter.stdout.readline())
    counter.wait(timeout=60)
    return {"offered": rate, "emitted": emitted, "achieved_rate": emitted / step_s, **result,
            "missed": max(0.0, emitted - result["data_events"]),
            "client_cpu_us_per_event": cpu_used / result["data_events"] * 1e6 if result["data_events"] else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="5000,10000,15000,20000,30000,40000")
    parser.add_argument("--step-s", type=float, default=10.0)
    parser.add_argument("--servers", type=int, default=2, help="device server processes (one core each at most)")
    parser.add_argument("--state-dir", type=Path, default=REPO / ".hdbbench" / "bench-ceiling")
    args = parser.parse_args()
    stack = Stack(StackConfig(state_dir=args.state_dir, profile=resolve_profile("relaxed"), components=("tango",),
                              attached=True))
    try:
        endpoints = stack.up()
        assert endpoints.tango is not None
        fleet = devices.up(endpoints.tango.tango_host, PROFILE, servers=args.servers, seed=1,
                           state_dir=args.state_dir / "devices", tie_to_parent=True)
        load = load_target(fleet)
        ceiling = None
        for rate in (float(r) for r in args.rates.split(",")):
            row = count_at(load, rate, args.step_s)
            print(json.dumps(row), flush=True)
            if row["missed"] > 0 or row["missed_event_errors"] > 0 or row["achieved_rate"] < 0.97 * rate:
                break
            ceiling = row["achieved_rate"]
        print(json.dumps({"ceiling_events_per_s": ceiling, "servers": args.servers, "step_s": args.step_s}))
    finally:
        devices.down(args.state_dir / "devices")
        stack.down()


if __name__ == "__main__":
    main()

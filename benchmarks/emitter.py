# SPDX-License-Identifier: Apache-2.0
"""Benchmark of HdbBenchSim: code-pushed archive events/s per server process and CPU µs per event.

Not a test. For each case one server process (one device) pushes as fast as its schedule allows
(the offered rate is set above what Python can push), with a subscriber attached so every push is
really serialised and sent:

- ``pull`` receiver: ZeroMQ subscriptions whose events land in cppTango's event queue (no Python
  callback; a Python client callback tops out near 15k events/s and would be the bottleneck);
  the figures are the device's own counters and the server process's CPU time.
- ``callback`` receiver: a Python callback counting events, to show what a Python subscriber takes.

Usage: python benchmarks/emitter.py [--tango-host H:P] [--seconds 8] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import tango

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hdbbench.load import devices as launcher  # noqa: E402

CASES = {
    # name: (attributes, type/format lines, offered rate per attribute)
    "scalar-devdouble": (100, 'type = "DevDouble"\nformat = "SCALAR"', 1000.0),
    "spectrum-1000-devdouble": (10, 'type = "DevDouble"\nformat = "SPECTRUM"\ndim_x = 1000', 2000.0),
}


def _profile(case: str) -> str:
    n, lines, rate = CASES[case]
    return (f'[profile]\nname = "bench-{case}"\ndevice_prefix = "bench/emitter"\n\n'
            f'[[attribute]]\nname = "a"\ncount = {n}\n{lines}\nrate_hz = {rate}\nmodel = "walk"\n')


def _measure(proxy: tango.DeviceProxy, proc: psutil.Process, seconds: float) -> dict[str, float]:
    n0, c0, t0 = proxy.EventsEmittedTotal, proc.cpu_times(), time.monotonic()
    time.sleep(seconds)
    n1, c1, t1 = proxy.EventsEmittedTotal, proc.cpu_times(), time.monotonic()
    events = n1 - n0
    cpu = (c1.user + c1.system) - (c0.user + c0.system)
    return {"events": events, "seconds": t1 - t0, "events_per_s": events / (t1 - t0),
            "cpu_cores": cpu / (t1 - t0), "cpu_us_per_event": 1e6 * cpu / events if events else float("nan")}


def run_case(tango_host: str, case: str, receiver: str, seconds: float, offered: float | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="hdbbench-bench-") as tmp:
        prof = Path(tmp) / f"{case}.toml"
        prof.write_text(_profile(case))
        with launcher.running_fleet(tango_host, prof, state_dir=Path(tmp) / "state") as fleet:
            (name, plan), = fleet.devices.items()
            proxy = tango.DeviceProxy(fleet.device_url(name))
            proc = psutil.Process(fleet.servers[0].pid)
            received = [0]
            lock = threading.Lock()

            def count(ev: tango.EventData) -> None:
                with lock:
                    received[0] += 1

            ids = []
            for spec in plan.specs:
                if receiver == "pull":
                    ids.append(proxy.subscribe_event(spec.name, tango.EventType.ARCHIVE_EVENT, 10))
                else:
                    ids.append(proxy.subscribe_event(spec.name, tango.EventType.ARCHIVE_EVENT, count))
            if offered:
                proxy.SetRate(offered / len(plan.specs))
            proxy.Start()
            time.sleep(1.0)  # warm-up: blocks generated, sockets connected
            with lock:
                r0 = received[0]
            m = _measure(proxy, proc, seconds)
            with lock:
                m["received_per_s"] = (received[0] - r0) / m["seconds"] if receiver == "callback" else None
            m["max_lag_s"] = proxy.MaxLag
            proxy.Stop()
            for i in ids:
                proxy.unsubscribe_event(i)
            return {"case": case, "receiver": receiver, "attributes": len(plan.specs),
                    "offered_per_s": offered or CASES[case][0] * CASES[case][2], **m}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tango-host", default=os.environ.get("TANGO_HOST"))
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not args.tango_host:
        sys.exit("give --tango-host or set TANGO_HOST")
    runs = [
        run_case(args.tango_host, "scalar-devdouble", "pull", args.seconds, None),
        run_case(args.tango_host, "spectrum-1000-devdouble", "pull", args.seconds, None),
        run_case(args.tango_host, "scalar-devdouble", "callback", args.seconds, 10000.0),
        run_case(args.tango_host, "scalar-devdouble", "callback", args.seconds, None),
    ]
    print(f"{'case':26} {'receiver':9} {'offered/s':>10} {'pushed/s':>10} {'recv/s':>9} {'cores':>6} {'µs/event':>9}")
    for r in runs:
        recv = "-" if r["received_per_s"] is None else f"{r['received_per_s']:.0f}"
        print(f"{r['case']:26} {r['receiver']:9} {r['offered_per_s']:10.0f} {r['events_per_s']:10.0f} {recv:>9} "
              f"{r['cpu_cores']:6.2f} {r['cpu_us_per_event']:9.1f}")
    result = {"format": 1, "benchmark": "emitter", "host": {"cpus": psutil.cpu_count(), "platform": platform.platform(),
              "python": platform.python_version(), "pytango": tango.__version__,
              "load_avg": os.getloadavg()}, "seconds": args.seconds, "runs": runs}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

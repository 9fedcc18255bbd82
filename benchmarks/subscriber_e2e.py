# SPDX-License-Identifier: Apache-2.0
"""The subscriber's end-to-end figures, from simulated devices through one subscriber into each backend.

For each settings profile and backend:
1. the highest offered rate of scalar devdouble events one subscriber stores with zero loss and a
   bounded queue: the runner's saturation search (Elettra criterion, +step per step), reported with
   what limited it (the subscriber, or the devices that could not offer more);
2. event age at commit p99 at half of that rate (a throughput trial at rate/2), with its two parts:
   age at reception (device and Tango delivery) and time in the subscriber (queue, batch, commit);
3. CPU per archived event, subscriber (by thread: writer, Tango reception and the rest) and database
   server, in that same trial.
Compare with `benchmarks/tango_ceiling.py` (a bare C++ client that only counts the same events).

    .venv/bin/python benchmarks/subscriber_e2e.py --profiles durable,relaxed --start-rate 8000 --servers 2
    .venv/bin/python benchmarks/subscriber_e2e.py --backends timescaledb,postgresql --variant pk+2,nofk
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hdbbench.model.measure import MIN_SATURATION_STEP_S  # noqa: E402
from hdbbench.results.document import load_results  # noqa: E402
from hdbbench.run.runner import RunOptions, run_scenario  # noqa: E402
from hdbbench.scenario.scenario import Measurements, SaturationSearch, Scenario  # noqa: E402
from hdbbench.stack.stack import Stack, StackConfig  # noqa: E402
from hdbbench.stack.settings import resolve_profile  # noqa: E402


def scenario(profile: str, backends: tuple[str, ...], args: argparse.Namespace, *, rate: float,
             saturation: bool) -> Scenario:
    measurements = Measurements(
        throughput=not saturation,
        saturation=SaturationSearch(start_rate=args.start_rate, step=args.step, step_s=args.step_s,
                                    max_steps=args.max_steps) if saturation else None)
    return Scenario(name=f"e2e-{profile}-{'saturation' if saturation else 'half'}", source=Path(__file__),
                    seed=42, backends=backends, profile=profile, servers=args.servers, schema_variant=args.variant,
                    device_profile=REPO / "devices/profiles/insertion-devdouble.toml",
                    lib_configuration=(("batch_size", str(args.batch_size)),), rate=rate,
                    duration_s=args.half_s, warmup_s=5.0, measurements=measurements)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profiles", default="durable,relaxed")
    parser.add_argument("--backends", default="timescaledb,postgresql,mysql")
    parser.add_argument("--start-rate", type=float, default=8000)
    parser.add_argument("--step", type=float, default=0.10)
    parser.add_argument("--step-s", type=float, default=8,
                        help=f"seconds per saturation step (>= {MIN_SATURATION_STEP_S:g}, see hdbbench.model.measure)")
    parser.add_argument("--max-steps", type=int, default=25)
    parser.add_argument("--half-s", type=float, default=25, help="length of the trial at half the rate")
    parser.add_argument("--servers", type=int, default=2, help="device server processes")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--variant", default="pk+2", help="schema variant, e.g. pk+2,nofk (hdbbench schema --help)")
    parser.add_argument("--state-dir", type=Path, default=REPO / ".hdbbench" / "bench-e2e")
    parser.add_argument("--runs", type=Path, default=REPO / "runs")
    args = parser.parse_args()
    if args.step_s < MIN_SATURATION_STEP_S:
        parser.error(f"--step-s must be >= {MIN_SATURATION_STEP_S:g}: Elettra's rule needs 6 rises in a row at 1 Hz")
    backends = tuple(args.backends.split(","))
    summary = []
    for profile in args.profiles.split(","):
        options = RunOptions(state_dir=args.state_dir, runs_root=args.runs)
        # A fresh stack per profile, so that the servers run with that profile's settings.
        Stack(StackConfig(state_dir=args.state_dir, profile=resolve_profile(profile))).down()
        sat_dir = run_scenario(scenario(profile, backends, args, rate=args.start_rate, saturation=True), options)
        saturation = {t["backend"]: t["saturation"] for t in load_results(sat_dir / "results.json")["results"]["trials"]}
        for backend in backends:
            best = saturation[backend]["last_sustainable_rate"] or args.start_rate
            half = scenario(profile, (backend,), args, rate=best / 2, saturation=False)
            half_dir = run_scenario(dataclasses.replace(half, name=f"{half.name}-{backend}"), options)
            (trial,) = load_results(half_dir / "results.json")["results"]["trials"]
            row = {
                "profile": profile, "backend": backend, "schema_variant": args.variant,
                "max_zero_loss_rate": saturation[backend]["last_sustainable_rate"],
                "limited_by": saturation[backend]["limited_by"],
                "half_rate": best / 2, "stored_median_at_half": trial["stored_rate"]["median"],
                "lost_at_half": trial["accounting"]["lost"],
                "event_age_p99_s_at_half": trial["event_age_at_commit_s"]["p99"],
                "age_at_reception_p99_s_at_half": trial["event_age_at_reception_s"]["p99"],
                "time_in_subscriber_p99_s_at_half": trial["time_in_subscriber_s"]["p99"],
                "cpu_us_per_event": {g: round(v["us_per_event"], 1) for g, v in trial["cpu"].items()},
                "subscriber_cpu_us_per_event_by_thread": {
                    g: round(v["us_per_event"], 1) for g, v in trial["subscriber_cpu_by_thread"].items()},
                "runs": [str(sat_dir), str(half_dir)],
            }
            summary.append(row)
            print(json.dumps(row), flush=True)
    suffix = "" if args.variant == "pk+2" else "_" + args.variant.replace(",", "_").replace("+", "")
    (args.runs / f"subscriber_e2e_summary{suffix}.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0
"""Bytes per event per Tango type on every backend and storage variant, and the sizing check.

On a private stack (default `.hdbbench/bench-disk`, profile durable, MariaDB with its binary log on
and the MyRocks plugin loaded when Debian's mariadb-plugin-rocksdb is installed), stopped at the end:

1. `size measure` cases — scalar devdouble, devlong, devboolean, devstring (20 characters), devstate,
   devdouble READ_WRITE, devdouble spectra of 100 and 1,000 elements — on TimescaleDB and PostgreSQL
   (pk, pk+2, each also after CLUSTER) and MariaDB (pk, pk+2, ROW_FORMAT=COMPRESSED, PAGE_COMPRESSED,
   MyRocks), through the bulk writer;
2. an inventory run: `inventories/example-facility.toml` scaled to --scale of its attributes for
   --simulated-s seconds, loaded into one database per backend (published default variants);
3. `size plan --check`: projection from (1) of exactly the events stored in (2) versus the size (2) measured.

    .venv/bin/python benchmarks/disk_per_type.py [--events 50000] [--scale 0.01] [--simulated-s 600]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from hdbbench.parts.disk import sizing
from hdbbench.cli.size import human
from hdbbench.parts.disk import DEFAULT_VARIANTS, parse_case, run_measure
from hdbbench.results.document import load_results
from hdbbench.stack.settings import resolve_profile
from hdbbench.stack.stack import Stack, StackConfig

REPO = Path(__file__).resolve().parent.parent
SCALARS = ("devdouble", "devlong", "devboolean", "devstring", "devstate", "devdouble:rw")
SPECTRA = (100, 1000)
CHECK_VARIANTS = {"timescaledb": ["pk+2"], "postgresql": ["pk+2"], "mysql": ["pk"]}


def stack_config(state_dir: Path) -> StackConfig:
    mariadb = {"innodb_buffer_pool_size": "1G", "log_bin": "binlog", "binlog_format": "MIXED"}
    if os.path.exists("/usr/lib/mysql/plugin/ha_rocksdb.so"):
        mariadb["plugin_load_add"] = "ha_rocksdb"
    profile = resolve_profile("durable", {"postgres": {"shared_buffers": "1GB"}, "mariadb": mariadb})
    return StackConfig(state_dir=state_dir, profile=profile, components=("postgres", "mariadb"), attached=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state-dir", type=Path, default=REPO / ".hdbbench" / "bench-disk")
    ap.add_argument("--runs", type=Path, default=REPO / "runs")
    ap.add_argument("--events", type=int, default=50_000, help="events per scalar case")
    ap.add_argument("--attributes", type=int, default=50)
    ap.add_argument("--scale", type=float, default=0.01)
    ap.add_argument("--simulated-s", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    cases = [parse_case(c, args.events, args.attributes) for c in SCALARS]
    cases += [parse_case(f"spectrum:devdouble:{n}", max(args.attributes, args.events * 30 // n // 5), args.attributes)
              for n in SPECTRA]
    inventory = sizing.load_inventory(REPO / "inventories" / "example-facility.toml")
    stack = Stack(stack_config(args.state_dir))
    try:
        endpoints = stack.up()
        per_type = run_measure(endpoints, {b: list(v) for b, v in DEFAULT_VARIANTS.items()}, cases, args.seed,
                               args.runs, "disk-per-type", progress=print)
        check_run = run_measure(endpoints, CHECK_VARIANTS, [], args.seed, args.runs, "disk-inventory",
                                (inventory, args.simulated_s, args.scale), progress=print)
    finally:
        stack.down()
    report(inventory, per_type, check_run)


def report(inventory: sizing.Inventory, per_type: Path, check_run: Path) -> None:
    results = load_results(per_type / "results.json")
    print(f"per-type run: {per_type}\ninventory run: {check_run}")
    print(f"{'backend':12} {'variant':24} {'case':28} {'B/event':>9} {'data':>7} {'index':>7} {'toast':>6} "
          f"{'free':>7} {'raw':>6} {'ratio':>6} {'minrow':>7} {'row/row':>7} log/event")
    for r in results["results"]["cases"]:
        logs = " ".join(f"{k}={v:.0f}" for k, v in r["log_per_event"].items() if v is not None)
        minimum = r["documented_min_row_bytes"]
        print(f"{r['backend']:12} {r['variant']:24} {r['case_label']:28} {r['bytes_per_event']:9.1f} "
              f"{r['data_per_event']:7.1f} {r['index_per_event']:7.1f} {r['toast_per_event']:6.1f} "
              f"{r['free_per_event']:7.1f} {r['raw_per_event']:6.1f} {r['ratio_disk_to_raw']:6.2f} "
              f"{minimum if minimum is None else round(minimum, 1)!s:>7} {r['data_per_row']:7.1f} {logs}")
    for v in results["results"]["variants"]:
        if v["unavailable"]:
            print(f"unavailable: {v['backend']} {v['variant']}: {v['unavailable']}")
    for f in results["results"]["fits"]:
        print(f"fit {f['backend']} {f['variant']} {f['type']} {f['format']}: "
              f"{f['a_bytes']:.0f} + {f['b_bytes_per_element']:.2f} x elements bytes/event")
    for c in sizing.check(inventory, results, load_results(check_run / "results.json")):
        err = "n/a" if c["error"] is None else f"{100 * c['error']:+.1f} %"
        print(f"check {c['backend']} {c['variant']}: projected {human(c['projected_bytes'])}, "
              f"measured {human(c['measured_bytes'])}, error {err}")
    print(json.dumps(results["environment"]["servers"], indent=1))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0
"""The Elettra extraction experiment on a private stack: load order, then 1 M / 10 M-row queries.

Part A — load times by order: a data set of `--load-attributes` devdouble attributes at 1 Hz
(`--load-rows` events in all) generated into a fresh database of each backend, once ordered by
primary key (att_conf_id, data_time) and once by data_time (as archiving writes); the bulk-load time
(binary COPY / LOAD DATA LOCAL INFILE) and the size after the load.

Part B — extraction: query_sets/elettra.toml (one 1 Hz devdouble attribute with >= 10 M events,
interleaved in time order with slower ones) on each backend with its published index variant
(pk+2 on PostgreSQL/TimescaleDB, pk on MariaDB): the ≈1 M and ≈10 M-row queries, cold (server
restarted, OS page cache dropped when allowed) and warm (repeated at once), unclustered and after
CLUSTER; results validated across backends.

    .venv/bin/python benchmarks/extraction_elettra.py [--rows 10400000] [--load-rows 2000000]

Uses its own stack in .hdbbench/bench-extract (profile relaxed) and stops it at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hdbbench.backends import backend_for_stack  # noqa: E402
from hdbbench.parts.datagen import AttributeGroup, DataSet, generate  # noqa: E402
from hdbbench.parts.extraction.extraction import ExtractionOptions, run_extraction  # noqa: E402
from hdbbench.model.hdbtypes import AttrFormat, TangoType, WriteType  # noqa: E402
from hdbbench.parts.extraction.queries import load_query_set  # noqa: E402
from hdbbench.results.document import load_results  # noqa: E402
from hdbbench.stack.settings import resolve_profile  # noqa: E402
from hdbbench.stack.stack import Stack, StackConfig  # noqa: E402

BACKENDS = ("timescaledb", "postgresql", "mysql")


def load_orders(endpoints: object, rows: int, attributes: int) -> list[dict[str, object]]:
    span_s = rows / attributes
    inv = DataSet("load-order", 7, _start(span_s), span_s,
                    (AttributeGroup(TangoType.DEV_DOUBLE, AttrFormat.SCALAR, WriteType.READ, attributes, 1.0),))
    out = []
    for name in BACKENDS:
        for order in ("pk", "time"):
            backend = backend_for_stack(name, endpoints, f"bench_load_{name}_{order}")
            backend.drop_schema()
            backend.create_schema(None)
            try:
                result = generate(backend, inv, order)
                out.append(result.to_dict())
                print(f"load {name:12s} {order:5s} {result.events} rows {result.seconds:7.1f} s "
                      f"{result.events_per_s:9.0f} rows/s {result.size_bytes / 2**20:8.1f} MiB", flush=True)
            finally:
                backend.drop_schema()
    return out


def _start(span_s: float):  # type: ignore[no-untyped-def]
    from datetime import datetime, timedelta, timezone

    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(seconds=span_s)


def extraction(stack: Stack, endpoints: object, rows: int, targets: list[int], others: int) -> Path:
    from dataclasses import replace

    qs = load_query_set(REPO / "query_sets" / "elettra.toml")
    assert qs.data is not None
    # The 1 Hz attribute holds `rows` events; `others` slower attributes interleave with it in time order.
    groups_data = (qs.data.groups[0], replace(qs.data.groups[1], count=others))
    data = replace(qs.data, span_s=float(rows), start=_start(float(rows)), groups=groups_data)
    groups = tuple(replace(g, rows=t) for g, t in zip(qs.groups, targets))
    qs = replace(qs, data=data, groups=groups, fetch_rows=50_000)
    options = ExtractionOptions(backends=BACKENDS, variants=("default",), order="time")
    return run_extraction(qs, endpoints, options, REPO / "runs", stack,
                          progress=lambda text: print(f"  {time.strftime('%H:%M:%S')} {text}", flush=True))


def table(run_dir: Path) -> str:
    res = load_results(run_dir / "results.json")["results"]
    lines = [f"cold mode: {res['cold_mode']}", "", "| backend | query | state | cold client s | cold server s | "
             "warm client s | warm server s | pages read cold |", "|---|---|---|---|---|---|---|---|"]
    cells: dict[tuple[str, str, str, str], dict[str, object]] = {}
    for s in res["summary"]:
        cells[(s["backend"], s["group"], s["state"], s["temperature"])] = s
    for b in BACKENDS:
        for g in ("elettra_1M", "elettra_10M"):
            for state in ("unclustered", "clustered"):
                cold, warm = cells.get((b, g, state, "cold")), cells.get((b, g, state, "warm"))
                if not cold or not warm:
                    continue
                lines.append(f"| {b} | {g} ({cold['rows_mean']:.0f} rows) | {state} | {cold['client_s']['p50']:.2f} | "
                             f"{cold['server_s']['p50']:.2f} | {warm['client_s']['p50']:.2f} | {warm['server_s']['p50']:.2f} | "
                             f"{cold['pages_read_mean']} |")
    lines += ["", "| backend | load s | rows/s | size MiB | cluster s | size after cluster MiB |", "|---|---|---|---|---|---|"]
    clus = {c["backend"]: c for c in res["clustering"]}
    for load in res["loads"]:
        c = clus.get(load["backend"], {})
        lines.append(f"| {load['backend']} | {load['seconds']:.1f} | {load['events_per_s']:.0f} | {load['size_bytes'] / 2**20:.0f} | "
                     f"{c.get('seconds', 0):.1f} | {c.get('size_after', 0) / 2**20:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_400_000, help="events of the queried 1 Hz attribute")
    parser.add_argument("--load-rows", type=int, default=2_000_000)
    parser.add_argument("--load-attributes", type=int, default=5)
    parser.add_argument("--skip-loads", action="store_true")
    parser.add_argument("--others", type=int, default=1, help="slower (10 s) attributes interleaved with the queried one")
    parser.add_argument("--row-targets", default="1000000,10000000", help="rows of the two queries (a smoke test: smaller)")
    args = parser.parse_args()
    stack = Stack(StackConfig(state_dir=REPO / ".hdbbench" / "bench-extract", profile=resolve_profile("relaxed"),
                              components=("postgres", "mariadb"), attached=True))
    try:
        endpoints = stack.up()
        loads = [] if args.skip_loads else load_orders(endpoints, args.load_rows, args.load_attributes)
        run_dir = extraction(stack, endpoints, args.rows, [int(x) for x in args.row_targets.split(',')], args.others)
        (run_dir / "load_orders.json").write_text(json.dumps(loads, indent=2) + "\n")
        print(run_dir)
        print(table(run_dir))
    finally:
        stack.down()


if __name__ == "__main__":
    main()

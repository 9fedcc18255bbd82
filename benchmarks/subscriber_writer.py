# SPDX-License-Identifier: Apache-2.0
"""Benchmark (a): the subscriber's writer alone versus a raw bulk load of the same rows.

Writer: `hdbbench-es-writer-bench` (subscriber/bench/writer_bench.cpp) — the C++ PgWriter/MySqlWriter
fed from a synthetic in-process source in batches of 1000 events, each batch one transaction, with
dedup + binary COPY straight into the table, staging + ON CONFLICT only when a row is already stored (PostgreSQL/TimescaleDB) or multi-row INSERT IGNORE (MariaDB).
Raw: the same rows (att_conf_id, data_time, value_r, quality) as text, loaded with psql `\\copy`
(PostgreSQL/TimescaleDB) or `LOAD DATA LOCAL INFILE` (MariaDB), one statement, into a fresh schema.
Figures are events/s; spectra rows are 1000-element arrays (one array value on PostgreSQL, 1000
element rows on MariaDB).

    .venv/bin/python benchmarks/subscriber_writer.py --state-dir .hdbbench/es-dev --events 200000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hdbbench.backends import backend_for_stack
from hdbbench.stack.stack import load_endpoints

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "build" / "subscriber" / "hdbbench-es-writer-bench"


def writer_run(stack, backend: str, fmt: str, events: int, attributes: int) -> dict:
    b = backend_for_stack(backend, stack, f"bw_{backend[:5]}_{uuid.uuid4().hex[:6]}")
    b.create_schema()
    try:
        if backend == "mysql":
            m = stack.mariadb
            lib = ["backend=mysql", f"host={m.host}", f"port={m.port}", f"user={m.user}", f"password={m.password}",
                   f"dbname={b.database}"]
        else:
            lib = [f"backend={backend}", f"connect_string={stack.postgres.conninfo(b.database)}"]
        cmd = [str(BENCH), "--format", fmt, "--events", str(events), "--attributes", str(attributes)]
        for line in lib:
            cmd += ["--lib", line]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=1800)
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        b.drop_schema()


def raw_run(stack, backend: str, fmt: str, events: int, attributes: int) -> dict:
    """The same rows as text, one bulk statement, after registering the attributes like the writer."""
    b = backend_for_stack(backend, stack, f"br_{backend[:5]}_{uuid.uuid4().hex[:6]}")
    b.create_schema()
    t0 = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(hours=1)
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
            for n in range(events):
                a, k = n % attributes, n // attributes
                t = (t0 + timedelta(milliseconds=k)).strftime("%Y-%m-%d %H:%M:%S.%f")
                base = a + k / 1000.0
                if fmt == "scalar":
                    f.write(f"{a + 1}\t{t}\t{base!r}\t0\n")
                elif backend == "mysql":
                    for i in range(1000):
                        f.write(f"{a + 1}\t{t}\t{t}\t{i}\t1000\t0\t{base + i!r}\t0\n")
                else:
                    f.write(f"{a + 1}\t{t}\t{{{','.join(repr(base + i) for i in range(1000))}}}\t0\n")
            path = f.name
        table = ("att_scalar_devdouble" if fmt == "scalar" else "att_array_devdouble") + ("_ro" if backend == "mysql" else "")
        kind = 1 if fmt == "scalar" else 0
        if backend == "mysql":
            conn = stack.mariadb.connect(b.database, local_infile=True)
            cur = conn.cursor()
            cur.execute("SELECT att_conf_data_type_id FROM att_conf_data_type WHERE data_type = ?",
                        (("scalar" if fmt == "scalar" else "array") + "_devdouble_ro",))
            kind = cur.fetchone()[0]
            cur.executemany("INSERT INTO att_conf (att_name, att_conf_data_type_id) VALUES (?, ?)",
                            [(f"raw/{fmt}/{a}", kind) for a in range(attributes)])
            conn.commit()
            cols = "(att_conf_id, data_time, value_r, quality) SET recv_time = data_time" if fmt == "scalar" else \
                "(att_conf_id, data_time, recv_time, idx, dim_x_r, dim_y_r, value_r, quality)"
            start = time.perf_counter()
            cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table} {cols}")
            conn.commit()
            elapsed = time.perf_counter() - start
            conn.close()
        else:
            with stack.postgres.connect(b.database) as conn:
                conn.execute("INSERT INTO att_conf (att_name, att_conf_type_id, att_conf_format_id, att_conf_write_id, "
                             "table_name) SELECT 'raw/' || g, 5, 1, 1, %s FROM generate_series(1, %s) g",
                             (table, attributes))
                conn.commit()
            psql = "/usr/lib/postgresql/15/bin/psql"
            start = time.perf_counter()
            subprocess.run([psql, stack.postgres.conninfo(b.database), "-q", "-c",
                            f"\\copy {table} (att_conf_id, data_time, value_r, quality) FROM '{path}'"],
                           check=True, capture_output=True, timeout=1800)
            elapsed = time.perf_counter() - start
        Path(path).unlink()
        return {"backend": backend, "format": fmt, "events": events, "write_s": round(elapsed, 4),
                "events_per_s": round(events / elapsed, 1)}
    finally:
        b.drop_schema()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state-dir", type=Path, default=REPO / ".hdbbench")
    ap.add_argument("--events", type=int, default=200_000, help="scalar events (spectra: events/100)")
    ap.add_argument("--attributes", type=int, default=100)
    ap.add_argument("--backends", default="timescaledb,postgresql,mysql")
    args = ap.parse_args()
    stack = load_endpoints(args.state_dir)
    for backend in args.backends.split(","):
        for fmt, n in (("scalar", args.events), ("spectrum", max(1, args.events // 100))):
            w = writer_run(stack, backend, fmt, n, args.attributes)
            r = raw_run(stack, backend, fmt, n, args.attributes)
            print(json.dumps({"backend": backend, "format": fmt, "events": n,
                              "writer_events_per_s": w["events_per_s"], "raw_events_per_s": r["events_per_s"],
                              "ratio": round(w["events_per_s"] / r["events_per_s"], 3),
                              "writer_rejected": w["rejected"]}), flush=True)


if __name__ == "__main__":
    main()

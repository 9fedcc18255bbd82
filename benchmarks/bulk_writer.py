# SPDX-License-Identifier: Apache-2.0
"""Bulk writer rate versus the raw bulk path of each server, for N scalar devdouble rows.

For each backend: one fresh database (schema creation untimed), then per repeat, interleaved:
  writer  the hdbbench BulkWriter (binary COPY / executemany), batches of --batch events
  raw     PostgreSQL: COPY ... FROM STDIN of a prepared text buffer (what psql \\copy sends);
          MariaDB: LOAD DATA LOCAL INFILE of a prepared TSV file
with the table truncated before each run. Events, buffers and files are generated (seeded) before
any timing. Prints rows/s min/median/max, the seed and the server settings that matter.

    .venv/bin/python benchmarks/bulk_writer.py --state-dir .hdbbench
    .venv/bin/python benchmarks/bulk_writer.py --postgres-url postgresql://u:p@127.0.0.1:5432/postgres \\
        --mariadb-url mysql://u:p@127.0.0.1:3306
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hdbbench.backends import BACKENDS, Backend, backend_for_stack
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, WriteType
from hdbbench.stack.servers.endpoints import MariaDBEndpoint, PostgresEndpoint, StackEndpoints

N_ATTRIBUTES = 100
STEP = timedelta(milliseconds=10)


def make_events(rows: int, seed: int) -> list[Event]:
    rng = random.Random(seed)
    t0 = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=1)
    names = [f"tango://bench:10000/bench/dev/{k // 10}/double_{k}" for k in range(N_ATTRIBUTES)]
    return [
        Event(names[k % N_ATTRIBUTES], t0 + (k // N_ATTRIBUTES) * STEP, rng.gauss(0.0, 1.0)) for k in range(rows)
    ]


def register(backend: Backend, events: list[Event]) -> dict[str, int]:
    with backend.bulk_writer() as w:
        return {
            name: w.register_attribute(AttributeInfo(name, TangoType.DEV_DOUBLE, AttrFormat.SCALAR, WriteType.READ))
            for name in dict.fromkeys(e.att_name for e in events)
        }


def run_writer(backend: Backend, events: list[Event], batch: int) -> float:
    with backend.bulk_writer() as w:
        for name in dict.fromkeys(e.att_name for e in events):
            w.register_attribute(AttributeInfo(name, TangoType.DEV_DOUBLE, AttrFormat.SCALAR, WriteType.READ))
        start = time.perf_counter()
        for k in range(0, len(events), batch):
            w.write(events[k : k + batch])
        return time.perf_counter() - start


# ------------------------------------------------------------------------------------ PostgreSQL


def pg_buffer(events: list[Event], ids: dict[str, int]) -> bytes:
    lines = [f"{ids[e.att_name]}\t{e.data_time.isoformat()}\t{e.value_r!r}\t0\n" for e in events]
    return "".join(lines).encode()


def pg_raw(backend: Any, buffer: bytes) -> float:
    with backend.connect() as conn:
        start = time.perf_counter()
        with conn.cursor() as cur, cur.copy("COPY att_scalar_devdouble (att_conf_id, data_time, value_r, quality) FROM STDIN") as copy:
            for k in range(0, len(buffer), 1 << 20):
                copy.write(buffer[k : k + (1 << 20)])
        conn.commit()
        return time.perf_counter() - start


def pg_truncate(backend: Any) -> None:
    with backend.connect(autocommit=True) as conn:
        conn.execute("TRUNCATE att_scalar_devdouble")
        conn.execute("CHECKPOINT")  # start each run with the same amount of dirty WAL


def pg_settings(backend: Any) -> dict[str, str]:
    names = ["server_version", "synchronous_commit", "fsync", "wal_level", "shared_buffers", "max_wal_size", "full_page_writes"]
    with backend.connect() as conn:
        out = {n: conn.execute(f"SHOW {n}").fetchone()[0] for n in names}
        if backend.name == "timescaledb":
            out["timescaledb"] = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'").fetchone()[0]
        return out


# --------------------------------------------------------------------------------------- MariaDB


def my_file(events: list[Event], ids: dict[str, int], directory: str) -> str:
    path = os.path.join(directory, "rows.tsv")
    recv = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    with open(path, "w") as f:
        for e in events:
            f.write(f"{ids[e.att_name]}\t{e.data_time:%Y-%m-%d %H:%M:%S.%f}\t{recv}\t{e.value_r!r}\t0\t\\N\n")
    return path


def my_raw(backend: Any, path: str) -> float:
    conn = backend.connect(backend.database, local_infile=True)
    try:
        cur = conn.cursor()
        start = time.perf_counter()
        cur.execute(
            "LOAD DATA LOCAL INFILE ? INTO TABLE att_scalar_devdouble_ro "
            "(att_conf_id, data_time, recv_time, value_r, quality, att_error_desc_id)",
            (path,),
        )
        conn.commit()
        return time.perf_counter() - start
    finally:
        conn.close()


def my_truncate(backend: Any) -> None:
    conn = backend.connect(backend.database)
    conn.cursor().execute("TRUNCATE att_scalar_devdouble_ro")
    conn.close()


def my_settings(backend: Any) -> dict[str, str]:
    conn = backend.connect()
    cur = conn.cursor()
    cur.execute(
        "SHOW VARIABLES WHERE Variable_name IN ('version', 'innodb_flush_log_at_trx_commit', 'innodb_buffer_pool_size', "
        "'innodb_doublewrite', 'log_bin', 'sync_binlog', 'innodb_log_file_size', 'max_allowed_packet')"
    )
    out = {k: v for k, v in cur.fetchall()}
    conn.close()
    return out


# ------------------------------------------------------------------------------------------ main


def summary(label: str, rows: int, seconds: list[float]) -> str:
    rates = sorted(rows / s for s in seconds)
    return (
        f"  {label:<7} rows/s min {rates[0]:>10,.0f}  median {statistics.median(rates):>10,.0f}  "
        f"max {rates[-1]:>10,.0f}  (n={len(rates)})"
    )


def bench_backend(backend: Backend, events: list[Event], repeats: int, batch: int) -> None:
    mysql = backend.name == "mysql"
    backend.create_schema(None)
    try:
        ids = register(backend, events)
        settings = my_settings(backend) if mysql else pg_settings(backend)
        print(f"{backend.name} (variant {backend.resolve_variant(None)}): " + ", ".join(f"{k}={v}" for k, v in settings.items()))
        with tempfile.TemporaryDirectory(prefix="h3bench") as tmp:
            raw_input: Any = my_file(events, ids, tmp) if mysql else pg_buffer(events, ids)
            truncate = my_truncate if mysql else pg_truncate
            raw = my_raw if mysql else pg_raw
            times: dict[str, list[float]] = {"writer": [], "raw": []}
            for _ in range(repeats):
                truncate(backend)
                times["writer"].append(run_writer(backend, events, batch))
                truncate(backend)
                times["raw"].append(raw(backend, raw_input))
        for label, secs in times.items():
            print(summary(label, len(events), secs))
        w, r = statistics.median(times["writer"]), statistics.median(times["raw"])
        print(f"  writer/raw time ratio (medians): {w / r:.2f}")
    finally:
        backend.drop_schema()


def endpoints(args: argparse.Namespace) -> StackEndpoints:
    if args.postgres_url or args.mariadb_url:
        return StackEndpoints(
            PostgresEndpoint.from_url(args.postgres_url) if args.postgres_url else None,
            MariaDBEndpoint.from_url(args.mariadb_url) if args.mariadb_url else None,
            None,
        )
    from hdbbench.stack.stack import load_endpoints

    return load_endpoints(args.state_dir)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backends", default=",".join(BACKENDS))
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch", type=int, default=10_000, help="events per writer.write() call (one transaction each)")
    p.add_argument("--seed", type=int, default=20241122)
    p.add_argument("--state-dir", type=Path, default=Path(".hdbbench"))
    p.add_argument("--postgres-url")
    p.add_argument("--mariadb-url")
    args = p.parse_args()
    stack = endpoints(args)
    t = time.perf_counter()
    events = make_events(args.rows, args.seed)
    print(
        f"{args.rows:,} scalar devdouble rows ({N_ATTRIBUTES} attributes, READ), seed {args.seed}, "
        f"writer batch {args.batch:,}, {args.repeats} repeats; generated in {time.perf_counter() - t:.1f} s (untimed)"
    )
    for name in args.backends.split(","):
        bench_backend(backend_for_stack(name, stack, f"h3bench_{uuid.uuid4().hex[:8]}"), events, args.repeats, args.batch)


if __name__ == "__main__":
    main()

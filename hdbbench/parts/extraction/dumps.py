# SPDX-License-Identifier: Apache-2.0
"""Dump a scalar data table to CSV and bulk-load a dump into any backend: the Elettra experiment.

Elettra dumped FERMI's att_scalar_devdouble_ro twice — ordered by the primary key (att_conf_id,
data_time) and ordered by data_time (as archiving writes) — and timed bulk loads of each into
MySQL, PostgreSQL and TimescaleDB, recording the size on disk after each load.

A dump is backend-neutral: `<name>.csv` without header, one row per event —
`att_conf_id, data_time (UTC, YYYY-MM-DD HH:MM:SS.ffffff), value_r, value_w, quality,
att_error_desc_id`, an empty field meaning NULL — and `<name>.json` beside it with the order, the
Tango type, the row count and every attribute (att_conf_id, name, type, format, write type). Loading
registers the attributes in the target database and maps their ids; the rows then go in with one
`COPY ... FROM STDIN (FORMAT csv)` (PostgreSQL/TimescaleDB) or `LOAD DATA LOCAL INFILE` (MariaDB)
per target table. Preparing the files (id mapping, splitting `_ro`/`_rw` for MariaDB) is done
before the clock starts; only the server's bulk load is timed.
"""

from __future__ import annotations

import csv
import json
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType, WriteType
from hdbbench.parts.datagen import ORDERS, TYPE_SUFFIXES

DUMP_COLUMNS = ("att_conf_id", "data_time", "value_r", "value_w", "quality", "att_error_desc_id")


@dataclass(frozen=True)
class DumpResult:
    path: Path
    backend: str
    tango_type: TangoType
    order: str
    rows: int
    seconds: float
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "backend": self.backend, "type": self.tango_type.suffix, "order": self.order,
                "rows": self.rows, "seconds": self.seconds, "bytes": self.bytes}


@dataclass(frozen=True)
class LoadResult:
    backend: str
    database: str
    dump: Path
    order: str
    rows: int
    seconds: float          # the bulk-load statements only
    prepare_s: float        # id mapping / splitting before the clock
    size_before: int
    size_after: int
    tables: tuple[str, ...]

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "database": self.database, "dump": str(self.dump), "order": self.order,
                "rows": self.rows, "seconds": self.seconds, "rows_per_s": self.rows_per_s, "prepare_s": self.prepare_s,
                "size_before": self.size_before, "size_after": self.size_after,
                "size_growth": self.size_after - self.size_before, "tables": list(self.tables)}


def sidecar(path: Path) -> Path:
    return Path(path).with_suffix(".json")


def dump(backend: Any, tango_type: TangoType | str, order: str, path: Path) -> DumpResult:
    """Write every scalar row of one Tango type, ordered by `order` (pk | time), to `path`."""
    if order not in ORDERS:
        raise ConfigError(f"unknown dump order {order!r} (known: pk = by primary key, time = by data_time)")
    if isinstance(tango_type, str):
        if tango_type not in TYPE_SUFFIXES:
            raise ConfigError(f"{tango_type!r} is not a Tango type (known: {', '.join(TYPE_SUFFIXES)})")
        tango_type = TYPE_SUFFIXES[tango_type]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    counter = _LineCounter(open(path, "wb"))
    try:
        backend.dump_type(tango_type, order, counter)
    finally:
        counter.close()
    seconds = time.perf_counter() - started
    attributes = [
        {"att_conf_id": att_id, "name": info.name, "type": info.type.suffix, "format": info.format.name.lower(),
         "write": info.write_type.name.lower()}
        for att_id, info in backend.attribute_catalog()
        if info.type == tango_type and info.format == AttrFormat.SCALAR
    ]
    meta = {"columns": list(DUMP_COLUMNS), "type": tango_type.suffix, "order": order, "rows": counter.lines,
            "source": {"backend": backend.name, "database": backend.database}, "attributes": attributes}
    sidecar(path).write_text(json.dumps(meta, indent=2) + "\n")
    return DumpResult(path, backend.name, tango_type, order, counter.lines, seconds, path.stat().st_size)


class _LineCounter:
    """A binary file that counts the rows written to it (no value of a scalar dump holds a newline)."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.lines = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        data = bytes(data)
        self.lines += data.count(b"\n")
        return int(self.out.write(data))

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.out.flush()

    def close(self) -> None:
        self.out.close()

    @property
    def closed(self) -> bool:
        return bool(self.out.closed)


def read_meta(path: Path) -> dict[str, Any]:
    meta_path = sidecar(path)
    try:
        meta = json.loads(meta_path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no {meta_path.name} beside the dump (it lists the attributes)") from None
    except ValueError as exc:
        raise ConfigError(f"{meta_path}: not valid JSON: {exc}") from None
    if meta.get("columns") != list(DUMP_COLUMNS):
        raise ConfigError(f"{meta_path}: columns {meta.get('columns')!r}, expected {list(DUMP_COLUMNS)}")
    return dict(meta)


def _infos(meta: dict[str, Any]) -> dict[int, AttributeInfo]:
    writes = {w.name.lower(): w for w in WriteType}
    return {int(a["att_conf_id"]): AttributeInfo(a["name"], TYPE_SUFFIXES[a["type"]], AttrFormat.SCALAR, writes[a["write"]])
            for a in meta["attributes"]}


def load(backend: Any, path: Path) -> LoadResult:
    """Bulk-load a dump into `backend` (its schema exists); time the loads, record the size after."""
    path = Path(path)
    meta = read_meta(path)
    infos = _infos(meta)
    backend.refresh_statistics()
    size_before = backend.size_bytes()
    prep = time.perf_counter()
    with backend.bulk_writer() as writer:
        id_map = {old: writer.register_attribute(info) for old, info in infos.items()}
    targets = {old: backend.table_for(info) for old, info in infos.items()}
    with _prepared(path, id_map, targets) as files:
        prepare_s = time.perf_counter() - prep
        started = time.perf_counter()
        for table, file in files.items():
            backend.load_csv(table, str(file))
        seconds = time.perf_counter() - started
    backend.refresh_statistics()
    return LoadResult(backend.name, backend.database, path, str(meta["order"]), int(meta["rows"]), seconds, prepare_s,
                      size_before, backend.size_bytes(), tuple(sorted(files)))


@contextmanager
def _prepared(path: Path, id_map: dict[int, int], targets: dict[int, str]) -> Iterator[dict[str, Path]]:
    """The file to load per target table: the dump itself when ids and table need no change."""
    tables = set(targets.values())
    if len(tables) == 1 and all(k == v for k, v in id_map.items()):
        yield {tables.pop(): path}
        return
    with tempfile.TemporaryDirectory(prefix="hdbbench-load-", dir=path.parent) as tmp, ExitStack() as files:
        outs: dict[str, Any] = {}
        paths = {t: Path(tmp) / f"{t}.csv" for t in tables}
        for t, p in paths.items():
            outs[t] = csv.writer(files.enter_context(open(p, "w", newline="")), lineterminator="\n")
        with open(path, newline="") as src:
            for row in csv.reader(src):
                old = int(row[0])
                row[0] = str(id_map[old])
                outs[targets[old]].writerow(row)
        files.close()
        yield paths

# SPDX-License-Identifier: Apache-2.0
"""Aged histories: the archive a facility has, built once before the trials and reused.

A history is the scenario's own mix (the attributes its devices publish, with their names, types and
rates, so the trials' subscribers find them in `att_conf` and continue them) written as archiving
writes it: every attribute advancing together in time order, each at its own rate, in batches that
cover consecutive time slices (hdbbench.parts.datagen's time-ordered chunks), through the fast column
loaders (binary COPY, LOAD DATA) for the numeric scalars and the bulk writer for the rest, ending
shortly before now. The layout is the facilities' (the backend's `aging_layout()`,
hdbbench.backends.abilities.aging): TimescaleDB hypertables at the official chunk intervals with every
chunk but the newest reordered as the official reorder job does, MariaDB monthly range partitions
over the whole span plus `future`, PostgreSQL plain.

It is identified by a key (backend, variant, mix digest, size, seed, clustering) and lives in the
database `hdbhist_<key>`; a table `hdbbench_history` in it holds the key and the `HistoryRecord`,
written last, so a later run on the same running stack reuses a finished history and rebuilds an
interrupted one. After a trial on it, the trial removes the rows stamped after its end
(hdbbench.trials.insertion.reset_history).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from hdbbench.backends.abilities.aging import AgingLayout
from hdbbench.backends.base import Backend
from hdbbench.backends.registry import backend_for_stack, server_of
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, TangoType, WriteType
from hdbbench.model.records import read, write
from hdbbench.parts.aging.settings import HistorySize, history_refusal
from hdbbench.parts.datagen import US, AttributeGroup, DataSet, GenAttribute, chunks, mix64, time_window_us
from hdbbench.results.aging import HistoryRecord
from hdbbench.stack.servers.confine import drop_cache, lifted
from hdbbench.stack.servers.confine.records import ServerConfinement, StorageClassName

END_MARGIN_S = 120.0       # the history ends this long before it is built: the trials come after it
CHUNK_ROWS = 200_000       # rows per load (one time slice of every attribute, one transaction per type)
SIZE_CHECK_ROWS = 2_000_000  # how often a history sized in bytes reads the database's size
Say = Callable[[str, float], None]   # (what, fraction done)


@dataclass(frozen=True)
class MixAttribute:
    """One attribute of the mix: what its subscriber registers, and how often it is archived."""

    info: AttributeInfo
    rate_hz: float
    size: int = 1           # spectrum elements


# --- the mix ------------------------------------------------------------------------------------


def mix_from_devices(devices: Sequence[Any], tango_host: str) -> list[MixAttribute]:
    """The code-pushed attributes of the planned devices (hdbbench.load.devices.DevicePlan), named as the
    trials name them (hdbbench.run.runner.load_target). Images are left out: HDB++ stores them in array
    tables the generator does not write."""
    out = []
    for device in devices:
        for spec in device.specs:
            if spec.mode != "push" or spec.format.upper() == "IMAGE":
                continue
            info = AttributeInfo(f"tango://{tango_host}/{device.name}/{spec.name}".lower(),
                                 TangoType["DEV_" + spec.type[3:].upper()], AttrFormat[spec.format.upper()],
                                 WriteType[spec.write.upper()])
            out.append(MixAttribute(info, float(spec.rate_hz), max(1, int(spec.dim_x))))
    return out


def mix_digest(mix: Sequence[MixAttribute]) -> str:
    text = "\n".join(f"{a.info.name}|{int(a.info.type)}|{int(a.info.format)}|{int(a.info.write_type)}|{a.rate_hz!r}|{a.size}"
                     for a in mix)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def history_key(backend: str, variant: str, mix: Sequence[MixAttribute], size: HistorySize, seed: int) -> str:
    text = json.dumps([backend, variant, mix_digest(mix), size.days, size.rows, size.cluster, seed]
                      + ([size.min_bytes] if size.min_bytes else []))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def database_name(key: str) -> str:
    return f"hdbhist_{key}"


# --- the attributes' events ---------------------------------------------------------------------


def _gen_attributes(mix: Sequence[MixAttribute], seed: int, size: HistorySize) -> tuple[list[GenAttribute], int]:
    """The mix as datagen attributes over a span starting at 0, with each attribute's event count, and
    the time of the last event (µs after 0). `rows`: the counts add up to exactly that many."""
    total_rate = sum(a.rate_hz for a in mix)
    span_s = size.days * 86400.0 if size.days is not None else (size.rows or 0) / total_rate
    span_us = int(span_s * US)
    atts = []
    for index, a in enumerate(mix):
        period_us = max(1, int(round(US / a.rate_hz)))
        phase = int(mix64(np.array([index], dtype=np.uint64), seed, 0xA77)[0] % np.uint64(period_us))
        events = 0 if phase >= span_us else (span_us - phase - 1) // period_us + 1
        group = AttributeGroup(a.info.type, a.info.format, a.info.write_type, 1, period_us / US, a.size)
        atts.append(GenAttribute(a.info, group, index, phase, period_us, events))
    if size.rows is not None:
        atts = _exact_rows(atts, size.rows)
    last = max((a.phase_us + (a.events - 1) * a.period_us for a in atts if a.events), default=0)
    return atts, last


def _exact_rows(atts: list[GenAttribute], rows: int) -> list[GenAttribute]:
    """Event counts nudged by one where needed so that they add up to `rows` (the span is rows / rate)."""
    missing = rows - sum(a.events for a in atts)
    out = []
    for a in atts:
        step = (missing > 0) - (missing < 0)
        if step and a.events + step >= 0:
            a, missing = replace(a, events=a.events + step), missing - step
        out.append(a)
    if missing:
        raise ConfigError(f"[history] rows = {rows:,}: cannot be spread over {len(atts)} attributes")
    return out


# --- building -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Confinement:
    """The server's memory and storage as the run recorded them (hdbbench.results.aging.ServerConfinement)."""

    memory_limit_bytes: int | None = None
    storage_class: StorageClassName = "ram"
    measured_read_iops: float | None = None


def confinement_of(records: Iterable[ServerConfinement] | None, server: str | None,
                   fallback_bytes: int | None = None) -> Confinement:
    """The server's budget (read back from the kernel, `Stack.confinement()`) and storage: the one
    reader of a budget for histories, load orders and growth trials. No record: the scenario's
    `[stack] memory` (`fallback_bytes`) on the default storage, else none."""
    for r in records or ():
        if r.server == server:
            return Confinement(r.memory_limit_bytes or r.memory_budget_bytes, r.storage_class,
                               r.probe.read_iops if r.probe else None)
    return Confinement(fallback_bytes)


def build_history(endpoints: Any, backend_name: str, variant: str, mix: Sequence[MixAttribute], size: HistorySize,
                  seed: int, *, state_dir: Path | None = None, confinement: Confinement | None = None,
                  say: Say | None = None, copy_of: HistoryRecord | None = None,
                  database: str | None = None) -> HistoryRecord:
    """The history of `mix` on `backend_name`: reused when a finished one with the same key is on the
    server, else (re)built; the server's caches dropped after a build where the stack can.
    `copy_of`: the same history again (same times, same rows) in `database` (MariaDB has no templates)."""
    say = say or (lambda text, done: None)
    confinement = confinement or Confinement()
    if not mix:
        raise ConfigError("[history]: the scenario's devices publish no attribute to build a history of")
    key = history_key(backend_name, variant, mix, size, seed)
    backend = backend_for_stack(backend_name, endpoints, database=database or database_name(key))
    ops = backend.aging_layout()
    if ops is None:
        raise ConfigError(history_refusal(backend_name) or f"backend {backend_name} keeps no history")
    found = find_history(backend, key)
    if found is not None:
        say(f"{backend_name}: history {key} reused ({found.rows:,} rows)", 1.0)
        return replace(found, seconds=0.0, reused=True)
    backend.drop_schema()  # an interrupted build, or another database under the name
    with building(backend, state_dir):
        record = _build(backend, ops, variant, mix, size, seed, key, say, copy_of)
    record = replace(record, memory_limit_bytes=confinement.memory_limit_bytes,
                     storage_class=confinement.storage_class, measured_read_iops=confinement.measured_read_iops)
    ops.write_marker(backend, key, json.dumps(write(record)))
    cold_start(state_dir, backend_name)
    return record


@contextmanager
def building(backend: Backend, state_dir: Path | None) -> Iterator[bool]:
    """The server's memory limit and throttle lifted while it builds (a history, a copy of one), and
    what the backend widens for a build (its `AgingLayout.building`, e.g. MariaDB's buffer pool); all put
    back and the cache dropped on leaving (hdbbench.stack.servers.confine.lifecycle.lifted): the history is
    what a facility has after years, not something to measure while it is written. Yields whether
    anything was lifted (no: a server without a budget or class, or an external one)."""
    server = server_of(backend.name)
    if state_dir is None or server is None:
        yield False
        return
    ops = backend.aging_layout()
    with ExitStack() as undo:
        lifted_now = undo.enter_context(lifted(Path(state_dir).resolve(), server))
        if lifted_now and ops is not None:
            undo.enter_context(ops.building(backend))
        yield lifted_now


def find_history(backend: Backend, key: str) -> HistoryRecord | None:
    """The finished history with `key` in the backend's database, or None."""
    ops = backend.aging_layout()
    if ops is None or not ops.exists(backend):
        return None
    marker = ops.read_marker(backend)
    if marker is None or marker[0] != key:
        return None
    return read(HistoryRecord, json.loads(marker[1]))


def _build(backend: Any, ops: AgingLayout, variant: str, mix: Sequence[MixAttribute], size: HistorySize, seed: int,
           key: str, say: Say, copy_of: HistoryRecord | None) -> HistoryRecord:
    started = time.perf_counter()
    atts, last_us = _gen_attributes(mix, seed, size)
    first_us = min((a.phase_us for a in atts if a.events), default=0)
    if copy_of is not None:
        start = datetime.fromisoformat(copy_of.start) - timedelta(microseconds=first_us)
    else:
        end = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(seconds=END_MARGIN_S)
        start = end - timedelta(microseconds=last_us)
    data = DataSet(f"history-{key}", seed, start, last_us / US + 1e-3, (), "time")
    backend.create_schema(variant)
    ops.shape_layout(backend, start, start + timedelta(microseconds=last_us))
    enough = _size_reached(backend, size.min_bytes) if copy_of is None else lambda rows: rows >= copy_of.rows
    rows, end_us = _load(backend, data, atts, say, enough)
    backend.refresh_statistics()
    clustered = False
    if size.cluster:
        say(f"{backend.name}: reordering older chunks", 1.0)
        clustered = bool(ops.reorder_older(backend))
    first, end = start + timedelta(microseconds=first_us), _time(end_us)
    return HistoryRecord(
        backend=backend.name, variant=str(backend.resolve_variant(variant)), key=key, database=backend.database,
        attributes=len(mix), days=(end - first).total_seconds() / 86400.0, rows=rows, bytes=backend.size_bytes(),
        start=first.isoformat(), end=end.isoformat(), seconds=time.perf_counter() - started, reused=False,
        clustered=clustered, memory_limit_bytes=None, storage_class="ram", measured_read_iops=None)


def _time(us: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=us)


def _size_reached(backend: Any, min_bytes: int | None) -> Callable[[int], bool]:
    """Whether the history is big enough, asked after each time slice: the database's size, read
    once every SIZE_CHECK_ROWS rows (statistics refreshed first: InnoDB's figures lag)."""
    checked = [0]

    def enough(rows: int) -> bool:
        if not min_bytes or rows - checked[0] < SIZE_CHECK_ROWS:
            return False
        checked[0] = rows
        backend.refresh_statistics()
        return bool(backend.size_bytes() >= min_bytes)
    return enough


def _load(backend: Any, data: DataSet, atts: list[GenAttribute], say: Say,
          enough: Callable[[int], bool]) -> tuple[int, int]:
    """Every attribute's events, time slice after time slice, until all are stored or `enough`
    (asked between slices); the rows stored and the time of the last one (µs)."""
    total = sum(a.events for a in atts)
    writer = backend.bulk_writer()
    ops = backend.aging_layout()
    loader = ops.fast_loader(backend) if ops is not None else backend.column_loader()
    done, last_us, window = 0, 0, -1
    width = time_window_us(atts, CHUNK_ROWS) or 1
    began = time.perf_counter()
    try:
        ids = {a.info.name: writer.register_attribute(a.info, data.start) for a in atts}
        for chunk in chunks(data, atts, ids, "time", CHUNK_ROWS):
            first_us, slice_end = _chunk_times(chunk)
            if (first_us - data.start_us) // width > window >= 0 and enough(done):
                break  # every slice so far is in whole (its chunks of every type), and the history is big enough
            window = (first_us - data.start_us) // width
            if chunk.batch is not None:
                loader.load(chunk.batch)
            else:
                writer.write(chunk.events)
            done += len(chunk)
            last_us = max(last_us, slice_end)
            rate = done / max(1e-9, time.perf_counter() - began)
            say(f"{backend.name}: history {done:,}/{total:,} rows, {rate:,.0f} rows/s", done / max(1, total))
    finally:
        loader.close()
        writer.close()
    return done, last_us


def _chunk_times(chunk: Any) -> tuple[int, int]:
    """The times (µs) of a chunk's first and last events."""
    if chunk.batch is not None:
        return int(chunk.batch.data_time_us.min()), int(chunk.batch.data_time_us.max())
    times = [int(e.data_time.timestamp() * 1_000_000) for e in chunk.events]
    return min(times), max(times)


def cold_start(state_dir: Path | None, backend_name: str) -> bool:
    """The measurements start cold: the page cache of the server's memory group dropped
    (hdbbench.stack.servers.confine); False when the server has no group (no memory budget, or an external
    server), where nothing is restarted and the next measurement is not cold."""
    server = server_of(backend_name)
    if state_dir is None or server is None:
        return False
    return drop_cache(Path(state_dir).resolve(), server)


# --- trials on the history ----------------------------------------------------------------------

# SPDX-License-Identifier: Apache-2.0
"""Confining a stack's database servers: refuse what cannot be enforced, set up before a server starts,
measure after, read back, take down.

The stack (hdbbench.stack.stack) calls, per private server of a confinable kind (registry.confinable_kinds):
``prepare`` before ``server.up()`` (memory cgroup; storage mounted on the data directory), ``settle``
after it (unthrottled probe, throttle, probe, record), ``release`` after the server stopped. What was
asked and measured is kept in ``<state_dir>/<server>/confinement.json``; the limits are always read
back from the kernel.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.model.records import read, write
from hdbbench.stack.servers import homes
from hdbbench.stack.servers.confine import cgroup, memory, probe, storage
from hdbbench.stack.servers.confine.records import ServerConfinement, StorageProbe
from hdbbench.stack.servers.confine.spec import CLASSES, DEFAULT_STORAGE_SIZE, ConfineSpec, StorageClass
from hdbbench.stack.servers.registry import ServerArgs, confinable_kinds, kind

_RECORD = "confinement.json"
TOLERANCE = 0.2  # a probe within 20 % of the class's read IOPS counts as the class


def refuse_unenforceable(spec: ConfineSpec, components: tuple[str, ...], external: dict[str, str] | Any) -> None:
    """ConfigError (one line) when the stack cannot enforce what is asked; before anything starts."""
    if not spec.active:
        return
    asked = "memory" if spec.memory else "storage"
    targets = [k for k in confinable_kinds() if k in components and spec.applies_to(k)]
    for name in targets:
        buffers(spec, name)  # refuses a budget below what the server runs in
        if name in external:
            raise ConfigError(f"[stack] {asked}: the {kind(name).label} server is external; "
                              "its memory and storage cannot be confined (drop the budget/class or the external server)")
    if not targets:
        return
    if os.geteuid() != 0:
        raise ConfigError(f"[stack] {asked}: confining the database servers needs root "
                          "(cgroups, loop devices, mounts); run as root (sudo is not supported)")
    if spec.memory and memory.base() is None:
        raise ConfigError("[stack] memory: the memory cgroup controller is not mounted (cgroup v1 needed)")
    if spec.storage.confined:
        if cgroup.controller("blkio") is None:
            raise ConfigError("[stack] storage: the blkio cgroup controller is not mounted (cgroup v1 needed)")
        missing = [tool for tool in ("losetup", "mkfs.ext4", "mount", "umount") if shutil.which(tool) is None]
        if missing:
            raise ConfigError(f"[stack] storage: {missing[0]} is not installed (util-linux, e2fsprogs)")


def confinement_words(spec: ConfineSpec, components: tuple[str, ...]) -> str:
    """", memory postgres 256 MiB, storage ssd (...)" for a plan's stack line ("" unconfined)."""
    words = ""
    budgets = {k: v for k, v in spec.memory.items() if k in components}
    if budgets:
        words += ", memory " + ", ".join(f"{k} {v / 2**20:g} MiB" for k, v in budgets.items())
    if spec.storage.confined:
        words += f", storage {spec.storage.name} ({spec.storage_size / 2**30:g} GiB images)"
    return words


def buffers(spec: ConfineSpec, name: str) -> dict[str, str]:
    """The settings the memory rule gives a server under its budget ({} without a budget)."""
    budget = spec.memory.get(name)
    rule = kind(name).buffers_for
    if not budget or rule is None:
        return {}
    try:
        return rule(budget)
    except ConfigError as exc:  # a budget below what the server runs in
        raise ConfigError(f"[stack] memory: {exc}") from None


def _record_path(state_dir: Path, name: str) -> Path:
    return state_dir / name / _RECORD


def _saved(state_dir: Path, name: str) -> dict[str, Any]:
    try:
        data = json.loads(_record_path(state_dir, name).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(state_dir: Path, name: str, data: dict[str, Any]) -> None:
    path = _record_path(state_dir, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def procs_file(state_dir: Path, name: str) -> Path | None:
    """The `cgroup.procs` of the server's group, when it has one (a restart rejoins it)."""
    return memory.procs_file(state_dir, name)


def recorded_spec(state_dir: Path) -> ConfineSpec | None:
    """The confinement the state directory's servers were started with (None: none was), for a stack
    reused as it runs: its restarts (a cold query's, a fault's) keep the budget, buffers and group."""
    memory_asked: dict[str, int] = {}
    storage_asked, size = None, None
    for name in confinable_kinds():
        asked = _saved(state_dir, name).get("spec")
        if not asked:
            continue
        if asked.get("memory"):
            memory_asked[name] = int(asked["memory"])
        if (asked.get("storage") or {}).get("name", "ram") != "ram":
            storage_asked, size = StorageClass(**asked["storage"]), asked.get("storage_size")
    if not memory_asked and storage_asked is None:
        return None
    return ConfineSpec(memory=memory_asked, storage=storage_asked or CLASSES["ram"],
                       storage_size=int(size) if size else DEFAULT_STORAGE_SIZE)


def same_as_running(state_dir: Path, name: str, spec: ConfineSpec) -> bool:
    """The running server was confined as `spec` asks (else the stack restarts it)."""
    if not spec.applies_to(name):
        return not is_confined(state_dir, name)
    return _saved(state_dir, name).get("spec") == _spec_of(spec, name)


def _spec_of(spec: ConfineSpec, name: str) -> dict[str, Any]:
    return {"memory": spec.memory.get(name), "storage": spec.storage.__dict__,
            "storage_size": spec.storage_size if spec.storage.confined else None}


def prepare(state_dir: Path, server: Any, spec: ConfineSpec) -> None:
    """Before the server starts: its memory group and its mounted, unthrottled file system."""
    name = server.name
    budget = spec.memory.get(name)
    # A group even without a budget: it holds every process of the server (its initialisation too),
    # so that `release` can make sure none is left before it unmounts.
    memory.create(state_dir, name, budget)
    server.cgroup_procs = memory.procs_file(state_dir, name)
    record: dict[str, Any] = {"spec": _spec_of(spec, name)}
    if spec.storage.confined:
        uid, gid = server._ids()
        device = storage.attach(state_dir, name, spec.storage_size, uid, gid)
        # A loop device's counters outlive its detaching: count from here.
        record["io_baseline"] = storage.io_counters_of(device).__dict__
    _save(state_dir, name, record)


def settle(state_dir: Path, name: str, spec: ConfineSpec, *, probe_seconds: float = 2.0) -> ServerConfinement:
    """After the server started: measure the bare loop device, throttle it, probe the class; record."""
    saved = _saved(state_dir, name)
    extra: dict[str, Any] = {}
    if spec.storage.confined:
        device = storage.loop_device(storage.image_path(state_dir, name))
        if device is None:
            raise ServerError(f"the {kind(name).label} file system's loop device is gone")
        point = storage.mount_point(state_dir, name)
        storage.throttle(device, CLASSES["ram"])  # measure what the machine gives first
        bare = probe.probe(point, read_seconds=1.0, seq_seconds=0)
        storage.throttle(device, spec.storage)
        measured = probe.probe(point, read_seconds=probe_seconds, seq_seconds=1.0)
        # The mount point is the server's data directory: a file there that its account cannot read
        # makes a physical backup (pg_basebackup) fail, and it is no part of the database.
        (point / probe.PROBE_FILE).unlink(missing_ok=True)
        extra = {"probe": write(measured), "unthrottled_read_iops": bare.read_iops}
        warning = _shortfall(name, spec, bare.read_iops, measured)
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
            extra["warning"] = warning
    _save(state_dir, name, {**saved, **extra})
    return confinement(state_dir, name)


def _shortfall(name: str, spec: ConfineSpec, bare_iops: float, measured: StorageProbe) -> str | None:
    """One line when the machine cannot give what the class asks (recorded, never hidden)."""
    asked = spec.storage.read_iops
    if not asked or measured.read_iops >= asked * (1 - TOLERANCE):
        return None
    return (f"{kind(name).label}: storage class {spec.storage.name} asks {asked} random reads/s; this machine's "
            f"loop device gives {bare_iops:.0f} unthrottled and {measured.read_iops:.0f} with the throttle")


def confinement(state_dir: Path, name: str) -> ServerConfinement:
    """The server's budget and storage as the kernel enforces them now (asked figures from the record)."""
    saved = _saved(state_dir, name)
    asked = saved.get("spec") or {}
    budget = asked.get("memory")
    storage_class = (asked.get("storage") or {}).get("name", "ram")
    device = storage.loop_device(storage.image_path(state_dir, name)) if storage_class != "ram" else None
    limits = storage.limits_in_force(device) if device else {}
    return ServerConfinement(
        server=name, memory_budget_bytes=budget,
        memory_limit_bytes=memory.limit(state_dir, name) if budget else None,
        memory_rule=kind(name).memory_rule if budget else None,
        buffers=rule(budget) if budget and (rule := kind(name).buffers_for) is not None else {},
        storage_class=storage_class,
        read_iops_limit=limits.get("read_iops_device"), write_iops_limit=limits.get("write_iops_device"),
        read_bps_limit=limits.get("read_bps_device"), write_bps_limit=limits.get("write_bps_device"),
        device=f"/dev/{device}" if device else None,
        probe=read(StorageProbe, saved["probe"]) if saved.get("probe") else None,
        unthrottled_read_iops=saved.get("unthrottled_read_iops"), warning=saved.get("warning"),
    )


def io_counters(state_dir: Path, name: str) -> storage.IoCounters | None:
    """What the server read and wrote on its loop device since its file system was attached."""
    device = storage.loop_device(storage.image_path(state_dir, name))
    if device is None:
        return None
    now = storage.io_counters_of(device)
    base = _saved(state_dir, name).get("io_baseline") or {}
    return storage.IoCounters(**{key: value - int(base.get(key, 0)) for key, value in now.__dict__.items()})


@contextmanager
def lifted(state_dir: Path, name: str) -> Iterator[bool]:
    """The server's memory limit and throttle lifted while it builds what a measurement starts from (a
    history, a copy of one), then put back: data written, the limit set again (the kernel reclaims the
    cache down to it), the throttle set again, the cache dropped, so that the measurement starts cold
    on the budget and class it asked for. Building a facility's archive under the budget would take
    hours and measure nothing (one random read per row once the index is past memory); the limits
    read back in the run's records are the restored ones. Yields whether anything was lifted."""
    asked = _saved(state_dir, name).get("spec") or {}
    budget = asked.get("memory")
    klass = asked.get("storage") or {}
    device = storage.loop_device(storage.image_path(state_dir, name)) if klass.get("name", "ram") != "ram" else None
    if not budget and device is None:
        yield False
        return
    if budget:
        memory.set_limit(state_dir, name, None)
    if device:
        storage.throttle(device, CLASSES["ram"])
    try:
        yield True
    finally:
        os.sync()  # what the build left dirty is written while the device is still fast
        if budget:
            restore_budget(state_dir, name, int(budget))
        if device:
            storage.throttle(device, StorageClass(**klass))
        memory.drop_cache(state_dir, name)


def restore_budget(state_dir: Path, name: str, budget: int) -> str:
    """Put the server's memory limit back after a lifted phase; how it was done ("set" or "restarted").

    Page cache is reclaimed when the limit is lowered, but memory the server itself keeps after the
    build (a buffer pool grown into, a session's temporary buffers, a MEMORY table) cannot be: the
    kernel refuses the limit (EBUSY). The server is then restarted under its budget, as a facility's
    server is after a maintenance window: stopped, the limit set on the empty group, started again on
    the same data, port and settings, in its group. If even that fails, ServerError says so before the
    measurement that would run outside its budget."""
    try:
        memory.set_limit(state_dir, name, budget)
        return "set"
    except ServerError as refused:
        server = _recorded_server(state_dir, name)
        if server is None:
            raise ServerError(f"{refused}; and the {name} server cannot be restarted here (not a private server "
                              "of this state directory)") from None
        server.down()
        memory.set_limit(state_dir, name, budget)
        server.up()
        return "restarted"


def _recorded_server(state_dir: Path, name: str) -> Any | None:
    """The private server `name` of the state directory as it was started: its settings and address as
    recorded (meta.json), joining its memory group; None when the stack does not run one."""
    server_kind = kind(name)
    if not server_kind.process:
        return None
    probe_server = server_kind.private(ServerArgs(state_dir))
    meta = probe_server.meta()
    if not probe_server.running() or not meta:
        return None
    server = server_kind.private(ServerArgs(state_dir, settings=dict(meta.get("settings") or {}),
                                            address=str(meta.get("address") or probe_server.address)))
    server.cgroup_procs = memory.procs_file(state_dir, name)
    return server


def confinement_dicts(records: list[ServerConfinement]) -> list[dict[str, Any]]:
    """The records as environment.json holds them (key `confinement`)."""
    return [write(record) for record in records]


def is_confined(state_dir: Path, name: str) -> bool:
    return _record_path(state_dir, name).exists()


def release(state_dir: Path, name: str) -> list[str]:
    """Undo a (stopped) server's confinement: mount, loop device, throttle, memory group, record."""
    killed = memory.kill_members(state_dir, name)
    undone = [f"{len(killed)} leftover process(es) of {name}"] if killed else []
    undone += storage.release(state_dir, name)
    if memory.remove(state_dir, name):
        undone.append(f"memory cgroup of {name}")
    _record_path(state_dir, name).unlink(missing_ok=True)
    return undone


def release_all(state_dir: Path) -> list[str]:
    """Release every confinable kind of the state directory (its servers stopped)."""
    undone: list[str] = []
    for name in confinable_kinds():
        undone += release(state_dir, name)
    return undone


def sweep_orphans() -> list[str]:
    """Release the confinement of state directories that are gone (a killed command left it), before
    hdbbench.stack.servers.homes removes their homes: unmount and detach what is under them, remove their
    memory groups when empty."""
    undone: list[str] = []
    user_root = homes.HOMES_ROOT / f"hdbbench-{os.geteuid()}"
    try:
        bases = sorted(p for p in user_root.iterdir() if p.is_dir())
    except OSError:
        bases = []
    for base in bases:
        try:
            state_dir = Path((base / homes.STATE_DIR_MARKER).read_text().strip())
        except OSError:
            continue
        if state_dir.exists():
            continue
        for name in confinable_kinds():
            if memory.members(state_dir, name):
                continue  # its server still runs (it keeps its groups and mount)
            try:
                undone += release(state_dir, name)
            except ServerError:
                pass  # busy: left for a later sweep
    return undone

# SPDX-License-Identifier: Apache-2.0
"""Fault injectors: what a fault trial does to a running stack, in four steps.

    arm()     before the load starts (mount a tmpfs, move tables onto it); invisible to the load
    begin()   the fault starts now
    end()     the fault is over; returns once the component accepts work again
    disarm()  undo arm; always called (in a finally), idempotent, also when end() never ran

Each injector keeps `marks`, the wall-clock times (time.time()) of what happened, for the results:
"armed", "began", then what the fault reached ("down": the server's processes are gone; "locked":
the lock is held; "full": the filesystem refused a write), "ended", "back" (the component accepts
work again) and "disarmed". The kinds by name are in `INJECTORS`; `make_injector` builds one.

Kinds:
- `database_stop`: a graceful stop of the backend's server (PostgreSQL: fast shutdown, MariaDB:
  SIGTERM); begin returns once its processes are gone, end starts it again with the settings, port
  and address it ran with and returns when it accepts connections.
- `database_kill`: SIGKILL to the server and every process it started, so it must recover from a
  crash at the next start; end as above.
- `table_lock`: an admin session locks the data tables exclusively; inserts wait (the backends'
  notes say which settings bound the wait); end releases the lock.
- `database_full`: arm mounts a tmpfs beside the server's data directory and moves the data tables
  onto it; begin fills it with a filler file until the filesystem says no space; end deletes the
  filler; disarm moves the tables back and unmounts. The server's log and system files stay where
  they are, so the server itself keeps running while inserts into those tables fail.
- `spool_full`: arm mounts a tmpfs at the subscriber's spool directory (before the subscriber
  starts); begin fills it, end deletes the filler, disarm unmounts.

A server restarted by `end` keeps the lifetime it had: one started by this process (attached, as in
runs and tests) is started attached again, so call `end` from a thread that lives as long as the
server should (the main thread): the kernel signals an attached child when the thread that started
it ends. Only private servers of the stack can be stopped or filled; an external one is refused.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import psutil

from hdbbench.backends import registry
from hdbbench.backends.abilities.faults import HeldLock, TableFaults
from hdbbench.backends.base import Backend
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.stack import mounts
from hdbbench.stack.servers import registry as servers
from hdbbench.stack.servers.ports import LOOPBACK, port_is_free
from hdbbench.stack.servers.registry import ServerArgs
from hdbbench.stack.stack import load_endpoints


@dataclass(frozen=True)
class FaultTarget:
    state_dir: Path          # the running stack's state directory (records of its servers)
    backend: str             # registry name of the backend the load writes to
    database: str            # the HDB++ database, e.g. "hdbpp"
    tables: tuple[str, ...]  # data tables the load writes to, e.g. ("att_scalar_devdouble",)
    spool_dir: Path | None = None   # the subscriber's spool directory (for spool_full)
    tmpfs_mb: int = 64       # size of the tmpfs that filesystem faults mount


class Injector(Protocol):
    name: str
    marks: dict[str, float]  # time.time() of what happened: "began", "ended", "back", ...

    def arm(self) -> None: ...
    def begin(self) -> None: ...
    def end(self) -> None: ...
    def disarm(self) -> None: ...


TABLESPACE_MOUNT = "fault-tmpfs"  # beside the server's data directory
_GONE_TIMEOUT_S = 120.0   # a graceful stop checkpoints; a large buffer pool takes a while
_PORT_FREE_TIMEOUT_S = 30.0


class StackServer:
    """The private database server a backend runs on, as the stack in `state_dir` recorded it."""

    def __init__(self, target: FaultTarget, ability: str) -> None:
        endpoints = load_endpoints(target.state_dir)
        # The kind that runs in the place of the backend's (a Patroni cluster for PostgreSQL's, say).
        self._kind = servers.kind(endpoints.kind_of(registry.entry(target.backend).server))
        self.label = self._kind.label
        if ability not in self._kind.faults:
            raise ConfigError(f"backend {target.backend} runs on a {self.label}, which cannot be made to {ability} "
                              f"(its server faults: {', '.join(self._kind.faults) or 'none'})")
        endpoint = registry.endpoint_for(target.backend, endpoints)
        if endpoint is None:
            raise ConfigError(f"the stack in {target.state_dir} has no {self.label} server for backend {target.backend}")
        if getattr(endpoint, "external", False):
            raise ConfigError(f"{self.label} at {endpoint.host}:{endpoint.port} is external: hdbbench does not stop, "
                              "start or fill it")
        self._state_dir = Path(target.state_dir).resolve()
        self._probe = self._kind.private(ServerArgs(self._state_dir))
        self._attached = False

    @property
    def data_dir(self) -> Path:
        return self._probe.data_dir

    def running(self) -> bool:
        return self._probe.running()

    def _main_process(self) -> psutil.Process:
        record = self._probe.record()
        proc = record.process() if record is not None else None
        if proc is None:
            raise ServerError(f"{self.label} of the stack in {self._state_dir} is not running")
        # A server this process started lives and dies with it (attached); it comes back the same way.
        self._attached = proc.ppid() == os.getpid()
        return proc

    def stop(self) -> None:
        """A graceful stop; returns once the server's processes are gone."""
        proc = self._main_process()
        family = [proc, *_children(proc)]
        proc.send_signal(self._probe.stop_signal)
        _wait_gone(family, _GONE_TIMEOUT_S, f"{self.label} stopping")

    def kill(self) -> None:
        """SIGKILL to the server and every process it started; returns once they are gone."""
        proc = self._main_process()
        proc.send_signal(signal.SIGSTOP)  # no new children between listing and killing them
        family = [proc, *_children(proc)]
        for member in family:
            try:
                member.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass
        _wait_gone(family, _GONE_TIMEOUT_S, f"{self.label} killed")
        self._remove_stale_pid_files(proc.pid)

    def _remove_stale_pid_files(self, pid: int) -> None:
        """A killed server whose parent has not reaped it yet still holds its pid: a server that finds
        its pid file naming a live pid refuses to start, so the file goes (the process is dead)."""
        if not psutil.pid_exists(pid):
            return
        for pid_file in self.data_dir.glob("*.pid"):
            try:
                if pid_file.read_text().split()[0] == str(pid):
                    pid_file.unlink()
            except (OSError, IndexError):
                pass

    def start(self) -> None:
        """Start the server again with the settings, address and port it ran with; return when ready."""
        if self._attached and threading.current_thread() is not threading.main_thread():
            raise ServerError(f"{self.label} runs attached to this process: restart it from the main thread "
                              "(the kernel stops an attached server when the thread that started it ends)")
        meta = self._probe.meta()
        port = int(meta.get("port") or 0)
        address = str(meta.get("address") or LOOPBACK)
        _wait_port_free(port, address)
        server = self._kind.private(ServerArgs(self._state_dir, meta.get("settings") or {}, attached=self._attached,
                                               keep_running=False, address=address))
        server.up()
        now = int(server.meta().get("port") or 0)
        if port and now != port:
            raise ServerError(f"{self.label} came back on port {now}, not {port}, where its clients connect")


def _children(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return list(proc.children(recursive=True))
    except psutil.NoSuchProcess:
        return []


def _wait_gone(procs: list[psutil.Process], timeout_s: float, what: str) -> None:
    """Wait until every process has exited (a zombie counts as exited); reap those that are our children."""
    deadline = time.monotonic() + timeout_s
    pending = list(procs)
    while pending:
        still = []
        for proc in pending:
            try:
                proc.wait(timeout=0)  # reaps a child of ours; polls any other process
            except psutil.TimeoutExpired:
                try:
                    if proc.status() != psutil.STATUS_ZOMBIE:
                        still.append(proc)
                except psutil.NoSuchProcess:
                    pass
            except psutil.NoSuchProcess:
                pass
        pending = still
        if pending and time.monotonic() > deadline:
            raise ServerError(f"{what}: pids {', '.join(str(p.pid) for p in pending)} still running after "
                              f"{timeout_s:.0f} s")
        if pending:
            time.sleep(0.05)


def _wait_port_free(port: int, address: str) -> None:
    deadline = time.monotonic() + _PORT_FREE_TIMEOUT_S
    while port and not port_is_free(port, address) and time.monotonic() < deadline:
        time.sleep(0.1)


def table_faults(target: FaultTarget) -> tuple[Backend, TableFaults]:
    """The target's backend on the stack's server and its table faults (`Backend.faults()`)."""
    backend = registry.backend_for_stack(target.backend, load_endpoints(target.state_dir), target.database)
    faults = backend.faults()
    if faults is None:
        raise ConfigError(f"backend {target.backend} does not support table faults (lock, full tables)")
    return backend, faults


def _need_tables(target: FaultTarget, kind: str) -> tuple[str, ...]:
    if not target.tables:
        raise ConfigError(f"fault {kind} needs the data tables the load writes to (none given)")
    return target.tables


class _Injector:
    name = ""

    def __init__(self, target: FaultTarget) -> None:
        self.target = target
        self.marks: dict[str, float] = {}

    def _mark(self, what: str) -> None:
        self.marks[what] = time.time()

    def arm(self) -> None:
        self._mark("armed")

    def disarm(self) -> None:
        self._mark("disarmed")


class _ServerFault(_Injector):
    """Stop or kill the backend's server at begin, start it at end (and at disarm if end never ran)."""

    ability = ""  # what its server kind must support (hdbbench.stack.servers.registry: ServerKind.faults)

    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        self.server = StackServer(target, self.ability)
        self._down = False

    def _take_down(self) -> None:
        raise NotImplementedError

    def begin(self) -> None:
        self._mark("began")
        self._down = True
        self._take_down()
        self._mark("down")

    def end(self) -> None:
        self._mark("ended")
        self._bring_back()

    def _bring_back(self) -> None:
        if self._down and not self.server.running():
            self.server.start()
        self._down = False
        self._mark("back")

    def disarm(self) -> None:
        if self._down:  # end never ran: leave the stack as it was found
            self._bring_back()
        super().disarm()


class DatabaseStop(_ServerFault):
    name = "database_stop"
    ability = "stop"

    def _take_down(self) -> None:
        self.server.stop()


class DatabaseKill(_ServerFault):
    name = "database_kill"
    ability = "kill"

    def _take_down(self) -> None:
        self.server.kill()


class TableLock(_Injector):
    """An admin session holds an exclusive lock on the data tables from begin to end."""

    name = "table_lock"

    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        self.tables = _need_tables(target, self.name)
        self.backend, self.faults = table_faults(target)
        self.lock_wait_limits: dict[str, str] = {}
        self._lock: HeldLock | None = None

    def arm(self) -> None:
        self.lock_wait_limits = self.faults.lock_wait_limits(self.backend)
        super().arm()

    def begin(self) -> None:
        self._mark("began")
        self._lock = self.faults.hold_table_lock(self.backend, self.tables)
        self._mark("locked")

    def waiters(self) -> int:
        """Sessions waiting for the lock now (0 when none is held)."""
        return self._lock.waiters() if self._lock is not None else 0

    def end(self) -> None:
        self._mark("ended")
        self._release()
        self._mark("back")

    def _release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def disarm(self) -> None:
        self._release()
        super().disarm()


class _FillFault(_Injector):
    """A tmpfs that begin fills with a filler file and end empties again."""

    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        self.mount_point: Path | None = None
        self._filler: Path | None = None

    def begin(self) -> None:
        self._mark("began")
        assert self.mount_point is not None, "arm() first"
        self._filler = mounts.fill(self.mount_point)
        self._mark("full")

    def end(self) -> None:
        self._mark("ended")
        self._remove_filler()
        self._mark("back")

    def _remove_filler(self) -> None:
        filler, self._filler = self._filler, None
        if filler is not None:
            filler.unlink(missing_ok=True)

    def _unmount(self, remove_dir: bool | None = None) -> None:
        if self.mount_point is not None:
            mounts.unmount(self.mount_point, state_dir=self.target.state_dir, remove_dir=remove_dir)


class DatabaseFull(_FillFault):
    """The data tables on a small tmpfs of their own, filled up during the fault."""

    name = "database_full"

    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        self.tables = _need_tables(target, self.name)
        self.server = StackServer(target, "fill")
        self.backend, self.faults = table_faults(target)

    def arm(self) -> None:
        data_dir = self.server.data_dir
        info = data_dir.stat()  # the tablespace belongs to the server's account
        self.mount_point = data_dir.parent / TABLESPACE_MOUNT
        mounts.mount_tmpfs(self.mount_point, self.target.tmpfs_mb, (info.st_uid, info.st_gid),
                           state_dir=self.target.state_dir)
        self.faults.move_tables(self.backend, self.tables, self.mount_point)
        super().arm()

    def disarm(self) -> None:
        self._remove_filler()
        try:
            if self.mount_point is not None and mounts.is_mounted(self.mount_point):
                self.faults.restore_tables(self.backend, self.tables)
        finally:
            self._unmount(remove_dir=True)
        super().disarm()


class SpoolFull(_FillFault):
    """The subscriber's spool directory on a small tmpfs, filled up during the fault."""

    name = "spool_full"

    def __init__(self, target: FaultTarget) -> None:
        super().__init__(target)
        if target.spool_dir is None:
            raise ConfigError("fault spool_full needs the subscriber's spool directory (spool_dir)")
        self.mount_point = Path(target.spool_dir).absolute()
        self._created = False

    def arm(self) -> None:
        assert self.mount_point is not None
        parent = next(p for p in self.mount_point.parents if p.exists())
        info = parent.stat()  # owned like the subscriber's other files
        self._created = mounts.mount_tmpfs(self.mount_point, self.target.tmpfs_mb, (info.st_uid, info.st_gid),
                                           state_dir=self.target.state_dir)
        super().arm()

    def disarm(self) -> None:
        self._remove_filler()
        self._unmount(remove_dir=self._created)
        super().disarm()


INJECTORS: dict[str, Callable[[FaultTarget], Injector]] = {
    cls.name: cls for cls in (DatabaseStop, DatabaseKill, TableLock, DatabaseFull, SpoolFull)
}

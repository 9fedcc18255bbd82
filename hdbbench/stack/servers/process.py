# SPDX-License-Identifier: Apache-2.0
"""Starting, recognising and stopping server processes that hdbbench owns.

A started process is remembered in a small JSON record (pid, the process's start time as psutil
reports it, the command). The start time makes a stale record harmless: a pid that was reused by an
unrelated process has another start time and is never signalled.

Two lifetimes:
- ``detached``: the process outlives the CLI (``hdbbench stack up``); ``stack down`` stops it later,
  also after a crash of the CLI, from the record.
- ``attached``: the kernel sends SIGTERM to the process when its parent dies (PR_SET_PDEATHSIG), so
  nothing runs on after a test session or a benchmark run is killed.
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from hdbbench.model.errors import ServerError

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ProcessRecord:
    pid: int
    create_time: float
    argv: list[str]

    def process(self) -> psutil.Process | None:
        """The live process this record describes, or None when it is gone or the pid was reused."""
        try:
            proc = psutil.Process(self.pid)
            if abs(proc.create_time() - self.create_time) > 0.05 or proc.status() == psutil.STATUS_ZOMBIE:
                return None
            return proc
        except psutil.Error:
            return None

    def alive(self) -> bool:
        return self.process() is not None

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self)))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> ProcessRecord | None:
        try:
            data = json.loads(path.read_text())
            return cls(pid=int(data["pid"]), create_time=float(data["create_time"]), argv=list(data["argv"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class RunAs:
    """The system account a server runs as (PostgreSQL and MariaDB refuse to run as root)."""

    name: str
    uid: int
    gid: int

    @classmethod
    def for_server(cls, preferred_account: str) -> RunAs:
        """As root, the server's own account; as anybody else, that user."""
        if os.geteuid() != 0:
            me = pwd.getpwuid(os.geteuid())
            return cls(me.pw_name, me.pw_uid, me.pw_gid)
        try:
            entry = pwd.getpwnam(preferred_account)
        except KeyError:
            raise ServerError(
                f"system user {preferred_account!r} does not exist (needed to run the server as root); "
                "run ./run.sh setup"
            ) from None
        return cls(entry.pw_name, entry.pw_uid, entry.pw_gid)

    def is_me(self) -> bool:
        return self.uid == os.geteuid()


def _child_setup(run_as: RunAs | None, attached: bool, cgroup_procs: Path | None = None) -> Callable[[], None]:
    libc = ctypes.CDLL(None, use_errno=True) if attached else None
    join = str(cgroup_procs) if cgroup_procs is not None else None

    def setup() -> None:
        if join is not None:
            # Into the server's memory cgroup before exec (hdbbench.stack.servers.confine.memory), so that
            # every process it forks is charged there too; as root, before the server's account,
            # which may not write the group's files.
            with open(join, "w") as procs:
                procs.write(str(os.getpid()))
        if run_as is not None and not run_as.is_me():
            os.setgroups([])
            os.setgid(run_as.gid)
            os.setuid(run_as.uid)
        # After the identity change: changing credentials clears the parent-death signal.
        if libc is not None:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    return setup


def spawn(
    argv: Sequence[str],
    *,
    log_path: Path,
    attached: bool,
    run_as: RunAs | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    cgroup_procs: Path | None = None,
) -> tuple[subprocess.Popen[bytes], ProcessRecord]:
    """Start a server process in its own session, output appended to its log file (and in the cgroup
    whose `cgroup.procs` is given, if one is)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        try:
            popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_child_setup(run_as, attached, cgroup_procs),
            )
        except FileNotFoundError:
            raise ServerError(f"binary not found: {argv[0]} (run ./run.sh setup)") from None
        except PermissionError as exc:
            raise ServerError(f"cannot start {argv[0]}: {exc}") from None
    try:
        create_time = psutil.Process(popen.pid).create_time()
    except psutil.Error:
        create_time = 0.0
    return popen, ProcessRecord(pid=popen.pid, create_time=create_time, argv=list(argv))


def run_checked(argv: Sequence[str], *, what: str, log_path: Path, run_as: RunAs | None = None,
                env: dict[str, str] | None = None, timeout_s: float = 300, cwd: Path | None = None,
                cgroup_procs: Path | None = None) -> None:
    """Run a one-shot tool (initdb, mariadb-install-db); on failure name it and point at its log."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        try:
            result = subprocess.run(
                list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                preexec_fn=_child_setup(run_as, attached=True, cgroup_procs=cgroup_procs), timeout=timeout_s,
                check=False,
            )
        except FileNotFoundError:
            raise ServerError(f"{what}: binary not found: {argv[0]} (run ./run.sh setup)") from None
        except subprocess.TimeoutExpired:
            raise ServerError(f"{what}: {argv[0]} did not finish in {timeout_s:.0f} s (log: {log_path})") from None
    if result.returncode != 0:
        raise ServerError(f"{what} failed with exit code {result.returncode} (log: {log_path})")


def stop(record: ProcessRecord, *, sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> None:
    """Signal the process, wait for it, and kill it if it does not go in time."""
    proc = record.process()
    if proc is None:
        return
    try:
        proc.send_signal(sig)
        proc.wait(timeout=timeout_s)
    except psutil.TimeoutExpired:
        try:
            proc.kill()
            proc.wait(timeout=10)
        except psutil.Error:
            pass
    except psutil.Error:
        pass


def wait_until(ready: Callable[[], bool], *, timeout_s: float, alive: Callable[[], bool],
               what: str, log_path: Path) -> None:
    """Poll a readiness check; fail early (with the log's last line) if the process died."""
    deadline = time.monotonic() + timeout_s
    delay = 0.05
    while time.monotonic() < deadline:
        if ready():
            return
        if not alive():
            raise ServerError(f"{what} exited during start-up: {last_log_line(log_path)} (log: {log_path})")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)
    raise ServerError(f"{what} not ready after {timeout_s:.0f} s: {last_log_line(log_path)} (log: {log_path})")


def last_log_line(log_path: Path) -> str:
    try:
        lines = [ln.strip() for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    # Prefer the last line that reads like an error over trailing noise.
    for line in reversed(lines[-40:]):
        if any(word in line for word in ("ERROR", "FATAL", "[ERROR]", "Error", "error")):
            return line[:300]
    return lines[-1][:300] if lines else "empty log"

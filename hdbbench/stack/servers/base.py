# SPDX-License-Identifier: Apache-2.0
"""The life cycle every private server shares: prepare once, start, wait until ready, record, stop.

Each server lives in ``<state_dir>/<name>/``: its data directory, a log file, ``process.json`` (the
running process) and ``server.json`` (port, credentials, the settings it was started with). A server
that runs as another account (PostgreSQL and MariaDB, when hdbbench runs as root) keeps its data in a
home of its own outside the user's directories (hdbbench.stack.servers.homes), and ``<name>/data`` links
there. ``up``
on a running server with the same settings reuses it; with other settings it restarts it on the same
data. A subclass says how to initialise, which command line to run, how to tell it is ready, and
what endpoint to hand out.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import stat
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ServerError
from hdbbench.stack.servers import homes, process
from hdbbench.stack.servers.ports import LOOPBACK, pick_free_port, port_is_free
from hdbbench.stack.servers.process import ProcessRecord, RunAs


@dataclass(frozen=True)
class ServerStatus:
    name: str
    running: bool
    ready: bool
    pid: int | None
    port: int | None
    version: str | None
    log: str
    data: str | None
    endpoint: dict[str, Any] | None
    address: str = LOOPBACK

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class PrivateServer(ABC):
    """A server process that hdbbench starts and stops itself, bound to one address (loopback by default)."""

    name: str = ""
    preferred_port: int = 0
    account: str | None = None  # the system account to run as when we are root
    stop_signal: int = signal.SIGTERM
    ready_timeout_s: float = 60.0

    def __init__(self, state_dir: Path, settings: Mapping[str, str], *, attached: bool,
                 keep_running: bool = False, address: str = LOOPBACK) -> None:
        self.state_dir = state_dir
        self.address = address  # bound and reached there; checked by hdbbench.stack.servers.ports.check_address
        self.dir = state_dir / self.name
        self.keep_running = keep_running  # reuse a running server even if its settings differ
        self.settings = dict(settings)
        self.attached = attached
        self.log_path = self.dir / "server.log"
        self._record_path = self.dir / "process.json"
        self._meta_path = self.dir / "server.json"
        self.run_as = RunAs.for_server(self.account) if self.account else None
        self.cgroup_procs: Path | None = None  # the memory cgroup its process joins (hdbbench.stack.servers.confine)

    # --- what each server defines -------------------------------------------------------------
    @abstractmethod
    def initialise(self, meta: dict[str, Any]) -> None:
        """Create the data directory on first use (idempotent: skip what exists)."""

    @abstractmethod
    def command(self, port: int) -> list[str]:
        """The command line that runs the server in the foreground."""

    @abstractmethod
    def is_ready(self, port: int, meta: dict[str, Any]) -> bool:
        """True once clients can use the server."""

    @abstractmethod
    def endpoint(self, port: int, meta: dict[str, Any]) -> Any:
        """What clients need to connect."""

    def after_start(self, port: int, meta: dict[str, Any]) -> None:
        """One-time work that needs the running server (accounts, for example)."""

    def version(self, port: int, meta: dict[str, Any]) -> str | None:
        return None

    def environment(self) -> dict[str, str] | None:
        return None

    def use_servers(self, endpoints: Mapping[str, Any]) -> None:
        """The endpoints of the server kinds this one runs on (its registry entry's `needs`), known
        once the stack has started them."""

    # --- shared life cycle ----------------------------------------------------------------------
    def record(self) -> ProcessRecord | None:
        return ProcessRecord.load(self._record_path)

    def meta(self) -> dict[str, Any]:
        try:
            data = json.loads(self._meta_path.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_meta(self, meta: dict[str, Any]) -> None:
        tmp = self._meta_path.with_suffix(".tmp")
        # The file holds the private servers' passwords: readable by its owner only.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(meta, out, indent=2)
        tmp.replace(self._meta_path)

    def running(self) -> bool:
        rec = self.record()
        return rec is not None and rec.alive()

    def up(self) -> Any:
        """Start the server (or reuse it when it already runs with these settings); return its endpoint."""
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.meta()
        meta.setdefault("password", secrets.token_urlsafe(18))
        rec = self.record()
        if rec is not None and rec.alive():
            port = int(meta.get("port", 0))
            same = (meta.get("settings") == self.settings or self.keep_running) \
                and meta.get("address", LOOPBACK) == self.address
            if same and port and self.is_ready(port, meta):
                return self.endpoint(port, meta)
            process.stop(rec, sig=self.stop_signal)  # other settings: restart on the same data
        self._record_path.unlink(missing_ok=True)  # stale: the process is gone

        self.initialise(meta)
        port = int(meta.get("port", 0))
        if not port or not port_is_free(port, self.address):
            port = pick_free_port(self.preferred_port, host=self.address)
        popen, rec = process.spawn(
            self.command(port), log_path=self.log_path, attached=self.attached,
            run_as=self.run_as, env=self.environment(), cwd=self.work_dir(), cgroup_procs=self.cgroup_procs,
        )
        rec.save(self._record_path)
        try:
            process.wait_until(
                lambda: self.is_ready(port, meta), timeout_s=self.ready_timeout_s,
                alive=lambda: popen.poll() is None, what=f"{self.name} on {self.address}:{port}",
                log_path=self.log_path,
            )
            self.after_start(port, meta)
        except BaseException:
            process.stop(rec, sig=self.stop_signal)
            self._record_path.unlink(missing_ok=True)
            raise
        meta.update(port=port, address=self.address, settings=self.settings, version=self.version(port, meta))
        self._save_meta(meta)
        return self.endpoint(port, meta)

    def down(self) -> bool:
        """Stop the server if it runs; True when something was stopped."""
        rec = self.record()
        stopped = False
        if rec is not None and rec.alive():
            process.stop(rec, sig=self.stop_signal)
            stopped = True
        self._record_path.unlink(missing_ok=True)
        return stopped

    def settings_in_force(self) -> dict[str, str]:
        """The settings the running server was started with (recorded with results)."""
        return dict(self.meta().get("settings") or {})

    def status(self) -> ServerStatus:
        rec = self.record()
        meta = self.meta()
        alive = rec is not None and rec.alive()
        port = int(meta["port"]) if meta.get("port") else None
        ready = bool(alive and port and self.is_ready(port, meta))
        return ServerStatus(
            name=self.name, running=alive, ready=ready, pid=rec.pid if alive and rec else None, port=port,
            version=meta.get("version"), log=str(self.log_path), data=self.data_location(),
            endpoint=_endpoint_dict(self.endpoint(port, meta)) if ready and port else None,
            address=meta.get("address", self.address) if alive else self.address,
        )

    def data_location(self) -> str | None:
        """Where the server keeps its data (None before it has any), for people reading `stack status`."""
        return str(self.data_dir) if self.data_dir.exists() else None

    # --- the data directory ---------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        """The data directory: ``<name>/data`` in the state directory, or the home it links to."""
        link = self.dir / "data"
        return Path(os.readlink(link)) if link.is_symlink() else link

    def _runs_as_other_account(self) -> bool:
        return self.run_as is not None and not self.run_as.is_me()

    def _ids(self) -> tuple[int, int]:
        return (self.run_as.uid, self.run_as.gid) if self.run_as else (os.geteuid(), os.getegid())

    def prepare_data_dir(self) -> Path:
        """Create (or check) the data directory, owned by the account the server runs as.

        A server of another account gets its home outside the state directory, linked from it; a
        data directory already in the state directory (hdbbench as a normal user) stays there.
        """
        self.dir.mkdir(parents=True, exist_ok=True)
        link = self.dir / "data"
        uid, gid = self._ids()
        if link.is_symlink() or (self._runs_as_other_account() and not link.exists()):
            path = homes.make_home(self.state_dir, self.name, uid, gid) / "data"
            if not link.is_symlink():
                link.symlink_to(path, target_is_directory=True)
            elif Path(os.readlink(link)) != path:
                raise ServerError(f"{link} links to {os.readlink(link)}, not to {path}, the home of this state "
                                  "directory; remove the link (and that directory if it is no longer used)")
        else:
            path = link
        if path.exists():
            owner = path.stat().st_uid
            if owner != uid:
                raise ServerError(f"data directory {path} is owned by uid {owner}, not by the server's user (uid {uid})")
        else:
            path.mkdir(mode=0o700)
            if uid != os.geteuid():
                os.chown(path, uid, gid)
        if self._runs_as_other_account() and path == link:
            assert self.run_as is not None
            check_traversable(path.parent, self.run_as)  # a data directory made in place before
        return path

    def work_dir(self) -> Path | None:
        """The working directory of the server's processes: one its account can enter."""
        return self.data_dir.parent if self._runs_as_other_account() else None


def check_traversable(directory: Path, run_as: RunAs) -> None:
    """A server that runs as another account must be able to reach its data directory."""
    for parent in [directory, *directory.parents]:
        mode = parent.stat()
        if mode.st_uid == run_as.uid:
            continue
        if not mode.st_mode & stat.S_IXOTH and not (mode.st_gid == run_as.gid and mode.st_mode & stat.S_IXGRP):
            raise ServerError(
                f"{parent} is not traversable by user {run_as.name}, who runs the server; "
                f"remove {directory / 'data'} to let hdbbench create the data directory where "
                f"{run_as.name} can reach it"
            )


def _endpoint_dict(endpoint: Any) -> dict[str, Any]:
    return endpoint.to_dict() if hasattr(endpoint, "to_dict") else {"value": str(endpoint)}

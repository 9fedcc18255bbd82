# SPDX-License-Identifier: Apache-2.0
"""The ``local`` server kind: no process, a directory of this host for backends that keep their data
in files (``<state_dir>/local/``).

It answers the part of a private server's interface the stack uses (up, down, running, status,
settings, meta), so the stack, its status and its callers need no case for it: nothing to start,
stop, pin, sample or restart; ``up`` creates the directory, ``down`` leaves it (data, as the other
servers' data directories are kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ServerError
from hdbbench.stack.servers.base import ServerStatus
from hdbbench.stack.servers.endpoints import LocalEndpoint
from hdbbench.stack.servers.ports import LOOPBACK


class LocalDirectory:
    name = "local"
    stop_signal = 0  # nothing to signal

    def __init__(self, state_dir: Path, settings: Mapping[str, str] | None = None, *, attached: bool = False,
                 keep_running: bool = False, address: str = LOOPBACK) -> None:
        self.state_dir = state_dir
        self.dir = state_dir / self.name
        self.data_dir = self.dir
        self.address = address
        self.settings: dict[str, str] = {}

    def up(self) -> LocalEndpoint:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot create {self.dir}: {exc.strerror}") from None
        return self.endpoint()

    def endpoint(self) -> LocalEndpoint:
        return LocalEndpoint(path=str(self.dir))

    def down(self) -> bool:
        return False  # no process; the files stay, as the servers' data directories do

    def running(self) -> bool:
        return self.dir.is_dir()

    def record(self) -> None:
        return None

    def meta(self) -> dict[str, Any]:
        return {}

    def settings_in_force(self) -> dict[str, str]:
        return {}

    def status(self) -> ServerStatus:
        # Always ready: nothing to wait for (up makes the directory), so a stack started before this
        # kind existed still counts as up.
        made = self.running()
        return ServerStatus(name=self.name, running=made, ready=True, pid=None, port=None, version=None,
                            log="", data=str(self.dir) if made else None, endpoint=self.endpoint().to_dict(),
                            address=self.address)

# SPDX-License-Identifier: Apache-2.0
"""A private Tango database server: PyTango's DataBaseds on an sqlite file.

``--host 127.0.0.1`` makes it listen (and publish its CORBA endpoint) on loopback only; its ZeroMQ
event and heartbeat ports are pinned below the ephemeral range for the same reason.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any

from hdbbench.servers.base import PrivateServer
from hdbbench.servers.endpoints import TangoEndpoint
from hdbbench.servers.ports import LOOPBACK, pick_free_port


class PyTangoDatabaseServer(PrivateServer):
    name = "tangodb"
    preferred_port = 20000
    account = None  # runs as the invoking user
    ready_timeout_s = 60.0

    @property
    def db_file(self) -> Path:
        return self.dir / "tango.db"

    def initialise(self, meta: dict[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)  # the sqlite file is created on first start

    def command(self, port: int) -> list[str]:
        return [sys.executable, "-m", "tango.databaseds.database", "--host", LOOPBACK, "--port", str(port), "2"]

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "TANGO_HOST"}
        env["PYTANGO_DATABASE_NAME"] = str(self.db_file)
        event_port = pick_free_port(self.preferred_port + 100)
        env["TANGO_ZMQ_EVENT_PORT"] = str(event_port)
        env["TANGO_ZMQ_HEARTBEAT_PORT"] = str(pick_free_port(event_port + 1))
        return env

    def endpoint(self, port: int, meta: dict[str, Any]) -> TangoEndpoint:
        return TangoEndpoint(host=LOOPBACK, port=port, kind="pytango-sqlite")

    def is_ready(self, port: int, meta: dict[str, Any]) -> bool:
        try:
            with socket.create_connection((LOOPBACK, port), timeout=1):
                pass
        except OSError:
            return False
        return tango_database_answers(LOOPBACK, port)

    def version(self, port: int, meta: dict[str, Any]) -> str | None:
        import tango

        return f"PyTango {tango.__version__} DataBaseds (sqlite)"


def tango_database_answers(host: str, port: int) -> bool:
    import tango

    try:
        db = tango.Database(host, port)
        db.set_timeout_millis(3000)
        db.get_info()
        return True
    except (tango.DevFailed, tango.ConnectionFailed, tango.CommunicationFailed):
        return False

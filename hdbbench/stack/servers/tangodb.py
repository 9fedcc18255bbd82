# SPDX-License-Identifier: Apache-2.0
"""Private Tango database servers: PyTango's DataBaseds on sqlite (default), or Debian's C++ one on MariaDB.

``--host <address>`` (loopback by default) makes it listen and publish its CORBA endpoint there only;
its ZeroMQ event and heartbeat ports are pinned below the ephemeral range, on the same address.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ServerError
from hdbbench.stack.servers.base import PrivateServer
from hdbbench.stack.servers.endpoints import MariaDBEndpoint, TangoEndpoint
from hdbbench.stack.servers.ports import LOOPBACK, pick_free_port


class PyTangoDatabaseServer(PrivateServer):
    name = "tangodb"
    preferred_port = 20000
    account = None  # runs as the invoking user
    ready_timeout_s = 60.0

    @property
    def db_file(self) -> Path:
        return self.dir / "tango.db"

    def data_location(self) -> str | None:
        return str(self.db_file) if self.db_file.exists() else None

    def initialise(self, meta: dict[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)  # the sqlite file is created on first start
        # The database holds device properties, among them the subscribers' LibConfiguration with
        # their database password: its directory and file are readable by their owner only.
        self.dir.chmod(0o700)

    def after_start(self, port: int, meta: dict[str, Any]) -> None:
        for path in self.dir.glob("tango.db*"):
            path.chmod(0o600)

    def command(self, port: int) -> list[str]:
        return [sys.executable, "-m", "tango.databaseds.database", "--host", self.address, "--port", str(port), "2"]

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "TANGO_HOST"}
        env["PYTANGO_DATABASE_NAME"] = str(self.db_file)
        event_port = pick_free_port(self.preferred_port + 100, host=self.address)
        env["TANGO_ZMQ_EVENT_PORT"] = str(event_port)
        env["TANGO_ZMQ_HEARTBEAT_PORT"] = str(pick_free_port(event_port + 1, host=self.address))
        return env

    def endpoint(self, port: int, meta: dict[str, Any]) -> TangoEndpoint:
        return TangoEndpoint(host=self.address, port=port, kind="pytango-sqlite")

    def is_ready(self, port: int, meta: dict[str, Any]) -> bool:
        try:
            with socket.create_connection((self.address, port), timeout=1):
                pass
        except OSError:
            return False
        return tango_database_answers(self.address, port)

    def version(self, port: int, meta: dict[str, Any]) -> str | None:
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        return f"PyTango {tango.__version__} DataBaseds (sqlite)"


def tango_database_answers(host: str, port: int) -> bool:
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    try:
        db = tango.Database(host, port)
        db.set_timeout_millis(3000)
        db.get_info()
        return True
    except (tango.DevFailed, tango.ConnectionFailed, tango.CommunicationFailed):
        return False


class CppTangoDatabaseServer(PrivateServer):
    """Debian's C++ DataBaseds (package tango-db) on a database ``tango`` in a MariaDB server."""

    name = "tangodb-cpp"
    preferred_port = 20010
    account = None
    binary = Path("/usr/lib/tango/DataBaseds")
    schema_script = Path("/usr/share/dbconfig-common/data/tango-db/install/mysql")
    database = "tango"

    def __init__(self, state_dir: Path, *, attached: bool, address: str = LOOPBACK) -> None:
        super().__init__(state_dir, {}, attached=attached, address=address)
        self._mariadb: MariaDBEndpoint | None = None

    def use_servers(self, endpoints: Mapping[str, Any]) -> None:
        self.use_database(endpoints["mariadb"])

    def use_database(self, mariadb: MariaDBEndpoint) -> None:
        """The MariaDB server that holds the Tango database (known once the stack started it)."""
        self._mariadb = mariadb
        self.settings = {"mariadb": f"{mariadb.host}:{mariadb.port}"}

    @property
    def mariadb(self) -> MariaDBEndpoint:
        if self._mariadb is None:
            raise ServerError("the C++ Tango database needs the MariaDB server of the stack")
        return self._mariadb

    def data_location(self) -> str | None:
        return f"database {self.database} of the MariaDB server"

    def initialise(self, meta: dict[str, Any]) -> None:
        if not self.binary.exists() or not self.schema_script.exists():
            raise ServerError(f"{self.binary} or its schema is missing: install the Debian package tango-db")
        conn = self.mariadb.connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'device'",
                        (self.database,))
            if cur.fetchone()[0]:
                return
            # Tango looks names up case-insensitively: the database needs a _ci collation.
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{self.database}` CHARACTER SET latin1 COLLATE latin1_swedish_ci")
        finally:
            conn.close()
        env = {**os.environ, "MYSQL_PWD": self.mariadb.password}
        with open(self.schema_script, "rb") as script, open(self.dir / "schema.log", "ab") as log:
            result = subprocess.run(
                ["mariadb", "--protocol=tcp", "-h", self.mariadb.host, "-P", str(self.mariadb.port),
                 "-u", self.mariadb.user, self.database], stdin=script, stdout=log, stderr=subprocess.STDOUT,
                env=env, check=False, timeout=120)
        if result.returncode != 0:
            raise ServerError(f"loading the Tango database schema failed (log: {self.dir / 'schema.log'})")

    def command(self, port: int) -> list[str]:
        return [str(self.binary), "2", "-ORBendPoint", f"giop:tcp:{self.address}:{port}"]

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "TANGO_HOST"}
        env.update(MYSQL_HOST=f"{self.mariadb.host}:{self.mariadb.port}", MYSQL_USER=self.mariadb.user,
                   MYSQL_PASSWORD=self.mariadb.password, MYSQL_DATABASE=self.database)
        event_port = pick_free_port(self.preferred_port + 100, host=self.address)
        env["TANGO_ZMQ_EVENT_PORT"] = str(event_port)
        env["TANGO_ZMQ_HEARTBEAT_PORT"] = str(pick_free_port(event_port + 1, host=self.address))
        return env

    def endpoint(self, port: int, meta: dict[str, Any]) -> TangoEndpoint:
        return TangoEndpoint(host=self.address, port=port, kind="cpp-mariadb")

    def is_ready(self, port: int, meta: dict[str, Any]) -> bool:
        return PyTangoDatabaseServer.is_ready(self, port, meta)  # type: ignore[arg-type]

    def version(self, port: int, meta: dict[str, Any]) -> str | None:
        return "cppTango DataBaseds (Debian tango-db) on MariaDB"


def probe(endpoint: TangoEndpoint) -> str | None:
    """Why an external Tango database cannot be used, or None."""
    return None if tango_database_answers(endpoint.host, endpoint.port) else "no Tango database answers there"

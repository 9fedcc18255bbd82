# SPDX-License-Identifier: Apache-2.0
"""The stack: the database servers and the Tango database one benchmark or test session uses.

Each server is private (started here, in ``<state_dir>/<server>/``) or external (given by URL or
TANGO_HOST; never started or stopped here). ``up`` is idempotent and all-or-nothing: when a server
fails to start, or the user presses Ctrl-C, the servers this call started are stopped again.
The endpoints of a running stack are written to ``<state_dir>/stack.json`` for other commands.
Private servers bind one address (``StackConfig.address``): loopback by default, or this host's
address of 198.18.0.0/15 when components run on several hosts (hdbbench.hosts).
Servers that run as another account keep their data outside the state directory, which links there
(hdbbench.servers.homes); ``down`` stops everything the state directory records and removes those
outside directories.
"""

from __future__ import annotations

import json
import os
import pwd
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.errors import ConfigError, ServerError
from hdbbench.servers import homes, process
from hdbbench.servers.base import PrivateServer
from hdbbench.servers.endpoints import MariaDBEndpoint, PostgresEndpoint, StackEndpoints, TangoEndpoint
from hdbbench.servers.mariadb import MariaDBServer
from hdbbench.servers.ports import LOOPBACK, check_address
from hdbbench.servers.postgres import PostgresServer
from hdbbench.servers.process import ProcessRecord
from hdbbench.servers.tangodb import CppTangoDatabaseServer, PyTangoDatabaseServer, tango_database_answers
from hdbbench.settings import SettingsProfile, resolve_profile

DEFAULT_STATE_DIR = Path(".hdbbench")
COMPONENTS = ("postgres", "mariadb", "tango")  # in start order: the C++ Tango database needs MariaDB
TANGO_DATABASES = ("pytango", "cpp")
_STATE_FILE = "stack.json"


@dataclass(frozen=True)
class StackConfig:
    state_dir: Path = DEFAULT_STATE_DIR
    profile: SettingsProfile = field(default_factory=lambda: resolve_profile("durable"))
    components: tuple[str, ...] = COMPONENTS
    postgres_url: str | None = None   # external PostgreSQL/TimescaleDB
    mariadb_url: str | None = None    # external MariaDB/MySQL
    tango_host: str | None = None     # external Tango database
    tango_db: str = "pytango"         # private Tango database: "pytango" (sqlite) or "cpp" (on MariaDB)
    attached: bool = False            # servers die with this process (tests, runs)
    keep_running: bool = False        # reuse running servers as they are, whatever their settings
    address: str = LOOPBACK           # where the private servers bind and are reached: this host's address

    def __post_init__(self) -> None:
        object.__setattr__(self, "address", check_address(self.address, "stack address"))
        unknown = set(self.components) - set(COMPONENTS)
        if unknown:
            raise ConfigError(f"unknown stack component(s) {sorted(unknown)}; choose from {', '.join(COMPONENTS)}")
        if self.tango_db not in TANGO_DATABASES:
            raise ConfigError(f"unknown Tango database {self.tango_db!r}; choose from {', '.join(TANGO_DATABASES)}")
        if self.tango_db == "cpp" and "tango" in self.components and "mariadb" not in self.components:
            raise ConfigError("the C++ Tango database (--tango-db cpp) runs on MariaDB: include the mariadb component")


class Stack:
    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.state_dir = config.state_dir.resolve()
        self._servers: dict[str, PrivateServer] = {}
        attached = config.attached
        if "postgres" in config.components and not config.postgres_url:
            self._servers["postgres"] = PostgresServer(self.state_dir, config.profile.postgres, attached=attached,
                                                       keep_running=config.keep_running, address=config.address)
        if "mariadb" in config.components and not config.mariadb_url:
            self._servers["mariadb"] = MariaDBServer(self.state_dir, config.profile.mariadb, attached=attached,
                                                     keep_running=config.keep_running, address=config.address)
        if "tango" in config.components and not config.tango_host:
            self._servers["tango"] = (
                CppTangoDatabaseServer(self.state_dir, attached=attached, address=config.address)
                if config.tango_db == "cpp"
                else PyTangoDatabaseServer(self.state_dir, {}, attached=attached, address=config.address)
            )

    def _check_state_dir(self) -> None:
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot create state directory {self.state_dir}: {exc.strerror}") from None
        if not os.access(self.state_dir, os.W_OK | os.X_OK):
            raise ServerError(f"state directory {self.state_dir} is not writable by this user")

    def up(self) -> StackEndpoints:
        self._check_state_dir()
        started: list[PrivateServer] = []
        endpoints: dict[str, Any] = {}
        try:
            for name in self.config.components:
                server = self._servers.get(name)
                if server is None:
                    endpoints[name] = self._external(name)
                    continue
                if isinstance(server, CppTangoDatabaseServer):
                    server.use_database(endpoints["mariadb"])
                was_running = server.running()
                endpoints[name] = server.up()
                if not was_running:
                    started.append(server)
        except BaseException:
            # All or nothing: Ctrl-C or a failure leaves no server of this call running.
            for server in reversed(started):
                server.down()
            raise
        result = StackEndpoints(
            postgres=endpoints.get("postgres"), mariadb=endpoints.get("mariadb"), tango=endpoints.get("tango")
        )
        self._write_state(result)
        return result

    def down(self) -> list[str]:
        """Stop everything started in this state directory (found from the records) and remove the
        servers' homes outside it; return the names stopped."""
        from hdbbench import devices  # devices need the stack, not the other way round

        # Clients first (simulated devices, subscribers), then the servers they use.
        stopped = devices.down(self.state_dir / "devices")
        stopped += self._stop_records("*/*/process.json")
        stopped += [name for name, server in self._servers.items() if server.down()]
        # Servers started under another configuration (e.g. the other Tango database) have records too.
        stopped += self._stop_records("*/process.json")
        # Filesystems a fault trial mounted and a crash left behind (their users are stopped now).
        from hdbbench.faults import mounts  # faults need the stack, not the other way round

        stopped += [f"tmpfs {path}" for path in mounts.unmount_leftovers(self.state_dir)]
        (self.state_dir / _STATE_FILE).unlink(missing_ok=True)
        homes.remove_homes(self.state_dir)
        return stopped

    def _stop_records(self, pattern: str) -> list[str]:
        stopped = []
        for record_path in sorted(self.state_dir.glob(pattern)):
            record = ProcessRecord.load(record_path)
            if record is not None and record.alive():
                process.stop(record)
                stopped.append(str(record_path.parent.relative_to(self.state_dir)))
            record_path.unlink(missing_ok=True)
        return stopped

    def settings_in_force(self) -> dict[str, dict[str, str]]:
        return {name: server.settings_in_force() for name, server in self._servers.items()
                if name in ("postgres", "mariadb")}

    def status(self) -> dict[str, Any]:
        servers: dict[str, Any] = {}
        for name in self.config.components:
            server = self._servers.get(name)
            if server is not None:
                servers[name] = server.status().to_dict() | {"external": False}
            else:
                servers[name] = self._external_status(name)
        return {
            "state_dir": str(self.state_dir),
            "state_dir_owner": _owner(self.state_dir),
            "profile": recorded_profile(self.state_dir) or self.config.profile.name,
            "all_ready": all(s["ready"] for s in servers.values()),
            "servers": servers,
        }

    # --- external servers ---------------------------------------------------------------------
    def _external(self, name: str) -> Any:
        status = self._external_status(name)
        if not status["ready"]:
            raise ServerError(f"external {name} server at {status['where']} is not reachable: {status['error']}")
        return self._external_endpoint(name)

    def _external_endpoint(self, name: str) -> Any:
        if name == "postgres":
            return PostgresEndpoint.from_url(self.config.postgres_url or "")
        if name == "mariadb":
            return MariaDBEndpoint.from_url(self.config.mariadb_url or "")
        return TangoEndpoint.from_tango_host(self.config.tango_host or "")

    def _external_status(self, name: str) -> dict[str, Any]:
        endpoint = self._external_endpoint(name)
        where = f"{endpoint.host}:{endpoint.port}"
        error = None
        try:
            if name == "postgres":
                endpoint.connect(connect_timeout=5).close()
            elif name == "mariadb":
                endpoint.connect().close()
            elif not tango_database_answers(endpoint.host, endpoint.port):
                error = "no Tango database answers there"
        except Exception as exc:  # the driver's own message says what is wrong (password, host, ...)
            error = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return {"name": name, "external": True, "where": where, "running": error is None,
                "ready": error is None, "error": error,
                "endpoint": endpoint.to_dict() if error is None else None}

    # --- state file ---------------------------------------------------------------------------
    def _write_state(self, endpoints: StackEndpoints) -> None:
        path = self.state_dir / _STATE_FILE
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump({"profile": self.config.profile.to_dict(), "endpoints": endpoints.to_dict()}, out, indent=2)
        tmp.replace(path)


def _owner(path: Path) -> str | None:
    try:
        uid = path.stat().st_uid
    except OSError:
        return None  # not created yet
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def recorded_profile(state_dir: Path) -> str | None:
    """The settings profile the running stack was started with, if one runs."""
    try:
        return str(json.loads((Path(state_dir) / _STATE_FILE).read_text())["profile"]["name"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def load_endpoints(state_dir: Path = DEFAULT_STATE_DIR) -> StackEndpoints:
    """The endpoints of the stack that ``hdbbench stack up`` started in this state directory."""
    path = Path(state_dir) / _STATE_FILE
    try:
        data = json.loads(path.read_text())["endpoints"]
    except FileNotFoundError:
        raise ServerError(f"no stack is up in {Path(state_dir).resolve()} (run: hdbbench stack up)") from None
    except (OSError, ValueError, KeyError) as exc:
        raise ServerError(f"cannot read {path}: {exc}") from None

    def build(cls: Any, key: str) -> Any:
        raw = data.get(key)
        if not raw:
            return None
        fields = {k: v for k, v in raw.items() if k in cls.__dataclass_fields__}
        return cls(**fields)

    return StackEndpoints(
        postgres=build(PostgresEndpoint, "postgres"),
        mariadb=build(MariaDBEndpoint, "mariadb"),
        tango=build(TangoEndpoint, "tango"),
    )

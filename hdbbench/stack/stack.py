# SPDX-License-Identifier: Apache-2.0
"""The stack: the database servers and the Tango database one benchmark or test session uses.

Each server is private (started here, in ``<state_dir>/<server>/``) or external (given by URL or
TANGO_HOST; never started or stopped here). ``up`` is idempotent and all-or-nothing: when a server
fails to start, or the user presses Ctrl-C, the servers this call started are stopped again.
The endpoints of a running stack are written to ``<state_dir>/stack.json`` for other commands.
Private servers bind one address (``StackConfig.address``): loopback by default, or this host's
address of 198.18.0.0/15 when components run on several hosts (hdbbench.scenario.hosts).
Servers that run as another account keep their data outside the state directory, which links there
(hdbbench.stack.servers.homes); ``down`` stops everything the state directory records and removes those
outside directories.
"""

from __future__ import annotations

import json
import os
import pwd
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.stack import mounts
from hdbbench.stack.servers import homes, process
from hdbbench.stack.servers.confine import lifecycle as confine
from hdbbench.stack.servers.confine.records import ServerConfinement
from hdbbench.stack.servers.confine.spec import ConfineSpec
from hdbbench.stack.servers.endpoints import StackEndpoints
from hdbbench.stack.servers.ports import LOOPBACK, check_address
from hdbbench.stack.servers.process import ProcessRecord
from hdbbench.stack.servers.registry import (
    DEFAULT_SERVER_NAMES,
    SERVER_KINDS,
    SERVER_NAMES,
    ServerArgs,
    ServerKind,
    endpoints_from_dict,
    kind,
    serving_problem,
)
from hdbbench.stack.settings import SettingsProfile, resolve_profile

DEFAULT_STATE_DIR = Path(".hdbbench")
COMPONENTS = SERVER_NAMES  # in start order (hdbbench.stack.servers.registry)
DEFAULT_COMPONENTS = DEFAULT_SERVER_NAMES  # a stack's when none are named: not the kinds only started on request
TANGO_DATABASES = kind("tango").flavours
_STATE_FILE = "stack.json"


@dataclass(frozen=True)
class StackConfig:
    state_dir: Path = DEFAULT_STATE_DIR
    profile: SettingsProfile = field(default_factory=lambda: resolve_profile("durable"))
    components: tuple[str, ...] = DEFAULT_COMPONENTS
    external: Mapping[str, str] = field(default_factory=dict)  # kind -> URL (host:port for Tango): never started
    tango_db: str = "pytango"         # private Tango database: "pytango" (sqlite) or "cpp" (on a database server)
    attached: bool = False            # servers die with this process (tests, runs)
    keep_running: bool = False        # reuse running servers as they are, whatever their settings
    address: str = LOOPBACK           # where the private servers bind and are reached: this host's address
    confine: ConfineSpec = field(default_factory=ConfineSpec)  # memory budgets, storage class (hdbbench.stack.servers.confine)
    # kind -> the kind started in its place (a scenario's `[stack] servers`, e.g. {"postgres": "patroni"}):
    # a component named by the first is the second, and the first's endpoint is the second's.
    serving: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "address", check_address(self.address, "stack address"))
        for role, name in self.serving.items():
            if (problem := serving_problem(role, name)) is not None:
                raise ConfigError(f"stack servers: {problem}")
        object.__setattr__(self, "components", tuple(self.serving.get(n, n) for n in self.components))
        unknown = set(self.components) - set(COMPONENTS)
        if unknown:
            raise ConfigError(f"unknown stack component(s) {sorted(unknown)}; choose from {', '.join(COMPONENTS)}")
        unknown = set(self.external) - set(COMPONENTS)
        if unknown:
            raise ConfigError(f"unknown external server(s) {sorted(unknown)}; choose from {', '.join(COMPONENTS)}")
        # In start order, with the kinds every stack has.
        wanted = set(self.components) | {k.name for k in SERVER_KINDS if k.always}
        object.__setattr__(self, "components", tuple(n for n in COMPONENTS if n in wanted))
        if self.tango_db not in TANGO_DATABASES:
            raise ConfigError(f"unknown Tango database {self.tango_db!r}; choose from {', '.join(TANGO_DATABASES)}")
        for name in self.components:
            for needed in self.needs(kind(name)):
                if needed not in self.components:
                    raise ConfigError(f"the {kind(name).label} ({self.flavour(kind(name))}) runs on "
                                      f"{kind(needed).label}: include the {needed} component")

    def flavour(self, server: ServerKind) -> str:
        return self.tango_db if server.name == "tango" else (server.flavours[0] if server.flavours else "")

    def needs(self, server: ServerKind) -> tuple[str, ...]:
        """The kinds this private server runs on (none when it is external)."""
        return () if server.name in self.external else server.needs.get(self.flavour(server), ())


class Stack:
    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.state_dir = config.state_dir.resolve()
        self._servers: dict[str, Any] = {}  # kind -> its private server (PrivateServer or LocalDirectory)
        # A stack reused as it runs keeps the confinement its servers were started with, unless another
        # is asked (then `up` restarts them confined as asked).
        recorded = confine.recorded_spec(self.state_dir) if config.keep_running and not config.confine.active else None
        self.confine = recorded or config.confine
        for name in config.components:
            if name in config.external:
                continue
            server = kind(name)
            # The memory rule's buffers override the profile's (recorded with the settings in force).
            settings = {**config.profile.of(name), **confine.buffers(self.confine, name)}
            self._servers[name] = server.private(ServerArgs(
                self.state_dir, settings, attached=config.attached, keep_running=config.keep_running,
                address=config.address, flavour=config.flavour(server)))
            if self.confine.applies_to(name) and hasattr(self._servers[name], "cgroup_procs"):
                # Restarts outside `up` (a cold query's, a fault's) rejoin the server's group.
                self._servers[name].cgroup_procs = confine.procs_file(self.state_dir, name)

    def server(self, name: str) -> Any | None:
        """The private server of kind `name`, or None when the stack has none (external or not a component)."""
        return self._servers.get(name)

    def _check_state_dir(self) -> None:
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot create state directory {self.state_dir}: {exc.strerror}") from None
        if not os.access(self.state_dir, os.W_OK | os.X_OK):
            raise ServerError(f"state directory {self.state_dir} is not writable by this user")

    def up(self) -> StackEndpoints:
        confine.refuse_unenforceable(self.confine, self.config.components, self.config.external)
        self._check_state_dir()
        confine.sweep_orphans()  # mounts and groups of state directories that are gone, before their homes
        homes.sweep_orphan_homes()  # left by commands killed before `stack down`
        started: list[Any] = []
        confined: list[str] = []
        endpoints: dict[str, Any] = {}
        try:
            for name in self.config.components:
                server = self._servers.get(name)
                if server is None:
                    endpoints[name] = self._external(name)
                    continue
                if self.config.needs(kind(name)):
                    server.use_servers(endpoints)
                if self._confine_before(name, server):
                    confined.append(name)
                was_running = server.running()
                endpoints[name] = server.up()
                if not was_running:
                    started.append(server)
                if name in confined:
                    confine.settle(self.state_dir, name, self.confine)
        except BaseException:
            # All or nothing: Ctrl-C or a failure leaves no server of this call running, nothing mounted,
            # attached or throttled for them.
            for server in reversed(started):
                server.down()
            for name in confined:
                try:
                    confine.release(self.state_dir, name)
                except Exception:  # noqa: BLE001 - the first failure is the one to report; `down` retries
                    pass
            raise
        result = StackEndpoints(endpoints, self.config.serving)
        self._write_state(result)
        return result

    def _confine_before(self, name: str, server: Any) -> bool:
        """Set up the server's confinement before it starts; True when this call did (a running server
        confined as asked keeps its own). A running server confined otherwise is stopped first; a
        stopped one's leftovers (a crashed command's) are taken down."""
        spec = self.confine
        if name not in confine.confinable_kinds():
            return False
        running = server.running()
        # Even a stack reused as it runs (keep_running) is restarted when confined otherwise: a budget
        # or class asked is never silently left out.
        if running and confine.same_as_running(self.state_dir, name, spec):
            return False
        if running:
            server.down()  # confined otherwise: restarted below, confined as asked
        confine.release(self.state_dir, name)
        if not spec.applies_to(name):
            return False
        confine.prepare(self.state_dir, server, spec)
        return True

    def confinement(self) -> list[ServerConfinement]:
        """The private database servers' memory budgets and storage, read back from the kernel (only
        those confined)."""
        return [confine.confinement(self.state_dir, name) for name in self.config.components
                if name in self._servers and confine.is_confined(self.state_dir, name)]

    def down(self) -> list[str]:
        """Stop everything started in this state directory (found from the records) and remove the
        servers' homes outside it; return the names stopped."""
        # Clients first (simulated devices, subscribers: each records its process as
        # <state>/<component>/<name>/process.json), then the servers they use.
        stopped = self._stop_records("*/*/process.json")
        stopped += [name for name, server in self._servers.items() if server.down()]
        # A kind started only on request (the Patroni cluster) is stopped by any `down` of its state
        # directory, also one that did not name it.
        for extra in SERVER_KINDS:
            if extra.on_request and extra.name not in self._servers and (self.state_dir / extra.name).is_dir():
                if extra.private(ServerArgs(self.state_dir)).down():
                    stopped.append(extra.name)
        # Servers started under another configuration (e.g. the other Tango database) have records too.
        stopped += self._stop_records("*/process.json")
        # Filesystems a fault trial mounted and a crash left behind (their users are stopped now).
        stopped += [f"tmpfs {path}" for path in mounts.unmount_leftovers(self.state_dir)]
        stopped += confine.release_all(self.state_dir)  # before the homes: the images' mounts are in them
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
                if kind(name).reports_settings}

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
            "confinement": confine.confinement_dicts(self.confinement()),
        }

    # --- external servers ---------------------------------------------------------------------
    def _external(self, name: str) -> Any:
        status = self._external_status(name)
        if not status["ready"]:
            raise ServerError(f"external {name} server at {status['where']} is not reachable: {status['error']}")
        return self._external_endpoint(name)

    def _external_endpoint(self, name: str) -> Any:
        return kind(name).external_endpoint(self.config.external.get(name, ""))

    def _external_status(self, name: str) -> dict[str, Any]:
        server = kind(name)
        endpoint = self._external_endpoint(name)
        where = f"{endpoint.host}:{endpoint.port}"
        error = None
        try:
            error = server.probe(endpoint) if server.probe is not None else None
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
            json.dump({"profile": self.config.profile.to_dict(), "endpoints": endpoints.to_dict(),
                       "roles": endpoints.roles}, out, indent=2)
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
        state = json.loads(path.read_text())
        data, roles = state["endpoints"], state.get("roles") or {}
    except FileNotFoundError:
        raise ServerError(f"no stack is up in {Path(state_dir).resolve()} (run: hdbbench stack up)") from None
    except (OSError, ValueError, KeyError) as exc:
        raise ServerError(f"cannot read {path}: {exc}") from None
    return endpoints_from_dict(data, roles)

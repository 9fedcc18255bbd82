# SPDX-License-Identifier: Apache-2.0
"""Everything the tests know about servers, in one place: the session stack's configuration,
private stacks of a test's own, and which server a backend runs on.

The session stack (tests/conftest.py starts it) is private PostgreSQL+TimescaleDB, MariaDB and a Tango
database, started *attached* (they die with pytest even if it is killed) in ``.hdbbench/pytest``
under the repository (or $HDBBENCH_TEST_STATE_DIR), with the ``relaxed`` profile and small memory.
HDBBENCH_POSTGRES_URL, HDBBENCH_MARIADB_URL and HDBBENCH_TANGO_HOST point it at existing servers.
A test that stops, kills or fills a server starts a private stack of its own (`private_stack`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends import registry
from hdbbench.stack.servers import registry as servers
from hdbbench.stack.settings import resolve_profile
from hdbbench.stack.stack import Stack, StackConfig

REPO = Path(__file__).resolve().parents[2]
TEST_STATE_DIR = Path(os.environ.get("HDBBENCH_TEST_STATE_DIR", REPO / ".hdbbench" / "pytest"))
# The environment variables that point the tests at external servers instead of private ones.
EXTERNAL_SERVER_VARIABLES = tuple(k.external_env for k in servers.external_kinds() if k.external_env)

# Small enough to sit beside the devices and subscribers of the tests on a 2-core machine.
TEST_SETTINGS: dict[str, dict[str, str]] = {
    "postgres": {"shared_buffers": "256MB", "effective_cache_size": "1GB", "maintenance_work_mem": "256MB"},
    "mariadb": {"innodb_buffer_pool_size": "512M", "innodb_log_file_size": "128M"},
}
# Smaller still, for a module's private stack beside the session's (fault injection).
SMALL_SETTINGS: dict[str, dict[str, str]] = {
    "postgres": {**TEST_SETTINGS["postgres"], "shared_buffers": "128MB"},
    "mariadb": {**TEST_SETTINGS["mariadb"], "innodb_buffer_pool_size": "128M", "innodb_log_file_size": "48M"},
}


def _profile(name: str, settings: Mapping[str, Mapping[str, str]]) -> Any:
    return resolve_profile(name, {server: dict(values) for server, values in settings.items()})


def stack_config(state_dir: Path = TEST_STATE_DIR, profile: str = "relaxed",
                 settings: Mapping[str, Mapping[str, str]] = TEST_SETTINGS, **kwargs: Any) -> StackConfig:
    """The configuration of a test stack: attached, small, external servers where the environment says."""
    return StackConfig(
        state_dir=state_dir,
        profile=_profile(profile, settings),
        external=servers.external_from_environment(),  # HDBBENCH_POSTGRES_URL, ... (hdbbench.stack.servers.registry)
        attached=True,
        **kwargs,
    )


def external_servers() -> list[str]:
    """The variables set that point the tests at servers hdbbench must never stop or fill."""
    return [v for v in EXTERNAL_SERVER_VARIABLES if os.environ.get(v)]


def database_servers(backends: tuple[str, ...] = registry.DEFAULT_BACKENDS) -> tuple[str, ...]:
    """The stack servers the backends run on, each once, in registry order."""
    return tuple(dict.fromkeys(registry.entry(b).server for b in backends))


def one_backend_per_server() -> list[str]:
    """The first backend of each database server: a test about the server, not the schema."""
    return [next(b for b in registry.DEFAULT_BACKENDS if registry.entry(b).server == s) for s in database_servers()]


@contextmanager
def private_stack(state_dir: Path | None = None, components: tuple[str, ...] = (), profile: str = "relaxed",
                  settings: Mapping[str, Mapping[str, str]] = TEST_SETTINGS,
                  private: bool = True) -> Iterator[Stack]:
    """A stack of the test's own (up), stopped afterwards, pass or fail; its directory removed when
    it made one. `private`: refuse external servers (a test that stops or fills them skips)."""
    if private and (external := external_servers()):
        pytest.skip(f"needs private servers ({', '.join(external)} set)")
    made = state_dir is None
    state = state_dir if state_dir is not None else REPO / ".hdbbench" / f"pytest-private-{uuid.uuid4().hex[:8]}"
    config = (StackConfig(state_dir=state, profile=_profile(profile, settings), components=components, attached=True)
              if private else stack_config(state, profile, settings, components=components))
    stack = Stack(config)
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        if made:
            shutil.rmtree(state, ignore_errors=True)


def endpoint_or_skip(endpoints: Any, backend: str) -> Any:
    """The endpoint of the server `backend` runs on; the test skips when the stack has none."""
    endpoint = registry.endpoint_for(backend, endpoints)
    if endpoint is None:
        server = registry.entry(backend).server
        pytest.skip(f"the stack has no {servers.kind(server).label} server ({backend})")
    return endpoint


def server_of(backend: str) -> str:
    """The stack server (component) `backend` runs on."""
    return registry.entry(backend).server


def server_process(stack: Stack, backend: str) -> Any:
    """The private server process `backend` runs on, to stop or restart it."""
    return stack.server(registry.entry(backend).server)


def skip_without_namespaces(root_for: str, requirements: Iterable[tuple[bool, str]] = ()) -> None:
    """Skip the test unless it runs as root (for `root_for`), `ip netns` works, and each requirement
    (whether it holds, the reason to skip when not) holds: the tests of hosts in network namespaces."""
    if os.geteuid() != 0:
        pytest.skip(f"needs root: {root_for}")
    if shutil.which("ip") is None or subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                    check=False).returncode != 0:
        pytest.skip("ip netns is unavailable (iproute2)")
    for holds, reason in requirements:
        if not holds:
            pytest.skip(reason)


@contextmanager
def tango_alone(state_dir: Path) -> Iterator[str]:
    """A Tango database of its own (no SQL server) in `state_dir`, down afterwards: its TANGO_HOST.
    For tests that read every device the database holds, or need no SQL server at all."""
    with private_stack(state_dir, components=("tango",), private=False) as stack:
        endpoints = stack.up()
        assert endpoints.tango is not None
        yield endpoints.tango.tango_host

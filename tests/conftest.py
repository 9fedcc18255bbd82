# SPDX-License-Identifier: Apache-2.0
"""Fixtures that own real servers, in the manner of pytest-postgresql.

One stack per test session: private PostgreSQL+TimescaleDB, MariaDB and a Tango database, started
*attached* (they die with pytest even if it is killed) in ``.hdbbench/pytest`` under the repository,
with the ``relaxed`` profile and small memory. Point the session at existing servers instead with
HDBBENCH_POSTGRES_URL, HDBBENCH_MARIADB_URL and HDBBENCH_TANGO_HOST.
When a test fails, the tail of each server log is attached to the report.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hdbbench.servers.endpoints import StackEndpoints
from hdbbench.servers.registry import external_from_environment
from hdbbench.settings import resolve_profile
from hdbbench.stack import Stack, StackConfig

REPO = Path(__file__).resolve().parent.parent
TEST_STATE_DIR = Path(os.environ.get("HDBBENCH_TEST_STATE_DIR", REPO / ".hdbbench" / "pytest"))

# Small enough to sit beside the devices and subscribers of the tests on a 2-core machine.
TEST_SETTINGS = {
    "postgres": {"shared_buffers": "256MB", "effective_cache_size": "1GB", "maintenance_work_mem": "256MB"},
    "mariadb": {"innodb_buffer_pool_size": "512M", "innodb_log_file_size": "128M"},
}


def test_stack_config(state_dir: Path = TEST_STATE_DIR, **kwargs: object) -> StackConfig:
    return StackConfig(
        state_dir=state_dir,
        profile=resolve_profile("relaxed", TEST_SETTINGS),
        external=external_from_environment(),  # HDBBENCH_POSTGRES_URL, ... (hdbbench.servers.registry)
        attached=True,
        **kwargs,  # type: ignore[arg-type]
    )


test_stack_config.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def default_sigint() -> None:
    """preexec_fn of a child that a test interrupts with SIGINT: a suite started with SIGINT ignored
    (as a background job is) would hand the ignored signal down, and the child would never see it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process while a child starts, as in a suite started in the background,
    so that a test interrupting the child shows it works there too."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _session_state_dir() -> tuple[Path, Any]:
    """The shared test state directory, or a private one when another pytest session holds it
    (a session's teardown stops its servers; two sessions must not share them)."""
    TEST_STATE_DIR.mkdir(parents=True, exist_ok=True)
    lock = open(TEST_STATE_DIR / ".session.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return TEST_STATE_DIR, lock
    except BlockingIOError:
        lock.close()
        return TEST_STATE_DIR.parent / f"pytest-session-{os.getpid()}", None


@pytest.fixture(scope="session")
def test_state_dir() -> Iterator[Path]:
    path, lock = _session_state_dir()
    yield path
    if lock is None:
        shutil.rmtree(path, ignore_errors=True)
    else:
        lock.close()


@pytest.fixture(scope="session")
def test_stack(test_state_dir: Path) -> Iterator[Stack]:
    stack = Stack(test_stack_config(test_state_dir))
    try:
        stack.up()
        yield stack
    finally:
        stack.down()


@pytest.fixture(scope="session")
def stack_endpoints(test_stack: Stack) -> StackEndpoints:
    return test_stack.up()  # already up: returns the endpoints without restarting anything


@pytest.fixture(scope="session")
def tango_host(stack_endpoints: StackEndpoints) -> str:
    assert stack_endpoints.tango is not None
    return stack_endpoints.tango.tango_host


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for log in sorted(TEST_STATE_DIR.glob("*/server.log")):
            tail = log.read_text(errors="replace").splitlines()[-15:]
            report.sections.append((f"server log {log.parent.name}", "\n".join(tail)))


@pytest.fixture(scope="session")
def small_run_dir(stack_endpoints: StackEndpoints, test_state_dir: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of scenarios/small.toml on the session's servers (already up: the run reuses them),
    shared by the tests of the runner and of the report."""
    from hdbbench.runner import RunOptions, run_scenario
    from hdbbench.scenario import load_scenario
    from hdbbench.subscribers import DEFAULT_BINARY

    if not DEFAULT_BINARY.exists():
        pytest.skip(f"subscriber not built: {DEFAULT_BINARY}")
    return run_scenario(load_scenario(REPO / "scenarios" / "small.toml"),
                        RunOptions(state_dir=test_state_dir, runs_root=tmp_path_factory.mktemp("runs")))

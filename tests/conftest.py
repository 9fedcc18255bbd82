# SPDX-License-Identifier: Apache-2.0
"""Fixtures that own real servers, in the manner of pytest-postgresql, and the harness of each test.

One stack per test session (configured in tests/harness/servers.py): private PostgreSQL+TimescaleDB,
MariaDB and a Tango database, started attached in ``.hdbbench/pytest`` under the repository.
`endpoint_of` gives the server a backend runs on (from the backend registry); `harness` and
`module_harness` compose fresh databases, simulated devices and subscribers on it (tests/harness).
The marker ``subscriber`` skips a test, with one reason, when the subscriber binary is not built.
When a test fails, the tail of each server log is attached to the report.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hdbbench.stack.servers.endpoints import StackEndpoints
from hdbbench.stack.stack import Stack
from hdbbench.subscribers.launcher import DEFAULT_BINARY
from tests.harness.composed import Harness
from tests.harness.runs import run
from tests.harness.servers import REPO, TEST_STATE_DIR, endpoint_or_skip, stack_config, tango_alone

SUBSCRIBER_NOT_BUILT = f"the subscriber is not built ({DEFAULT_BINARY} missing): run ./run.sh setup"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "subscriber: needs the built subscriber (hdbbench-es); skipped without it")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if DEFAULT_BINARY.exists():
        return
    skip = pytest.mark.skip(reason=SUBSCRIBER_NOT_BUILT)
    for item in items:
        if item.get_closest_marker("subscriber"):
            item.add_marker(skip)


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
    stack = Stack(stack_config(test_state_dir))
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
    if stack_endpoints.tango is None:
        pytest.skip("the stack has no Tango database")
    return stack_endpoints.tango.tango_host


@pytest.fixture(scope="module")
def own_tango_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Tango database of the module's own, alone (no SQL server), for the tests that read every
    device a database holds; stopped after the module's last test."""
    with tango_alone(tmp_path_factory.mktemp("tango-alone")) as host:
        yield host


@pytest.fixture(scope="session")
def endpoint_of(stack_endpoints: StackEndpoints) -> Callable[[str], Any]:
    """backend name -> the endpoint of the session server it runs on (the test skips without one)."""
    return lambda backend: endpoint_or_skip(stack_endpoints, backend)


@pytest.fixture
def harness(stack_endpoints: StackEndpoints, tmp_path: Path) -> Iterator[Harness]:
    """A test's own databases, devices and subscribers on the session stack, undone after it."""
    with Harness(stack_endpoints, tmp_path) as h:
        yield h


@pytest.fixture(scope="module")
def module_harness(stack_endpoints: StackEndpoints, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    """The same, shared by the tests of a module, undone after the last one."""
    with Harness(stack_endpoints, tmp_path_factory.mktemp("harness")) as h:
        yield h


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
    shared by the tests of the runner and of the report (marked ``subscriber``)."""
    return run(REPO / "scenarios" / "small.toml", test_state_dir, tmp_path_factory.mktemp("small"))

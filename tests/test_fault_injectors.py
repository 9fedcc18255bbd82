# SPDX-License-Identifier: Apache-2.0
"""The fault injectors against real servers: stop, kill, table lock, full tables, full spool.

A private PostgreSQL+TimescaleDB and MariaDB of this module's own (the session's servers are never
stopped or filled), with the `durable` profile: a commit is on disk when it returns, which is what
"data committed before a kill is still there" needs (PostgreSQL with the `relaxed` profile's
asynchronous commit loses the last acknowledged commits at a kill). Each test makes a fresh database, commits some
events, injects its fault and checks the state of the servers and tables, never timings. Filesystem
faults mount a tmpfs (root or password-less sudo); every mount is undone at the end of each test,
also when it fails.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.backends.mysql import MySQLBackend
from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.model.errors import ConfigError, HdbbenchError
from hdbbench.model.hdbtypes import AttributeInfo, Event, TangoType
from hdbbench.parts.faults.factory import make_injector
from hdbbench.parts.faults.injectors import INJECTORS, FaultTarget, Injector
from hdbbench.stack import mounts
from hdbbench.stack.servers.endpoints import StackEndpoints
from hdbbench.stack.stack import Stack, StackConfig
from tests.harness import eventually
from tests.harness.databases import CommittingLoad, double_events, fresh_backend
from tests.harness.servers import (
    SMALL_SETTINGS,
    database_servers,
    endpoint_or_skip,
    external_servers,
    one_backend_per_server,
    private_stack,
    server_of,
)
from tests.harness.values import BACKEND_VARIANTS

pytestmark = pytest.mark.skipif(bool(external_servers()),
                                reason=f"fault injection needs private servers ({external_servers()} set)")

# What each server writes to its log when it starts after a crash (and not after a clean stop).
CRASH_RECOVERY_LOG = {"postgres": "was not properly shut down", "mariadb": "crash recovery"}
TMPFS_MB = 16
# The default layout of one backend per server, and every partitioned variant (its parts move too).
FULL_TABLE_CASES = ([(b, None) for b in one_backend_per_server()]
                    + [(b, v) for b, v in BACKEND_VARIANTS if v is not None and "partitioned" in v])


def _can_mount() -> bool:
    if os.geteuid() == 0:
        return True
    return shutil.which("sudo") is not None and subprocess.run(
        ["sudo", "-n", "true"], capture_output=True, check=False).returncode == 0


needs_mount = pytest.mark.skipif(not _can_mount(), reason="mounting a tmpfs needs root or password-less sudo")


@pytest.fixture(scope="module")
def own_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, StackEndpoints]]:
    """Database servers of this module's own, with the `durable` profile (stop also unmounts what a
    failed test left)."""
    with private_stack(tmp_path_factory.mktemp("fault-stack"), components=database_servers(), profile="durable",
                       settings=SMALL_SETTINGS) as stack:
        yield stack.state_dir, stack.up()


@pytest.fixture
def fault_stack(own_stack: tuple[Path, StackEndpoints]) -> Iterator[tuple[Path, StackEndpoints]]:
    """The private stack; after the test nothing may be left mounted (it is unmounted either way)."""
    yield own_stack
    left = mounts.unmount_leftovers(own_stack[0])
    assert not left, f"the test left tmpfs mounts behind: {left}"


ATTRIBUTE = AttributeInfo("tango://faulthost:10000/fault/test/1/d", TangoType.DEV_DOUBLE)


def _events(n: int, start: datetime) -> list[Event]:
    return double_events(ATTRIBUTE, n, start)


def _target(state_dir: Path, backend: Backend, **kwargs: Any) -> FaultTarget:
    return FaultTarget(state_dir, backend.name, backend.database, (backend.table_for(ATTRIBUTE),), **kwargs)


def _run_fault_steps(injector: Injector, during: Any) -> Any:
    """arm, begin, `during()`, end, disarm (always); return what `during` returned."""
    try:
        injector.arm()
        injector.begin()
        result = during()
        injector.end()
        return result
    finally:
        injector.disarm()


def _connect_fails(endpoint: Any) -> bool:
    try:
        endpoint.connect(connect_timeout=2).close()
    except Exception:  # noqa: BLE001 - either driver's error: the server does not answer
        return True
    return False


# --------------------------------------------------------------------------- stop and kill


def _load(backend: Backend) -> CommittingLoad:
    return CommittingLoad(backend, ATTRIBUTE, datetime.now(timezone.utc))


@pytest.mark.parametrize("kind", ["database_stop", "database_kill"])
@pytest.mark.parametrize("backend_name", one_backend_per_server())
def test_server_is_down_during_the_fault_and_keeps_committed_data(
        fault_stack: tuple[Path, StackEndpoints], backend_name: str, kind: str) -> None:
    state_dir, endpoints = fault_stack
    endpoint = endpoint_or_skip(endpoints, backend_name)
    log = state_dir / server_of(backend_name) / "server.log"
    with fresh_backend(backend_name, endpoint, None) as backend:
        injector = make_injector(kind, _target(state_dir, backend))
        log_before = log.stat().st_size
        with _load(backend) as load:

            def during() -> bool:
                load.thread.join(timeout=60)  # the writer's connection broke
                return _connect_fails(endpoint)

            down_during = _run_fault_steps(injector, during)

        assert down_during, f"{backend_name}: a connection succeeded while the server should be down"
        assert not load.thread.is_alive(), "the load kept writing while the server should be down"
        assert not _connect_fails(endpoint), "the server does not accept connections after end()"
        stored = len(backend.fetch_events(ATTRIBUTE.name))
        # Every acknowledged commit is kept; the batch in flight may be too (committed, but the answer
        # never reached the client), never more than that one.
        assert load.acknowledged <= stored <= load.acknowledged + CommittingLoad.BATCH, \
            f"{load.acknowledged} events acknowledged before the {kind}, {stored} stored"
        started_log = log.read_bytes()[log_before:].decode(errors="replace")
        recovered = CRASH_RECOVERY_LOG[server_of(backend_name)] in started_log
        assert recovered == (kind == "database_kill"), f"crash recovery logged: {recovered}, after {kind}"
    marks = injector.marks
    assert marks["began"] <= marks["down"] <= marks["ended"] <= marks["back"]


# --------------------------------------------------------------------------- table lock


@pytest.mark.parametrize("backend_name", DEFAULT_BACKENDS)
def test_inserts_wait_for_the_table_lock_and_complete_after_it(
        fault_stack: tuple[Path, StackEndpoints], backend_name: str) -> None:
    state_dir, endpoints = fault_stack
    with fresh_backend(backend_name, endpoint_or_skip(endpoints, backend_name), None) as backend:
        start = datetime.now(timezone.utc)
        with backend.bulk_writer() as writer:
            writer.register_attribute(ATTRIBUTE)
            writer.write(_events(10, start))  # the hypertable's chunk for these times exists now
        injector = make_injector("table_lock", _target(state_dir, backend))
        written: list[Any] = []
        writer = backend.bulk_writer()
        writer.register_attribute(ATTRIBUTE)
        insert = threading.Thread(target=lambda: written.append(writer.write(_events(10, start + timedelta(seconds=1)))))

        def blocked_insert() -> bool:
            insert.start()
            waiters = getattr(injector, "waiters")
            eventually(lambda: waiters() > 0, 30, "an insert waiting for the table lock")
            return insert.is_alive()

        try:
            still_waiting = _run_fault_steps(injector, blocked_insert)
            insert.join(timeout=60)
        finally:
            writer.close()
        assert still_waiting, "the insert finished while the lock was held"
        assert written == [10], f"the insert did not complete after the lock was released: {written}"
        assert len(backend.fetch_events(ATTRIBUTE.name)) == 20
        assert injector.lock_wait_limits  # type: ignore[attr-defined]  # recorded at arm


# --------------------------------------------------------------------------- full tables


def _in_default_place(backend: Backend, table: str) -> bool:
    """The table and all its parts (chunks, partitions, indexes) in the server's default place."""
    if isinstance(backend, MySQLBackend):
        conn = backend.connect(backend.database)  # type: ignore[attr-defined]
        try:
            cur = conn.cursor()
            cur.execute(f"SHOW CREATE TABLE `{table}`")
            return "DATA DIRECTORY" not in str(cur.fetchone()[1]).upper()
        finally:
            conn.close()
    with backend.connect(autocommit=True) as conn:  # type: ignore[attr-defined]
        moved = conn.execute(
            "WITH RECURSIVE tree(relid) AS (SELECT %s::regclass::oid UNION ALL "
            "SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid) "
            "SELECT count(*) FROM pg_class c WHERE c.reltablespace <> 0 AND (c.oid IN (SELECT relid FROM tree) "
            "OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT relid FROM tree)))",
            (table,)).fetchone()
        spaces = conn.execute("SELECT count(*) FROM pg_tablespace WHERE spcname LIKE 'hdbbench%%'").fetchone()
    return moved == (0,) and spaces == (0,)


def _write_until_it_fails(writer: Any, start: datetime) -> BaseException | None:
    """Batches of new events until one fails (the free space already allocated goes first). All of
    them would take a few MiB, well within the tmpfs: only the filler can make them fail."""
    for batch in range(10):
        try:
            writer.write(_events(2000, start + timedelta(seconds=10 * batch)))
        except Exception as exc:  # noqa: BLE001 - returned for the test to look at
            return exc
    return None


@needs_mount
@pytest.mark.parametrize(("backend_name", "variant"), FULL_TABLE_CASES)
def test_inserts_fail_with_disk_full_while_the_tables_filesystem_is_full(
        fault_stack: tuple[Path, StackEndpoints], backend_name: str, variant: str | None) -> None:
    state_dir, endpoints = fault_stack
    with fresh_backend(backend_name, endpoint_or_skip(endpoints, backend_name), variant) as backend:
        faults = backend.faults()
        assert faults is not None
        table = backend.table_for(ATTRIBUTE)
        start = datetime.now(timezone.utc)
        with backend.bulk_writer() as writer:
            writer.register_attribute(ATTRIBUTE)
            writer.write(_events(100, start))
        injector = make_injector("database_full", _target(state_dir, backend, tmpfs_mb=TMPFS_MB))
        seen: dict[str, Any] = {}
        with backend.bulk_writer() as writer:
            writer.register_attribute(ATTRIBUTE)

            def during() -> None:
                assert not _in_default_place(backend, table), "arm did not move the table"
                seen["error"] = _write_until_it_fails(writer, start + timedelta(seconds=1))
                seen["server_up"] = not _connect_fails(endpoint_or_skip(endpoints, backend_name))

            try:
                injector.arm()
                injector.begin()
                during()
                injector.end()
                seen["after"] = writer.write(_events(50, start - timedelta(hours=1)))
            finally:
                injector.disarm()
        error = seen["error"]
        assert error is not None, "inserts kept succeeding on a full filesystem"
        assert faults.is_disk_full(error), f"not the disk-full error: {error!r}"
        mysql = isinstance(backend, MySQLBackend)  # each server's own code for a full disk
        code = getattr(error, "errno", None) if mysql else getattr(error, "sqlstate", None)
        assert code in ((1114, 1021) if mysql else ("53100",)), f"error code {code}: {error}"
        assert seen["server_up"], "the server went down when its tables' filesystem filled up"
        assert seen["after"] == 50, "inserts still fail after the filler was deleted"
        assert _in_default_place(backend, table), "disarm left the table (or a part of it) on the tmpfs"
        mount_point = getattr(injector, "mount_point")
        assert mount_point is not None and not mounts.is_mounted(mount_point) and not mount_point.exists()
        assert len(backend.fetch_events(ATTRIBUTE.name)) >= 150  # nothing committed was lost


@needs_mount
@pytest.mark.parametrize("backend_name", one_backend_per_server())
def test_moving_the_tables_there_and_back_under_load_loses_nothing(
        fault_stack: tuple[Path, StackEndpoints], backend_name: str) -> None:
    state_dir, endpoints = fault_stack
    with fresh_backend(backend_name, endpoint_or_skip(endpoints, backend_name), None) as backend:
        injector = make_injector("database_full", _target(state_dir, backend, tmpfs_mb=TMPFS_MB))
        with _load(backend) as load:
            try:
                injector.arm()
                moved_at = load.acknowledged
                eventually(lambda: load.acknowledged > moved_at, 30, "commits into the moved table")
            finally:
                injector.disarm()
            restored_at = load.acknowledged
            eventually(lambda: load.acknowledged > restored_at, 30, "commits into the table moved back")
            assert load.thread.is_alive(), "an insert failed while the table was moved"
        stored = len(backend.fetch_events(ATTRIBUTE.name))
        assert stored == load.acknowledged, f"{load.acknowledged} events acknowledged, {stored} stored"


# --------------------------------------------------------------------------- full spool


def _mounts_at(path: Path) -> int:
    return sum(1 for line in Path("/proc/self/mounts").read_text().splitlines() if line.split()[1] == str(path))


def _write_file(directory: Path, name: str, size: int = 64 * 1024) -> None:
    (directory / name).write_bytes(b"x" * size)


@needs_mount
def test_spool_full_refuses_writes_during_the_fault_only(tmp_path: Path) -> None:
    spool = tmp_path / "subscribers" / "timescaledb-1" / "spool"
    injector = make_injector("spool_full", FaultTarget(tmp_path, "timescaledb", "hdbpp", (), spool_dir=spool,
                                                       tmpfs_mb=4))
    try:
        injector.arm()
        assert mounts.is_mounted(spool)
        _write_file(spool, "before")
        injector.begin()
        with pytest.raises(OSError) as full:
            _write_file(spool, "during")
        assert full.value.errno == errno.ENOSPC
        injector.end()
        _write_file(spool, "after")
    finally:
        injector.disarm()
        mounts.unmount_leftovers(tmp_path)
    assert not mounts.is_mounted(spool) and not spool.exists(), "disarm left the spool mounted or its directory"
    assert list(injector.marks) == ["armed", "began", "full", "ended", "back", "disarmed"]


@needs_mount
def test_stack_down_unmounts_what_a_crashed_run_left(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    injector = make_injector("spool_full", FaultTarget(tmp_path, "mysql", "hdbpp", (), spool_dir=spool, tmpfs_mb=4))
    injector.arm()  # and the run "crashes": no disarm
    try:
        assert mounts.is_mounted(spool)
        # The next run arms the same spool: our leftover is replaced, not mounted over.
        make_injector("spool_full", FaultTarget(tmp_path, "mysql", "hdbpp", (), spool_dir=spool, tmpfs_mb=4)).arm()
        assert _mounts_at(spool) == 1
        stopped = Stack(StackConfig(state_dir=tmp_path, components=())).down()
        assert f"tmpfs {spool}" in stopped
        assert not mounts.is_mounted(spool) and not (tmp_path / mounts.MOUNTS_DIR).exists()
    finally:
        mounts.unmount(spool, remove_dir=True)


@needs_mount
def test_tmpfs_is_unmounted_on_ctrl_c_and_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    target = tmp_path / "m"
    with pytest.raises(KeyboardInterrupt):
        with mounts.tmpfs(target, 1, state_dir=tmp_path):
            assert mounts.is_mounted(target)
            raise KeyboardInterrupt
    assert not mounts.is_mounted(target) and not target.exists()
    assert not list((tmp_path / mounts.MOUNTS_DIR).glob("*.json"))
    target.mkdir()
    _write_file(target, "precious", 10)
    with pytest.raises(HdbbenchError, match="not empty"):
        mounts.mount_tmpfs(target, 1, state_dir=tmp_path)
    assert not mounts.is_mounted(target) and (target / "precious").exists()


# --------------------------------------------------------------------------- names


def test_unknown_fault_kind_is_refused_naming_it_and_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'disk_on_fire'.*database_full.*spool_full"):
        make_injector("disk_on_fire", FaultTarget(tmp_path, "mysql", "hdbpp", ()))
    assert set(INJECTORS) == {"database_stop", "database_kill", "table_lock", "database_full", "spool_full"}
    with pytest.raises(ConfigError, match="spool_dir"):
        make_injector("spool_full", FaultTarget(tmp_path, "mysql", "hdbpp", ()))


def test_servers_the_stack_does_not_own_are_refused(tmp_path: Path) -> None:
    with pytest.raises(HdbbenchError, match="no stack is up"):
        make_injector("database_stop", FaultTarget(tmp_path, "mysql", "hdbpp", ()))
    external = {"host": "127.0.0.1", "port": 5432, "user": "u", "password": "p", "external": True}
    (tmp_path / "stack.json").write_text(json.dumps({"profile": {"name": "durable"}, "endpoints": {"postgres": external}}))
    with pytest.raises(ConfigError, match="external"):
        make_injector("database_kill", FaultTarget(tmp_path, "timescaledb", "hdbpp", ()))
    with pytest.raises(ConfigError, match="no MariaDB server"):
        make_injector("database_full", FaultTarget(tmp_path, "mysql", "hdbpp", ("att_scalar_devdouble_ro",)))

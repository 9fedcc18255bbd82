# SPDX-License-Identifier: Apache-2.0
"""Memory budgets and storage classes (hdbbench.stack.servers.confine) on real PostgreSQL and MariaDB servers:
the kernel enforces what was asked, the buffers follow the rule, the probe sees the class, and nothing
is left after `down` or a failing `up`. Needs root (cgroups, loop devices, mounts)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends.mysql.aging import BUILD_POOL_BYTES
from hdbbench.backends.registry import backend_for_stack
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.parts.aging.history import building
from hdbbench.stack.servers import confine
from hdbbench.stack.servers.confine import cgroup, memory, storage
from hdbbench.stack.servers.confine.records import ServerConfinement
from hdbbench.stack.servers.confine.spec import CLASSES, ConfineSpec, parse_spec
from hdbbench.stack.servers.registry import confinable_kinds
from hdbbench.stack.stack import Stack
from tests.harness import REPO, eventually
from tests.harness.servers import SMALL_SETTINGS, TEST_STATE_DIR, external_servers, stack_config
from tests.harness.signals import default_sigint, sigint_ignored

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="confining servers needs root")

BUDGET = 256 << 20
CLASS = "hdd"
SERVERS = confinable_kinds()


def _spec(**overrides: object) -> ConfineSpec:
    values = {"memory": "256MiB", "storage": CLASS, "storage_size": "1GiB", **overrides}
    return parse_spec(values["memory"], values["storage"], values["storage_size"], SERVERS)


def _state_dir() -> Path:
    return TEST_STATE_DIR.parent / f"confine-{uuid.uuid4().hex[:8]}"


def leftovers(state_dir: Path, devices: list[str]) -> list[str]:
    """Everything of this state directory the kernel still holds: groups, mounts, loop devices, rules."""
    found = [str(g) for g in memory.leftover_groups(cgroup.digest(state_dir))]
    mounts = Path("/proc/mounts").read_text()
    found += [f"mount of {name}" for name in SERVERS if str(storage.mount_point(state_dir, name)) in mounts]
    found += [f"loop of {name}" for name in SERVERS if storage.loop_device(storage.image_path(state_dir, name))]
    root = cgroup.controller("blkio")
    assert root is not None
    rules = "".join((root / f"blkio.throttle.{f}").read_text() for f in
                    ("read_iops_device", "write_iops_device", "read_bps_device", "write_bps_device"))
    found += [f"throttle rule on {numbers}" for numbers in devices if numbers in rules]
    return found


@pytest.fixture(scope="module")
def confined() -> Iterator[Stack]:
    if external_servers():
        pytest.skip("needs private servers")
    state_dir = _state_dir()
    stack = Stack(stack_config(state_dir, settings=SMALL_SETTINGS, components=SERVERS, confine=_spec()))
    try:
        stack.up()
        yield stack
    finally:
        try:
            stack.down()
        finally:
            shutil.rmtree(state_dir, ignore_errors=True)


def test_memory_limit_is_in_force_and_the_server_is_in_its_group(confined: Stack) -> None:
    for record in confined.confinement():
        assert record.memory_budget_bytes == BUDGET
        assert record.memory_limit_bytes == BUDGET  # read back from memory.limit_in_bytes
        process = confined.server(record.server).record().process()
        family = {process.pid, *(child.pid for child in process.children(recursive=True))}
        assert family <= set(memory.members(confined.state_dir, record.server))  # its children too
    assert {r.server for r in confined.confinement()} == set(SERVERS)


def test_buffers_follow_the_budget(confined: Stack) -> None:
    status = confined.status()["servers"]
    pg = confined.server("postgres").endpoint(status["postgres"]["port"], confined.server("postgres").meta())
    with pg.connect() as conn:
        row = conn.execute("SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'").fetchone()
    assert row is not None and row[0] == BUDGET // 4
    maria = confined.server("mariadb").endpoint(status["mariadb"]["port"], confined.server("mariadb").meta())
    conn = maria.connect()
    try:
        cur = conn.cursor()
        cur.execute("SELECT @@innodb_buffer_pool_size, @@innodb_flush_method")
        pool, flush = cur.fetchone()
    finally:
        conn.close()
    assert pool == (BUDGET - (128 << 20)) // 2  # half of what the server leaves (hdbbench.stack.servers.mariadb)
    assert flush == "O_DIRECT"  # the pool is InnoDB's cache of its data: the rule's premise


def test_throttle_is_in_force_and_the_probe_sees_the_class(confined: Stack) -> None:
    asked = CLASSES[CLASS]
    for record in confined.confinement():
        assert record.storage_class == CLASS
        assert (record.read_iops_limit, record.write_iops_limit) == (asked.read_iops, asked.write_iops)
        assert record.probe is not None and asked.read_iops is not None
        assert abs(record.probe.read_iops - asked.read_iops) <= 0.2 * asked.read_iops


def test_data_directory_is_on_the_loop_device(confined: Stack) -> None:
    for name in SERVERS:
        server = confined.server(name)
        device = storage.loop_device(storage.image_path(confined.state_dir, name))
        assert device is not None
        assert storage.mounted_at(server.data_dir) == f"/dev/{device}"
        assert os.stat(server.data_dir).st_dev == os.makedev(*map(int, storage.device_numbers(device).split(":")))
        counters = confine.io_counters(confined.state_dir, name)
        assert counters is not None and counters.read_ops > 0  # the probe's reads at least
        assert confine.drop_cache(confined.state_dir, name)


def test_a_history_build_lifts_the_budget_and_the_throttle_then_puts_them_back(confined: Stack) -> None:
    endpoints = confined.up()  # already up: its endpoints
    for backend_name, server, database in (("postgresql", "postgres", "postgres"), ("mysql", "mariadb", "mysql")):
        backend = backend_for_stack(backend_name, endpoints, database=database)
        with building(backend, confined.state_dir) as lifted:
            during = _record(confined, server)
            assert lifted and during.memory_limit_bytes is not None and during.memory_limit_bytes > 1 << 40
            assert (during.read_iops_limit, during.write_bps_limit) == (None, None)
            if server == "mariadb":
                assert _pool(confined) == BUILD_POOL_BYTES
        after = _record(confined, server)
        asked = CLASSES[CLASS]
        assert after.memory_limit_bytes == BUDGET
        assert (after.read_iops_limit, after.write_iops_limit) == (asked.read_iops, asked.write_iops)
    assert _pool(confined) == (BUDGET - (128 << 20)) // 2


def _grow_past_the_budget(stack: Stack, server: str) -> Any:
    """Make the server itself hold more than its budget (memory the kernel cannot reclaim, as a buffer
    pool grown into during a lifted build is): a PostgreSQL session's temporary buffers, kept while its
    connection is open (returned), or a MariaDB MEMORY table."""
    status = stack.status()["servers"]
    endpoint = stack.server(server).endpoint(status[server]["port"], stack.server(server).meta())
    conn = endpoint.connect()
    if server == "postgres":
        conn.execute("SET temp_buffers = '400MB'")
        conn.execute("CREATE TEMP TABLE filler AS SELECT g, repeat('x', 600) AS pad FROM generate_series(1, 500000) g")
        return conn
    cur = conn.cursor()
    cur.execute("SET SESSION max_heap_table_size = 512 * 1024 * 1024")
    cur.execute("CREATE DATABASE IF NOT EXISTS hdbbench_lift")
    cur.execute("CREATE OR REPLACE TABLE hdbbench_lift.filler (pad VARCHAR(4000) CHARACTER SET latin1) ENGINE=MEMORY")
    cur.execute("INSERT INTO hdbbench_lift.filler VALUES (REPEAT('x', 4000))")
    for _ in range(16):  # 65,536 rows of 4,000 bytes: 256 MiB of the server's own memory
        cur.execute("INSERT INTO hdbbench_lift.filler SELECT pad FROM hdbbench_lift.filler")
    return conn


@pytest.mark.parametrize("server", ["postgres", "mariadb"])
def test_a_server_over_its_budget_after_a_lifted_phase_is_restarted_under_it(confined: Stack, server: str) -> None:
    """The aggregates' materialisation on MariaDB left 257 MiB resident under a 256 MiB budget, and the
    kernel refused the limit (EBUSY): the server is restarted under its budget, on the same port, in
    its group, before anything is measured."""
    before = confined.server(server).record()
    assert before is not None
    with confine.lifted(confined.state_dir, server) as lifted:
        assert lifted
        conn = _grow_past_the_budget(confined, server)
        assert memory.usage(confined.state_dir, server) > BUDGET
    try:
        conn.close()
    except Exception:  # noqa: BLE001 - its server was restarted under it
        pass
    after = confined.server(server).record()
    assert after is not None and after.pid != before.pid and after.alive()
    assert _record(confined, server).memory_limit_bytes == BUDGET
    assert after.pid in memory.members(confined.state_dir, server)
    assert confined.status()["servers"][server]["ready"]
    assert confined.status()["servers"][server]["port"] == confined.server(server).meta()["port"]


def test_restoring_a_budget_the_server_fits_in_only_sets_the_limit(confined: Stack) -> None:
    before = confined.server("postgres").record()
    with confine.lifted(confined.state_dir, "postgres"):
        pass
    assert confined.server("postgres").record() == before
    assert _record(confined, "postgres").memory_limit_bytes == BUDGET


def _record(stack: Stack, server: str) -> ServerConfinement:
    return next(r for r in stack.confinement() if r.server == server)


def _pool(stack: Stack) -> int:
    status = stack.status()["servers"]
    maria = stack.server("mariadb").endpoint(status["mariadb"]["port"], stack.server("mariadb").meta())
    conn = maria.connect()
    try:
        cur = conn.cursor()
        cur.execute("SELECT @@innodb_buffer_pool_size")
        return int(cur.fetchone()[0])
    finally:
        conn.close()


def test_down_leaves_nothing(confined: Stack) -> None:
    devices = [storage.device_numbers(d) for name in SERVERS
               if (d := storage.loop_device(storage.image_path(confined.state_dir, name)))]
    assert len(devices) == len(SERVERS)
    confined.down()
    assert leftovers(confined.state_dir, devices) == []


def test_failing_up_leaves_nothing() -> None:
    if external_servers():
        pytest.skip("needs private servers")
    state_dir = _state_dir()
    broken = {**SMALL_SETTINGS, "mariadb": {**SMALL_SETTINGS["mariadb"], "no_such_option": "1"}}
    stack = Stack(stack_config(state_dir, settings=broken, components=SERVERS, confine=_spec()))
    try:
        with pytest.raises(ServerError):
            stack.up()  # PostgreSQL is confined and started first, then MariaDB refuses its options
        assert leftovers(state_dir, []) == []
        assert not stack.server("postgres").running()
    finally:
        try:
            stack.down()
        finally:
            shutil.rmtree(state_dir, ignore_errors=True)


def test_a_running_server_is_reused_as_confined_or_restarted_as_asked() -> None:
    if external_servers():
        pytest.skip("needs private servers")
    state_dir = _state_dir()

    def stack(**asked: str) -> Stack:
        return Stack(stack_config(state_dir, settings=SMALL_SETTINGS, components=("postgres",), confine=_spec(**asked)))

    try:
        first = stack(memory=None, storage=CLASS)  # storage alone: a group without a limit
        first.up()
        pid = first.server("postgres").record().pid
        (record,) = first.confinement()
        assert record.memory_limit_bytes is None and record.device is not None
        again = stack(memory=None, storage=CLASS)
        again.up()
        assert again.server("postgres").record().pid == pid  # confined as asked: reused, not probed again
        assert again.confinement() == [record]
        reused = Stack(stack_config(state_dir, settings=SMALL_SETTINGS, components=("postgres",), keep_running=True))
        server = reused.server("postgres")
        server.down()
        server.up()  # a restart outside `up` (a cold query's): back in its group, on its file system
        assert server.record().pid in memory.members(state_dir, "postgres")
        assert storage.mounted_at(server.data_dir) == record.device
        plain = stack(storage="ram")  # a budget on the plain data directory (the one under the mount)
        plain.up()
        (record,) = plain.confinement()
        assert (record.storage_class, record.device, record.memory_limit_bytes) == ("ram", None, BUDGET)
        assert storage.mounted_at(plain.server("postgres").data_dir) is None
    finally:
        try:
            Stack(stack_config(state_dir, components=SERVERS)).down()
        finally:
            shutil.rmtree(state_dir, ignore_errors=True)
    assert leftovers(state_dir, []) == []


def test_ctrl_c_during_up_leaves_nothing() -> None:
    if external_servers():
        pytest.skip("needs private servers")
    state_dir = _state_dir()
    argv = [sys.executable, "-m", "hdbbench", "stack", "up", "--state-dir", str(state_dir), "--only", "postgres",
            "--only", "mariadb", "--set", "postgres.max_connections=50", "--memory", "256MiB", "--storage", CLASS,
            "--storage-size", "1GiB"]
    try:
        with sigint_ignored():
            up = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO,
                                  preexec_fn=default_sigint)
        # Interrupt once MariaDB's storage is mounted: PostgreSQL is up and confined by then.
        eventually(lambda: (state_dir / "mariadb" / "confinement.json").exists() or up.poll() is not None,
                   120, "MariaDB's confinement to be set up")
        up.send_signal(signal.SIGINT)
        _, stderr = up.communicate(timeout=120)
        assert up.returncode == 130, stderr
        assert leftovers(state_dir, []) == []
    finally:
        try:
            Stack(stack_config(state_dir, components=SERVERS)).down()
        finally:
            shutil.rmtree(state_dir, ignore_errors=True)


def test_an_external_server_is_refused_in_one_line(tmp_path: Path) -> None:
    config = stack_config(tmp_path, components=("postgres",), confine=_spec(storage="ram"))
    config = type(config)(**{**config.__dict__, "external": {"postgres": "postgresql://u:p@127.0.0.1:1/x"}})
    with pytest.raises(ConfigError) as caught:
        Stack(config).up()
    assert "external" in str(caught.value) and "\n" not in str(caught.value)
    assert not list(tmp_path.iterdir())  # refused before anything started


def test_a_budget_below_what_mariadb_runs_in_is_refused_in_one_line(tmp_path: Path) -> None:
    config = stack_config(tmp_path, components=SERVERS, confine=_spec(memory={"postgres": "64MiB",
                                                                              "mariadb": "128MiB"}, storage="ram"))
    with pytest.raises(ConfigError) as caught:
        Stack(config).up()
    message = str(caught.value)
    assert message.startswith("[stack] memory: MariaDB needs") and "128 MiB" in message and "\n" not in message
    assert not list(tmp_path.iterdir())  # refused before anything started


@pytest.mark.parametrize(("memory", "store", "key"), [
    ("12 apples", "ram", "memory"), ({"tango": "1GiB"}, "ram", "memory"), ("1MiB", "ram", "memory"),
    ("1GiB", "floppy", "storage"), ("1GiB", {"read_iops": -1}, "storage.read_iops"),
])
def test_bad_values_are_refused_naming_the_key(memory: object, store: object, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_spec(memory, store, None, SERVERS)
    assert str(caught.value).startswith(f"{key}:") and "\n" not in str(caught.value)

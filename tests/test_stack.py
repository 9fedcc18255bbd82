# SPDX-License-Identifier: Apache-2.0
"""The stack: real private servers come up, are reused, go down completely, and refuse bad input."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import tango

from hdbbench.model.errors import ServerError
from hdbbench.stack.servers import homes
from hdbbench.stack.servers.endpoints import StackEndpoints
from hdbbench.stack.servers.mariadb import MariaDBServer
from hdbbench.stack.servers.ports import pick_free_port
from hdbbench.stack.servers.process import ProcessRecord
from tests.harness import REPO, eventually
from tests.harness.runs import HDBBENCH
from tests.harness.signals import default_sigint, sigint_ignored


@pytest.fixture
def scratch_state_dir() -> Iterator[Path]:
    """A state directory of its own, inside the repository."""
    path = REPO / ".hdbbench" / f"pytest-{uuid.uuid4().hex[:8]}"
    yield path
    subprocess.run([*HDBBENCH, "stack", "down", "--state-dir", str(path)], capture_output=True, timeout=120)
    shutil.rmtree(path, ignore_errors=True)


def cli(*args: str, timeout_s: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HDBBENCH, *args], capture_output=True, text=True, timeout=timeout_s, cwd=REPO)


def server_processes(state_dir: Path) -> dict[str, list[psutil.Process]]:
    """Every live process of each recorded server, children included."""
    found: dict[str, list[psutil.Process]] = {}
    for record_path in state_dir.glob("*/process.json"):
        record = ProcessRecord.load(record_path)
        proc = record.process() if record else None
        if proc is not None:
            found[record_path.parent.name] = [proc, *proc.children(recursive=True)]
    return found


def listening_sockets(proc: psutil.Process) -> list:
    """The process's listening inet sockets; none if it has exited since it was listed.

    A server's short-lived children (a PostgreSQL background worker, say) come and go; one that has
    exited listens on nothing, so it cannot break the loopback rule.
    """
    try:
        return [c for c in proc.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    except psutil.NoSuchProcess:
        return []


SMALL = ["--set", "postgres.shared_buffers=128MB", "--set", "mariadb.innodb_buffer_pool_size=256M"]


def test_up_reuse_status_down_leaves_nothing(scratch_state_dir: Path) -> None:
    state = ["--state-dir", str(scratch_state_dir)]
    first = cli("stack", "up", *state, *SMALL, "--json")
    assert first.returncode == 0, first.stderr
    endpoints = json.loads(first.stdout)
    assert endpoints["postgres"]["host"] == "127.0.0.1"
    processes = server_processes(scratch_state_dir)
    assert set(processes) == {"postgres", "mariadb", "tangodb"}
    pids = {name: procs[0].pid for name, procs in processes.items()}

    second = cli("stack", "up", *state, *SMALL, "--json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == endpoints
    assert {name: procs[0].pid for name, procs in server_processes(scratch_state_dir).items()} == pids

    status = cli("stack", "status", *state, "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["all_ready"] is True
    assert "password" in report["servers"]["postgres"]["endpoint"]["conninfo"]
    assert report["servers"]["tango"]["endpoint"]["tango_host"].startswith("127.0.0.1:")
    every_process = [p for procs in processes.values() for p in procs]
    for proc in every_process:  # loopback only: no server listens on another address
        for conn in listening_sockets(proc):
            assert conn.laddr.ip == "127.0.0.1", (proc.name(), conn.laddr)

    down = cli("stack", "down", *state)
    assert down.returncode == 0, down.stderr
    _, alive = psutil.wait_procs(every_process, timeout=10)
    assert alive == [], f"still running after down: {alive}"
    after = cli("stack", "status", *state, "--json")
    assert after.returncode == 1 and json.loads(after.stdout)["all_ready"] is False


def test_ctrl_c_during_up_leaves_nothing_running(scratch_state_dir: Path) -> None:
    with sigint_ignored():
        up = subprocess.Popen([*HDBBENCH, "stack", "up", "--state-dir", str(scratch_state_dir), *SMALL],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO,
                              preexec_fn=default_sigint)
    # Interrupt while the second server (MariaDB) is being started: PostgreSQL is already up.
    eventually(lambda: (scratch_state_dir / "mariadb" / "process.json").exists() or up.poll() is not None,
               120, "MariaDB start to begin")
    seen = [p for procs in server_processes(scratch_state_dir).values() for p in procs]
    up.send_signal(signal.SIGINT)
    _, stderr = up.communicate(timeout=120)
    assert up.returncode == 130, stderr
    assert "interrupted" in stderr
    _, alive = psutil.wait_procs(seen, timeout=10)
    assert alive == [] and server_processes(scratch_state_dir) == {}


@pytest.fixture
def private_state_dir() -> Iterator[Path]:
    """A state directory inside a directory only its owner may enter (as /root or mktemp -d are)."""
    parent = Path(tempfile.mkdtemp(prefix="hdbbench-0700-"))
    path = parent / "state"
    yield path
    subprocess.run([*HDBBENCH, "stack", "down", "--state-dir", str(path)], capture_output=True, timeout=120)
    shutil.rmtree(parent, ignore_errors=True)


def test_servers_of_other_accounts_get_reachable_homes(private_state_dir: Path) -> None:
    """As root, PostgreSQL and MariaDB run as their own accounts, which cannot enter a 0700 directory:
    their data lives in homes outside it, the user's directories keep their modes, down removes the homes."""
    parent_mode = stat.S_IMODE(private_state_dir.parent.stat().st_mode)
    state = ["--state-dir", str(private_state_dir)]
    up = cli("stack", "up", *state, *SMALL, "--only", "postgres", "--only", "mariadb")
    assert up.returncode == 0, up.stderr
    status = json.loads(cli("stack", "status", *state, "--only", "postgres", "--only", "mariadb", "--json").stdout)
    assert status["all_ready"] and status["state_dir"] == str(private_state_dir.resolve())
    assert status["state_dir_owner"] == pwd.getpwuid(os.geteuid()).pw_name
    assert f"stack in {private_state_dir.resolve()} (owner {status['state_dir_owner']})" in up.stdout
    assert stat.S_IMODE(private_state_dir.parent.stat().st_mode) == parent_mode == 0o700
    homes = []
    for name, account in (("postgres", "postgres"), ("mariadb", "mysql")):
        data = Path(status["servers"][name]["data"])
        assert f"data {data}" in up.stdout
        assert data.is_dir() and (private_state_dir / name / "data").resolve() == data
        if os.geteuid() != 0:  # the servers run as the user: their data stays in the state directory
            assert data == private_state_dir / name / "data"
            continue
        assert not data.is_relative_to(private_state_dir.parent) and data.stat().st_uid == pwd.getpwnam(account).pw_uid
        home = data.parent
        assert stat.S_IMODE(home.stat().st_mode) == 0o700 and home.stat().st_uid == data.stat().st_uid
        for level in (home.parent, home.parent.parent):  # root's, passable but not readable by others
            assert level.stat().st_uid == 0 and stat.S_IMODE(level.stat().st_mode) == 0o711
        homes.append(home)
    down = cli("stack", "down", *state)
    assert down.returncode == 0, down.stderr
    assert not any(home.exists() for home in homes)


def test_a_home_in_the_way_is_refused(tmp_path: Path) -> None:
    """A home level that is a symlink, or owned by somebody else, is never used."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / f"hdbbench-{os.geteuid()}").symlink_to(elsewhere)
    with pytest.raises(ServerError, match="is not a directory"):
        homes.make_home(tmp_path / "state", "postgres", os.geteuid(), os.getegid(), root=root)
    assert list(elsewhere.iterdir()) == []
    if os.geteuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir()
        os.chown(foreign, 65534, 65534)  # nobody made it first
        (root / f"hdbbench-{os.geteuid()}").unlink()
        (root / f"hdbbench-{os.geteuid()}").mkdir(mode=0o711)
        base = homes.home_path(tmp_path / "state", "postgres", root=root).parent
        os.rename(foreign, base)
        with pytest.raises(ServerError, match="owned by uid 65534"):
            homes.make_home(tmp_path / "state", "postgres", os.geteuid(), os.getegid(), root=root)


def test_homes_of_vanished_state_directories_are_swept(tmp_path: Path) -> None:
    """A command killed before `stack down` leaves homes: the next `stack up` removes those whose state
    directory is gone and whose server is not running, and nothing else."""
    root = tmp_path / "root"
    root.mkdir()
    ids = (os.geteuid(), os.getegid())
    gone, kept, running = tmp_path / "gone", tmp_path / "kept", tmp_path / "running"
    for state in (gone, kept, running):
        state.mkdir()
        (homes.make_home(state, "postgres", *ids, root=root) / "data").mkdir()
    (homes.home_path(running, "postgres", root=root) / "data" / "postmaster.pid").write_text(f"{os.getpid()}\n")
    gone.rmdir()
    running.rmdir()
    removed = homes.sweep_orphan_homes(root=root)
    assert removed == [homes.home_path(gone, "postgres", root=root).parent]
    assert homes.home_path(kept, "postgres", root=root).exists()
    assert homes.home_path(running, "postgres", root=root).exists()


def test_mariadb_socket_of_a_deep_state_directory_goes_to_its_home(tmp_path: Path) -> None:
    """A Unix socket path is limited to 108 bytes: a deep state directory's socket lives in the home."""
    deep = tmp_path / ("d" * 100) / "state"
    server = MariaDBServer(deep, {}, attached=True)
    assert server.socket_path == homes.home_path(deep, "mariadb") / "mariadbd.sock"
    assert len(str(server.socket_path)) < 100
    assert MariaDBServer(tmp_path, {}, attached=True).socket_path.parent == tmp_path / "mariadb" / "data"


def test_attached_servers_die_with_their_parent(scratch_state_dir: Path) -> None:
    """A test session or a run killed with SIGKILL leaves no server behind."""
    script = (
        "import sys, time; from pathlib import Path; from hdbbench.stack.stack import Stack;"
        "from tests.harness.servers import stack_config;"
        f"Stack(stack_config(Path({str(scratch_state_dir)!r}), components=('tango',))).up();"
        "print('up', flush=True); time.sleep(600)"  # the parent's life: the test kills it long before
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert parent.stdout is not None and parent.stdout.readline().strip() == "up"
    servers = [p for procs in server_processes(scratch_state_dir).values() for p in procs]
    assert servers, "the Tango database should run while its parent lives"
    parent.kill()
    parent.wait()
    _, alive = psutil.wait_procs(servers, timeout=15)
    assert alive == []


def test_unknown_profile_is_refused_in_one_line(scratch_state_dir: Path) -> None:
    result = cli("stack", "up", "--state-dir", str(scratch_state_dir), "--profile", "turbo")
    assert result.returncode == 2
    assert "turbo" in result.stderr
    assert not (scratch_state_dir / "postgres").exists()


def test_bad_setting_override_is_refused(scratch_state_dir: Path) -> None:
    result = cli("stack", "up", "--state-dir", str(scratch_state_dir), "--set", "oracle.sga=1G")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "oracle.sga=1G" in result.stderr


def give_to_nobody(path: Path) -> None:
    """chown to nobody: directly as root, through password-less sudo as a normal user (the README's
    two kinds of user); the empty directory stays removable by its parent's owner."""
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)
    else:
        subprocess.run(["sudo", "-n", "chown", "65534:65534", str(path)], check=True, timeout=30)


def test_data_directory_owned_by_someone_else_is_named(scratch_state_dir: Path) -> None:
    foreign = scratch_state_dir / "postgres" / "data"
    foreign.mkdir(parents=True)
    give_to_nobody(foreign)
    result = cli("stack", "up", "--state-dir", str(scratch_state_dir), "--only", "postgres")
    assert result.returncode == 2
    assert f"data directory {foreign} is owned by uid 65534" in result.stderr
    assert server_processes(scratch_state_dir) == {}


def test_missing_binary_is_named(scratch_state_dir: Path) -> None:
    env = {**os.environ, "HDBBENCH_PG_BINDIR": "/nonexistent/bin", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([*HDBBENCH, "stack", "up", "--state-dir", str(scratch_state_dir), "--only", "postgres"],
                            capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert result.returncode == 2
    assert "binary not found: /nonexistent/bin/initdb" in result.stderr


def test_busy_port_for_external_server_and_wrong_password(stack_endpoints: StackEndpoints) -> None:
    pg = stack_endpoints.get("postgres")
    assert pg is not None
    url = f"postgresql://{pg.user}:wrong-password@127.0.0.1:{pg.port}/postgres"
    result = cli("stack", "up", "--only", "postgres", "--postgres-url", url,
                 "--state-dir", str(REPO / ".hdbbench" / "pytest-external"))
    assert result.returncode == 2
    assert "password authentication failed" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_port_picking_stays_below_the_ephemeral_range(stack_endpoints: StackEndpoints) -> None:
    taken = stack_endpoints["postgres"].port if stack_endpoints.get("postgres") else 25432
    port = pick_free_port(taken)
    assert port != taken and port < 32768


def test_timescaledb_extension_loads(stack_endpoints: StackEndpoints) -> None:
    pg = stack_endpoints.get("postgres")
    assert pg is not None
    dbname = f"t_{uuid.uuid4().hex[:10]}"
    with pg.connect(autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{dbname}"')
    try:
        with pg.connect(dbname) as conn:
            conn.execute("CREATE EXTENSION timescaledb")
            version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'").fetchone()
            assert version is not None and version[0].count(".") == 2
            conn.execute("CREATE TABLE t (time timestamptz NOT NULL, v double precision)")
            conn.execute("SELECT create_hypertable('t', 'time', chunk_time_interval => interval '1 day')")
            conn.execute("INSERT INTO t SELECT now() - g * interval '1 hour', g FROM generate_series(1, 72) g")
            chunks = conn.execute("SELECT count(*) FROM show_chunks('t')").fetchone()
            assert chunks is not None and chunks[0] >= 3
    finally:
        with pg.connect(autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{dbname}" WITH (FORCE)')


def test_innodb_range_partitioning_works(stack_endpoints: StackEndpoints) -> None:
    my = stack_endpoints.get("mariadb")
    assert my is not None
    dbname = f"t_{uuid.uuid4().hex[:10]}"
    conn = my.connect()
    cur = conn.cursor()
    cur.execute(f"CREATE DATABASE `{dbname}`")
    try:
        cur.execute(f"USE `{dbname}`")
        cur.execute(
            "CREATE TABLE p (att_conf_id INT UNSIGNED NOT NULL, data_time DATETIME(6) NOT NULL, v DOUBLE,"
            " PRIMARY KEY (att_conf_id, data_time)) ENGINE=InnoDB"
            " PARTITION BY RANGE COLUMNS(data_time) ("
            " PARTITION p2025 VALUES LESS THAN ('2026-01-01'),"
            " PARTITION p2026 VALUES LESS THAN ('2027-01-01'),"
            " PARTITION p_future VALUES LESS THAN (MAXVALUE))"
        )
        rows = [(1, "2025-06-01 00:00:00.000001", 1.0), (1, "2026-06-01 00:00:00", 2.0),
                (2, "2026-12-31 23:59:59.999999", 3.0), (2, "2030-01-01 00:00:00", 4.0)]
        cur.executemany("INSERT INTO p VALUES (?, ?, ?)", rows)
        conn.commit()
        cur.execute("SELECT PARTITION_NAME, TABLE_ROWS FROM information_schema.PARTITIONS"
                    " WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'p' ORDER BY PARTITION_ORDINAL_POSITION", (dbname,))
        assert [name for name, _ in cur.fetchall()] == ["p2025", "p2026", "p_future"]
        cur.execute("SELECT COUNT(*) FROM p PARTITION (p2026)")
        assert cur.fetchone()[0] == 2
        cur.execute("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'p'",
                    (dbname,))
        assert cur.fetchone()[0] == "InnoDB"
    finally:
        cur.execute(f"DROP DATABASE `{dbname}`")
        conn.close()


def test_device_server_registers_and_is_exported(tango_host: str, tmp_path: Path) -> None:
    host, port = tango_host.split(":")
    db = tango.Database(host, int(port))
    name = f"test/probe/{uuid.uuid4().hex[:6]}"
    info = tango.DbDevInfo()
    info.name, info._class, info.server = name, "StackProbe", "StackProbe/pytest"
    db.add_server(info.server, info, with_dserver=True)
    orb_port = pick_free_port(21900)
    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "servers" / "StackProbe.py"), "pytest",
         "-ORBendPoint", f"giop:tcp:127.0.0.1:{orb_port}"],
        env={**os.environ, "TANGO_HOST": tango_host,
             "TANGO_ZMQ_EVENT_PORT": str(pick_free_port(orb_port + 1)),
             "TANGO_ZMQ_HEARTBEAT_PORT": str(pick_free_port(orb_port + 2))},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        eventually(lambda: db.get_device_info(name).exported == 1, 30, f"{name} exported")
        proxy = tango.DeviceProxy(f"tango://{tango_host}/{name}")
        assert proxy.read_attribute("answer").value == 42.0
    finally:
        server.terminate()
        server.wait(timeout=30)
        db.delete_server(info.server)


def test_cpp_tango_database_on_mariadb(scratch_state_dir: Path) -> None:
    result = cli("stack", "up", "--state-dir", str(scratch_state_dir), "--only", "mariadb", "--only", "tango",
                 "--tango-db", "cpp", "--set", "mariadb.innodb_buffer_pool_size=256M", "--json")
    assert result.returncode == 0, result.stderr
    tango_ep = json.loads(result.stdout)["tango"]
    assert tango_ep["kind"] == "cpp-mariadb"
    db = tango.Database(tango_ep["host"], tango_ep["port"])
    info = tango.DbDevInfo()
    info.name, info._class, info.server = "test/cpp/1", "StackProbe", "StackProbe/cpp"
    db.add_server(info.server, info, with_dserver=True)
    assert "test/cpp/1" in db.get_device_name("StackProbe/cpp", "StackProbe").value_string

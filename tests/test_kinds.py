# SPDX-License-Identifier: Apache-2.0
"""Subscriber kinds: the scenario keys and their refusals, the LibConfiguration the real HDB++
libraries need, a subscriber that exits at start, and the environment given to a kind's processes.

The acceptance run of two kinds on the three backends is tests/test_kinds_run.py.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.scenario.scenario import load_scenario
from hdbbench.stack.servers.endpoints import MariaDBEndpoint, PostgresEndpoint
from hdbbench.subscribers.kinds import DEFAULT_KIND
from hdbbench.subscribers.launcher import DEFAULT_BINARY, SubscriberFleet, SubscriberSpec, lib_configuration
from tests.harness import REPO

BASE = """
name = "kinds"
backends = ["timescaledb", "mysql"]
[subscribers]
lib_configuration = { batch_size = "1000" }
"""


def scenario(tmp_path: Path, kinds: str, base: str = BASE) -> Path:
    path = tmp_path / "kinds.toml"
    path.write_text(base + kinds)
    return path


def executable(tmp_path: Path, name: str, body: str, mode: int = 0o755) -> Path:
    path = tmp_path / name
    path.write_text(body)
    path.chmod(mode)
    return path


def test_kinds_resolve_in_order_with_their_keys(tmp_path: Path) -> None:
    other = executable(tmp_path, "hdb++es-srv", "#!/bin/sh\nexit 0\n")
    loaded = load_scenario(scenario(tmp_path, f"""
[[subscribers.kinds]]
name = "hdbbench-es"
[[subscribers.kinds]]
name = "hdbpp-es"
binary = "{other}"
env = {{ LD_LIBRARY_PATH = "/opt/hdbpp/lib" }}
lib_configuration = {{ libname = "libhdb++timescale.so.2", batch_size = 64 }}
"""))
    ours, theirs = loaded.kinds
    assert ours == DEFAULT_KIND and ours.executable() == DEFAULT_BINARY
    assert theirs.name == "hdbpp-es" and theirs.executable() == other
    assert dict(theirs.env) == {"LD_LIBRARY_PATH": "/opt/hdbpp/lib"}
    assert dict(theirs.lib_configuration) == {"libname": "libhdb++timescale.so.2", "batch_size": "64"}
    written = loaded.to_dict()["subscriber_kinds"]
    assert [k["name"] for k in written] == ["hdbbench-es", "hdbpp-es"] and written[1]["binary"] == str(other)


def test_without_kinds_the_one_kind_is_ours(tmp_path: Path) -> None:
    assert load_scenario(scenario(tmp_path, "")).kinds == (DEFAULT_KIND,)
    assert load_scenario(REPO / "scenarios" / "small.toml").kinds == (DEFAULT_KIND,)


@pytest.mark.parametrize(("kinds", "message"), [
    ('[[subscribers.kinds]]\nname = "x"\nbinray = "/bin/true"\n',
     "[[subscribers.kinds]] #1 ('x') binray: unknown key; did you mean 'binary'?"),
    ('[[subscribers.kinds]]\nname = "x"\nbinary = "/nonexistent/hdb++es-srv"\n',
     "[[subscribers.kinds]] #1 ('x') binary: /nonexistent/hdb++es-srv: no such file"),
    ('[[subscribers.kinds]]\nname = "a"\n[[subscribers.kinds]]\nname = "a"\n',
     "[[subscribers.kinds]] #2 ('a') name: 'a' names a kind twice"),
    ('[[subscribers.kinds]]\nname = "x"\nlib_configuration = { batch_size = "lots" }\n',
     "lib_configuration: batch_size='lots': libhdb++mysql reads batch_size as an integer"),
    ('[[subscribers.kinds]]\nname = "x"\nenv = { PATH = ["a"] }\n', "env: PATH: must be a string or a number"),
    ('[[subscribers.kinds]]\nname = "no spaces"\n', "name: 'no spaces' must start with a letter or digit"),
])
def test_bad_kinds_are_refused_in_one_line_naming_file_and_key(tmp_path: Path, kinds: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_scenario(scenario(tmp_path, kinds))
    text = str(caught.value)
    assert message in text and text.startswith(str(tmp_path / "kinds.toml")) and "\n" not in text


def test_a_binary_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    plain = executable(tmp_path, "hdb++es-srv", "#!/bin/sh\n", mode=stat.S_IRUSR | stat.S_IWUSR)
    with pytest.raises(ConfigError, match=r"kinds.toml:\d+: \[\[subscribers.kinds\]\] #1 \('x'\) binary: .*not executable"):
        load_scenario(scenario(tmp_path, f'[[subscribers.kinds]]\nname = "x"\nbinary = "{plain}"\n'))


def test_a_non_integer_mysql_key_of_the_scenario_is_refused(tmp_path: Path) -> None:
    base = BASE.replace('batch_size = "1000"', 'json_array = "yes"')
    with pytest.raises(ConfigError, match=r"\[subscribers\] lib_configuration: json_array='yes'.*\(backend mysql\)"):
        load_scenario(scenario(tmp_path, "", base))
    # the same keys are free where no backend's library reads them as integers
    assert load_scenario(scenario(tmp_path, "", base.replace('"timescaledb", "mysql"', '"timescaledb"')))


def test_lib_configuration_suits_the_real_libraries() -> None:
    pg = PostgresEndpoint("127.0.0.1", 25432, "hdbbench", "secret")
    for backend in ("timescaledb", "postgresql"):
        lines = dict(line.split("=", 1) for line in lib_configuration(backend, "hdbpp", {"postgres": pg}))
        # libhdb++timescale reads only connect_string (besides logging); `backend` is ours
        assert set(lines) == {"backend", "libname", "connect_string"}
        assert lines["libname"] == "libhdb++timescale.so.2" and "dbname='hdbpp'" in lines["connect_string"]
    maria = MariaDBEndpoint("127.0.0.1", 23306, "hdbbench", "secret")
    lines = dict(line.split("=", 1) for line in lib_configuration("mysql", "hdbpp", {"mariadb": maria},
                                                                    overrides={"batch_size": "64"}))
    assert lines["libname"] == "libhdb++mysql.so.7" and lines["batch_size"] == "64"
    assert {"host", "port", "user", "password", "dbname"} <= set(lines) and lines["dbname"] == "hdbpp"
    overridden = lib_configuration("mysql", "hdbpp", {"mariadb": maria}, overrides={"libname": "/opt/libhdb++mysql.so"})
    assert "libname=/opt/libhdb++mysql.so" in overridden
    with pytest.raises(ConfigError, match=r"^LibConfiguration for mysql: ignore_duplicates='on': .*integer"):
        lib_configuration("mysql", "hdbpp", {"mariadb": maria}, overrides={"ignore_duplicates": "on"})


def test_subscribers_up_refuses_a_malformed_env(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "hdbbench", "subscribers", "up", "--backend", "timescaledb",
                             "--env", "LD_LIBRARY_PATH", "--state-dir", str(tmp_path / "state")],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 2 and "--env takes KEY=VALUE, got 'LD_LIBRARY_PATH'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_subscriber_that_exits_at_start_is_said_in_one_line(tango_host: str, tmp_path: Path) -> None:
    # As the real hdbpp-es does when its LibConfiguration's libname does not load.
    failing = executable(tmp_path, "hdb++es-srv", "#!/bin/sh\necho 'loading libhdb++timescale.so.2' >&2\n"
                                                  "echo 'Error: libname: cannot open shared object file' >&2\nexit 1\n")
    fleet = SubscriberFleet(tango_host, tmp_path, binary=failing, attached=True)
    spec = SubscriberSpec(instance=1, lib_configuration=("libname=libhdb++timescale.so.2",),
                          group=f"exit{uuid.uuid4().hex[:6]}")
    try:
        with pytest.raises(ServerError) as caught:
            fleet.up([spec], ready_timeout_s=30)
    finally:
        fleet.down()
    text = str(caught.value)
    assert "\n" not in text and f"{spec.device} (hdb++es-srv) exited at start" in text
    assert "cannot open shared object file" in text and "loading libhdb++timescale.so.2" in text


@pytest.mark.subscriber
def test_a_kinds_environment_reaches_its_subscriber(tango_host: str, tmp_path: Path) -> None:
    import psutil

    fleet = SubscriberFleet(tango_host, tmp_path, binary=DEFAULT_BINARY, attached=True,
                            env={"HDBBENCH_KIND_PROBE": "yes", "TANGO_HOST": "elsewhere:1"})
    spec = SubscriberSpec(instance=1, lib_configuration=("backend=null",), group=f"env{uuid.uuid4().hex[:6]}")
    try:
        fleet.up([spec])
        (pid,) = fleet.pids()
        environ = psutil.Process(pid).environ()
    finally:
        fleet.down()
    assert environ["HDBBENCH_KIND_PROBE"] == "yes"
    assert environ["TANGO_HOST"] == tango_host  # a kind cannot move the subscriber off our Tango database
    assert os.environ.get("HDBBENCH_KIND_PROBE") is None



@pytest.mark.subscriber
def test_a_port_taken_between_its_pick_and_the_subscribers_bind_is_left_for_another(
        tango_host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # On a shared machine another session's subscriber may bind the ORB port the moment after it was
    # found free: omniORB then exits at start ("Failed to bind"). Here a socket binds the port picked first.
    import socket

    import hdbbench.subscribers.launcher as subscribers

    holder = socket.socket()
    real_pick = subscribers.pick_free_port
    picks: list[int] = []

    def pick(preferred: int, **kwargs: object) -> int:
        port = real_pick(preferred, **kwargs)  # type: ignore[arg-type]
        if not picks:  # free when picked, then bound by "someone else"
            holder.bind(("127.0.0.1", port))
            holder.listen()
        picks.append(port)
        return port

    monkeypatch.setattr(subscribers, "pick_free_port", pick)
    fleet = SubscriberFleet(tango_host, tmp_path, binary=DEFAULT_BINARY, attached=True)
    spec = SubscriberSpec(instance=1, lib_configuration=("backend=null",), group=f"port{uuid.uuid4().hex[:6]}")
    try:
        fleet.up([spec], ready_timeout_s=30)
        assert len(fleet.pids()) == 1
    finally:
        fleet.down()
        holder.close()
    log = (tmp_path / "subscribers" / spec.label / "subscriber.log").read_text()
    held = picks[0]
    assert held not in picks[1:] and len(picks) >= 6  # two starts, three ports each
    first, second = log.split("Tango is not initialised", 1)
    assert f"port {held}" in first and "Failed to bind" not in second


FACILITY = """
name = "kinds"
backends = ["timescaledb"]
[devices]
inventory = "{inventory}"
scale = 1.0
[subscribers]
count = {count}
"""


def test_a_foreign_kind_past_tangos_topic_limit_is_warned_before_a_run(tmp_path: Path) -> None:
    other = executable(tmp_path, "hdb++es-srv", "#!/bin/sh\nexit 0\n")
    inventory = REPO / "inventories" / "example-facility.toml"   # 13,250 attributes
    kinds = f'[[subscribers.kinds]]\nname = "hdbbench-es"\n[[subscribers.kinds]]\nname = "hdbpp-es"\nbinary = "{other}"\n'
    two = load_scenario(scenario(tmp_path, kinds, FACILITY.format(inventory=inventory, count=2)))
    ours, theirs = two.kinds
    assert ours.send_hwm() is None and ours.attribute_limit() is None      # ours lifts the limit
    assert theirs.send_hwm() == 10_000 and theirs.attribute_limit() == 5_000
    assert ours.send_hwm({"event_sub_send_hwm": "10000"}) == 10_000         # unless told to keep it
    (warning,) = two.warnings
    assert "'hdbpp-es': 6,625 attributes per process > its safe 5,000" in warning and "at least 3" in warning
    assert load_scenario(scenario(tmp_path, kinds, FACILITY.format(inventory=inventory, count=3))).warnings == ()
    overridden = kinds + "safe_attributes = 10000\n"
    assert load_scenario(scenario(tmp_path, overridden, FACILITY.format(inventory=inventory, count=2))).warnings == ()


def test_unproven_attributes_are_given_their_likely_cause() -> None:
    from hdbbench.subscribers.kinds import unproven_cause

    assert unproven_cause(0, 6_625, 10_000) is None
    cause = unproven_cause(17, 6_625, 10_000)
    assert cause is not None and cause.startswith("13,250 topics per subscriber process > 10,000: Tango's event consumer")
    assert "not Tango's event consumer limit" in str(unproven_cause(3, 4_417, 10_000))
    assert "no limit" in str(unproven_cause(3, 6_625, None))

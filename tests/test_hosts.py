# SPDX-License-Identifier: Apache-2.0
"""Components on three hosts of this machine: network namespaces, sshd in each, the ansible playbook.

Three namespaces (db, dev, sub) are joined by veth pairs to a bridge in a fourth, with addresses of
198.18.0.0/15 (the benchmarking range, never routed); nothing is added to the machine's own network
namespace, so no traffic leaves these namespaces. Each runs sshd on its own address with a
throw-away key; ansible-playbook runs in the db namespace (the controller) and reaches every host
over ssh. All namespaces share this machine's file system, so "install on each host" is the same
checkout, set up by scripts/setup.sh (seconds when done before).

Everything is removed at the end, also on failure: each host's components are stopped from their
records, every process left in a namespace is killed by its pid, then the namespaces go. Namespaces
of an earlier session that died (the pid in their name is gone) are removed at the start.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from tests.harness import REPO, eventually
from tests.harness.servers import skip_without_namespaces

VENV_BIN = Path(sys.executable).parent
SSHD = Path("/usr/sbin/sshd")
PREFIX = "hbh"  # namespaces hbh<pid>-<host>; temporary directories /tmp/hbh-<pid>
HOSTS = {"db": "198.18.0.1", "dev": "198.18.0.2", "sub": "198.18.0.3"}
CONTROLLER = "db"

pytestmark = [pytest.mark.hosts, pytest.mark.timeout(900)]


def _run(*argv: str, check: bool = True, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), check=check, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]


def _namespaces() -> list[str]:
    return [line.split()[0] for line in _run("ip", "netns", "list", check=False).stdout.splitlines() if line.strip()]


def _remove(tag: str, state: Path | None) -> None:
    """Stop what the hosts of session `tag` started, kill what is left in its namespaces, remove them."""
    if state is not None and state.is_dir():
        for host_state in sorted(p for p in state.iterdir() if p.is_dir()):  # one per inventory host
            _run(str(VENV_BIN / "hdbbench"), "hosts", "down", "--state-dir", str(host_state), check=False,
                 timeout=120)
    names = [n for n in _namespaces() if n.startswith(f"{tag}-")]
    for name in names:
        pids = [int(p) for p in _run("ip", "netns", "pids", name, check=False).stdout.split()]
        procs = []
        for pid in pids:
            try:
                proc = psutil.Process(pid)
                proc.send_signal(signal.SIGTERM)
                procs.append(proc)
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(procs, timeout=10)
        for proc in alive:
            try:
                proc.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=5)
    for name in names:
        _run("ip", "netns", "del", name, check=False)


def _clean_stale() -> None:
    """Namespaces and directories of earlier sessions whose process is gone."""
    tags = {m.group(1) for n in _namespaces() if (m := re.match(rf"^({PREFIX}(\d+))-", n))}
    tags |= {f"{PREFIX}{p.name.split('-')[1]}" for p in Path(tempfile.gettempdir()).glob(f"{PREFIX}-*")
             if p.name.split("-")[1].isdigit()}
    for tag in tags:
        pid = int(tag[len(PREFIX):])
        if pid != os.getpid() and not psutil.pid_exists(pid):
            directory = Path(tempfile.gettempdir()) / f"{PREFIX}-{pid}"
            _remove(tag, directory / "state" if directory.is_dir() else None)
            shutil.rmtree(directory, ignore_errors=True)


@dataclass
class Testbed:
    __test__ = False  # not a test class
    tag: str
    dir: Path
    inventory: Path

    def ns(self, host: str) -> str:
        return f"{self.tag}-{host}"

    def in_ns(self, host: str, *argv: str, timeout: float = 600, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
        return _run("ip", "netns", "exec", self.ns(host), *argv, check=False, timeout=timeout, env=env)

    def playbook(self, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible" / "ansible.cfg"),
               "ANSIBLE_LOCAL_TEMP": str(self.dir / "ansible-local"), "ANSIBLE_REMOTE_TMP": str(self.dir / "ansible-remote"),
               "ANSIBLE_SSH_CONTROL_PATH_DIR": str(self.dir / "cp"), "ANSIBLE_PIPELINING": "1",
               "ANSIBLE_PRIVATE_KEY_FILE": str(self.dir / "id"), "ANSIBLE_NOCOLOR": "1", "LC_ALL": "C.UTF-8",
               "ANSIBLE_SSH_ARGS": "-o ControlMaster=auto -o ControlPersist=30s -o UserKnownHostsFile=/dev/null"}
        return self.in_ns(CONTROLLER, str(VENV_BIN / "ansible-playbook"), "-i", str(self.inventory),
                          str(REPO / "ansible" / name), *extra, env=env)

    def fetched(self, run_id: str) -> Path:
        runs = sorted((self.dir / "fetched" / f"db1-{run_id}").glob("*-hosts"))
        assert runs, f"no run directory fetched for run {run_id}"
        return runs[-1]


def _build(tag: str, directory: Path) -> None:
    bridge = f"{tag}-br"
    _run("ip", "netns", "add", bridge)
    _run("ip", "-n", bridge, "link", "add", "br0", "type", "bridge")
    _run("ip", "-n", bridge, "link", "set", "br0", "up")
    for host, address in HOSTS.items():
        ns = f"{tag}-{host}"
        _run("ip", "netns", "add", ns)
        _run("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", f"v{host}", "netns", bridge)
        _run("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
        _run("ip", "-n", ns, "link", "set", "eth0", "up")
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        _run("ip", "-n", bridge, "link", "set", f"v{host}", "master", "br0")
        _run("ip", "-n", bridge, "link", "set", f"v{host}", "up")
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(directory / "id"))
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(directory / "host_key"))
    shutil.copy(directory / "id.pub", directory / "authorized_keys")
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    for host, address in HOSTS.items():
        config = directory / f"sshd-{host}.conf"
        config.write_text("\n".join([
            f"ListenAddress {address}:22", f"HostKey {directory / 'host_key'}", f"PidFile {directory}/sshd-{host}.pid",
            f"AuthorizedKeysFile {directory / 'authorized_keys'}", "PermitRootLogin prohibit-password",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
            "Subsystem sftp internal-sftp", ""]))
        log = open(directory / f"sshd-{host}.log", "wb")  # noqa: SIM115 - sshd writes to it while it runs
        subprocess.Popen(["ip", "netns", "exec", f"{tag}-{host}", str(SSHD), "-D", "-e", "-f", str(config)],
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for host in HOSTS:
        sshd_log = directory / f"sshd-{host}.log"
        eventually(lambda: "Server listening" in sshd_log.read_text(errors="replace"), 20,
                   lambda: f"sshd of {host} listening: {sshd_log.read_text(errors='replace')[-2000:]}")


def _inventory(directory: Path) -> Path:
    text = (REPO / "ansible" / "inventory.example.ini").read_text()
    # The namespaces share this file system: every host's checkout is this one; state and fetched runs here.
    text = re.sub(r"(?m)^hdbbench_dir = .*$", f"hdbbench_dir = {REPO}", text)
    text = re.sub(r"(?m)^hdbbench_state = .*$", f"hdbbench_state = {directory / 'state'}", text)
    text += f"hdbbench_fetch_dir = {directory / 'fetched'}\n"
    path = directory / "inventory.ini"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def testbed() -> Iterator[Testbed]:
    skip_without_namespaces("network namespaces, veth pairs and tc", [
        (SSHD.exists() and shutil.which("ssh-keygen") is not None,
         "sshd is not installed (Debian package openssh-server; scripts/setup.sh installs it)"),
        ((VENV_BIN / "ansible-playbook").exists(),
         "ansible-playbook is not in the virtualenv (requirements.txt; run ./run.sh setup)")])
    _clean_stale()
    tag = f"{PREFIX}{os.getpid()}"
    directory = Path(tempfile.gettempdir()) / f"{PREFIX}-{os.getpid()}"
    directory.mkdir(mode=0o700)
    try:
        _build(tag, directory)
        yield Testbed(tag, directory, _inventory(directory))
    finally:
        _remove(tag, directory / "state")
        shutil.rmtree(directory, ignore_errors=True)
        assert not [n for n in _namespaces() if n.startswith(f"{tag}-")], "namespaces left behind"
        from hdbbench.stack.servers import homes

        left = [h for h in ("db1", "dev1", "sub1") if homes.home_path(directory / "state" / h, "").exists()]
        assert not left, f"server homes left behind for {left}"


# --- without namespaces: the [hosts] table, addresses, the controller's refusals -----------------

HOSTED_SCENARIO = (REPO / "scenarios" / "hosts.toml").read_text()


def test_only_loopback_and_the_benchmarking_range_are_accepted() -> None:
    from hdbbench.model.errors import ConfigError
    from hdbbench.stack.servers.ports import check_address

    assert check_address("local") == "127.0.0.1"
    assert check_address("198.19.255.1") == "198.19.255.1"
    for bad in ("10.0.0.1", "0.0.0.0", "198.20.0.1", "example", "::1"):
        with pytest.raises(ConfigError, match="198.18.0.0/15|not an IPv4"):
            check_address(bad)


def test_a_scenario_naming_an_address_elsewhere_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(HOSTED_SCENARIO.replace('devices = ["198.18.0.2"]', 'devices = ["198.18.0.2", "192.168.1.9"]')
                    .replace('profile = "devices/', f'profile = "{REPO}/devices/'))
    done = _run(str(VENV_BIN / "hdbbench"), "hosts", "show", str(path), check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"hdbbench: error: {path}:32: [hosts] devices: 192.168.1.9 is outside 198.18.0.0/15 (the benchmarking "
        "range) and not 127.0.0.1; hdbbench sends no traffic anywhere else"]


def test_device_servers_and_subscribers_are_dealt_over_their_hosts(tmp_path: Path) -> None:
    from hdbbench.scenario import hosts
    from hdbbench.scenario.plan import plan_hosts
    from hdbbench.scenario.scenario import load_scenario

    path = tmp_path / "s.toml"
    path.write_text(HOSTED_SCENARIO.replace('devices = ["198.18.0.2"]', 'devices = ["198.18.0.2", "198.18.0.5"]')
                    .replace('profile = "devices/', f'profile = "{REPO}/devices/')
                    .replace("[devices]\n", "[devices]\nservers = 3\n")
                    .replace("throughput = true", "throughput = true\nsubscriber_sweep = [2]"))
    layout = hosts.describe(plan_hosts(load_scenario(path)))
    assert list(layout["device_servers"].values()) == ["198.18.0.2", "198.18.0.5", "198.18.0.2"]
    assert layout["subscribers"] == {"archiving/hdbbench-es/1": "198.18.0.3", "archiving/hdbbench-es/2": "198.18.0.3"}
    assert layout["distributed"] is True


def test_a_hosted_run_without_the_servers_addresses_writes_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HDBBENCH_")}
    done = _run(str(VENV_BIN / "hdbbench"), "run", str(REPO / "scenarios" / "hosts.toml"), "--runs",
                str(tmp_path / "runs"), "--state-dir", str(tmp_path / "state"), check=False, env=env, cwd=REPO)
    assert done.returncode == 2, done.stderr
    assert "HDBBENCH_TANGO_HOST" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


# --- across three namespaces ---------------------------------------------------------------------


def _recap(output: str) -> dict[str, dict[str, int]]:
    recap = {}
    for host, counts in re.findall(r"(?m)^(\S+)\s+:\s+(ok=.*)$", output):
        recap[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counts)}
    return recap


def _results(run_dir: Path) -> dict:
    return json.loads((run_dir / "results.json").read_text())["results"]


def _listening(testbed: Testbed, host: str) -> set[str]:
    out = testbed.in_ns(host, "ss", "-Hltn").stdout
    return {line.split()[3].rsplit(":", 1)[0] for line in out.splitlines() if line.strip()}


@dataclass(frozen=True)
class PlaybookRun:
    output: str
    run_dir: Path


@pytest.fixture(scope="module")
def first_run(testbed: Testbed) -> PlaybookRun:
    """The playbook's first run of the scenario across the three hosts, shared by the tests that read it."""
    done = testbed.playbook("site.yml")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return PlaybookRun(done.stdout, testbed.fetched("1"))


@pytest.mark.subscriber
def test_playbook_runs_the_scenario_across_three_hosts(testbed: Testbed, first_run: PlaybookRun) -> None:
    assert set(_recap(first_run.output)) == {"db1", "dev1", "sub1"}

    # Every component bound its host's address: nothing on 0.0.0.0, nothing on another address.
    for host, address in HOSTS.items():
        assert _listening(testbed, host) == {address}, (host, testbed.in_ns(host, "ss", "-Hltnp").stdout)

    results = _results(first_run.run_dir)
    hosts = results["hosts"]
    assert hosts["distributed"] is True
    assert (hosts["tango_db"], hosts["postgres"], hosts["mariadb"], hosts["controller"]) == (HOSTS["db"],) * 4
    assert set(hosts["device_servers"].values()) == {HOSTS["dev"]}
    assert set(hosts["subscribers"].values()) == {HOSTS["sub"]}
    trials = results["trials"]
    assert {t["backend"] for t in trials} == set(tomllib.loads(HOSTED_SCENARIO)["backends"])
    for trial in trials:
        accounting = trial["accounting"]
        assert accounting["emitted"] > 0
        assert accounting["stored"] + accounting["lost"] - accounting["duplicates"] == accounting["emitted"]
        assert accounting["lost"] == 0 and accounting["duplicates"] == 0, trial["label"]
        assert trial["cpu"] == {}  # the devices and subscribers are on other hosts: not sampled as zero
    assert "198.18.0.2" in (first_run.run_dir / "report.html").read_text()


@pytest.mark.subscriber
def test_a_second_playbook_run_changes_nothing(testbed: Testbed, first_run: PlaybookRun) -> None:
    second = testbed.playbook("site.yml")
    assert second.returncode == 0, second.stdout[-4000:]
    recap = _recap(second.stdout)
    assert recap and all(counts["changed"] == 0 and counts["failed"] == 0 for counts in recap.values()), \
        second.stdout[-4000:]


def _netem_available(testbed: Testbed) -> bool:
    ns = testbed.ns("dev")
    probe = _run("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
                 check=False)
    _run("ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "lo", "root", check=False)
    return probe.returncode == 0


def _delay(testbed: Testbed, host: str, peer: str, delay_ms: float) -> str:
    """A fixed delay on host's traffic to peer only; returns how it was made.

    tc netem (a priority band with a filter on the destination) where the kernel has it; else a
    userspace delay line (tests/delayline.py: a TUN device and policy routing in the namespace).
    """
    ns = testbed.ns(host)
    if _netem_available(testbed):
        for argv in (["qdisc", "add", "dev", "eth0", "root", "handle", "1:", "prio"],
                     ["qdisc", "add", "dev", "eth0", "parent", "1:3", "handle", "30:", "netem", "delay",
                      f"{delay_ms}ms"],
                     ["filter", "add", "dev", "eth0", "protocol", "ip", "parent", "1:0", "prio", "3", "u32",
                      "match", "ip", "dst", f"{HOSTS[peer]}/32", "flowid", "1:3"]):
            _run("ip", "netns", "exec", ns, "tc", *argv)
        return "tc netem"
    line = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, str(Path(__file__).parent / "delayline.py"),
                             "delay0", HOSTS[peer], str(delay_ms)], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)  # killed with the namespace's other processes at the end
    assert line.stdout is not None and line.stdout.readline().strip() == "ready"
    return "delay line (this kernel has no netem)"


@pytest.mark.subscriber
def test_latency_between_devices_and_subscriber_shows_in_event_age(testbed: Testbed, first_run: PlaybookRun) -> None:
    how = {_delay(testbed, "dev", "sub", 2.0), _delay(testbed, "sub", "dev", 2.0)}
    run = testbed.playbook("site.yml", "-e", "hdbbench_run_id=latency")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    plain, delayed = _results(first_run.run_dir), _results(testbed.fetched("latency"))
    for trial in delayed["trials"]:
        accounting = trial["accounting"]
        assert accounting["lost"] == 0 and accounting["stored"] == accounting["emitted"], trial["label"]
        # Every event crossed the 2 ms link after its source timestamp was taken.
        assert trial["event_age_at_reception_s"]["p50"] >= 0.002, trial["event_age_at_reception_s"]
    before = {t["backend"]: t["event_age_at_reception_s"]["p50"] for t in plain["trials"]}
    after = {t["backend"]: t["event_age_at_reception_s"]["p50"] for t in delayed["trials"]}
    report = (testbed.fetched("latency") / "report.html").read_text()
    assert "age at reception p50" in report
    compare = testbed.dir / "compare.html"
    done = _run(str(VENV_BIN / "hdbbench"), "compare", str(first_run.run_dir), str(testbed.fetched("latency")),
                "--output", str(compare), check=False)
    assert done.returncode == 0, done.stderr
    print(f"event age at reception p50 without / with 2 ms device-subscriber latency ({', '.join(how)}): "
          f"{before} / {after}")

# SPDX-License-Identifier: Apache-2.0
"""Secrets: no password reaches a process command line, a run's files, the report, a log or the CLI's
output; every file that holds one is readable by its owner only.

One short run (two backends: MariaDB's LibConfiguration carries the password as its own key,
PostgreSQL's inside the connect string) is watched from a sampling thread, which reads the command
line of every process on the machine while the servers, devices and subscribers run.
"""

from __future__ import annotations

import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from hdbbench.backends.accounts import account_password
from hdbbench.cli import main
from hdbbench.scenario.scenario import parse_scenario
from hdbbench.stack.servers.endpoints import StackEndpoints
from tests.harness import REPO

# Files whose job is to hold a password (server records, the stack's record, PostgreSQL's initdb
# password file, the Tango database with the subscribers' LibConfiguration): mode 0600 each.
SECRET_HOLDERS = ("server.json", "stack.json", "pwfile", "tango.db")
SCAN_LIMIT = 20 << 20  # bytes; larger files are data (database pages), not text we write


def _secrets(endpoints: StackEndpoints) -> list[str]:
    out = []
    for endpoint in (endpoints.get("postgres"), endpoints.get("mariadb")):
        if endpoint is not None:
            out.append(endpoint.password)
            out += [account_password(endpoint.password, a) for a in
                    ("hdb_event_sub", "hdb_data_reporter", "hdb_cfg_man", "hdbpprw", "hdbppro")]
    return out


class CommandLines:
    """Every process command line seen while it runs, sampled until stopped."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            for proc in psutil.process_iter(["cmdline"]):
                cmdline = proc.info.get("cmdline")
                if cmdline:
                    self.seen.add(" ".join(cmdline))

    def __enter__(self) -> CommandLines:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(scope="module")
def watched_run(stack_endpoints: StackEndpoints, test_state_dir: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, CommandLines]]:
    from hdbbench.report.page import write_report
    from hdbbench.run.runner import RunOptions, run_scenario

    scenario = parse_scenario({
        "name": "secrets", "backends": ["mysql", "postgresql"],
        "devices": {"profile": "devices/profiles/insertion-devdouble.toml"},
        "load": {"rate": 200, "duration_s": 4, "warmup_s": 1},
        "measurements": {"throughput": True},
    }, REPO / "scenarios" / "secrets.toml")
    with CommandLines() as lines:
        run = run_scenario(scenario, RunOptions(state_dir=test_state_dir, runs_root=tmp_path_factory.mktemp("runs")))
    write_report(run)
    yield run, lines


def _files(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size <= SCAN_LIMIT:
            yield path


def _holding(path: Path, secrets: list[str]) -> bool:
    data = path.read_bytes()
    return any(s.encode() in data for s in secrets)


@pytest.mark.subscriber
def test_no_command_line_holds_a_password(watched_run: tuple[Path, CommandLines],
                                          stack_endpoints: StackEndpoints) -> None:
    _, lines = watched_run
    started = [line for line in lines.seen if "hdbbench-es" in line or "HdbBench" in line]
    assert any("hdbbench-es" in line for line in started), "no subscriber seen while the run ran"
    assert any("postgres" in line for line in lines.seen) and any("mariadbd" in line for line in lines.seen)
    leaking = [line for line in lines.seen if any(s in line for s in _secrets(stack_endpoints))]
    assert leaking == []


@pytest.mark.subscriber
def test_no_file_of_a_run_holds_a_password(watched_run: tuple[Path, CommandLines],
                                          stack_endpoints: StackEndpoints) -> None:
    run, _ = watched_run
    names = {p.name for p in _files(run)}
    assert {"results.json", "environment.json", "scenario.json", "report.html"} <= names
    assert [p for p in _files(run) if _holding(p, _secrets(stack_endpoints))] == []


@pytest.mark.subscriber
def test_only_secret_holders_hold_passwords_and_are_private(watched_run: tuple[Path, CommandLines],
                                                            stack_endpoints: StackEndpoints,
                                                            test_state_dir: Path) -> None:
    secrets = _secrets(stack_endpoints)
    holders = [p for p in _files(test_state_dir) if _holding(p, secrets)]
    assert any(p.name == "tango.db" for p in holders), "the subscribers' LibConfiguration should be in tango.db"
    for path in holders:
        assert path.name.startswith(SECRET_HOLDERS), f"{path} holds a password"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path} is {oct(stat.S_IMODE(path.stat().st_mode))}"
    logs = [p for p in _files(test_state_dir) if p.suffix == ".log"]
    assert logs and not [p for p in logs if _holding(p, secrets)]


def test_the_tango_database_directory_is_private(test_state_dir: Path) -> None:
    assert stat.S_IMODE((test_state_dir / "tangodb").stat().st_mode) == 0o700


@pytest.mark.subscriber
def test_status_output_holds_no_password(watched_run: tuple[Path, CommandLines], stack_endpoints: StackEndpoints,
                                         test_state_dir: Path) -> None:
    result = CliRunner().invoke(main, ["stack", "status", "--state-dir", str(test_state_dir)])
    assert "ready" in result.output
    assert not any(s in result.output for s in _secrets(stack_endpoints))

# SPDX-License-Identifier: Apache-2.0
"""`hdbbench check` and the bad-input corpus: every bad file is refused in one line, every shipped file passes.

Each file of tests/bad_inputs/ starts with ``# expect: <words of the error>``; its name starts with the
kind it is meant as (scenario-, profile-, inventory-, query-set-). The commands that take one kind
(`run`, `devices up`, `size plan`, `extract`) refuse a file of another kind before anything starts.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from hdbbench.cli import main
from hdbbench.cli.options import Finite
from hdbbench.model.errors import ConfigError
from hdbbench.scenario.inputs import kind_of
from tests.harness import REPO
from tests.harness.runs import HDBBENCH

CORPUS = REPO / "tests" / "bad_inputs"
BAD_FILES = sorted(CORPUS.glob("*.toml"))
SHIPPED = sorted([*REPO.glob("scenarios/*.toml"), *REPO.glob("devices/profiles/*.toml"),
                  *REPO.glob("inventories/*.toml"), *REPO.glob("query_sets/*.toml")])
KIND_OF_PREFIX = {"scenario": "scenario", "profile": "device profile", "inventory": "inventory",
                  "query-set": "query set"}


def _expected(path: Path) -> str:
    first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8").removeprefix("\ufeff")
    assert first.startswith("# expect: "), f"{path.name}: the first line must be '# expect: <words>'"
    return first.removeprefix("# expect: ")


def _intended_kind(path: Path) -> str:
    return next(kind for prefix, kind in KIND_OF_PREFIX.items() if path.name.startswith(prefix + "-"))


def test_the_corpus_is_broad() -> None:
    assert len(BAD_FILES) >= 60
    per_kind = {kind: sum(_intended_kind(p) == kind for p in BAD_FILES) for kind in KIND_OF_PREFIX.values()}
    assert min(per_kind.values()) >= 10, per_kind


@pytest.mark.parametrize("path", BAD_FILES, ids=lambda p: p.name)
def test_each_bad_file_is_refused_in_one_line(path: Path) -> None:
    relative = path.relative_to(REPO)
    result = CliRunner().invoke(main, ["check", str(relative)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"hdbbench: error: {relative}")
    assert _expected(path) in lines[0]
    assert "Traceback" not in lines[0]


UNREADABLE = ("not valid TOML", "cannot read", "starts with a UTF-8 byte-order mark")


@pytest.mark.parametrize("path", [p for p in BAD_FILES if not _expected(p).startswith(UNREADABLE)],
                         ids=lambda p: p.name)
def test_each_bad_file_is_recognised_as_the_kind_it_pretends_to_be(path: Path) -> None:
    assert kind_of(path) == _intended_kind(path)


def test_every_shipped_file_passes_check() -> None:
    result = CliRunner().invoke(main, ["check", *(str(p.relative_to(REPO)) for p in SHIPPED)])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(SHIPPED) >= 10
    for path, line in zip(SHIPPED, lines):
        folder = path.relative_to(REPO).parts[0]
        kind = {"scenarios": "scenario", "devices": "device profile", "inventories": "inventory",
                "query_sets": "query set"}[folder]
        assert line == f"ok: {path.relative_to(REPO)} ({kind})"


def test_check_stops_at_the_first_bad_file_through_the_real_command() -> None:
    good, bad = "scenarios/small.toml", "tests/bad_inputs/scenario-rate-absurd.toml"
    result = subprocess.run([*HDBBENCH, "check", good, bad, "inventories/small-test.toml"], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stdout.splitlines() == [f"ok: {good} (scenario)"]
    assert result.stderr.splitlines() == [
        f"hdbbench: error: {bad}:9: [load] rate: must be <= 1e+07, got 1000000000000.0"]


@pytest.mark.parametrize("name", ["profile-name-semicolon.toml", "query-set-attribute-unicode.toml",
                                  "inventory-not-toml.toml", "scenario-not-utf8.toml"])
def test_bad_files_through_the_real_command(name: str) -> None:
    path = f"tests/bad_inputs/{name}"
    result = subprocess.run([*HDBBENCH, "check", path], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert path in result.stderr and _expected(REPO / path) in result.stderr


def test_check_without_files_is_a_usage_error() -> None:
    assert CliRunner().invoke(main, ["check"]).exit_code == 2


@pytest.mark.parametrize("command, wrong, kind", [
    (["run"], "inventories/small-test.toml", "an inventory file, not a scenario file"),
    (["size", "plan", "--from", "scenarios/small.toml"], "scenarios/small.toml", "a scenario file, not an inventory file"),
    (["extract"], "devices/profiles/all-types.toml", "a device profile file, not a query set file"),
    (["devices", "up", "--profile"], "query_sets/small.toml", "a query set file, not a device profile file"),
])
def test_commands_refuse_a_file_of_another_kind_before_starting(tmp_path: Path, command: list[str], wrong: str,
                                                                kind: str) -> None:
    result = CliRunner().invoke(main, [*command, wrong], catch_exceptions=True)
    assert isinstance(result.exception, ConfigError), result.output
    assert str(result.exception) == f"{wrong}: is {kind}"


@pytest.mark.parametrize("command, bad", [
    (["run"], "tests/bad_inputs/scenario-rate-absurd.toml"),
    (["devices", "up", "--profile"], "tests/bad_inputs/profile-count-absurd.toml"),
    (["size", "plan", "--from", "scenarios/small.toml"], "tests/bad_inputs/inventory-rate-absurd.toml"),
    (["extract"], "tests/bad_inputs/query-set-attribute-quotes.toml"),
])
def test_commands_use_the_same_validation_as_check(command: list[str], bad: str) -> None:
    checked = CliRunner().invoke(main, ["check", bad])
    result = CliRunner().invoke(main, [*command, bad], catch_exceptions=True)
    assert isinstance(result.exception, ConfigError)
    assert checked.stderr.strip() == f"hdbbench: error: {result.exception}"


def test_a_file_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    result = CliRunner().invoke(main, ["check", str(missing)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"hdbbench: error: {missing}: input file not found"]


def test_a_directory_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and "cannot read the input file" in result.stderr


def test_check_prints_a_scenarios_warnings_and_still_passes_it(tmp_path: Path) -> None:
    other = tmp_path / "hdb++es-srv"
    other.write_text("#!/bin/sh\nexit 0\n")
    other.chmod(0o755)
    path = tmp_path / "facility-hdbpp.toml"
    path.write_text(f'''name = "facility-hdbpp"
backends = ["timescaledb"]
[devices]
inventory = "{REPO / "inventories" / "example-facility.toml"}"
[subscribers]
count = 2
[[subscribers.kinds]]
name = "hdbbench-es"
[[subscribers.kinds]]
name = "hdbpp-es"
binary = "{other}"
''')
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0 and f"ok: {path} (scenario)" in result.stdout
    assert f"hdbbench: warning: {path}: subscriber kind 'hdbpp-es': 6,625 attributes per process" in result.stderr


# Bad input that is not a file for `check`: each command line ends in one line naming the option or
# file and what is wrong, exit 2, and writes nothing.
BAD_COMMANDS = [
    (["inventory", "from-yaml", "tests/bad_inputs/archiving-random-bytes.yaml", "-o", "{out}"],
     "tests/bad_inputs/archiving-random-bytes.yaml: not UTF-8 text"),
    (["plan", "archivers", "inventories/small-test.toml", "--backend", "timescaledb", "--rate", "nan", "--output", "{out}"],
     "Invalid value for '--rate': 'nan' is not a finite number"),
    (["plan", "archivers", "inventories/small-test.toml", "--backend", "timescaledb", "--rate", "inf", "--output", "{out}"],
     "Invalid value for '--rate': 'inf' is not a finite number"),
    (["plan", "archivers", "inventories/small-test.toml", "--backend", "timescaledb", "--rate", "-Infinity",
      "--output", "{out}"], "Invalid value for '--rate'"),
    (["size", "measure", "--seed", "18446744073709551616", "--runs", "{out}"], "Invalid value for '--seed'"),
]


@pytest.mark.parametrize("command, words", BAD_COMMANDS, ids=lambda c: " ".join(c) if isinstance(c, list) else "")
def test_each_bad_command_line_is_refused_in_one_line(tmp_path: Path, command: list[str], words: str) -> None:
    out = tmp_path / "out"
    result = subprocess.run([*HDBBENCH, *(a.replace("{out}", str(out)) for a in command)], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hdbbench: error: ") and words in lines[0], lines
    assert not out.exists()


def _parameters(command: click.Command, path: str = "hdbbench") -> Iterator[tuple[str, click.Parameter]]:
    for parameter in command.params:
        yield path, parameter
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _parameters(sub, f"{path} {name}")


def test_every_number_option_refuses_nan_and_infinities() -> None:
    floats = [(path, p) for path, p in _parameters(main) if isinstance(p.type, (click.types.FloatParamType))]
    assert floats, "no number option found: the walk over the commands is broken"
    assert [f"{path} {p.name}" for path, p in floats if not isinstance(p.type, Finite)] == []
    for text in ("nan", "inf", "-inf"):
        with pytest.raises(click.BadParameter):
            Finite().convert(text, None, None)

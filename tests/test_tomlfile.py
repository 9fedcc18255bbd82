# SPDX-License-Identifier: Apache-2.0
"""The one TOML reader: file:line: key: problem for every input kind, unknown keys with a suggestion."""

from __future__ import annotations

from pathlib import Path

import pytest

from hdbbench.model.errors import ConfigError
from hdbbench.model.tomlfile import Lines, read_document
from hdbbench.model.units import human_bytes
from hdbbench.scenario.inputs import kind_of, load_input
from tests.harness import REPO

SHIPPED = sorted([*REPO.glob("scenarios/*.toml"), *REPO.glob("devices/profiles/*.toml"),
                  *REPO.glob("inventories/*.toml"), *REPO.glob("query_sets/*.toml")])


def test_lines_are_found_in_tables_arrays_and_nested_arrays() -> None:
    text = 'name = "x"\n[load]\nrate = 5\nsat = { a = 1 }\n[[g]]\nk = 1\n[[g]]\nk = 2\n[data]\n[[data.g]]\nk = 3\n'
    lines = Lines(text)
    assert lines.line(("load", "rate")) == 3
    assert lines.line(("load", "sat", "a")) == 4  # an inline table's keys share its line
    assert lines.line(("g", 1, "k")) == 8
    assert lines.line(("g", 1, "missing")) == 7  # the entry's header
    assert lines.line(("data", "g", 0, "k")) == 11


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_input_is_recognised_and_valid(path: Path) -> None:
    kind, value = load_input(path)
    expected = {"scenarios": "scenario", "profiles": "device profile", "inventories": "inventory",
                "query_sets": "query set"}[path.parent.name]
    assert kind == expected and value is not None


BROKEN = [  # (file text, the line and words of the one error)
    ('name = "s"\n[load]\nrate = 1\nduraton_s = 60\n', "4: [load] duraton_s: unknown key; did you mean 'duration_s'?"),
    ('[profile]\nname = "p"\n[[attribute]]\nname = "a"\n[[attribute]]\nname = "b"\nrate_hx = 1\n',
     "7: [[attribute]] #2 ('b') rate_hx: unknown key; did you mean 'rate_hz'?"),
    ('name = "i"\n[[attributes]]\ntype = "devdouble"\nrate_hz = 1\ncuont = 4\n',
     "5: [[attributes]] #1 cuont: unknown key; did you mean 'count'?"),
    ('[[query]]\nname = "q"\nkind = "random"\nintervals = ["1h"]\ncount = 0\n', "5: [[query]] #1 ('q') count: must be >= 1, got 0"),
    ('[data]\nspan = "1d"\n[[data.attributes]]\ntype = "devdouble"\nperiod_s = "often"\n[[query]]\nkind = "random"\n',
     "5: [[data.attributes]] #1 period_s: must be a number, got 'often'"),
]


@pytest.mark.parametrize(("text", "expected"), BROKEN)
def test_each_kind_refuses_in_one_line_with_file_line_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "input.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_input(path)
    assert str(caught.value) == f"{path}:{expected}"


def test_not_toml_and_missing_files_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[load\n')
    with pytest.raises(ConfigError, match=r"bad\.toml:2: not valid TOML"):
        read_document(bad, "scenario")
    with pytest.raises(ConfigError, match=r"none\.toml: inventory file not found"):
        read_document(tmp_path / "none.toml", "inventory")
    assert kind_of(REPO / "query_sets" / "small.toml") == "query set"


def test_bytes_are_written_in_binary_units() -> None:
    assert human_bytes(512) == "512 B"
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(3 * 2 ** 30) == "3 GiB"
    assert human_bytes(1000 * 2 ** 20) == "1000 MiB"  # not 1e+03
    assert human_bytes(None) == "–" and human_bytes(float("nan")) == "–"

# SPDX-License-Identifier: Apache-2.0
"""Every kind of results file (the one table, hdbbench.results.kinds.KINDS) round-trips through the one
writer and the one reader: a record built with every field set is written, read back and equal, also
as a whole results file; an unknown key and a missing key are each refused in one line naming the key.
Pure Python: no server is started."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from hdbbench.model.records import ABSENT, Absent, RecordError, read, save, write
from hdbbench.results.document import ResultsFormatError, RunDirectory, read_results, results_document
from hdbbench.results.kinds import KINDS
from hdbbench.results.sizing import ProjectedGroup


def sample(hint: Any, depth: str = "") -> Any:
    """A value of type `hint` with every field of every record set (none left to its default)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return sample(next(a for a in args if a not in (type(None), Absent)), depth)
    if origin is typing.Literal:
        return args[-1]
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        return hint(**{f.name: sample(hints[f.name], f"{depth}.{f.name}")  # type: ignore[operator]
                       for f in dataclasses.fields(hint) if f.init})
    if origin is list:
        return [sample(args[0], depth)]
    if origin is dict:
        return {"k": sample(args[1], depth)}
    # Distinct leaves, so that a field read into its neighbour's place would not compare equal.
    return {int: len(depth), float: len(depth) + 0.5, str: depth or "x", bool: len(depth) % 2 == 0}.get(
        hint, {"free": [1, "two", None]})


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(write(value)))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_round_trips_through_the_one_writer_and_reader(kind: str, tmp_path: Path) -> None:
    record = sample(KINDS[kind])
    written = as_json(record)
    assert read(KINDS[kind], written) == record
    assert as_json(read(KINDS[kind], written)) == written  # and writes back the same JSON, key for key
    path = RunDirectory.create(tmp_path, kind).write_json("results.json", results_document(kind, {"seed": 1}, {}, record))
    document = read_results(path, kind)
    assert document.kind == kind and document.results == record
    assert json.loads(path.read_text())["results"] == written


def _first_nested(kind: str) -> tuple[str, str]:
    """A list-of-records field of the kind's record, and a required field of its items."""
    hints = typing.get_type_hints(KINDS[kind])
    for f in dataclasses.fields(KINDS[kind]):
        args = typing.get_args(hints[f.name])
        if typing.get_origin(hints[f.name]) is list and args and dataclasses.is_dataclass(args[0]):
            item = next(g.name for g in dataclasses.fields(args[0])
                        if g.default is dataclasses.MISSING and g.default_factory is dataclasses.MISSING)
            return f.name, item
    raise AssertionError(f"{kind}: no list of records")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_unknown_key_and_a_missing_key_are_refused_naming_the_key(kind: str, tmp_path: Path) -> None:
    record = KINDS[kind]
    written = as_json(sample(record))
    with pytest.raises(RecordError, match=rf"^results: a {record.__name__} record has unknown colour$"):
        read(record, written | {"colour": "red"}, "results")
    required = next(f.name for f in dataclasses.fields(record)
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
    with pytest.raises(RecordError, match=rf"^results: a {record.__name__} record lacks {required}$"):
        read(record, {k: v for k, v in written.items() if k != required}, "results")
    key, item = _first_nested(kind)
    damaged = written | {key: [{k: v for k, v in written[key][0].items() if k != item} | {"colour": 1}]}
    with pytest.raises(RecordError, match=rf"^results\.{key}\[0\]: a \w+ record lacks {item}; has unknown colour$"):
        read(record, damaged, "results")
    # The same in a results file: one line, naming the file too.
    path = RunDirectory.create(tmp_path, kind).path / "results.json"
    path.write_text(json.dumps({"format_version": 3, "kind": kind, "created": "", "scenario": {}, "environment": {},
                                "results": written | {"colour": "red"}}))
    with pytest.raises(ResultsFormatError, match=r"results\.json: results: a \w+ record has unknown colour$"):
        read_results(path)


def test_the_table_is_the_one_list_of_kinds() -> None:
    """Filled here, by nothing else: which files are checked does not depend on what was imported."""
    assert sorted(KINDS) == ["disk", "disk-plan", "disk-validate", "extraction", "faults", "hardware-plan", "insertion",
                            "replica"]
    assert all(dataclasses.is_dataclass(record) for record in KINDS.values())


def test_a_key_an_older_format_did_not_record_stays_absent_and_a_null_stays_null() -> None:
    group = as_json(sample(ProjectedGroup))
    older = {k: v for k, v in group.items() if k != "parts_at_retention"}
    assert read(ProjectedGroup, older).parts_at_retention is ABSENT and as_json(read(ProjectedGroup, older)) == older
    nulled = group | {"parts_at_retention": None}
    assert read(ProjectedGroup, nulled).parts_at_retention is None and as_json(read(ProjectedGroup, nulled)) == nulled


def test_a_file_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    path = save(tmp_path / "results.json", {"a": 1})
    with pytest.raises(TypeError):
        save(path, {(1, 2): "a tuple key"})  # JSON has no such key: nothing is written
    assert json.loads(path.read_text()) == {"a": 1}  # the old file, untouched
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary file left beside it

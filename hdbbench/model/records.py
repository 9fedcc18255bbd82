# SPDX-License-Identifier: Apache-2.0
"""Typed JSON records: dataclasses read from a results file and written back to the same JSON.

A record is a dataclass whose fields hold JSON values, other records, and lists or string-keyed
dicts of them, each possibly optional (``X | None``). The rules, the same for every record:

* reading (`read`): every field without a default must be present (null where its type allows);
  a field with a default may be absent; a key the dataclass has no field for is refused. Nested
  records, lists and dicts of records are read the same way; a value of a `Literal` type must be one
  of its values; an int, float, str or bool must be one (JSON has one number type: an int where a
  float is declared is a float's value, kept as written); other leaves (`Any`) are kept as written;
* writing (`write`): every field in declaration order, except a field declared with `omitted()`
  while it is None (the producer leaves such a key out rather than writing null), and a field
  declared with `absent()` while it is ABSENT (a key an older format did not record, where today's
  producer may write null: absent and null stay apart, so a file is written back as it was read);
* saving (`save`): the JSON of `write` into a file, atomically (a temporary file in the same
  directory, flushed to disk, then renamed over the file), so a reader never sees half a file and a
  crash leaves the old file or the new one. Every results file is written through it.

A record that breaks a rule is refused with `RecordError`, naming the record and the key, so a
results file is read exactly as its producer wrote it or not at all.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_OMITTED = "hdbbench.model.records.omitted"


class RecordError(ValueError):
    """A record that does not fit its dataclass: the message names the record and the key."""


def omitted() -> Any:
    """A field that defaults to None and is left out of the JSON while None."""
    return dataclasses.field(default=None, metadata={_OMITTED: True})


class Absent:
    """The value of an `absent()` field its file did not hold: falsy, and left out when written."""

    _one: Absent | None = None

    def __new__(cls) -> Absent:
        if cls._one is None:
            cls._one = super().__new__(cls)
        return cls._one

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = Absent()


def absent() -> Any:
    """A field that defaults to ABSENT (its key not in the file) and is left out of the JSON while ABSENT."""
    return dataclasses.field(default=ABSENT)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The resolved field types of a record class (resolved once: the annotations are strings)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def read(cls: type[T], data: Any, where: str = "") -> T:
    """The record `cls` of `data` (a JSON object) found at `where` in its file (a path of keys, such as
    ``results.trials[3]``); RecordError naming the place, the record and the key when it does not fit."""
    name = where or cls.__name__  # the path its keys are named under
    what = f"{where}: a {cls.__name__} record" if where else f"a {cls.__name__} record"
    if not isinstance(data, Mapping):
        raise RecordError(f"{what} must be an object, got {type(data).__name__}")
    known = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(known))
    missing = [n for n, f in known.items() if n not in data
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if unknown or missing:
        problems = ([f"lacks {', '.join(missing)}"] if missing else []) + (
            [f"has unknown {', '.join(unknown)}"] if unknown else [])
        raise RecordError(f"{what} " + "; ".join(problems))
    hints = _hints(cls)
    values = {key: _value(hints[key], data[key], f"{name}.{key}") for key in known if key in data}
    return cls(**values)


def _value(hint: Any, value: Any, where: str) -> Any:
    """`value` read as type `hint`: records, lists and dicts of them converted, leaves kept."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        if value is None:
            raise RecordError(f"{where} must not be null")
        choices = [a for a in args if a is not type(None) and a is not Absent]
        return _value(choices[0], value, where) if len(choices) == 1 else value
    if value is None and hint is not Any:
        raise RecordError(f"{where} must not be null")
    if origin is typing.Literal:
        if value not in args:
            raise RecordError(f"{where} must be one of {', '.join(map(repr, args))}, got {value!r}")
        return value
    if dataclasses.is_dataclass(hint):
        return read(hint, value, where)  # type: ignore[arg-type]
    if origin is list:
        if not isinstance(value, list):
            raise RecordError(f"{where} must be a list, got {type(value).__name__}")
        return [_value(args[0], item, f"{where}[{i}]") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, Mapping):
            raise RecordError(f"{where} must be an object, got {type(value).__name__}")
        return {key: _value(args[1], item, f"{where}.{key}") for key, item in value.items()}
    if hint in _LEAVES and not isinstance(value, _LEAVES[hint]) or hint in (int, float) and isinstance(value, bool):
        raise RecordError(f"{where} must be a {hint.__name__}, got {type(value).__name__}")
    return value


# What a JSON leaf of each type may hold: JSON has one number type, so a float's value may be written
# as an integer (0 rather than 0.0); a bool is never a number.
_LEAVES: dict[Any, type | tuple[type, ...]] = {int: int, float: (int, float), str: str, bool: bool}


def write(record: Any) -> Any:
    """The JSON value of a record (and of lists and dicts of records), as `read` reads it back."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return {f.name: write(getattr(record, f.name)) for f in dataclasses.fields(record)
                if not (f.metadata.get(_OMITTED) and getattr(record, f.name) is None)
                and getattr(record, f.name) is not ABSENT}
    if isinstance(record, list):
        return [write(item) for item in record]
    if isinstance(record, Mapping):
        return {key: write(item) for key, item in record.items()}
    return record


def save(path: Path, record: Any) -> Path:
    """`record` (a record, or JSON values holding records) written to `path` as indented JSON, atomically."""
    text = json.dumps(write(record), indent=2, default=str) + "\n"
    path = Path(path)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())  # the bytes on disk before the name points at them
        os.chmod(name, 0o644)  # mkstemp's 0600 would make a results file unreadable to the run's other users
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return path

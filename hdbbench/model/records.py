# SPDX-License-Identifier: Apache-2.0
"""Typed JSON records: dataclasses read from a results file and written back to the same JSON.

A record is a dataclass whose fields hold JSON values, other records, and lists or string-keyed
dicts of them, each possibly optional (``X | None``). The rules, the same for every record:

* reading (`read`): every field without a default must be present (null where its type allows);
  a field with a default may be absent; a key the dataclass has no field for is refused. Nested
  records, lists and dicts of records are read the same way; a value of a `Literal` type must be one
  of its values; other leaves are kept as written (JSON has one number type: an int where a float
  is declared is a float's value);
* writing (`write`): every field in declaration order, except a field declared with `omitted()`
  while it is None (the producer leaves such a key out rather than writing null).

A record that breaks a rule is refused with `RecordError`, naming the record and the key, so a
results file is read exactly as its producer wrote it or not at all.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")
_OMITTED = "hdbbench.model.records.omitted"


class RecordError(ValueError):
    """A record that does not fit its dataclass: the message names the record and the key."""


def omitted() -> Any:
    """A field that defaults to None and is left out of the JSON while None."""
    return dataclasses.field(default=None, metadata={_OMITTED: True})


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The resolved field types of a record class (resolved once: the annotations are strings)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def read(cls: type[T], data: Any, where: str = "") -> T:
    """The record `cls` of `data` (a JSON object); RecordError when it does not fit."""
    name = where or cls.__name__
    if not isinstance(data, Mapping):
        raise RecordError(f"a {name} record must be an object, got {type(data).__name__}")
    known = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(known))
    missing = [n for n, f in known.items() if n not in data
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if unknown or missing:
        problems = ([f"lacks {', '.join(missing)}"] if missing else []) + (
            [f"has unknown {', '.join(unknown)}"] if unknown else [])
        raise RecordError(f"a {name} record " + "; ".join(problems))
    hints = _hints(cls)
    values = {key: _value(hints[key], data[key], f"{name}.{key}") for key in known if key in data}
    return cls(**values)


def _value(hint: Any, value: Any, where: str) -> Any:
    """`value` read as type `hint`: records, lists and dicts of them converted, leaves kept."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        choices = [a for a in args if a is not type(None)]
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
    if hint in (int, float, str, bool) and isinstance(value, (Mapping, list)):
        raise RecordError(f"{where} must be a {hint.__name__}, got {type(value).__name__}")
    return value


def write(record: Any) -> Any:
    """The JSON value of a record (and of lists and dicts of records), as `read` reads it back."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return {f.name: write(getattr(record, f.name)) for f in dataclasses.fields(record)
                if not (f.metadata.get(_OMITTED) and getattr(record, f.name) is None)}
    if isinstance(record, list):
        return [write(item) for item in record]
    if isinstance(record, Mapping):
        return {key: write(item) for key, item in record.items()}
    return record

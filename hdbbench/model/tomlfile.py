# SPDX-License-Identifier: Apache-2.0
"""The one reader of hdbbench's TOML inputs: scenarios, device profiles, inventories and query sets.

Every input kind reads its file through `read_document` and its tables through `Table`, so every
refusal has the same shape, one line naming the file, the line, the key and the problem:

    scenarios/x.toml:12: [load] rate: must be > 0, got -5
    inventories/y.toml:7: [[attributes]] #2 colour: unknown key; did you mean 'count'?

tomllib gives values, not positions: `Lines` finds the line of a key by scanning the text for the
table headers and ``key =`` lines (an inline table's keys share the line of the table's key). A
document given as a dict (tests, the `[data]` table of a query set) has no text; its errors then
leave the line out. A `Table` remembers the keys it was asked for; `finish` refuses any other key,
suggesting the nearest known one. Nothing in this module knows an input kind.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError

REQUIRED: Any = object()  # default of a key that must be given
_KIND_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
               dict: "a table"}
_HEADER = re.compile(r"""^\s*(\[\[?)\s*([A-Za-z0-9_.\- "']+?)\s*\]\]?\s*(#.*)?$""")
_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|min|m|h|d|w)\s*$")
_UNIT_S = {"ms": 0.001, "s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

Path_ = tuple[str | int, ...]  # a position in the document: table names, array indices, key


def _dotted(text: str) -> list[str]:
    return [part.strip().strip("\"'") for part in re.findall(r"""(?:"[^"]*"|'[^']*'|[^.]+)""", text)]


class Lines:
    """Line numbers (1-based) of the tables and keys of a TOML text."""

    def __init__(self, text: str) -> None:
        self.at: dict[Path_, int] = {}
        self._count: dict[Path_, int] = {}  # entries seen per array of tables
        current: Path_ = ()
        multiline = False
        for number, line in enumerate(text.splitlines(), start=1):
            if line.count('"""') % 2 or line.count("'''") % 2:
                multiline = not multiline  # keys inside a multi-line string are text, not keys
                continue
            if multiline:
                continue
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                current = self._resolve(_dotted(header.group(2)), header.group(1) == "[[")
                self.at.setdefault(current, number)
                continue
            key = _KEY.match(line)
            if key:
                self.at.setdefault(current + tuple(_dotted(key.group(1))), number)

    def _resolve(self, names: list[str], array: bool) -> Path_:
        """[[a.b]] inside the latest [[a]] entry is a, <its index>, b, <index of this entry>."""
        out: list[str | int] = []
        for depth, name in enumerate(names):
            out.append(name)
            if depth < len(names) - 1 and tuple(out) in self._count:
                out.append(self._count[tuple(out)] - 1)
        if array:
            index = self._count.get(tuple(out), 0)
            self._count[tuple(out)] = index + 1
            out.append(index)
        return tuple(out)

    def line(self, path: Path_) -> int | None:
        """The line of `path`, else of its nearest enclosing table or key that has one."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.at:
                return self.at[path[:end]]
        return None


@dataclass
class Document:
    """A parsed TOML file: its values and where its keys are."""

    source: Path
    values: dict[str, Any]
    lines: Lines | None = None

    def root(self) -> Table:
        return Table(self, self.values, ())


SEED_MAX = 2**64 - 1  # the generators hash the seed as an unsigned 64-bit integer


def read_document(path: str | Path, kind: str) -> Document:
    """Parse `path`; a missing file, an unreadable one or invalid TOML is one ConfigError line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: {kind} file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the {kind} file: {getattr(exc, 'strerror', None) or exc}") from None
    if text.startswith("\ufeff"):
        # Some editors save UTF-8 with a byte-order mark; TOML has no place for it, and the parser's
        # own message ("Invalid statement at line 1, column 1") would not tell the user why.
        raise ConfigError(f"{path}:1: starts with a UTF-8 byte-order mark (U+FEFF): save it as UTF-8 without one")
    try:
        values = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        where = f"{path}:{match.group(1)}" if match else str(path)
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    return Document(path, values, Lines(text))


def from_values(values: dict[str, Any], source: str | Path) -> Document:
    """A document already parsed (no text, so no line numbers)."""
    return Document(Path(source), values)


def parse_duration_s(text: str | int | float) -> float:
    """`10s`, `30min`, `1h`, `1d`, `1w` (or a number of seconds) as seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(f"not a duration: {text!r} (e.g. 10s, 30min, 1h, 1d, 1w)")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def kind_name(kinds: type | tuple[type, ...]) -> str:
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if float in kinds:
        kinds = tuple(k for k in kinds if k is not int)  # an integer is a number too
    return " or ".join(dict.fromkeys(_KIND_NAMES.get(k, k.__name__) for k in kinds))


@dataclass
class Table:
    """One table of a document. Getters check type and range; `finish` refuses the keys never asked for."""

    document: Document
    values: dict[str, Any]
    path: Path_
    label: str = ""  # how errors name the table: "[load]", "[[query]] #2 (name)"; "" at the top
    used: set[str] = field(default_factory=set)

    # --- errors -------------------------------------------------------------------------------
    def fail(self, key: str | None, problem: str, *, at: str | None = None) -> ConfigError:
        """ConfigError "<file>:<line>: <table> <key>: <problem>".

        key None names the table itself; `at` then names the key whose line to show."""
        path = self.path + ((key,) if key is not None else (at,) if at is not None else ())
        line = self.document.lines.line(path) if self.document.lines else None
        where = f"{self.document.source}:{line}" if line else str(self.document.source)
        place = " ".join(p for p in (self.label, key or "") if p)
        return ConfigError(f"{where}: {place}: {problem}" if place else f"{where}: {problem}")

    # --- raw access ---------------------------------------------------------------------------
    def has(self, key: str) -> bool:
        return key in self.values

    def known(self, *keys: str) -> None:
        """Mark keys as known without reading them (a key that applies only with another one)."""
        self.used.update(keys)

    def raw(self, key: str, default: Any = None) -> Any:
        """The value as written (no check), marking the key as known."""
        self.used.add(key)
        if key not in self.values:
            if default is REQUIRED:
                raise self.fail(key, "is missing")
            return default
        return self.values[key]

    def get(self, key: str, kinds: type | tuple[type, ...], default: Any = REQUIRED) -> Any:
        value = self.raw(key, default)
        if key not in self.values:
            return value
        wanted = kinds if isinstance(kinds, tuple) else (kinds,)
        if isinstance(value, bool) and bool not in wanted or not isinstance(value, wanted):
            raise self.fail(key, f"must be {kind_name(kinds)}, got {value!r}")
        return value

    # --- typed getters ------------------------------------------------------------------------
    def integer(self, key: str, default: Any = REQUIRED, *, minimum: int | None = None,
                maximum: int | None = None) -> int:
        value = self.get(key, int, default)
        if key in self.values:
            self._in_range(key, value, minimum, maximum)
        return value

    def seed(self, key: str, default: Any = REQUIRED) -> int:
        """A seed of the generators: the devices and the data generator take 64-bit unsigned seeds."""
        value = self.get(key, int, default)
        if key in self.values and not 0 <= value <= SEED_MAX:
            raise self.fail(key, f"must be a 64-bit seed, 0 to {SEED_MAX}, got {value}")
        return value

    def number(self, key: str, default: Any = REQUIRED, *, minimum: float | None = None,
               maximum: float | None = None, positive: bool = False) -> float:
        value = self.get(key, (int, float), default)
        if key in self.values:
            if value != value:
                raise self.fail(key, "must be a number, got nan")
            if positive and value <= 0:
                raise self.fail(key, f"must be > 0, got {value!r}")
            self._in_range(key, value, minimum, maximum)
        return value if value is None else float(value)

    def count(self, key: str, default: Any = REQUIRED) -> int:
        """An integer >= 1."""
        return self.integer(key, default, minimum=1)

    def positive(self, key: str, default: Any = REQUIRED, *, allow_zero: bool = False) -> float:
        return self.number(key, default, minimum=0.0) if allow_zero else self.number(key, default, positive=True)

    def string(self, key: str, default: Any = REQUIRED, *, choices: Sequence[str] | None = None,
               pattern: re.Pattern[str] | None = None, describe: str = "") -> str:
        value = self.get(key, str, default)
        if key in self.values:
            if choices is not None and value not in choices:
                raise self.fail(key, f"must be one of {', '.join(choices)}, got {value!r}")
            if pattern is not None and not pattern.match(value):
                raise self.fail(key, f"{value!r} must be {describe or 'of the form ' + pattern.pattern}")
        return value

    def choice(self, key: str, choices: Sequence[str], default: Any = REQUIRED) -> str:
        return self.string(key, default, choices=choices)

    def boolean(self, key: str, default: Any = REQUIRED) -> bool:
        return self.get(key, bool, default)

    def duration(self, key: str, default: Any = REQUIRED, *, minimum_s: float = 0.0) -> float:
        """A duration such as "10s", "1h", "1d" (or a number of seconds), as seconds, > minimum_s."""
        value = self.get(key, (str, int, float), default)
        try:
            seconds = parse_duration_s(value)
        except ValueError as exc:
            raise self.fail(key, str(exc)) from None
        if seconds <= minimum_s:
            raise self.fail(key, f"must be longer than {minimum_s:g} s, got {value!r}")
        return seconds

    def list_of(self, key: str, kinds: type | tuple[type, ...], default: Any = REQUIRED, *,
                minimum: float | None = None, non_empty: bool = False) -> list[Any]:
        """A list whose items are all of `kinds` (and >= minimum for numbers)."""
        value = self.get(key, list, default)
        if key not in self.values:
            return value
        wanted = kinds if isinstance(kinds, tuple) else (kinds,)
        what = f"a list of {kind_name(kinds).replace('an ', '').replace('a ', '')}s"
        what += f" >= {minimum:g}" if minimum is not None else ""
        if any(isinstance(v, bool) and bool not in wanted or not isinstance(v, wanted) for v in value) or (
                minimum is not None and any(v < minimum for v in value)):
            raise self.fail(key, f"must be {what}, got {value!r}")
        if non_empty and not value:
            raise self.fail(key, f"must be {what} with at least one item")
        return value

    def mapping(self, key: str, default: Any = REQUIRED) -> dict[str, Any]:
        """A table taken as plain values (free keys: LibConfiguration, weights)."""
        return self.get(key, dict, default)

    # --- nested tables ------------------------------------------------------------------------
    def table(self, key: str, *, required: bool = False) -> Table:
        """The sub-table `key` (an empty one when absent and not required)."""
        values = self.get(key, dict, REQUIRED if required else {})
        return Table(self.document, values, self.path + (key,), self._child_label(key))

    def optional_table(self, key: str) -> Table | None:
        """The sub-table `key`, or None when the document has none."""
        self.used.add(key)
        return self.table(key) if key in self.values else None

    def tables(self, key: str, *, required: bool = False, name_key: str | None = "name") -> list[Table]:
        """The entries of an array of tables ([[key]]), each labelled "[[key]] #n (name)"."""
        items = self.get(key, list, REQUIRED if required else [])
        if required and not items:
            raise self.fail(key, f"must list at least one [[{key}]] table")
        out = []
        for index, item in enumerate(items):
            label = f"{self._child_label(key, array=True)} #{index + 1}"
            if not isinstance(item, dict):
                raise Table(self.document, {}, self.path + (key, index), label).fail(None, "must be a table")
            if name_key and isinstance(item.get(name_key), str):
                label += f" ({item[name_key]!r})"
            out.append(Table(self.document, item, self.path + (key, index), label))
        return out

    def finish(self) -> None:
        """Refuse the first key no getter asked for, suggesting the nearest known one."""
        unknown = [k for k in self.values if k not in self.used]
        if unknown:
            raise self.fail(unknown[0], "unknown key" + suggestion(unknown[0], sorted(self.used)))

    # --- helpers ------------------------------------------------------------------------------
    def _in_range(self, key: str, value: float, minimum: float | None, maximum: float | None) -> None:
        if minimum is not None and value < minimum:
            raise self.fail(key, f"must be >= {minimum:g}, got {value!r}")
        if maximum is not None and value > maximum:
            raise self.fail(key, f"must be <= {maximum:g}, got {value!r}")

    def _child_label(self, key: str, array: bool = False) -> str:
        names = [p for p in self.path if isinstance(p, str)] + [key]
        inner = ".".join(names)
        if self.label.startswith("[[") and not array:
            return f"{self.label} {key}"
        return f"[[{inner}]]" if array else f"[{inner}]"


def suggestion(word: str, known: Sequence[str]) -> str:
    """"; did you mean 'x'?" for the nearest known word, or the list of known words."""
    near = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    if near:
        return f"; did you mean {near[0]!r}?"
    return f" (known: {', '.join(known)})" if known else ""

# SPDX-License-Identifier: Apache-2.0
"""An inventory written as the TOML file hdbbench.parts.disk.sizing reads back, whole or not at all.

The file is written beside its destination and renamed over it, so an interrupted or failed read
of a facility's archive never leaves half an inventory. Reading the file back must give the same
Inventory (tests check it): this is the one writer, sizing's parser the one reader.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from hdbbench.load.inventory.model import VALUE_STATISTICS, Group, Inventory
from hdbbench.model.hdbtypes import AttrFormat


def _value(v: object) -> str:
    """A TOML value: strings and lists of strings as JSON strings are (TOML's basic strings share
    JSON's escapes), numbers as Python repr (TOML reads 1e-05 and 0.1 alike)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def _group_lines(g: Group) -> list[str]:
    lines = ["[[attributes]]", f"label = {_value(g.label)}", f"type = {_value(g.type.suffix)}"]
    if g.format != AttrFormat.SCALAR:
        lines.append(f"format = {_value(g.format.name.lower())}")
    if g.format == AttrFormat.SPECTRUM:
        lines.append(f"elements = {g.dim_x}")
    if g.format == AttrFormat.IMAGE:
        lines.append(f"dims = [{g.dim_x}, {g.dim_y}]")
    if g.write != "ro":
        lines.append(f"write = {_value(g.write)}")
    lines += [f"count = {g.count}", f"rate_hz = {_value(float(g.rate_hz))}"]
    if g.string_chars != 20:
        lines.append(f"string_chars = {g.string_chars}")
    if g.retention_days != 365.0:
        lines.append(f"retention_days = {_value(float(g.retention_days))}")
    for key in VALUE_STATISTICS:
        if (value := getattr(g, key)) is not None:
            lines.append(f"{key} = {_value(float(value))}")
    if g.names:
        lines.append(f"names = {_value(list(g.names))}")
    return lines


def inventory_text(inventory: Inventory, header: Sequence[str] = (), retention_days: float | None = None) -> str:
    """The TOML text of `inventory`, `header` as comment lines above it."""
    lines = [f"# {line}" if line else "#" for line in header]
    lines.append(f"name = {_value(inventory.name)}")
    if retention_days is not None:
        lines.append(f"retention_days = {_value(float(retention_days))}")
    for group in inventory.groups:
        lines += ["", *_group_lines(group)]
    for archiver in inventory.archivers:
        lines += ["", "[[archivers]]", f"name = {_value(archiver.name)}",
                  f"attributes = {_value(list(archiver.attributes))}"]
    return "\n".join(lines) + "\n"


def write_inventory(path: Path, inventory: Inventory, header: Sequence[str] = ()) -> Path:
    """`inventory` into `path` atomically (a temporary file in the same directory, renamed over it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(inventory_text(inventory, header))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path

# SPDX-License-Identifier: Apache-2.0
"""Records for the subscriber's writer driver (hdbbench-es-write-records): events of every attribute
shape as the text lines the driver reads on stdin, written through a backend's C++ writer as our
subscriber's writer loop would write them (tests/test_properties_subscriber.py and the what-if
backends' tests)."""

from __future__ import annotations

import json
import struct
import subprocess
from typing import Any

from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, WriteType
from tests.harness import REPO

DRIVER = REPO / "build" / "subscriber" / "hdbbench-es-write-records"
ATTRIBUTES = [AttributeInfo(f"tango://testhost:10000/prop/{t.suffix}/{f.name.lower()}/{w.name.lower()}", t, f, w)
              for t in TangoType for f in AttrFormat for w in WriteType
              if not (t == TangoType.DEV_ENCODED and f != AttrFormat.SCALAR)]


def _hex(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return data.hex() or "-"


def _elements(info: AttributeInfo, value: Any) -> tuple[list[Any], int, int]:
    """Flattened elements and (dim_x, dim_y) of a value of the attribute."""
    if info.format == AttrFormat.SCALAR:
        return [value], 1, 0
    if info.format == AttrFormat.SPECTRUM:
        return list(value), len(value), 0
    rows = list(value)
    return [x for row in rows for x in row], (len(rows[0]) if rows else 0), len(rows)


def field_text(info: AttributeInfo, value: Any) -> tuple[str, int, int]:
    if value is None:
        return "none", 0, 0
    items, dim_x, dim_y = _elements(info, value)
    if info.type == TangoType.DEV_ENCODED:
        items = [part for enc in items for part in (_hex(enc.format), _hex(enc.data))]
        return f"s:{len(items)}:{','.join(items)}", dim_x, dim_y
    if info.type == TangoType.DEV_STRING:
        text = [_hex(x) for x in items]
    elif info.type in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE):
        text = [struct.pack(">d", x).hex() for x in items]
    else:
        text = [str(int(x)) for x in items]
    cls = {TangoType.DEV_STRING: "s", TangoType.DEV_FLOAT: "d", TangoType.DEV_DOUBLE: "d",
           TangoType.DEV_ULONG64: "u"}.get(info.type, "i")
    return f"{cls}:{len(text)}:{','.join(text)}", dim_x, dim_y


def record_line(info: AttributeInfo, e: Event) -> str:
    r, xr, yr = field_text(info, e.value_r)
    w, xw, yw = field_text(info, e.value_w)
    kind = 1 if e.error_desc is not None else 0
    micros = int(e.data_time.timestamp() * 1_000_000)
    return " ".join(str(x) for x in (kind, int(info.type), int(info.format), int(info.write_type), int(e.quality),
                                     _hex(info.name), micros, xr, yr, xw, yw, _hex(e.error_desc or ""), r, w))


class Unprinted(list[str]):
    """LibConfiguration lines that a failing example does not print (they hold the role's password)."""

    def __repr__(self) -> str:
        return f"<{len(self)} LibConfiguration lines>"


def write_through_subscriber(lib: list[str], lines: list[str]) -> dict[str, Any]:
    args = [str(DRIVER)] + [part for line in lib for part in ("--lib", line)]
    done = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr  # no record rejected
    return json.loads(done.stdout)

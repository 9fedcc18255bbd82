# SPDX-License-Identifier: Apache-2.0
"""Python values to and from ClickHouse's text formats: TabSeparated fields for the configuration
tables' inserts, JSON rows (JSONEachRow) for reads (ClickHouse prints every double exactly, in its
shortest form), and the microsecond time stamps of the layout (tables.py). The data tables are
written in RowBinary (rowbinary.py): 18.16's text parser does not round every number exactly."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from hdbbench.model.hdbtypes import utc

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "\\0"})


def to_us(at: datetime) -> int:
    """Microseconds since the epoch of a datetime (naive: UTC), exact."""
    delta = utc(at) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=int(us))


def text(value: str) -> str:
    """A string as a TabSeparated field."""
    return str(value).translate(_TSV_ESCAPES)


def text_array(items: Iterable[str]) -> str:
    """Strings as a TabSeparated Array(String) field: each single-quoted with the field's own escapes
    (ClickHouse reads no second layer)."""
    return "[" + ",".join("'" + text(v).replace("'", "\\'") + "'" for v in items) + "]"


def tsv(rows: Iterable[Iterable[str]]) -> bytes:
    return "".join("\t".join(row) + "\n" for row in rows).encode()


def shaped(items: list[Any], dim_x: int, dim_y: int) -> list[Any]:
    """An array read back: a spectrum as it is, an image as its rows."""
    if dim_y == 0:
        return items
    return [items[row * dim_x:(row + 1) * dim_x] for row in range(dim_y)]


def json_rows(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """Rows of a JSONEachRow response (non-finite floats come as null, or as the strings "nan",
    "inf", "-inf" with output_format_json_quote_denormals)."""
    for line in lines:
        if line.strip():
            yield json.loads(line)

# SPDX-License-Identifier: Apache-2.0
"""Python values to and from ClickHouse's text formats: TabSeparated fields for the configuration
tables' inserts, JSON rows (JSONEachRow) for reads (ClickHouse prints every double exactly, in its
shortest form), and the microsecond time stamps of the layout (tables.py). The data tables are
written in RowBinary (rowbinary.py): 18.16's text parser does not round every number exactly."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from hdbbench.model.hdbtypes import TangoType, as_plain, utc

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
NULL = "\\N"
_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "\\0"})


def to_us(at: datetime) -> int:
    """Microseconds since the epoch of a datetime (naive: UTC), exact."""
    delta = utc(at) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=int(us))


def scalar_text(value: Any, tango_type: TangoType) -> str:
    """One scalar as ClickHouse parses it in TabSeparated (and inside an array, strings aside)."""
    if tango_type == TangoType.DEV_STRING:
        return str(value).translate(_TSV_ESCAPES)
    if isinstance(value, bool) or tango_type == TangoType.DEV_BOOLEAN:
        return "1" if value else "0"
    if tango_type in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE):
        number = float(value)
        return repr(number) if math.isfinite(number) else ("nan" if math.isnan(number) else
                                                          ("inf" if number > 0 else "-inf"))
    return str(int(value))


def nullable_field(value: Any, tango_type: TangoType) -> str:
    return NULL if value is None else scalar_text(as_plain(value), tango_type)


def array_field(value: Any, tango_type: TangoType) -> tuple[str, int, int]:
    """An array value as a TabSeparated field, with its dimensions (x, y; y is 0 for a spectrum).
    None is stored as [] (ClickHouse has no NULL array); an image is flattened row-major."""
    plain = as_plain(value)
    if plain is None:
        return "[]", 0, 0
    if plain and isinstance(plain[0], list):  # an image: a list of rows
        dim_y, dim_x = len(plain), len(plain[0])
        items = [v for row in plain for v in row]
    else:
        dim_x, dim_y, items = len(plain), 0, plain
    if tango_type == TangoType.DEV_STRING:
        # Each string single-quoted with the field's own escapes (ClickHouse reads no second layer).
        body = ",".join("'" + str(v).translate(_TSV_ESCAPES).replace("'", "\\'") + "'" for v in items)
        return "[" + body + "]", dim_x, dim_y
    return "[" + ",".join(scalar_text(v, tango_type) for v in items) + "]", dim_x, dim_y


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

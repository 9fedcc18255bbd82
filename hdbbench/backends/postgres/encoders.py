# SPDX-License-Identifier: Apache-2.0
"""Python values to and from the PostgreSQL column types of the HDB++ layout (numpy scalars,
unsigned domains read back as numeric, DevEncoded split into bytea data and a JSON format).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hdbbench.model.hdbtypes import Encoded, as_encoded


def plain_scalar(value: Any) -> Any:
    """numpy scalars and Tango enums (DevState) to plain Python values."""
    if value is None or type(value) in (float, int, bool, str):
        return value
    item = getattr(value, "item", None)
    if item is not None:
        return item()
    return int(value) if hasattr(value, "__index__") else value

def _encoded_side(value: Any) -> tuple[Any, Any]:
    """DEV_ENCODED: data bytes for the value column, format string(s) for `details` (same nesting)."""
    if value is None:
        return None, None
    if isinstance(value, list):
        sides = [_encoded_side(v) for v in value]
        return [d for d, _ in sides], [f for _, f in sides]
    pair = as_encoded(value)
    assert pair is not None
    return pair.data, pair.format


def encoded_values(value_r: Any, value_w: Any) -> tuple[Any, Any, dict[str, Any] | None]:
    data_r, fmt_r = _encoded_side(value_r)
    data_w, fmt_w = _encoded_side(value_w)
    details = {k: v for k, v in (("format_r", fmt_r), ("format_w", fmt_w)) if v is not None}
    return data_r, data_w, details or None

def from_db(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, list):
        return [from_db(v) for v in value]
    return value


def decode_encoded(data: Any, fmt: Any) -> Any:
    if data is None:
        return None
    if isinstance(data, list):
        fmts = fmt if isinstance(fmt, list) else [None] * len(data)
        return [decode_encoded(d, f) for d, f in zip(data, fmts)]
    return Encoded(fmt or "", bytes(data))

# SPDX-License-Identifier: Apache-2.0
"""Python values to the MariaDB column types of the HDB++ layout: UTC wall time, non-finite floats
as NULL (MariaDB has none), arrays flattened row-major, DevEncoded split into data and format.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

from hdbbench.model.hdbtypes import TangoType, as_encoded, as_plain


def naive_utc(dt: datetime) -> datetime:
    """datetime(6) columns hold UTC wall time (sessions run with time_zone '+00:00')."""
    if dt.tzinfo is None:
        return dt
    if dt.tzinfo is not timezone.utc:
        dt = dt.astimezone(timezone.utc)
    return dt.replace(tzinfo=None)


def finite(x: Any) -> Any:
    """MariaDB has no NaN/Infinity in FLOAT/DOUBLE: they are stored as NULL (as libhdbpp-mysql does)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def converter(tango_type: TangoType) -> Any:
    if tango_type in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE):
        return finite
    if tango_type == TangoType.DEV_STRING:
        return lambda x: x
    return lambda x: None if x is None else int(x)

def flatten(value: Any) -> tuple[list[Any], int, int]:
    """(elements row-major, dim_x, dim_y); dim_y is 0 for a spectrum."""
    if value is None:
        return [], 0, 0
    value = as_plain(value) if not isinstance(value, list) else value
    if value and isinstance(value[0], list):
        return [x for row in value for x in row], len(value[0]), len(value)
    return list(value), len(value), 0


def split_encoded(values: list[Any]) -> tuple[list[Any], list[Any]]:
    pairs = [as_encoded(v) for v in values]
    return [p.data if p else None for p in pairs], [p.format if p else None for p in pairs]

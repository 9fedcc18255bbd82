# SPDX-License-Identifier: Apache-2.0
"""How hdbbench writes sizes for people: binary units (KiB, MiB, GiB, TiB), everywhere."""

from __future__ import annotations

import math


def human_bytes(value: float | None) -> str:
    """Bytes in binary units (KiB, MiB, GiB, TiB), three significant digits; '–' when unknown."""
    if value is None or not math.isfinite(value):
        return "–"
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(value) >= size:
            # 1,000 to 1,023 of a unit: ".3g" would write 1e+03.
            scaled = value / size
            return f"{scaled:.0f} {unit}" if abs(scaled) >= 999.5 else f"{scaled:.3g} {unit}"
    return f"{value:.0f} B"


_BYTE_UNITS = {"": 1, "b": 1, "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12,
               "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30, "tib": 2 ** 40}


def parse_bytes(value: str | int | float) -> int:
    """A size as people write it ("256MiB", "2 GB", 1048576) in bytes; ValueError naming the problem."""
    if isinstance(value, bool):
        raise ValueError(f"must be a size such as \"256MiB\" or a number of bytes, got {value!r}")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    else:
        text = value.strip().lower().replace(" ", "")
        digits = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        number_text, unit = digits, text[len(digits):]
        try:
            number = float(number_text)
        except ValueError:
            raise ValueError(f"must be a size such as \"256MiB\" or a number of bytes, got {value!r}") from None
    if unit not in _BYTE_UNITS:
        raise ValueError(f"unknown unit {unit!r} in {value!r} (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"must be > 0, got {value!r}")
    return int(number * _BYTE_UNITS[unit])

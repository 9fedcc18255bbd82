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
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"

# SPDX-License-Identifier: Apache-2.0
"""The cold-restart ability: a server that keeps warm state across a restart (InnoDB's buffer-pool
dump), which a cold extraction run (hdbbench.parts.extraction) must drop around its restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class ColdRestart(Protocol):
    """What a backend does around a cold restart of its server; each method takes that backend first."""

    def before_cold_stop(self, backend: Any) -> None:
        """Called while the server still runs, just before it is stopped for a cold run."""

    def after_cold_stop(self, backend: Any, data_dir: Path) -> None:
        """Called with the server's data directory once it is stopped."""

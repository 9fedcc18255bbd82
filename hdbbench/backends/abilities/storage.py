# SPDX-License-Identifier: Apache-2.0
"""The storage-options ability: table storage options a backend can switch on per data table (InnoDB
row formats and page compression, the MyRocks engine), measured as variants by `size measure`
(hdbbench.parts.disk.variants: `pk,myrocks`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class StorageOptions(Protocol):
    """A backend's storage options; `unavailable` and `apply` take that backend first."""

    clauses: Mapping[str, str]      # option name -> what it changes (e.g. an ALTER TABLE clause)

    def unavailable(self, backend: Any, option: str) -> str | None:
        """Why `option` cannot run on the backend's server (an engine not loaded), or None when it can."""

    def apply(self, backend: Any, tables: Sequence[str], option: str) -> None:
        """Switch `tables` to `option`."""

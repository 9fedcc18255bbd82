# SPDX-License-Identifier: Apache-2.0
"""What a stack is asked to confine: memory budgets per database server, a storage class, an image size.

Sizes are binary ("256MiB", "1GiB"; "MB"/"GB" are read as MiB/GiB too, as PostgreSQL and MariaDB read
them). The storage classes' figures come from published specifications (docs/stack.md cites them);
"custom" takes the four figures from the scenario. Every bad value is a ConfigError naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hdbbench.model.errors import ConfigError

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
MIN_BUDGET = 64 << 20        # below this neither server starts with its fixed costs
MIN_STORAGE = 256 << 20
DEFAULT_STORAGE_SIZE = 20 << 30  # sparse: only what is written takes room on the host's disk


@dataclass(frozen=True)
class StorageClass:
    """Random-I/O and bandwidth limits of a class (None: not limited); `source`: where the figures are from."""

    name: str
    read_iops: int | None = None
    write_iops: int | None = None
    read_mb_s: int | None = None
    write_mb_s: int | None = None
    source: str = ""

    @property
    def confined(self) -> bool:
        return self.name != "ram"

    def limits(self) -> dict[str, int | None]:
        """The blkio throttle files' values (bytes for bandwidth: MB = 10^6 bytes, as datasheets count)."""
        mb = 1_000_000
        return {"read_iops_device": self.read_iops, "write_iops_device": self.write_iops,
                "read_bps_device": self.read_mb_s * mb if self.read_mb_s else None,
                "write_bps_device": self.write_mb_s * mb if self.write_mb_s else None}


# docs/stack.md "Memory budgets and storage classes" gives the sources in full.
CLASSES: dict[str, StorageClass] = {
    "ram": StorageClass("ram", source="no file system of its own: the data directory as today"),
    "nvme": StorageClass("nvme", 19_000, 60_000, 3_500, 3_300,
                         "Samsung 970 EVO Plus data sheet: 4 KiB random read/write at QD1, sequential read/write"),
    "ssd": StorageClass("ssd", 3_000, 3_000, 131, 131,
                        "Amazon EBS gp3 baseline: 3,000 IOPS and 125 MiB/s (131 MB/s), read and write"),
    "hdd": StorageClass("hdd", 168, 550, 285, 285,
                        "Seagate Exos X24 data sheet: 4K QD16 random read/write 168/550 IOPS, 285 MB/s sustained"),
}
CLASS_NAMES = tuple(CLASSES)
_CUSTOM_KEYS = ("read_iops", "write_iops", "read_mb_s", "write_mb_s")


def parse_size(value: Any, key: str, minimum: int = 1) -> int:
    """Bytes from "256MiB", "1GiB", "512M" or an integer of bytes; ConfigError naming `key` otherwise."""
    if isinstance(value, bool):
        raise ConfigError(f"{key}: expected a size such as \"1GiB\", got {value!r}")
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(str(value))
        if not match:
            raise ConfigError(f"{key}: expected a size such as \"256MiB\" or \"1GiB\", got {value!r}")
        size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size < minimum:
        raise ConfigError(f"{key}: must be at least {minimum >> 20} MiB, got {value!r}")
    return size


def parse_memory(value: Any, confinable: tuple[str, ...], key: str = "memory") -> dict[str, int]:
    """Kind -> budget bytes from "1GiB" (every database server) or {kind = "1GiB", ...}."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in confinable]
        if unknown:
            raise ConfigError(f"{key}: {unknown[0]!r} is not a database server (choose from {', '.join(confinable)})")
        return {k: parse_size(v, f"{key}.{k}", MIN_BUDGET) for k, v in value.items()}
    size = parse_size(value, key, MIN_BUDGET)
    return {k: size for k in confinable}


def parse_storage(value: Any, key: str = "storage") -> StorageClass:
    """A class by name, or a table of the four figures (class "custom")."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in _CUSTOM_KEYS]
        if unknown or not value:
            raise ConfigError(f"{key}: a custom class takes {', '.join(_CUSTOM_KEYS)}"
                              + (f"; unknown key {unknown[0]!r}" if unknown else ""))
        figures = {}
        for k, v in value.items():
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ConfigError(f"{key}.{k}: must be a positive integer, got {v!r}")
            figures[k] = v
        return StorageClass("custom", **figures, source="the scenario's own figures")
    if value not in CLASSES:
        raise ConfigError(f"{key}: unknown storage class {value!r} (choose from {', '.join(CLASS_NAMES)}, "
                          "or a table of read_iops, write_iops, read_mb_s, write_mb_s)")
    return CLASSES[str(value)]


@dataclass(frozen=True)
class ConfineSpec:
    """A stack's confinement: budgets by server kind, one storage class for all its database servers."""

    memory: Mapping[str, int] = field(default_factory=dict)   # kind -> bytes; absent: no budget
    storage: StorageClass = CLASSES["ram"]
    storage_size: int = DEFAULT_STORAGE_SIZE

    @property
    def active(self) -> bool:
        return bool(self.memory) or self.storage.confined

    def applies_to(self, kind: str) -> bool:
        return kind in self.memory or self.storage.confined

    def to_dict(self) -> dict[str, Any]:
        return {"memory": dict(self.memory), "storage": self.storage.__dict__, "storage_size": self.storage_size}


def parse_spec(memory: Any, storage: Any, storage_size: Any, confinable: tuple[str, ...],
               prefix: str = "") -> ConfineSpec:
    """The three settings as a scenario's [stack] or `stack up`'s options give them (None: not given)."""
    return ConfineSpec(
        memory=parse_memory(memory, confinable, f"{prefix}memory") if memory is not None else {},
        storage=parse_storage(storage, f"{prefix}storage") if storage is not None else CLASSES["ram"],
        storage_size=(parse_size(storage_size, f"{prefix}storage_size", MIN_STORAGE)
                      if storage_size is not None else DEFAULT_STORAGE_SIZE),
    )

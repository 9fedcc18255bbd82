# SPDX-License-Identifier: Apache-2.0
"""The records of a database server's confinement: its memory budget and storage class as the kernel
enforces them, and what a probe measured of its storage (environment.json `confinement`, and the
insertion results' `aging.confinement`). Typed records (hdbbench.model.records)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hdbbench.model.records import omitted

STORAGE_CLASSES = ("ram", "nvme", "ssd", "hdd", "custom")
StorageClassName = Literal["ram", "nvme", "ssd", "hdd", "custom"]


@dataclass(frozen=True, kw_only=True)
class StorageProbe:
    """What a short random-read probe measured on a server's storage at stack start."""

    read_iops: float            # 4 KiB random reads per second, direct I/O
    read_mb_s: float | None     # sequential read bandwidth, MB/s (None when not probed)
    seconds: float              # how long the probe ran
    method: str                 # in words: block size, file size, queue depth, O_DIRECT or not


@dataclass(frozen=True, kw_only=True)
class ServerConfinement:
    """One database server's memory budget and storage, as the kernel enforces them."""

    server: str                                 # the server kind (hdbbench.stack.servers.registry)
    memory_budget_bytes: int | None             # asked for; None: no budget
    memory_limit_bytes: int | None              # read back from the kernel (memory.limit_in_bytes)
    memory_rule: str | None                     # how the server's buffers follow the budget, in words
    buffers: dict[str, str]                     # the buffer settings the rule gave (shared_buffers=...)
    storage_class: StorageClassName
    read_iops_limit: int | None                 # read back from the blkio controller; None: not throttled
    write_iops_limit: int | None
    read_bps_limit: int | None
    write_bps_limit: int | None
    device: str | None = omitted()              # the loop device its file system is on
    probe: StorageProbe | None = omitted()
    unthrottled_read_iops: float | None = omitted()  # the loop device before the throttle: what the machine gives
    warning: str | None = omitted()             # the class asks more than the machine gives (in words)

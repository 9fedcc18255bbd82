# SPDX-License-Identifier: Apache-2.0
"""Events and their order-independent checksum: canonical bytes, 64-bit digest, `Checksum`.

The definition of the canonical bytes is in the `hdbbench.load.emitter` package docstring.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from hdbbench.load.emitter.types import INVALID, TYPES


class Event(NamedTuple):
    """Event k of an attribute. value is None for INVALID quality and for error events."""

    k: int
    value: Any
    quality: int
    error: str | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None


def stream_key(device: str, attribute: str) -> str:
    return f"{device}/{attribute}".lower()


def _dims(spec_format: str, value: Any) -> tuple[int, int]:
    if spec_format == "SCALAR":
        return 1, 0
    if spec_format == "SPECTRUM":
        return len(value), 0
    rows = len(value)
    return (len(value[0]) if rows else 0), rows


def canonical_bytes(type_name: str, fmt: str, value: Any, quality: int, error: str | None = None) -> bytes:
    """The bytes hashed by `event_digest` (see the `hdbbench.load.emitter` package docstring)."""
    if error is not None:
        return b"e" + error.encode()
    head = b"v" + bytes([quality])
    if quality == INVALID or value is None:
        return head
    info = TYPES[type_name]
    dx, dy = _dims(fmt, value)
    head += dx.to_bytes(4, "little") + dy.to_bytes(4, "little")
    if info.kind == "encoded":
        fmt_name, data = value
        return head + str(fmt_name).encode() + b"\0" + bytes(data)
    if info.kind == "string":
        flat = [value] if fmt == "SCALAR" else (
            list(value) if fmt == "SPECTRUM" else [s for row in value for s in row])
        return head + b"".join(str(s).encode() + b"\0" for s in flat)
    return head + np.asarray(value).astype(info.dtype, copy=False).tobytes()


def event_digest(type_name: str, fmt: str, value: Any, quality: int, error: str | None = None) -> int:
    """64-bit digest of one event, from generated or received values alike."""
    data = canonical_bytes(type_name, fmt, value, quality, error)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


@dataclass
class Checksum:
    """Order-independent checksum of a set of events: count and sum of digests mod 2**64."""

    count: int = 0
    total: int = 0

    def add(self, digest: int) -> None:
        self.count += 1
        self.total = (self.total + digest) & 0xFFFFFFFFFFFFFFFF

    def __str__(self) -> str:
        return f"{self.count}:{self.total:016x}"

# SPDX-License-Identifier: Apache-2.0
"""Free loopback ports for private servers, always below the kernel's ephemeral range.

A server on an ephemeral port can lose it: a client retrying connect() to that port while the server
is down may end up connected to itself, and the server then cannot bind again. So servers get ports
below the ephemeral range, and each preferred port is tried first so a stack keeps stable ports.
"""

from __future__ import annotations

import socket
from pathlib import Path

from hdbbench.errors import ServerError

LOOPBACK = "127.0.0.1"
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(x) for x in _RANGE_FILE.read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As the servers do: connections of a stopped server in TIME_WAIT must not make its port look busy.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def pick_free_port(preferred: int, *, avoid: set[int] | frozenset[int] = frozenset(), span: int = 2000) -> int:
    """The preferred port if free, else the next free one above it (below the ephemeral range)."""
    low, _ = ephemeral_range()
    for port in range(preferred, min(preferred + span, low)):
        if port not in avoid and port_is_free(port):
            return port
    raise ServerError(f"no free loopback port in {preferred}-{min(preferred + span, low) - 1}")

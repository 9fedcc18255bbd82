# SPDX-License-Identifier: Apache-2.0
"""Bind addresses and free ports for private servers, always below the kernel's ephemeral range.

Every component binds one address: loopback by default, or its host's address when a scenario puts
components on several hosts. Only addresses of the benchmarking range 198.18.0.0/15 (never routed,
used by the test namespaces and test networks) are accepted besides loopback, so no setting sends
traffic anywhere else by mistake.

A server on an ephemeral port can lose it: a client retrying connect() to that port while the server
is down may end up connected to itself, and the server then cannot bind again. So servers get ports
below the ephemeral range, and each preferred port is tried first so a stack keeps stable ports.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

from hdbbench.model.errors import ConfigError, ServerError

LOOPBACK = "127.0.0.1"
BENCHMARK_NETWORK = ipaddress.ip_network("198.18.0.0/15")
LOCAL = "local"  # how scenarios and inventories say "this host, on loopback"


def check_address(address: str, where: str = "address") -> str:
    """The address to bind or reach: "local" (loopback), loopback, or one of 198.18.0.0/15."""
    if address in (LOCAL, "localhost"):
        return LOOPBACK
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise ConfigError(f"{where}: {address!r} is not an IPv4 address (give 'local' or an address of "
                          f"{BENCHMARK_NETWORK})") from None
    if ip == ipaddress.ip_address(LOOPBACK) or (ip.version == 4 and ip in BENCHMARK_NETWORK):
        return str(ip)
    raise ConfigError(f"{where}: {address} is outside {BENCHMARK_NETWORK} (the benchmarking range) and not "
                      f"{LOOPBACK}; hdbbench sends no traffic anywhere else")
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(x) for x in _RANGE_FILE.read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As the servers do: connections of a stopped server in TIME_WAIT must not make its port look busy.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def pick_free_port(preferred: int, *, avoid: set[int] | frozenset[int] = frozenset(), span: int = 2000,
                   host: str = LOOPBACK) -> int:
    """The preferred port if free on host, else the next free one above it (below the ephemeral range)."""
    low, _ = ephemeral_range()
    for port in range(preferred, min(preferred + span, low)):
        if port not in avoid and port_is_free(port, host):
            return port
    raise ServerError(f"no free port on {host} in {preferred}-{min(preferred + span, low) - 1}")

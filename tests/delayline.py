# SPDX-License-Identifier: Apache-2.0
"""A fixed network delay for a namespace's traffic to one peer, where the kernel has no netem.

Run inside a network namespace: ``python delayline.py <tun name> <peer address> <delay ms>``. It
opens a TUN device, routes the traffic this namespace sends to the peer into it (policy routing:
locally sent packets to the peer use a table whose route is the TUN), holds each packet for the
delay and writes it back; the kernel then forwards it out of the namespace's own link to the peer.
It prints "ready" once the routes are in place; the TUN device and its routes vanish when it exits.
"""

from __future__ import annotations

import collections
import fcntl
import os
import select
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
TABLE = "100"


def open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def route_through(name: str, peer: str) -> None:
    def run(*argv: str) -> None:
        subprocess.run(argv, check=True)

    run("ip", "link", "set", name, "up")
    run("ip", "route", "add", f"{peer}/32", "dev", name, "table", TABLE)
    run("ip", "rule", "add", "to", f"{peer}/32", "iif", "lo", "lookup", TABLE, "priority", "100")
    # Packets coming back out of the TUN carry this namespace's own source address: let them in and
    # forward them to the peer over the namespace's link.
    for key, value in (("net.ipv4.ip_forward", "1"), ("net.ipv4.conf.all.rp_filter", "0"),
                       (f"net.ipv4.conf.{name}.rp_filter", "0"), (f"net.ipv4.conf.{name}.accept_local", "1")):
        run("sysctl", "-q", "-w", f"{key}={value}")


def relay(fd: int, delay_s: float) -> None:
    held: collections.deque[tuple[float, bytes]] = collections.deque()
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        readable, _, _ = select.select([fd], [], [], timeout)
        if readable:
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                held.append((time.monotonic() + delay_s, packet))
        now = time.monotonic()
        while held and held[0][0] <= now:
            os.write(fd, held.popleft()[1])


def main() -> None:
    name, peer, delay_ms = sys.argv[1], sys.argv[2], float(sys.argv[3])
    fd = open_tun(name)
    route_through(name, peer)
    print("ready", flush=True)
    relay(fd, delay_ms / 1000.0)


if __name__ == "__main__":
    main()

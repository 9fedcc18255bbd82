# SPDX-License-Identifier: Apache-2.0
"""Hosts of this machine for a cluster: network namespaces joined by a bridge, reachable from here.

Each host is a namespace ``<tag>-<host>`` with one veth (``eth0``) into a bridge that lives in a
namespace of its own (``<tag>-br``); a last veth pair joins the bridge to this (the machine's) network
namespace, as ``<tag>-h``, so that clients running here (the subscribers, the tests, hdbbench) reach
the hosts by address. Addresses are of a /24 of the benchmarking range 198.18.0.0/15 (never routed):
the hosts take .1, .2, ..., this side .254. Nothing else is added to the machine's network: the one
link ``<tag>-h`` and its connected route to the /24 go with the namespaces.

A tag is ``hha`` + 8 hex digits, one per state directory (the digest of its path, as its homes), so a
later command (`stack down`) finds what an earlier one made; the /24 is chosen from the digest too, so
two state directories' clusters can run side by side (a collision is refused, not shared).
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psutil

from hdbbench.model.errors import ServerError
from hdbbench.stack.servers import homes
from hdbbench.stack.servers.ports import BENCHMARK_NETWORK

PREFIX = "hha"
# The /24s of 198.19.0.0/16 (the upper half of the range): tests/test_hosts.py uses 198.18.0.0/24.
_SUBNETS = ipaddress.ip_network("198.19.0.0/16")
assert _SUBNETS.subnet_of(BENCHMARK_NETWORK)  # type: ignore[arg-type]


def _ip(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["ip", *argv], capture_output=True, text=True, check=False, timeout=30)
    if check and result.returncode != 0:
        raise ServerError(f"ip {' '.join(argv)} failed: {result.stderr.strip() or result.returncode}")
    return result


def namespaces() -> list[str]:
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def tag_of(state_dir: Path) -> str:
    return PREFIX + hashlib.sha256(str(Path(state_dir).resolve()).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class HostNetwork:
    """The namespaces of one cluster: `hosts` names (m1, m2, m3), each with its address."""

    tag: str
    hosts: tuple[str, ...]

    @property
    def subnet(self) -> ipaddress.IPv4Network:
        third = int(self.tag[len(PREFIX):], 16) % 256
        return ipaddress.IPv4Network(f"198.19.{third}.0/24")

    def address(self, host: str) -> str:
        return str(self.subnet.network_address + 1 + self.hosts.index(host))

    @property
    def here(self) -> str:
        """This namespace's address on the bridge."""
        return str(self.subnet.network_address + 254)

    def ns(self, host: str) -> str:
        return f"{self.tag}-{host}"

    @property
    def bridge_ns(self) -> str:
        return f"{self.tag}-br"

    @property
    def link(self) -> str:
        return f"{self.tag}-h"  # 13 characters: within the 15 of an interface name

    def exec_argv(self, host: str) -> list[str]:
        """The prefix that runs a command on `host` (as root; drop privileges after it)."""
        return ["ip", "netns", "exec", self.ns(host)]

    def exists(self) -> bool:
        return any(n.startswith(f"{self.tag}-") for n in namespaces())

    def up(self) -> None:
        """Make the namespaces, the bridge and the link from here (first removing a stale set)."""
        self.down()
        taken = re.findall(r"inet (\S+)/", _ip("-o", "-4", "addr", "show", check=False).stdout)
        if any(ipaddress.ip_address(a) in self.subnet for a in taken):
            raise ServerError(f"{self.subnet} is already on an interface of this machine; hdbbench will not "
                              "share it (another state directory's cluster?)")
        try:
            bridge = self.bridge_ns
            _ip("netns", "add", bridge)
            _ip("-n", bridge, "link", "add", "br0", "type", "bridge")
            _ip("-n", bridge, "link", "set", "br0", "up")
            for host in self.hosts:
                ns = self.ns(host)
                _ip("netns", "add", ns)
                _ip("-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", f"v{host}", "netns", bridge)
                _ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "up")
                _ip("-n", ns, "link", "set", "lo", "up")
                _ip("-n", bridge, "link", "set", f"v{host}", "master", "br0")
                _ip("-n", bridge, "link", "set", f"v{host}", "up")
            _ip("link", "add", self.link, "type", "veth", "peer", "name", "vhere", "netns", bridge)
            _ip("addr", "add", f"{self.here}/24", "dev", self.link)
            _ip("link", "set", self.link, "up")
            _ip("-n", bridge, "link", "set", "vhere", "master", "br0")
            _ip("-n", bridge, "link", "set", "vhere", "up")
        except BaseException:
            self.down()
            raise

    def cut(self, host: str) -> None:
        """Take `host` off the network, as a pulled cable or a dead switch port: the bridge's end of
        its veth goes down. The host keeps its address and reaches itself (its processes still talk to
        each other on it); nobody else reaches it, and its own packets out go nowhere, without a reset."""
        _ip("-n", self.bridge_ns, "link", "set", f"v{host}", "down")

    def mend(self, host: str) -> None:
        """Put `host` back on the network (undo `cut`)."""
        _ip("-n", self.bridge_ns, "link", "set", f"v{host}", "up")

    def pids(self) -> list[int]:
        return [pid for name in namespaces() if name.startswith(f"{self.tag}-") for pid in process_ids(name)]

    def kill_all(self) -> list[int]:
        """Terminate, then kill, every process left in the namespaces; return their pids."""
        procs = []
        for pid in self.pids():
            try:
                proc = psutil.Process(pid)
                proc.send_signal(signal.SIGTERM)
                procs.append(proc)
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(procs, timeout=10)
        for proc in alive:
            try:
                proc.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=5)
        return [p.pid for p in procs]

    def down(self) -> bool:
        """Kill what runs in the namespaces, remove them and the link; True when something was there."""
        mine = [n for n in namespaces() if n.startswith(f"{self.tag}-")]
        link = _ip("link", "show", self.link, check=False).returncode == 0
        if mine:
            self.kill_all()
        for name in mine:
            _ip("netns", "del", name, check=False)
        if link:  # gone with its peer in the bridge's namespace, normally
            _ip("link", "del", self.link, check=False)
        return bool(mine) or link


def process_ids(namespace: str) -> list[int]:
    """The processes running in a namespace."""
    return [int(p) for p in _ip("netns", "pids", namespace, check=False).stdout.split()]


def sweep_stale(root: Path | None = None) -> list[str]:
    """Remove the host networks (and what runs in them) of state directories that are gone: a command
    killed before `down` leaves them. A tag is the start of its state directory's digest, the name of
    its homes' directory (hdbbench.stack.servers.homes), whose `state-dir` file names the state directory.
    A network without such a directory may be another user's: it is left alone."""
    user_root = (root or homes.HOMES_ROOT) / f"hdbbench-{os.geteuid()}"
    removed = []
    for tag in sorted({m.group(1) for n in namespaces() if (m := re.match(rf"^({PREFIX}[0-9a-f]{{8}})-", n))}):
        bases = list(user_root.glob(f"{tag[len(PREFIX):]}*"))
        if len(bases) != 1:
            continue
        try:
            state_dir = Path((bases[0] / homes.STATE_DIR_MARKER).read_text().strip())
        except OSError:
            continue
        if not state_dir.exists():
            HostNetwork(tag, ()).down()
            removed.append(tag)
    return removed

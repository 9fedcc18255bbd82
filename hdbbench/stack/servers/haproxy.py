# SPDX-License-Identifier: Apache-2.0
"""HAProxy in front of a Patroni cluster: one address for the primary, one for the replicas.

The way many facilities route clients to a Patroni cluster: HAProxy asks each member's Patroni REST
API every second (`OPTIONS /primary`, `OPTIONS /replica`: HTTP 200 from the member in that role) and
forwards a client's TCP connection to a member that answers 200. When the primary moves, its check
fails and HAProxy closes the sessions it forwarded there (`on-marked-down shutdown-sessions`), so a
client reconnects and reaches the new primary. It runs on this machine's side of the cluster's bridge
(the /24's .254, hdbbench.stack.servers.netns), started as root to read its configuration and bind, then as
the account `haproxy` (its `user`/`group`), in the foreground, recorded like every process.
"""

from __future__ import annotations

import signal
from pathlib import Path

from hdbbench.stack.servers import process
from hdbbench.stack.servers.process import ProcessRecord

PRIMARY_PORT, REPLICA_PORT = 5000, 5001
ACCOUNT = "haproxy"


def configuration(bind: str, members: dict[str, str], pg_port: int, rest_port: int) -> str:
    """haproxy.cfg: member name -> address; PostgreSQL and Patroni REST on the same ports on each."""
    lines = [
        "global", f"    user {ACCOUNT}", f"    group {ACCOUNT}", "    maxconn 200",
        "defaults", "    mode tcp", "    timeout connect 3s",
        # Archiving sessions are long and often idle between batches: only a dead peer ends them.
        "    timeout client 1h", "    timeout server 1h", "    timeout check 2s",
    ]
    for name, port, role in (("primary", PRIMARY_PORT, "primary"), ("replicas", REPLICA_PORT, "replica")):
        lines += [f"listen {name}", f"    bind {bind}:{port}", f"    option httpchk OPTIONS /{role}",
                  "    http-check expect status 200",
                  "    default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions"]
        lines += [f"    server {member} {address}:{pg_port} check port {rest_port}"
                  for member, address in members.items()]
    return "\n".join(lines) + "\n"


class PrimaryRouter:
    """The HAProxy process of one cluster: `directory` holds its configuration, record and log."""

    def __init__(self, directory: Path, attached: bool) -> None:
        self.dir = directory
        self.attached = attached
        self.config_path = directory / "haproxy.cfg"
        self.record_path = directory / "haproxy.json"
        self.log_path = directory / "haproxy.log"

    def start(self, bind: str, members: dict[str, str], pg_port: int, rest_port: int) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(configuration(bind, members, pg_port, rest_port))
        # -db: in the foreground, recorded and stopped like the other processes.
        _, rec = process.spawn(["haproxy", "-db", "-f", str(self.config_path)], log_path=self.log_path,
                               attached=self.attached)
        rec.save(self.record_path)

    def running(self) -> bool:
        rec = ProcessRecord.load(self.record_path)
        return rec is not None and rec.alive()

    def stop(self) -> bool:
        rec = ProcessRecord.load(self.record_path)
        stopped = False
        if rec is not None and rec.alive():
            process.stop(rec, sig=signal.SIGTERM, timeout_s=10)
            stopped = True
        self.record_path.unlink(missing_ok=True)
        return stopped

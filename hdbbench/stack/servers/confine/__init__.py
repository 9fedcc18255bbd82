# SPDX-License-Identifier: Apache-2.0
"""Memory budgets and storage classes for the stack's database servers (issue 27).

- `spec`: the settings (`[stack] memory`, `storage`, `storage_size`; `stack up --memory/--storage`).
- `memory`: a v1 memory cgroup per server; `memory.drop_cache(state_dir, server)` empties its cache.
- `storage`: the data directory on its own ext4 on a throttled loop device; `io_counters(state_dir,
  server)` below gives its reads and writes.
- `probe`: what the storage gives (random 4 KiB direct reads, sequential reads).
- `lifecycle`: refuse, prepare, settle, read back (`confinement`), release; hdbbench.stack.stack calls it.
  `lifted(state_dir, server)`: the limits off while a history is built (hdbbench.parts.aging.history).
"""

from __future__ import annotations

from pathlib import Path

from hdbbench.stack.servers.confine import lifecycle
from hdbbench.stack.servers.confine.lifecycle import lifted
from hdbbench.stack.servers.confine.memory import drop_cache, oom_kills
from hdbbench.stack.servers.confine.storage import IoCounters


def io_counters(state_dir: Path, server: str) -> IoCounters | None:
    """Bytes and operations read and written on the server's loop device since its file system was
    attached (/sys/block/loopN/stat); None when the server has no file system of its own (class `ram`)."""
    return lifecycle.io_counters(Path(state_dir).resolve(), server)


__all__ = ["IoCounters", "drop_cache", "io_counters", "lifted", "oom_kills"]

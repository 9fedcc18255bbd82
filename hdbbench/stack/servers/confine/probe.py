# SPDX-License-Identifier: Apache-2.0
"""A short measurement of what a server's storage gives: random 4 KiB direct reads, sequential reads.

Direct I/O (O_DIRECT) so that the page cache does not answer instead of the device: the figure is the
loop device's (and its throttle's), not memory's. A few threads keep several reads in flight, as a
database server with several backends does. The file is written once and reused by later probes.
"""

from __future__ import annotations

import mmap
import os
import random
import threading
import time
from pathlib import Path

from hdbbench.stack.servers.confine.records import StorageProbe

BLOCK = 4096
SEQ_BLOCK = 1 << 20
PROBE_FILE = ".hdbbench-probe"
DEFAULT_FILE_BYTES = 64 << 20
DEFAULT_THREADS = 4


def ensure_file(path: Path, size: int = DEFAULT_FILE_BYTES) -> None:
    """Write the probe file with real blocks (a sparse file's holes would be read as zeros for free)."""
    if path.exists() and path.stat().st_size == size:
        return
    chunk = os.urandom(SEQ_BLOCK)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        for _ in range(size // SEQ_BLOCK):
            os.write(fd, chunk)
        os.fsync(fd)
    finally:
        os.close(fd)


def random_reads(path: Path, seconds: float, threads: int = DEFAULT_THREADS) -> tuple[float, int]:
    """4 KiB O_DIRECT reads at random aligned offsets by `threads` threads for `seconds`: (IOPS, reads)."""
    blocks = path.stat().st_size // BLOCK
    counts = [0] * threads
    deadline = time.monotonic() + seconds

    def worker(slot: int) -> None:
        rng = random.Random(slot)
        buf = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT needs
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        try:
            n = 0
            while time.monotonic() < deadline:
                os.preadv(fd, [buf], rng.randrange(blocks) * BLOCK)
                n += 1
            counts[slot] = n
        finally:
            os.close(fd)
            buf.close()

    start = time.monotonic()
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.monotonic() - start
    return sum(counts) / elapsed, sum(counts)


def sequential_read(path: Path, seconds: float) -> float:
    """MB/s of 1 MiB O_DIRECT reads from the start of the file (wrapping), for at most `seconds`."""
    size = path.stat().st_size
    buf = mmap.mmap(-1, SEQ_BLOCK)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    done = 0
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds:
            done += os.preadv(fd, [buf], done % size)
    finally:
        os.close(fd)
        buf.close()
    return done / 1e6 / (time.monotonic() - start)


def probe(directory: Path, *, read_seconds: float = 2.0, seq_seconds: float = 1.0,
          threads: int = DEFAULT_THREADS, file_bytes: int = DEFAULT_FILE_BYTES) -> StorageProbe:
    """Measure the file system at `directory` (the probe file stays there, owned by the caller)."""
    path = directory / PROBE_FILE
    ensure_file(path, file_bytes)
    iops, _ = random_reads(path, read_seconds, threads)
    mb_s = sequential_read(path, seq_seconds) if seq_seconds > 0 else None
    return StorageProbe(
        read_iops=round(iops, 1), read_mb_s=round(mb_s, 1) if mb_s is not None else None,
        seconds=read_seconds + seq_seconds,
        method=(f"random 4 KiB O_DIRECT reads of a {file_bytes >> 20} MiB file by {threads} threads for "
                f"{read_seconds:g} s; sequential 1 MiB O_DIRECT reads for {seq_seconds:g} s"),
    )

# SPDX-License-Identifier: Apache-2.0
"""The sampler keeps sampling when one probe fails, and process probes see real CPU and memory."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from hdbbench.model.sampling import Sampler, machine_probe, process_probe, thread_probe
from tests.harness import eventually, seen


def test_a_failing_probe_does_not_stop_the_others() -> None:
    counter = iter(range(1000))

    def broken() -> dict[str, float]:
        raise ConnectionError("database stopped")

    sampler = Sampler({"count": lambda: {"n": next(counter)}, "db": broken}, period_s=0.01)
    for _ in range(5):
        sampler.sample_once()
    times, values = sampler.series.column("count.n")
    assert values == [0, 1, 2, 3, 4] and times == sorted(times)
    assert sampler.series.failures == {"db": 5}
    header, rows = sampler.series.as_table()
    assert header == ["t_s", "count.n"] and len(rows) == 5


def test_sampler_thread_collects_rows() -> None:
    sampler = Sampler({"one": lambda: {"v": 1.0}}, period_s=0.01)
    with sampler:
        while len(sampler.series.rows) < 3:
            pass
    assert all(row["one.v"] == 1.0 for row in sampler.series.rows)


def test_process_probe_counts_children_cpu_and_memory() -> None:
    """The busy work runs in a grandchild (sh forks python): only counting children can see it."""
    busy = f"{sys.executable} -c 'x=0\nfor i in range(30_000_000): x+=i' ; sleep 30"
    shell = subprocess.Popen(["sh", "-c", busy])
    try:
        probe = process_probe([shell.pid])
        values = probe()

        def counted() -> Any:
            nonlocal values
            values = probe()
            return seen(values["cpu_s"] >= 0.2, values)

        eventually(counted, 60, "the grandchild's CPU time is counted", interval_s=0.05)
        assert values["rss_bytes"] > 5_000_000  # the python grandchild's memory is counted too
    finally:
        for proc in psutil.Process(shell.pid).children(recursive=True):
            proc.kill()
        shell.kill()
        shell.wait()
    assert process_probe([2**22 + 12345])() == {"cpu_s": 0.0, "rss_bytes": 0.0}


def test_machine_probe_counts_this_machines_busy_cpu_seconds() -> None:
    probe = machine_probe()
    first = probe()
    assert first["cpus"] == psutil.cpu_count() and first["busy_cpu_s"] > 0
    started, spent = time.monotonic(), time.process_time()
    while time.process_time() - spent < 0.3:  # this process busy for 0.3 CPU-seconds
        pass
    second = probe()
    elapsed = time.monotonic() - started
    # at least this process's work (the kernel counts in ticks), at most every CPU for the whole time
    assert 0.2 <= second["busy_cpu_s"] - first["busy_cpu_s"] <= first["cpus"] * elapsed + 0.05
    # and the machine's pace: the CPU milliseconds of the sampler's fixed work, each read anew
    assert first["work_ms"] > 0 and second["work_ms"] > 0 and first["work_ms"] != second["work_ms"]


def test_thread_probe_sums_cpu_by_thread_name() -> None:
    # A thread that names itself (as the subscriber's writer does) and burns CPU; the main thread idles.
    named, burned, done = threading.Event(), threading.Event(), threading.Event()

    def worker() -> None:
        Path(f"/proc/self/task/{threading.get_native_id()}/comm").write_text("pytest-burner")
        named.set()
        end = time.thread_time() + 0.3
        while time.thread_time() < end:
            pass
        burned.set()
        done.wait()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        named.wait(5)
        assert burned.wait(120), "the burner thread never got its 0.3 s of CPU"  # a loaded machine is slow, not wrong
        totals = thread_probe([os.getpid()], {"pytest-burner": "burner"}, other="rest")()
    finally:
        done.set()
        thread.join()
    assert set(totals) == {"burner_cpu_s", "rest_cpu_s"}
    assert totals["burner_cpu_s"] >= 0.25  # its 0.3 s of CPU, counted under its own class only
    assert totals["rest_cpu_s"] > 0

# SPDX-License-Identifier: Apache-2.0
"""Untimed work on several databases at once: one process per group of backends, side by side.

For work that counts bytes or checks results, not time, so that what runs beside it cannot change
its figures: disk usage (hdbbench.parts.disk.runs) and extraction's loads and validation before any query
is timed (hdbbench.parts.extraction.loads). Its time goes half to building events in Python and half to
the server storing them, and two such processes keep both cores busy (size measure of TimescaleDB
`pk` and MariaDB `pk` on 2 cores: 52 s and 41 s one after the other, 54 s side by side). The caller
chooses the groups: disk usage keeps one server's backends in one process, one after the other, so
that the server-wide log figures (WAL, binary log) stay each case's own.

Processes, not threads: the database drivers' C code is not trusted across threads here (a threaded
attempt ended in a segmentation fault). The processes are spawned (not forked from a process that
holds connections and threads), ignore Ctrl-C and SIGTERM, and stop at their next step when the
parent sets `stop` (on an error, Ctrl-C or SIGTERM); each drops its database as it stops.
"""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import signal
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from hdbbench.model.errors import HdbbenchError

STOP_WAIT_S = 120.0  # after `stop`: how long a process may take to drop its database and end
Measure = Callable[..., Any]  # (backends, progress, stop) -> that group's results (picklable)


class GroupProgress:
    """Progress of groups that run side by side, for a callback (text, fraction of the whole done):
    the whole is as far as the group least far. `tick` counts one of a group's `totals` items done."""

    def __init__(self, progress: Callable[[str, float], None], totals: Sequence[int]) -> None:
        self.progress, self.totals, self.done = progress, [max(1, t) for t in totals], [0] * len(totals)

    def __call__(self, text: str, group: int = 0) -> None:
        self.progress(text, min(d / t for d, t in zip(self.done, self.totals)))

    def tick(self, text: str, group: int = 0) -> None:
        self.done[group] += 1
        self(text, group)


class ItemProgress(Protocol):
    """What a group's work is handed for its progress: a line, or an item done (_Messages)."""

    def __call__(self, text: str) -> None: ...

    def tick(self, text: str) -> None: ...


class _Messages:
    """A process's progress for the parent's GroupProgress: a line, or an item done."""

    def __init__(self, messages: Any, index: int) -> None:
        self.messages, self.index = messages, index

    def __call__(self, text: str) -> None:
        self.messages.put(("say", self.index, text))

    def tick(self, text: str) -> None:
        self.messages.put(("tick", self.index, text))


def _child(index: int, measure: Measure, backends: Sequence[str], messages: Any, stop: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides, and tells by `stop`
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        messages.put(("done", index, measure(backends, _Messages(messages, index), stop)))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
        try:
            payload = pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its line
            payload = pickle.dumps(HdbbenchError(f"{type(exc).__name__}: {exc}"))
        messages.put(("error", index, payload))


def side_by_side(groups: Sequence[Sequence[str]], measure: Measure, progress: Any,
                 stop: Any = None) -> list[Any]:
    """`measure(backends, progress, stop)` for each group of backends, each group in a process of its
    own; their results in the groups' order. `progress` is called with a line and the group's index,
    and has `tick(line, index)` for an item done (GroupProgress). One group runs here, in this process."""
    if len(groups) == 1:
        return [measure(groups[0], progress, stop)]
    context = multiprocessing.get_context("spawn")
    messages, stop = context.Queue(), context.Event()
    processes = [context.Process(target=_child, args=(k, measure, group, messages, stop), daemon=True,
                                 name=f"hdbbench-{'-'.join(group)}") for k, group in enumerate(groups)]
    for p in processes:
        p.start()
    results: dict[int, Any] = {}
    try:
        while len(results) < len(processes):
            try:
                kind, index, payload = messages.get(timeout=0.5)
            except queue.Empty:
                _check_alive(processes, results)
                continue
            if kind == "say":
                progress(payload, index)
            elif kind == "tick":
                progress.tick(payload, index)
            elif kind == "done":
                results[index] = payload
            else:
                raise pickle.loads(payload)
    except BaseException:
        stop.set()
        for p in processes:
            p.join(STOP_WAIT_S)
            if p.is_alive():
                p.terminate()
        raise
    for p in processes:
        p.join()
    return [results[k] for k in range(len(processes))]


def _check_alive(processes: Sequence[Any], results: dict[int, Any]) -> None:
    for k, p in enumerate(processes):
        if k not in results and p.exitcode is not None:
            raise HdbbenchError(f"the process working on {p.name.removeprefix('hdbbench-')} "
                                f"ended (exit code {p.exitcode}) without its results")

# SPDX-License-Identifier: Apache-2.0
"""The report's "unit costs" table: what one stored event cost in each insertion trial and each
saturation step (results.trials.UnitCosts, hdbbench.trials.costs), folded away under the CPU figures.
A planner's inputs, shown as recorded: CPU µs per event of the subscribers and of the trial's own
database server, its write requests per second, bytes written and log bytes per event."""

from __future__ import annotations

import html
from collections.abc import Sequence

from hdbbench.backends.registry import server_of
from hdbbench.report.render import html_table
from hdbbench.report.text import fmt
from hdbbench.results.trials import ServerWrites, TrialSummary, UnitCosts
from hdbbench.trials.writes import DEVICE_WORDS, LOOP_WORDS

COLUMNS = ["backend", "trial", "stored/s", "subscribers µs/event", "server µs/event", "write IOPS",
           "bytes written/event", "WAL bytes/event", "source"]
NOTE = ("over the trial's steady part (a saturation step: after its first second); events are the trial's "
        "stored counter; server: the process group of the database server the backend runs on; write IOPS: "
        "write requests completed per second on its loop device, else on the device holding its data (other "
        "writers included); bytes written: its loop device, else its process tree's /proc/<pid>/io; WAL: "
        "PostgreSQL's WAL position, InnoDB's redo log written")


def _row(backend: str, label: str, costs: UnitCosts) -> list[str]:
    server = next(iter(costs.writes), None) or server_of(backend) or ""
    writes: ServerWrites | None = costs.writes.get(server)
    return [backend, label, fmt(costs.stored_rate), fmt(costs.cpu_us_per_event.get("subscribers")),
            fmt(costs.cpu_us_per_event.get(server)), fmt(writes.write_iops if writes else None),
            fmt(writes.write_bytes_per_event if writes else None),
            fmt(writes.log_bytes_per_event if writes else None), _short(writes)]


def _short(writes: ServerWrites | None) -> str:
    """The record's `source` in a few words (the table's caption says the rest)."""
    if writes is None:
        return "not read"
    where = ("loop device" if LOOP_WORDS in writes.source else
             "data's device, shared" if DEVICE_WORDS in writes.source else "no device here")
    return where + (", WAL" if writes.log_bytes_per_event is not None else "")


def unit_costs_table(trials: Sequence[TrialSummary]) -> str | None:
    """The folded table of every trial's unit costs and its search's steps'; None when no trial has any
    (a run from before they were recorded)."""
    rows: list[list[str]] = []
    for t in trials:
        if t.unit_costs is not None:
            rows.append(_row(t.backend, t.label, t.unit_costs))
        for step in t.saturation.steps if t.saturation is not None else []:
            if step.unit_costs is not None:
                rows.append(_row(t.backend, f"{t.label} step {fmt(step.offered_rate)}/s", step.unit_costs))
    if not rows:
        return None
    table = html_table(COLUMNS, rows, NOTE)
    return f"<details><summary>{html.escape(f'unit costs ({len(rows)} windows)')}</summary>{table}</details>"

# SPDX-License-Identifier: Apache-2.0
"""A run's own figures as an OpenMetrics file, `metrics.om` in the run directory.

Each insertion trial's per-second series (the columns of `series/<trial>.csv`), every sample at the
wall-clock time it was taken. The subscribers' statistics keep the metric names hdbbench-es serves
and `hdbbench exporter` gives any HdbEventSubscriber (hdbbench.subscribers.statistics.METRICS); the
other columns (devices, processes, the database's own counts) are `hdbbench_run_<column>`. Labels:
job "hdbbench-run", device "<run>/<trial>" (the archivers' dashboard's two variables), backend,
trial and kind.

Prometheus takes the file as history (backfill): `promtool tsdb create-blocks-from openmetrics
metrics.om <its data directory>/`. A facility's Grafana then shows the run beside its own archivers.
Every value is a gauge: a sample is what the column held at that second.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hdbbench.subscribers.statistics import METRICS

JOB = "hdbbench-run"
FILE_NAME = "metrics.om"


@dataclass(frozen=True)
class RecordedSeries:
    """One trial's series as written to series/<trial>.csv, and when its t_s = 0 was."""

    trial: str
    backend: str
    kind: str
    started_epoch: float
    header: Sequence[str]
    rows: Sequence[Sequence[float | str]]


def metric_of(column: str) -> tuple[str, str]:
    """(metric name, HELP text) of a series column."""
    source, _, statistic = column.partition(".")
    if source == "sub" and statistic in METRICS:
        return METRICS[statistic]
    name = "hdbbench_run_" + re.sub(r"[^A-Za-z0-9_]", "_", column).lower()
    return name, f"the trial series' column {column} (series/<trial>.csv, docs/scenarios.md)"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(run_name: str, series: RecordedSeries) -> str:
    pairs = {"job": JOB, "device": f"{run_name}/{series.trial}", "backend": series.backend,
             "trial": series.trial, "kind": series.kind}
    return ",".join(f'{key}="{_escape(value)}"' for key, value in pairs.items())


def exposition(run_name: str, recorded: Sequence[RecordedSeries]) -> str:
    """The OpenMetrics text of every trial's series: one family per column, each trial's samples in
    time order, `# EOF` last."""
    families: dict[str, tuple[str, list[str]]] = {}
    for series in recorded:
        labels = _labels(run_name, series)
        at = series.header.index("t_s")
        for index, column in enumerate(series.header):
            if index == at:
                continue
            name, help_text = metric_of(column)
            samples = families.setdefault(name, (help_text, []))[1]
            for row in series.rows:
                value = _number(row[index])
                if value is not None:
                    samples.append(f"{name}{{{labels}}} {value!r} {series.started_epoch + float(row[at]):.3f}")
    lines: list[str] = []
    for name, (help_text, samples) in families.items():
        if samples:
            lines += [f"# TYPE {name} gauge", f"# HELP {name} {_escape(help_text)}", *samples]
    return "\n".join([*lines, "# EOF"]) + "\n"


def _number(cell: float | str) -> float | None:
    """A sample's value, or None for a sample the probe did not give (an empty cell) or not a number."""
    try:
        value = float(cell)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def write(run_dir: Path, recorded: Sequence[RecordedSeries]) -> Path:
    """metrics.om of the trials so far, replaced whole (a reader never sees half a file)."""
    path = run_dir / FILE_NAME
    tmp = path.with_suffix(".om.tmp")
    tmp.write_text(exposition(run_dir.name, recorded))
    tmp.replace(path)
    return path

# SPDX-License-Identifier: Apache-2.0
"""A run's series as OpenMetrics (hdbbench.results.openmetrics): names, labels, left-out cells, and Debian's
promtool taking the file as history. A whole run's file: tests/test_run.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hdbbench.results.openmetrics import RecordedSeries, exposition, write

T0 = 1_700_000_000.0
SERIES = RecordedSeries("mysql_throughput", "mysql", "throughput", T0,
                        ["t_s", "sub.AttributePendingNumber", "dev.emitted"],
                        [[0.0, 5.0, ""], [1.002, "nan", 7.0], [2.0, 3.0, 9.0]])
LABELS = 'job="hdbbench-run",device="run-1/mysql_throughput",backend="mysql",trial="mysql_throughput",kind="throughput"'


def test_subscriber_columns_keep_their_metric_names_and_missing_cells_are_left_out() -> None:
    text = exposition("run-1", [SERIES])
    lines = text.splitlines()
    assert lines[:2] == ["# TYPE hdbpp_attribute_pending_number gauge",
                         "# HELP hdbpp_attribute_pending_number events waiting to be stored now (events)"]
    assert [line for line in lines if line.startswith("hdbpp_attribute_pending_number{")] == [
        f"hdbpp_attribute_pending_number{{{LABELS}}} 5.0 1700000000.000",
        f"hdbpp_attribute_pending_number{{{LABELS}}} 3.0 1700000002.000"]
    assert [line for line in lines if line.startswith("hdbbench_run_dev_emitted{")] == [
        f"hdbbench_run_dev_emitted{{{LABELS}}} 7.0 1700000001.002",
        f"hdbbench_run_dev_emitted{{{LABELS}}} 9.0 1700000002.000"]
    assert lines[-1] == "# EOF" and "nan" not in text


def test_promtool_takes_the_file_as_history(tmp_path: Path) -> None:
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    if not os.access(promtool, os.X_OK):
        pytest.skip(f"promtool not installed ({promtool}): run scripts/setup.sh")
    path = write(tmp_path, [SERIES])
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(path), str(tmp_path / "db")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # 4 samples in 2 series (the empty and the NaN cell left out)
    # its table: BLOCK ULID, MIN TIME, MAX TIME, DURATION, NUM SAMPLES, NUM CHUNKS, NUM SERIES, SIZE
    assert any(line.split()[4::2][:2] == ["4", "2"] for line in done.stdout.splitlines()[1:]), done.stdout

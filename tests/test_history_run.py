# SPDX-License-Identifier: Apache-2.0
"""A run with [history]: its trials archive onto the aged history and leave it as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends.registry import backend_for_stack
from tests.harness.runs import run as harness_run
from tests.harness.servers import REPO

SCENARIO = """
name = "aged-tiny"
seed = 7
backends = ["postgresql", "mysql"]
[stack]
profile = "relaxed"
[devices]
profile = "{profile}"
[load]
rate = 300
duration_s = 4
warmup_s = 1
[history]
rows = 30_000
"""


@pytest.mark.subscriber
def test_the_trials_run_on_the_history_and_leave_it_as_it_was(stack_endpoints: Any, test_state_dir: Path,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "aged-tiny.toml"
    path.write_text(SCENARIO.format(profile=REPO / "devices" / "profiles" / "insertion-devdouble.toml"))
    run = harness_run(path, test_state_dir, tmp_path)
    results = json.loads((run / "results.json").read_text())["results"]
    histories = results["aging"]["history"]
    try:
        assert [(h["backend"], h["rows"], h["attributes"]) for h in histories] == [
            ("postgresql", 30_000, 100), ("mysql", 30_000, 100)]
        assert [t["accounting"]["lost"] for t in results["trials"]] == [0, 0]
        assert all(t["accounting"]["stored"] > 0 for t in results["trials"])
        for h in histories:
            db = backend_for_stack(h["backend"], stack_endpoints, database=h["database"])
            # the subscribers continued the history's attributes (no new att_conf row), and their rows went again
            assert len(db.attribute_catalog()) == 100
            assert sum(db.count_rows_by_attribute().values()) == 30_000
        assert (run / "history.csv").read_text().count("\n") == 3
    finally:
        for h in histories:
            backend_for_stack(h["backend"], stack_endpoints, database=h["database"]).drop_schema()

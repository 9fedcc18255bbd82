# SPDX-License-Identifier: Apache-2.0
"""Every kind of results file and the record its ``results`` holds: the one table.

A results file says its kind (``"kind"``); `KINDS` names the dataclass its ``results`` object is read
into (hdbbench.model.records.read, strictly) and written from. The table is written out here, in
full, and filled by nothing else: what a file is checked against never depends on which modules
happen to have been imported. A new kind of results file is a record class and a line here.
"""

from __future__ import annotations

from hdbbench.results.disk import DiskResults, ValidateResults
from hdbbench.results.extraction import ExtractionResults
from hdbbench.results.faults import FaultsResults
from hdbbench.results.hardware import HardwarePlanResults
from hdbbench.results.replica import ReplicaResults
from hdbbench.results.sizing import PlanResults
from hdbbench.results.trials import InsertionResults

# kind -> the record of ``results``; beside each, the file a run writes it to and its producer.
KINDS: dict[str, type] = {
    "insertion": InsertionResults,      # results.json: hdbbench.run.runner, trials by hdbbench.trials.insertion
    "extraction": ExtractionResults,    # extraction.json: hdbbench.parts.extraction
    "disk": DiskResults,                # disk.json: hdbbench.parts.disk (size measure)
    "disk-plan": PlanResults,           # sizing.json: hdbbench.parts.disk.sizing (size plan)
    "disk-validate": ValidateResults,   # results.json of size validate: hdbbench.parts.disk.validate
    "faults": FaultsResults,            # faults.json: hdbbench.parts.faults
    "replica": ReplicaResults,          # replica.json: hdbbench.parts.replica_reads
    "hardware-plan": HardwarePlanResults,  # hardware.json: hdbbench.scenario.hardware (plan hardware)
}

ResultRecord = (InsertionResults | ExtractionResults | DiskResults | PlanResults | ValidateResults | FaultsResults
                | ReplicaResults | HardwarePlanResults)


# SPDX-License-Identifier: Apache-2.0
"""The orchestrator: runs a scenario's parts in order and writes the run directory.

May import: report, scenario and every stage below.
"""

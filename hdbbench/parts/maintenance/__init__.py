# SPDX-License-Identifier: Apache-2.0
"""Maintenance while archiving: the jobs facilities run on a live archive (reorder, retention, partition
rotation, aggregates, vacuum/optimize, backup), each measured against the same trial without it."""

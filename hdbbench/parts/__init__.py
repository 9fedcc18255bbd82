# SPDX-License-Identifier: Apache-2.0
"""The measurement parts beside insertion: extraction, disk usage and sizing, the aged database, maintenance, faults, replica reads.

May import: trials, results, subscribers, load, backends, stack, model.
"""

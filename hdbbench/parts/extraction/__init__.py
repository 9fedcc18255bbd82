# SPDX-License-Identifier: Apache-2.0
"""The extraction part: query sets, their data, validation and timed queries.
"""

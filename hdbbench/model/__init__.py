# SPDX-License-Identifier: Apache-2.0
"""Shared leaves every stage uses: errors, Tango/HDB++ types, units, the TOML reader, typed records, statistics and sampling.

Imports nothing of hdbbench outside itself.
"""

# SPDX-License-Identifier: Apache-2.0
"""Inventories: the model and its one reader (`model`), and inventories made from what a facility
already has: a live HDB++ archive, a Tango database, an archiving configuration in YAML."""

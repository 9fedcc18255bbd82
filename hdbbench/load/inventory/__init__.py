# SPDX-License-Identifier: Apache-2.0
"""Inventories from what a facility already has: a live HDB++ archive, a Tango database, an archiving
configuration in YAML; and the archiver plan for an inventory. The inventory file is the one
hdbbench.parts.disk.sizing reads."""

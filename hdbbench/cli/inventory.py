# SPDX-License-Identifier: Apache-2.0
"""`hdbbench inventory ...`: an inventory (the file `size plan`, the facility scenario and `plan
archivers` read) written from what a facility already has (hdbbench.inventory)."""

from __future__ import annotations

import click


@click.group()
def inventory() -> None:
    """Inventories from a live HDB++ archive, a Tango database or an archiving configuration."""

# SPDX-License-Identifier: Apache-2.0
"""hdbbench: the HDB++ archiving testbed.

Starts real servers (PostgreSQL+TimescaleDB, MariaDB, a Tango database), simulated Tango devices and
HDB++ event subscribers on this machine, runs scenarios against them, measures and reports.
"""

__version__ = "0.1.0"

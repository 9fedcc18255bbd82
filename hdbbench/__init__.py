# SPDX-License-Identifier: Apache-2.0
"""hdbbench: the HDB++ archiving testbed.

Starts real servers (PostgreSQL+TimescaleDB, MariaDB, a Tango database), simulated Tango devices and
HDB++ event subscribers on this machine, runs scenarios against them, measures and reports.

One package per stage of a run, top to bottom; a stage imports only the stages below it
(pyproject.toml's [tool.importlinter], checked by tests/test_architecture.py):

    cli          the `hdbbench` command, one module per command group
    run          the orchestrator: a scenario's parts in order, the run directory
    scenario     a scenario read and resolved into each part's plan; hosts; facility plans (archivers)
    report       the report and the comparison of runs, from a run directory's files only
    parts        the measurements beside insertion: extraction, disk and sizing, the aged database,
                 maintenance, faults, replica reads
    trials       insertion trials: one trial, its figures from inside and outside, saturation searches
    results      the results model: run directories, typed records, their one reader and writer, migrate
    subscribers  HDB++ event subscribers: launching them, their kinds and statistics, the exporter
    load         the offered load: simulated devices, the event generator, facility inventories
    backends     one folder per database family behind small interfaces, its abilities declared
    stack        the private servers (servers/), settings profiles, CPU placement, mounts
    model        shared leaves: errors, Tango/HDB++ types, units, the TOML reader, records, statistics
"""

__version__ = "0.1.0"

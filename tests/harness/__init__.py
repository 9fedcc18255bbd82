# SPDX-License-Identifier: Apache-2.0
"""The one test harness: what tests share, so that no test module imports another.

    waiting     `eventually`, `seen`, `unchanged`, `prove_delivery`: waiting by proof, with a bound
    servers     the session stack's configuration, private stacks, a Tango database alone, which
                server a backend runs on, skipping without root and network namespaces
    databases   fresh HDB++ databases, rows counted through the backend API, `sql` for schema checks
    composed    `Harness`: stack endpoints + fresh databases + simulated devices + subscribers
    devices     simulated devices from a client: archive events collected, their digests, the Tango
                database, waiting on an amount of events emitted
    runs        hdbbench's command line; scenarios written, run in process, and their trials read back
    signals     children a test interrupts with SIGINT
    synthetic   a synthetic run directory for the report and migration tests
    values      schema variants, edge-value events and hypothesis strategies for backend tests

The fixtures that own real server processes are in tests/conftest.py (in the manner of
pytest-postgresql); the marker ``subscriber`` skips a test when the subscriber is not built.
"""

from __future__ import annotations

from tests.harness.servers import REPO
from tests.harness.waiting import eventually, prove_delivery, seen, unchanged

__all__ = ["REPO", "eventually", "prove_delivery", "seen", "unchanged"]

# SPDX-License-Identifier: Apache-2.0
"""Children that a test interrupts with SIGINT, as a user's Ctrl-C does."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


def default_sigint() -> None:
    """preexec_fn of a child that a test interrupts with SIGINT: a suite started with SIGINT ignored
    (as a background job is) would hand the ignored signal down, and the child would never see it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process while a child starts, as in a suite started in the background,
    so that a test interrupting the child shows it works there too."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

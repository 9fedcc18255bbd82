# SPDX-License-Identifier: Apache-2.0
"""The null backend (`null`): the subscribers count events and store none, so that a run measures
Tango's delivery and the subscriber alone (TSBS's null target).

    counts.py   the count files the subscriber's null writer leaves (subscriber/src/null_writer.h), read back
    outside.py  the inserted-event counter and the visible events, read from outside the subscribers
    backend.py  NullBackend: the schema as a directory, counts, what it lacks
"""

from hdbbench.backends.null.backend import NullBackend

__all__ = ["NullBackend"]

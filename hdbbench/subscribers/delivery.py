# SPDX-License-Identifier: Apache-2.0
"""Proof that Tango's event path works for every attribute before a trial's load starts.

A subscriber counts an attribute as subscribed when ``subscribe_event`` returns, but the ZeroMQ
connection to the device server and its subscription filter follow asynchronously (the "slow
joiner"): an event pushed in that gap is dropped by the publisher and would count as lost. With
thousands of attributes subscribed in a burst the gap reaches seconds for the last device servers,
while in a facility the subscriptions are long established. So before the load, each device pushes
one extra event on every attribute (``BurstAttributes``) until each attribute's count in the
subscriber's HDB++ ``AttributeEventNumberList`` has grown: the path is then proven. The devices are
rewound afterwards (the trial's ``prepare``), and the rows of these events are stamped before the
load starts, so the accounting leaves them out as it does the initial values.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from hdbbench.subscribers import statistics as st

ATTEMPT_WAIT_S = 1.0  # an attempt's events given this long to arrive
POLL_S = 0.1
SETTLE_QUIET_S = 0.4  # the queues empty and the stored count still this long: the proof's events are stored


def event_counts(fleet: Any, devices: Sequence[str]) -> dict[str, int]:
    """Attribute (full name, lower case) -> events received, over the subscribers (HDB++ lists)."""
    counts: dict[str, int] = {}
    for device in devices:
        figures = fleet.statistics(device, (st.ATTRIBUTE_LIST, st.ATTRIBUTE_EVENT_NUMBER_LIST))
        names = figures.get(st.ATTRIBUTE_LIST)
        numbers = figures.get(st.ATTRIBUTE_EVENT_NUMBER_LIST)
        for name, number in zip(names if names is not None else (), numbers if numbers is not None else ()):
            counts[str(name).lower()] = int(number)
    return counts


def _by_device(attributes: Iterable[str], tango_host: str, devices: Sequence[str]) -> dict[str, list[str]]:
    """device -> short attribute names, from full names tango://<host>/<device>/<attribute>."""
    prefixes = {f"tango://{tango_host}/{d}/".lower(): d for d in devices}
    out: dict[str, list[str]] = defaultdict(list)
    for full in attributes:
        head, _, short = full.rpartition("/")
        device = prefixes.get(f"{head}/".lower())
        if device is not None:
            out[device].append(short)
    return out


def confirm(fleet: Any, subscriber_devices: Sequence[str], load: Any, timeout_s: float = 30.0,
            patience: int = 5) -> set[str]:
    """Burst one event on every attribute whose delivery is not proven yet, until every one is, or
    `patience` attempts in a row prove none more, or the timeout; return the attributes still
    unproven (empty when the event path works for all; the trial records how many)."""
    baseline = event_counts(fleet, subscriber_devices)
    waiting = {a.lower() for a in load.attributes}
    deadline = time.monotonic() + timeout_s
    proxies = dict(zip(load.devices, load.proxies()))
    idle = 0
    while waiting and idle < patience and time.monotonic() < deadline:
        for device, names in _by_device(waiting, load.tango_host, load.devices).items():
            proxies[device].command_inout("BurstAttributes", ([1], names))
        still = _unproven_after(fleet, subscriber_devices, waiting, baseline)
        idle = idle + 1 if len(still) == len(waiting) else 0
        waiting = still
    return waiting


def _unproven_after(fleet: Any, subscriber_devices: Sequence[str], waiting: set[str],
                    baseline: dict[str, int]) -> set[str]:
    """The attributes whose count has not grown, read every POLL_S until none is left or an attempt's
    ATTEMPT_WAIT_S is over (the events arrive within milliseconds when the path works)."""
    deadline = time.monotonic() + ATTEMPT_WAIT_S
    while True:
        time.sleep(POLL_S)
        counts = event_counts(fleet, subscriber_devices)
        still = {a for a in waiting if counts.get(a, 0) <= baseline.get(a, 0)}
        if not still or time.monotonic() >= deadline:
            return still


def settle(fleet: Any, subscriber_devices: Sequence[str], timeout_s: float) -> None:
    """Until the proof's events are stored, at most `timeout_s`: they then stay out of the windowed
    figures, which restart next. Stored when our subscribers' RowsStoredNumber has reached every
    event they received (HDB++'s AttributeEventNumberList) with every queue empty; otherwise (a
    kind without a stored count, an event not stored) when the queues are empty and the stored
    count has stood still for SETTLE_QUIET_S."""
    deadline = time.monotonic() + timeout_s
    previous: tuple[float, Any] | None = None
    since = time.monotonic()
    while time.monotonic() < deadline:
        stats = [fleet.statistics(d, (st.ROWS_STORED_NUMBER, st.ATTRIBUTE_EVENT_NUMBER_LIST))
                 for d in subscriber_devices]
        state = (sum(float(x.get(st.ATTRIBUTE_PENDING_NUMBER) or 0) for x in stats),
                 tuple(x.get(st.ROWS_STORED_NUMBER) for x in stats))
        if not state[0] and _all_received_stored(stats):
            return
        if state != previous or state[0]:
            previous, since = state, time.monotonic()
        elif time.monotonic() - since >= SETTLE_QUIET_S:
            return
        time.sleep(POLL_S)


def _all_received_stored(stats: Sequence[dict[str, Any]]) -> bool:
    """Each subscriber has stored as many events as it received (both counted since it started)."""
    for x in stats:
        stored, received = x.get(st.ROWS_STORED_NUMBER), x.get(st.ATTRIBUTE_EVENT_NUMBER_LIST)
        if stored is None or received is None or float(stored) < sum(int(n) for n in received):
            return False
    return True

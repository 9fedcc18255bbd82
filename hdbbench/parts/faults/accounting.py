# SPDX-License-Identifier: Apache-2.0
"""The loss of a fault trial, by reason, and its time to recover — from outside figures first.

emitted: the devices' per-attribute counters (a killed device server's counts sampled just before the
kill, plus those of its restarted process); stored: rows in the database stamped since the load began
(the primary key keeps them distinct per attribute and data_time); lost = emitted − stored, per
attribute, summed. The reasons add up to `lost` exactly:

* a process kill splits its attributes' loss at the instant `t_k` the counters were sampled just
  before the kill, by the events' own timestamps: events stamped before `t_k` and never stored were
  in the subscriber's process (``in_subscriber_memory_at_crash``: its ZeroMQ receive buffer, Tango's
  event thread, or its queue when not logged ahead) or in flight out of the killed device server
  (``in_flight_at_device_crash``); those stamped after were emitted while the subscriber
  was down (``emitted_while_subscriber_down``, at most what the devices emitted between the kill and
  its re-subscription: the moment the database first holds an event stamped after the restart) or
  by the restarted device before the subscriber subscribed again (``emitted_before_resubscription``);
* a failover (the primary's node crashed, or its host was cut off the network: hdbbench.parts.faults.cluster)
  splits the loss the same way at the crash (the cut). Events stamped before it and never stored:
  - with asynchronous replication, committed on the old primary and never replicated
    (``not_replicated_at_failover``);
  - with synchronous replication a commit the primary acknowledged is on a standby, so replication
    lost none of them: the subscriber dropped them (its insert failed with the primary and it did not
    write them again: ``dropped_by_subscriber_at_failover``). Ours counts what it drops
    (DbErrorNumber: rejected rows), and that much of the loss is put down to it, stamped before the
    crash or after it; another kind, which does not count, has the loss from before the crash;
  - where the replication mode is not known, ``unattributed``;
  those stamped after are ``unattributed``;
* ``spool_full`` and ``queue_full``: what our subscriber counted itself (LostSpoolFullNumber,
  LostQueueFullNumber); a subscriber kind without these statistics has none;
* ``unattributed``: the rest, which the report shows as a failure.

Recovery time: from the fault's end `t_e` to the first sample at which the database holds as many
rows as the devices had emitted at `t_e` minus the trial's final loss — the moment every event emitted
before the end that will be stored is stored (exact while the subscriber stores in order; a spool
replayed out of order can make it read early by what was replayed last).

Write stall (``write_stall_s``): the longest time between two 1 Hz samples at which the stored count
grew, from the last sample before the fault's begin to the load's stop: the window in which nothing
was stored (about 1 s, the sampling period, when archiving never stopped). Caught up
(``caught_up_s``): from the fault's begin to the sample from which on the back-log (emitted − stored −
the trial's final loss) stays no larger than before the fault plus one second of the offered rate: the
stored rate is back and the archive is current again (0 when it never fell behind).

Resumption after a device kill (`resumption`): an attribute of the restarted server resumed when the
database holds an event of it stamped after the restart; ``never`` counts those without one once the
queues drained (rows read since the restart). Its time to resume runs from the restart to the poll that
first saw that row (hdbbench.parts.faults.run polls while it waits), so it includes the attribute's own
period (a 60-s attribute may emit its first event a minute after the restart) and the storage lag.
``silent``: those that had emitted before the kill but had no event stored from the load's start to
the kill (a subscription Tango's event consumer dropped, reference §1c), and how many of them resumed.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from hdbbench.subscribers import statistics as st

# Our subscriber's loss and memory statistics; another kind reads them as None.
LOST_QUEUE_FULL = st.LOST_QUEUE_FULL_NUMBER
LOST_SPOOL_FULL = st.LOST_SPOOL_FULL_NUMBER
QUEUE_CAPACITY = st.MEMORY_QUEUE_CAPACITY
QUEUE_MAX = st.MEMORY_QUEUE_MAX_NUMBER

# The faults whose primary is lost with what it had not replicated (hdbbench.parts.faults.cluster): a crash
# of its node, or its host cut off the network.
FAILOVERS = ("failover", "primary_host_isolated")
REASONS = ("in_subscriber_memory_at_crash", "emitted_while_subscriber_down", "in_flight_at_device_crash",
           "emitted_before_resubscription", "not_replicated_at_failover", "dropped_by_subscriber_at_failover",
           "spool_full", "queue_full", "unattributed")
# `counted` key of our subscriber's own count of the rows it dropped (rejected): absent for another kind.
DROPPED = "dropped_by_subscriber"


@dataclass(frozen=True)
class KillSnapshot:
    """The devices' counters sampled just before a process kill, and what was stored by then."""

    at: float                               # time.time() of the sample
    emitted: Mapping[str, int]              # per attribute, at `at`
    stored_before: Mapping[str, int]        # per attribute: rows stamped before `at`
    attributes: frozenset[str]              # the attributes the kill concerns (a device kill: its devices')
    emitted_until_resubscribed: int | None = None  # a subscriber kill: emitted from the kill to re-subscription


@dataclass
class Loss:
    emitted: int
    stored: int
    lost: int
    lost_by_reason: dict[str, int] = field(default_factory=dict)


def account(fault: str, emitted: Mapping[str, int], stored: Mapping[str, int], counted: Mapping[str, int],
            snapshot: KillSnapshot | None = None, synchronous: bool | None = None) -> Loss:
    """Emitted, stored, lost and lost by reason (the module docstring); `counted`: our subscriber's
    own loss counters by reason (``spool_full``, ``queue_full``, `DROPPED`), absent for another kind;
    `synchronous`: the cluster's replication mode at a failover (None: not known)."""
    lost_of = {a: max(0, n - stored.get(a, 0)) for a, n in emitted.items()}
    lost = sum(lost_of.values())
    reasons: dict[str, int] = {}
    left = lost

    def attribute(reason: str, amount: int) -> None:
        nonlocal left
        taken = max(0, min(left, amount))
        if taken:
            reasons[reason] = reasons.get(reason, 0) + taken
            left -= taken

    if snapshot is not None and fault in ("subscriber_kill", "device_kill"):
        before, after = _split_at_kill(emitted, stored, snapshot)
        if fault == "subscriber_kill":
            attribute("in_subscriber_memory_at_crash", before)
            bound = snapshot.emitted_until_resubscribed
            down = after if bound is None else min(after, bound)
            attribute("emitted_while_subscriber_down", down)
        else:
            attribute("in_flight_at_device_crash", before)
            attribute("emitted_before_resubscription", after)
    if snapshot is not None and fault in FAILOVERS:
        before, after = _split_at_kill(emitted, stored, snapshot)
        if synchronous is False:
            # Commits the old primary acknowledged and no standby had. A subscriber that keeps a batch
            # whose commit did not return writes it again to the new primary, so nothing else of
            # that time goes missing.
            attribute("not_replicated_at_failover", before)
        elif synchronous:
            # Ours counts what it dropped, stamped before the crash or after it (a batch it was still
            # filling); another kind's loss from before the crash can only be its own.
            dropped = counted.get(DROPPED)
            attribute("dropped_by_subscriber_at_failover", before if dropped is None else min(before + after, dropped))
    for reason in ("spool_full", "queue_full"):
        attribute(reason, int(counted.get(reason, 0)))
    attribute("unattributed", left)
    return Loss(sum(emitted.values()), sum(min(stored.get(a, 0), n) for a, n in emitted.items()), lost, reasons)


def _split_at_kill(emitted: Mapping[str, int], stored: Mapping[str, int], snapshot: KillSnapshot) -> tuple[int, int]:
    """The loss of the kill's attributes: (of events stamped before the kill, of those stamped after)."""
    before = after = 0
    for name in snapshot.attributes:
        at_kill = snapshot.emitted.get(name, 0)
        stored_before = snapshot.stored_before.get(name, 0)
        before += max(0, at_kill - stored_before)
        after += max(0, (emitted.get(name, 0) - at_kill) - (stored.get(name, 0) - stored_before))
    return before, after


@dataclass(frozen=True)
class Resumption:
    """The attributes of a restarted device server against the rows stored after its restart."""

    attributes: int
    never: tuple[str, ...]      # sorted: no event stored stamped after the restart
    p50_s: float | None         # time to resume over its attributes; None when past the wait
    max_s: float | None         # the last one's; None unless every attribute was seen resumed
    silent: int = 0             # silent before the kill (module docstring)
    silent_resumed: int = 0     # of those, resumed after the restart


def resumption(attributes: Collection[str], stored_since_restart: Mapping[str, int], seen_at: Mapping[str, float],
               restarted: float, silent_before: Collection[str] = ()) -> Resumption:
    """`stored_since_restart`: rows per attribute stamped after the restart, counted after the drain;
    `seen_at`: time.time() of the poll that first saw such a row, per attribute (module docstring). An
    attribute not seen within the wait counts as infinitely late, so p50 stays defined while at most
    half of them are. `silent_before`: the attributes silent before the kill."""
    never = tuple(sorted(a for a in attributes if stored_since_restart.get(a, 0) == 0))
    delays = sorted(max(0.0, seen_at[a] - restarted) if a in seen_at else math.inf for a in attributes)

    def finite(value: float) -> float | None:
        return value if math.isfinite(value) else None

    silent = set(silent_before) & set(attributes)
    silent_resumed = len(silent - set(never))
    if not delays:
        return Resumption(0, never, None, None, len(silent), silent_resumed)
    return Resumption(len(delays), never, finite(delays[(len(delays) - 1) // 2]), finite(delays[-1]), len(silent),
                      silent_resumed)


def recovery_s(times: Sequence[float], stored: Sequence[float], emitted: Sequence[float], ended: float,
               lost: int) -> float | None:
    """Seconds from `ended` to the first sample at which stored >= emitted-at-`ended` − lost (module
    docstring); `times` are time.time() of the samples. None: never within the samples."""
    at_end = _value_at(times, emitted, ended)
    if at_end is None:
        return None
    target = at_end - lost
    for t, rows in zip(times, stored):
        if t >= ended and rows >= target:
            return max(0.0, t - ended)
    return None


def write_stall(times: Sequence[float], stored: Sequence[float], began: float, until: float) -> float | None:
    """Seconds of the longest stretch without a growing stored count (module docstring); None without
    a growing sample."""
    before = [t for t in times if t <= began]
    start = before[-1] if before else began
    pairs = list(zip(times, stored))
    grew = [t1 for (_, s0), (t1, s1) in zip(pairs, pairs[1:]) if s1 > s0 and start < t1 <= until]
    points = [start, *grew]
    return max(b - a for a, b in zip(points, points[1:])) if len(points) > 1 else None


def caught_up_s(times: Sequence[float], stored: Sequence[float], emitted: Sequence[float], began: float,
                lost: int, rate: float) -> float | None:
    """Seconds from `began` to the sample from which on the back-log stays back at what it was before
    the fault plus one second of `rate` (module docstring); None: it never does within the samples."""
    gaps = [(t, e - s - lost) for t, s, e in zip(times, stored, emitted)]
    baseline = max((e - s for t, s, e in zip(times, stored, emitted) if t <= began), default=0.0)
    after = [(t, gap) for t, gap in gaps if t >= began]
    behind = [i for i, (_, gap) in enumerate(after) if gap > baseline + rate]
    if behind and behind[-1] == len(after) - 1:
        return None
    first = behind[-1] + 1 if behind else 0
    return max(0.0, after[first][0] - began) if after else None


def _value_at(times: Sequence[float], values: Sequence[float], when: float) -> float | None:
    """A counter at `when`, interpolated between the samples around it."""
    points = sorted(zip(times, values))
    before = [(t, v) for t, v in points if t <= when]
    after = [(t, v) for t, v in points if t > when]
    if not before:
        return None
    if not after:
        return before[-1][1]
    (t0, v0), (t1, v1) = before[-1], after[0]
    return v0 + (v1 - v0) * (when - t0) / (t1 - t0)

# SPDX-License-Identifier: Apache-2.0
"""One composed test bed: the stack's endpoints + fresh databases + simulated devices + subscribers.

Every part is optional and made on demand; `close` (or leaving the `with`) undoes them in reverse
order, pass or fail: subscribers stopped, devices stopped, databases dropped. A test asks for what
it needs and nothing more:

    with Harness(endpoints, tmp_path) as h:
        db = h.database("timescaledb")                  # a fresh HDB++ database, dropped at the end
        sims = h.devices(profile_toml(tmp_path, "x", rate_hz=20))   # simulated devices, tied to pytest
        es = h.subscriber(91, db, sims.names)           # a running hdbbench-es archiving them into db
        h.archiving(es, db, sims)                       # subscribed, initial rows stored, path proven

tests/conftest.py hands out a `harness` per test and a `module_harness` per module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hdbbench.backends import Backend
from hdbbench.backends.registry import entry, lib_configuration
from hdbbench.load import emitter as em
from hdbbench.load.offered import LoadTarget
from hdbbench.subscribers import delivery
from hdbbench.subscribers.launcher import DEFAULT_BINARY, SubscriberFleet, SubscriberSpec
from tests.harness.databases import fresh_backend
from tests.harness.servers import endpoint_or_skip
from tests.harness.waiting import eventually, seen

PROFILE = """
[profile]
name = "{name}"
description = "scalar doubles for the subscriber tests"
seed = 7
servers = 1
devices_per_server = 1
device_prefix = "sim/{name}"

[defaults]
rate_hz = {rate_hz}
p_alarm = 0.0
p_warning = 0.0
p_invalid = 0.0
p_error = 0.0

[[attribute]]
name = "d"
type = "DevDouble"
count = {count}
"""

# Every type x format x write type, with quality changes and error events, for both device engines.
GENERATOR_PROFILE = """
[profile]
name = "pytest-gen"
seed = 9090
device_prefix = "test/hdbbenchgen"

[defaults]
rate_hz = 5.0
dim_x = 4
dim_y = 2
p_alarm = 0.1
p_warning = 0.1
p_invalid = 0.1
p_error = 0.1

[[matrix]]
per_type.DevString = { model = "noise", labels = ["a", "bb", "ccc"] }
per_type.DevEnum = { model = "noise", labels = ["A", "B", "C"] }
per_type.DevDouble = { model = "walk", amplitude = 5.0, step = 0.3 }
per_type.DevFloat = { model = "sine", amplitude = 2.0, period = 9 }
per_type.DevLong = { model = "counter", step = 1 }
per_type.DevShort = { model = "noise", amplitude = 100.0 }
per_type.DevState = { model = "step", period = 3 }
"""


def profile_toml(directory: Path, name: str, rate_hz: float, count: int = 4) -> Path:
    """A profile of `count` scalar doubles at `rate_hz`, without error events or quality changes."""
    path = directory / f"{name}.toml"
    path.write_text(PROFILE.format(name=name, rate_hz=rate_hz, count=count))
    return path


@dataclass
class Sims:
    """Simulated devices up, in server order: the first device and its plan (what most tests use),
    every attribute's full name (lower case, server after server), every device and server instance."""

    tango_host: str
    device: str
    plan: Any
    names: list[str]
    push_names: list[str]
    devices: list[str]
    instances: list[str]
    state_dir: Path

    def proxy(self) -> Any:
        import tango

        proxy = tango.DeviceProxy(f"tango://{self.tango_host}/{self.device}")
        proxy.set_timeout_millis(10_000)
        return proxy

    def full_name(self, attribute: str) -> str:
        return f"tango://{self.tango_host}/{self.device}/{attribute}".lower()

    def emitted(self) -> dict[str, int]:
        """Events emitted per attribute of the first device (full name) since the start or the last Reset."""
        sim = self.proxy()
        return {self.full_name(a): int(n) for a, n in zip(sim.GeneratedAttributes, sim.EventsEmittedList)}

    def load(self) -> LoadTarget:
        """The devices as `hdbbench.subscribers.delivery.confirm` bursts them (push-mode attributes only)."""
        return LoadTarget(self.tango_host, self.devices, self.push_names, device_pids=lambda: [])


def expected_stored(events: Iterable[em.Event], after_error: bool = False) -> list[em.Event]:
    """What HDB++ stores of a stream of events: only the first error event after a good one
    (`after_error`: the event before the first one was an error)."""
    out: list[em.Event] = []
    previous_error = after_error
    for e in events:
        if not (e.is_error and previous_error):
            out.append(e)
        previous_error = e.is_error
    return out


def last_was_error(sims: Sims) -> dict[str, bool]:
    """Per attribute (device spelling): whether the last event emitted so far was an error. After a
    rewind it decides whether HDB++ stores an error event 0 (see `expected_stored`)."""
    sim = sims.proxy()
    emitted = dict(zip(sim.GeneratedAttributes, (int(x) for x in sim.EventsEmittedList)))
    return {s.name: emitted.get(s.name, 0) > 0
            and em.predict_event(sims.plan.seed, sims.device, s, emitted[s.name] - 1).is_error
            for s in sims.plan.specs}


def events_received(es: Any) -> list[int]:
    """A subscriber's per-attribute received event counts (HDB++ AttributeEventNumberList)."""
    numbers = es.AttributeEventNumberList
    return [int(x) for x in (numbers if numbers is not None else [])]


def subscribed(es: Any, n: int) -> Any:
    """For `eventually`: every one of `n` attributes has received its first (synchronous) event."""
    got = events_received(es)
    return seen(len(got) == n and min(got) >= 1, (es.status(), got))


class Harness:
    """The stack's endpoints, and on demand fresh databases, simulated devices and subscribers."""

    def __init__(self, endpoints: Any, root: Path, binary: Path = DEFAULT_BINARY) -> None:
        self.endpoints = endpoints
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.binary = binary
        self._exit = ExitStack()
        self._fleet: SubscriberFleet | None = None
        self._devices = 0

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._exit.close()

    @property
    def tango_host(self) -> str:
        return str(self.endpoints.tango.tango_host)

    # ------------------------------------------------------------------------------ databases

    def database(self, backend: str, variant: str | None = None, prefix: str = "h3test",
                 endpoint: Any = None) -> Backend:
        """A fresh database of `backend` on its server of the stack (or on `endpoint`), dropped at close."""
        where = endpoint if endpoint is not None else endpoint_or_skip(self.endpoints, backend)
        return self._exit.enter_context(fresh_backend(backend, where, variant, prefix))

    # ------------------------------------------------------------------------------ devices

    def devices(self, profile: Path, *, auto_start: bool = False, **up_kwargs: Any) -> Sims:
        """Simulated devices of `profile`, tied to this process, stopped at close."""
        from hdbbench.load import devices

        self._devices += 1
        state_dir = self.root / f"devices-{self._devices}"
        fleet = devices.up(self.tango_host, profile, state_dir=state_dir, tie_to_parent=True,
                           auto_start=auto_start, **up_kwargs)
        self._exit.callback(devices.down, state_dir)
        plans = sorted(fleet.devices.values(), key=lambda p: p.server)
        specs = [(f"tango://{self.tango_host}/{p.name}/{s.name}".lower(), s) for p in plans for s in p.specs]
        return Sims(self.tango_host, plans[0].name, plans[0], [n for n, _ in specs],
                    [n for n, s in specs if s.mode == "push"], [p.name for p in plans], [p.server for p in plans],
                    state_dir)

    # ------------------------------------------------------------------------------ subscribers

    @property
    def fleet(self) -> SubscriberFleet:
        """The subscribers of this harness (started on first use, stopped at close)."""
        if self._fleet is None:
            fleet = SubscriberFleet(self.tango_host, self.root, binary=self.binary, attached=True)
            self._exit.callback(fleet.down)
            self._fleet = fleet
        return self._fleet

    @staticmethod
    def lib(db: Backend, **overrides: Any) -> tuple[str, ...]:
        """LibConfiguration lines that point a subscriber at `db` (overrides are HDB++ keys)."""
        return tuple(lib_configuration(db.name, db.database, {entry(db.name).server: db.endpoint}, overrides))

    def subscriber(self, instance: int, db: Backend | None, attributes: Iterable[str] = (), *,
                   lib: Sequence[str] | None = None, properties: Mapping[str, Sequence[str]] | None = None,
                   **overrides: Any) -> Any:
        """Start subscriber `instance` archiving `attributes` into `db` (or with the `lib` lines given);
        return its proxy once every attribute is started."""
        lines = tuple(lib) if lib is not None else self.lib(_given(db), **overrides)
        spec = SubscriberSpec(instance, lines, tuple(attributes), properties=dict(properties or {}))
        (device,) = self.fleet.up([spec])
        return self.fleet.proxy(device)

    def archiving(self, es: Any, db: Backend, sims: Sims, timeout_s: float = 60.0,
                  rewind: bool = True) -> datetime:
        """Wait until `es` runs every attribute of `sims`, has stored their initial rows in `db` and
        each push attribute's event path is proven (`delivery.confirm`, which bursts one event
        each); then (`rewind`) rewind the devices to event 0 and return the time from which rows
        are the test's own."""
        n = len(sims.names)
        eventually(lambda: subscribed(es, n), timeout_s, f"{es.dev_name()}: every attribute subscribed")
        eventually(lambda: (lambda got: seen(len(got) == n, got))(db.count_rows_by_attribute()), timeout_s,
                   f"{es.dev_name()}: the initial row of every attribute stored")
        unproven = delivery.confirm(self.fleet, [es.dev_name()], sims.load(), timeout_s=timeout_s)
        assert not unproven, f"{es.dev_name()}: event path not proven for {sorted(unproven)[:5]}"
        return rewound(sims) if rewind else datetime.now(timezone.utc)


def rewound(sims: Sims) -> datetime:
    """Rewind the devices to event 0 (the test's events are events 0.. of each stream again); return
    the time from which rows are the test's own (the devices stamp later events later still)."""
    sims.proxy().Reset()
    return datetime.now(timezone.utc)


def _given(db: Backend | None) -> Backend:
    if db is None:
        raise ValueError("a subscriber needs a database or its LibConfiguration lines")
    return db

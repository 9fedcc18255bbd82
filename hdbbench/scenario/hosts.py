# SPDX-License-Identifier: Apache-2.0
"""Components on several hosts: which host runs what, and how the controller reaches them.

A scenario's ``[hosts]`` table (or a file holding only that table, written from an ansible
inventory) names the address of each component; "local" (loopback) is every default:

    [hosts]
    tango_db = "198.18.0.1"
    postgres = "198.18.0.1"
    mariadb = "198.18.0.1"
    devices = ["198.18.0.2"]         # device servers, dealt round-robin over these hosts
    subscribers = ["198.18.0.3"]     # subscribers, dealt round-robin over these hosts
    controller = "198.18.0.1"        # where `hdbbench run` drives the trials from

Only loopback and addresses of 198.18.0.0/15 are accepted (hdbbench.stack.servers.ports.check_address).
When any component is elsewhere than loopback the run is *hosted*: each host starts its own
components (``hdbbench hosts up``, run there by the ansible roles), each bound to its host's address,
and the controller starts nothing. It drives the device servers through their Tango interface
(Stop/Reset/SetRate/Start, as in a local run) and the subscribers through theirs: per trial it sets
their LibConfiguration and an empty AttributeList in the Tango database, runs ``Init`` and assigns
the attributes by ``AttributeAdd``; after the trial it sets the idle configuration (the ``null``
backend, no attributes) and runs ``Init`` again: the subscriber then holds no database connection. The processes'
CPU is not sampled from the controller (they are on other hosts); results name each component's host.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdbbench.load.devices import Fleet, load_fleet, up_plans
from hdbbench.load.devices.plan import DevicesPlan
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.model.tomlfile import Table, read_document
from hdbbench.stack.servers.ports import LOOPBACK, check_address
from hdbbench.stack.servers.registry import hosts_keys
from hdbbench.subscribers.launcher import SubscriberFleet, SubscriberSpec

SERVER_COMPONENTS = hosts_keys()  # [hosts] key -> server kind (hdbbench.stack.servers.registry)
HOSTS_KEYS = (*SERVER_COMPONENTS, "devices", "subscribers", "controller")
IDLE_CONFIGURATION = ("backend=null",)  # a subscriber between trials: stores nothing, connects nowhere


@dataclass(frozen=True)
class Hosts:
    servers: Mapping[str, str] = field(default_factory=dict)  # [hosts] key of a server kind -> address
    devices: tuple[str, ...] = (LOOPBACK,)
    subscribers: tuple[str, ...] = (LOOPBACK,)
    controller: str = LOOPBACK

    def server(self, key: str) -> str:
        """The address of the server of [hosts] key `key` (loopback when not given)."""
        return self.servers.get(key, LOOPBACK)

    @property
    def distributed(self) -> bool:
        """True when some component is not on loopback: each host then starts its own components."""
        return any(a != LOOPBACK for a in (*self.servers.values(), self.controller, *self.devices, *self.subscribers))

    def servers_on(self, address: str) -> tuple[str, ...]:
        """The stack components (server kinds) this host runs."""
        return tuple(stack for key, stack in SERVER_COMPONENTS.items() if self.server(key) == address)

    def to_dict(self) -> dict[str, Any]:
        return {**{key: self.server(key) for key in SERVER_COMPONENTS}, "devices": list(self.devices),
                "subscribers": list(self.subscribers), "controller": self.controller}


def parse_hosts(reader: Table) -> Hosts:
    """The ``[hosts]`` table: an address (or "local") per component, lists for devices and subscribers."""
    def one(key: str) -> str:
        return _address(reader, key, reader.string(key, "local"))

    def several(key: str) -> tuple[str, ...]:
        given = reader.raw(key, ["local"])
        values = [given] if isinstance(given, str) else reader.list_of(key, str, ["local"], non_empty=True)
        addresses = tuple(_address(reader, key, v) for v in values)
        if len(set(addresses)) != len(addresses):
            raise reader.fail(key, "names a host twice")
        return addresses

    hosts = Hosts(servers={key: one(key) for key in SERVER_COMPONENTS}, devices=several("devices"),
                  subscribers=several("subscribers"), controller=one("controller"))
    reader.finish()
    return hosts


def _address(reader: Table, key: str, value: str) -> str:
    try:
        return check_address(value, key)
    except ConfigError as exc:
        raise reader.fail(key, str(exc).split(": ", 1)[1]) from None


def load_hosts_file(path: Path) -> Hosts:
    """A TOML file whose only table is ``[hosts]`` (the ansible playbook writes one from its inventory)."""
    top = read_document(path, "hosts file").root()
    table = top.table("hosts", required=True)
    hosts = parse_hosts(table)
    top.finish()
    return hosts


# --- who runs what ------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostsLayout:
    """Which host runs what: the [hosts] table with the device servers and the subscribers dealt over
    their hosts (a run plan's entry, hdbbench.scenario.plan)."""

    hosts: Hosts
    device_servers: tuple[tuple[str, str], ...] = ()   # (server instance, address)
    subscribers: tuple[tuple[int, str], ...] = ()      # (subscriber instance 1..pool, address)

    @property
    def distributed(self) -> bool:
        return self.hosts.distributed


def deal(hosts: Hosts, server_instances: Sequence[str], subscriber_pool: int) -> HostsLayout:
    """The device server instances and subscribers 1..`subscriber_pool` dealt round-robin over their hosts."""
    return HostsLayout(
        hosts,
        tuple((inst, hosts.devices[i % len(hosts.devices)]) for i, inst in enumerate(server_instances)),
        tuple((n, hosts.subscribers[(n - 1) % len(hosts.subscribers)]) for n in range(1, subscriber_pool + 1)))


def describe(layout: HostsLayout) -> dict[str, Any]:
    """Each component's host, as results record it."""
    hosts = layout.hosts
    return {
        "distributed": hosts.distributed,
        **{key: hosts.server(key) for key in SERVER_COMPONENTS}, "controller": hosts.controller,
        "device_servers": dict(layout.device_servers),
        "subscribers": {SubscriberSpec(n, ()).device: a for n, a in layout.subscribers},
        "cpu_sampled": "every process" if not hosts.distributed
        else "none: the devices and subscribers run on their hosts, the controller samples only its own",
    }


# --- the controller's side: components already running on their hosts ------------------------


def hosted_fleet(devices: DevicesPlan, layout: HostsLayout, tango_host: str, timeout_s: float = 60.0) -> Any:
    """The planned device fleet as the device hosts run it (not started here): every device must
    answer within timeout_s."""
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango


    plans = devices.devices
    fleet = Fleet(tango_host, devices.source, Path("."), {p.name: p for p in plans}, engine=devices.engine)
    where = dict(layout.device_servers)
    deadline = time.monotonic() + timeout_s
    for plan in plans:
        while True:
            try:
                proxy = tango.DeviceProxy(fleet.device_url(plan.name))
                proxy.set_timeout_millis(3000)
                names = {str(n).lower() for n in (proxy.read_attribute("GeneratedAttributes").value or [])}
                break
            except tango.DevFailed:
                if time.monotonic() > deadline:
                    raise ServerError(f"device {plan.name} of server {plan.server} does not answer within "
                                      f"{timeout_s:.0f} s: start it on {where[plan.server]} "
                                      "(hdbbench hosts up devices)") from None
                time.sleep(0.5)
        if names != {s.name.lower() for s in plan.specs}:
            raise ServerError(f"device {plan.name} on {where[plan.server]} serves other attributes than the "
                              f"scenario's devices ({devices.source}): start it from the same scenario")
    return fleet


class HostedSubscribers(SubscriberFleet):
    """Subscribers that run on their hosts already: configured and emptied through Tango only."""

    def __init__(self, tango_host: str, state_dir: Path, **kwargs: Any) -> None:
        super().__init__(tango_host, state_dir, attached=False)
        self._used: list[str] = []

    def register(self, spec: SubscriberSpec) -> None:
        # The server is registered by its host; only the trial's properties are set here.
        props: dict[str, Sequence[str]] = {"LibConfiguration": list(spec.lib_configuration), "AttributeList": []}
        props.update(spec.properties)
        self._database().put_device_property(spec.device, {k: list(v) for k, v in props.items()})

    def _start(self, spec: SubscriberSpec) -> None:
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        self._attribute_names.pop(spec.device, None)
        try:
            self.proxy(spec.device).command_inout("Init")
        except tango.DevFailed as exc:
            raise ServerError(f"subscriber {spec.device} does not answer ({exc.args[0].desc.strip()}): start it "
                              "on its host (hdbbench hosts up subscribers)") from None
        self._used.append(spec.device)

    def _wait_ready(self, device: str, timeout_s: float) -> None:
        self.proxy(device).ping()

    def pids(self) -> list[int]:
        return []  # processes of other hosts: their CPU is not sampled from here

    def exited(self, devices: Iterable[str]) -> list[str]:
        return []  # processes of other hosts have no record here; a dead one shows as a Tango timeout

    def running(self, group: str = "") -> list[str]:
        return list(self._used)

    def down(self, group: str = "") -> int:
        """Leave each subscriber idle: no attributes, no configuration, no database connection."""
        db = self._database()
        for device in self._used:
            db.put_device_property(device, {"LibConfiguration": list(IDLE_CONFIGURATION), "AttributeList": []})
            self.proxy(device).command_inout("Init")
        count, self._used = len(self._used), []
        return count


# --- a host's side: start this host's components ----------------------------------------------


def subscribers_up(layout: HostsLayout, tango_host: str, address: str, state_dir: Path) -> tuple[list[str], list[str]]:
    """Register and start the subscribers of the pool that this host runs, idle until a trial
    configures them; return (started, already running)."""
    fleet = SubscriberFleet(tango_host, state_dir, address=address, attached=False)
    running = set(fleet.running())
    started, kept = [], []
    for instance, where in layout.subscribers:
        spec = SubscriberSpec(instance=instance, lib_configuration=IDLE_CONFIGURATION)
        if where != address:
            continue
        if spec.device in running:
            kept.append(spec.device)
            continue
        fleet.register(spec)
        fleet._start(spec)
        fleet._wait_ready(spec.device, 60.0)
        started.append(spec.device)
    return started, kept


def devices_up(devices: DevicesPlan, layout: HostsLayout, tango_host: str, address: str,
               state_dir: Path) -> tuple[list[str], list[str]]:
    """Start the planned device servers that this host runs, held (not emitting) until a trial
    starts them; return (started, already running)."""
    mine = [inst for inst, where in layout.device_servers if where == address]
    fleet_dir = state_dir / "devices"
    previous = load_fleet(fleet_dir)
    alive = [r.instance for r in (previous.servers if previous else []) if r.process() is not None]
    if alive:
        if sorted(alive) != sorted(mine):
            raise ServerError(f"other device servers run from {fleet_dir} ({', '.join(alive)}); "
                              "run hdbbench hosts down there first")
        return [], alive
    if not mine:
        return [], []
    up_plans(tango_host, [p for p in devices.devices if p.server in mine], devices.source, state_dir=fleet_dir,
             engine=devices.engine, address=address)
    return mine, []

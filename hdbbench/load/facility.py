# SPDX-License-Identifier: Apache-2.0
"""A facility's inventory as simulated devices: its own mix of types, formats, array sizes and rates.

An inventory (hdbbench.parts.disk.sizing, the one reader of inventories) lists groups of archived attributes.
`facility_specs` turns each group into device attribute specifications (hdbbench.load.emitter.AttrSpec)
at a scale: ``round(count x scale)`` attributes (at least one, so every group of the mix is there, as
the disk measurement does), its Tango type, format, write type, spectrum length or image size, and
its rate; an archive period becomes a push rate of 1/period. Strings carry about ``string_chars``
characters (a fixed text and the event index). Every attribute is code-pushed, always VALID and
without error events, so that each event is one row (the insertion benchmark's loss accounting).

`plan_facility` deals the attributes of every group round-robin over the devices, so each device
carries a slice of the whole mix, with seeded schedule phases by default (each attribute offset by
its own fraction of its period, as a facility's polling phases are; ``phases = "aligned"`` fires
every attribute of a rate at once, for stress); `up` launches them with the device launcher
(hdbbench.load.devices), either engine. Without a layout, a device carries at most ATTRIBUTES_PER_DEVICE
attributes and a server DEVICES_PER_SERVER device(s).

HDB++ subscribers archive at most MAX_ATTRIBUTES_PER_SUBSCRIBER attributes each (`check_subscribers`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdbbench.load import devices as launcher
from hdbbench.load import emitter as em
from hdbbench.load.inventory.model import Group, Inventory, load_inventory
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat

MAX_ATTRIBUTES_PER_SUBSCRIBER = 10_000
ATTRIBUTES_PER_DEVICE = 500
# One device per server process: here a C++ generator server with 4 devices of ~400 attributes each
# aborted at start-up (an uncaught DevFailed), one device of the same size per process did not.
DEVICES_PER_SERVER = 1
# A facility polls each attribute at its own phase: its simulated devices spread theirs too by default.
FACILITY_PHASES = "seeded"
_TYPE_NAMES = {name.lower(): name for name in em.TYPES}


@dataclass(frozen=True)
class FacilityDevices:
    """A scenario's devices from an inventory: ``[devices] inventory = "...", scale = 0.5``."""

    inventory: Path
    scale: float = 1.0
    phases: str = FACILITY_PHASES      # schedule phases of the devices: em.PHASE_MODES


def _slug(label: str) -> str:
    """A Tango attribute name stem from a group label: "BPM orbit (slow)" -> "bpm_orbit_slow"."""
    slug = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
    if not slug or not slug[0].isalpha():
        slug = f"g_{slug}"
    return slug[:48].rstrip("_")


def group_count(group: Group, scale: float) -> int:
    """Attributes of a group at a scale: at least one, so every group of the mix is there."""
    return max(1, round(group.count * scale))


def _spec(group: Group, name: str) -> em.AttrSpec:
    type_name = _TYPE_NAMES[group.type.suffix]
    fmt = group.format.name
    fields: dict[str, Any] = {"name": name, "type": type_name, "format": fmt,
                              "write": "READ_WRITE" if group.write == "rw" else "READ",
                              "mode": "push", "rate_hz": group.rate_hz}
    if group.format != AttrFormat.SCALAR:
        fields["dim_x"] = group.dim_x
    if group.format == AttrFormat.IMAGE:
        fields["dim_y"] = group.dim_y
    if type_name == "DevString":
        fields["text"] = "s" * max(0, group.string_chars - 6)  # + the event index: about string_chars
    return em.validate_spec(em.AttrSpec(**fields))


def facility_specs(inventory: Inventory, scale: float) -> list[tuple[Group, list[em.AttrSpec]]]:
    """Each group with its attributes at `scale` (names unique across the facility)."""
    if not (math.isfinite(scale) and scale > 0):
        raise ConfigError(f"{inventory.source}: scale must be > 0, got {scale!r}")
    out, stems = [], Counter[str]()
    for group in inventory.groups:
        stem = _slug(group.label)
        stems[stem] += 1
        if stems[stem] > 1:
            stem = f"{stem}_{stems[stem]}"
        n = group_count(group, scale)
        width = len(str(n - 1))
        out.append((group, [_spec(group, f"{stem}_{i:0{width}d}") for i in range(n)]))
    return out


def attribute_count(inventory: Inventory, scale: float) -> int:
    return sum(group_count(g, scale) for g in inventory.groups)


def natural_rate(inventory: Inventory, scale: float) -> float:
    """Events per second of the facility at `scale`: every attribute at its own rate."""
    return sum(group_count(g, scale) * g.rate_hz for g in inventory.groups)


def default_layout(attributes: int) -> tuple[int, int]:
    """(servers, devices per server) so that a device carries at most ATTRIBUTES_PER_DEVICE."""
    devices = max(1, math.ceil(attributes / ATTRIBUTES_PER_DEVICE))
    servers = max(1, math.ceil(devices / DEVICES_PER_SERVER))
    return servers, math.ceil(devices / servers)


def plan_facility(inventory: Inventory, scale: float, servers: int | None = None,
                  devices_per_server: int | None = None, seed: int = 1,
                  device_prefix: str | None = None,
                  phases: str = FACILITY_PHASES) -> list[launcher.DevicePlan]:
    """Device plans carrying the facility's attributes, each group dealt round-robin over the devices."""
    if phases not in em.PHASE_MODES:
        raise ConfigError(f"phases must be one of {', '.join(em.PHASE_MODES)}, got {phases!r}")
    specs = [spec for _, group_specs in facility_specs(inventory, scale) for spec in group_specs]
    layout = default_layout(len(specs))
    n_srv, n_dev = servers or layout[0], devices_per_server or layout[1]
    if n_srv < 1 or n_dev < 1:
        raise ConfigError("servers and devices per server must be >= 1")
    name = _profile_name(inventory)
    prefix = device_prefix or f"sim/{name}"
    plans = [(f"{prefix}/s{si:02d}d{di:03d}", f"{name}-s{si:02d}") for si in range(n_srv) for di in range(n_dev)]
    dealt: list[list[em.AttrSpec]] = [[] for _ in plans]
    for index, spec in enumerate(specs):
        dealt[index % len(plans)].append(spec)
    return [launcher.DevicePlan(device, server, seed, tuple(attrs), "push", phases)
            for (device, server), attrs in zip(plans, dealt) if attrs]


def _profile_name(inventory: Inventory) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", inventory.name.lower()).strip("-")[:48] or "facility"


def mix(plans: Sequence[launcher.DevicePlan]) -> dict[tuple[str, str, str, int, int, float], int]:
    """Attributes per (type, format, write, dim_x, dim_y, rate_hz) over the plans."""
    return dict(Counter((s.type, s.format, s.write, s.dim_x if s.format != "SCALAR" else 1,
                         s.dim_y if s.format == "IMAGE" else 0, s.rate_hz)
                        for plan in plans for s in plan.specs))


def check_subscribers(attributes: int, subscribers: Sequence[int], fail: Callable[[str], ConfigError]) -> None:
    """Refuse a subscriber count that gives one subscriber more than the HDB++ limit."""
    for count in subscribers:
        per = math.ceil(attributes / count)
        if per > MAX_ATTRIBUTES_PER_SUBSCRIBER:
            raise fail(f"{count} subscriber{'s' if count > 1 else ''} for {attributes:,} attributes is {per:,} "
                       f"per subscriber, above the HDB++ limit of {MAX_ATTRIBUTES_PER_SUBSCRIBER:,}; use at least "
                       f"{math.ceil(attributes / MAX_ATTRIBUTES_PER_SUBSCRIBER)}")


def engine_profile(inventory: Inventory, plans: Sequence[launcher.DevicePlan]) -> launcher.Profile:
    """The facility as a launcher profile, for the engine checks (every attribute it serves)."""
    specs = tuple(s for plan in plans for s in plan.specs)
    return launcher.Profile(_profile_name(inventory), f"inventory {inventory.name}", inventory.source,
                            plans[0].seed if plans else 1, 1, 1, "sim/facility", specs, "push",
                            plans[0].phases if plans else FACILITY_PHASES)


def up(tango_host: str, inventory_path: str | Path, scale: float, *, servers: int | None = None,
       devices_per_server: int | None = None, seed: int = 1, engine: str = "auto",
       phases: str = FACILITY_PHASES, **kwargs: Any) -> launcher.Fleet:
    """Validate the inventory, plan its devices at `scale` and launch them (hdbbench.load.devices)."""
    inventory = load_inventory(inventory_path)  # refused before anything starts
    plans = plan_facility(inventory, scale, servers, devices_per_server, seed, phases=phases)
    chosen = launcher.resolve_engine(engine)  # every facility attribute is code-pushed
    launcher.check_engine(engine_profile(inventory, plans), chosen, kwargs.get("push_threads", 1))
    return launcher.up_plans(tango_host, plans, str(inventory.source), engine=chosen, **kwargs)


def assignment_of(inventory: Inventory, scale: float,
                  plans: Sequence[launcher.DevicePlan]) -> tuple[tuple[str, ...], ...] | None:
    """The inventory's [[archivers]] as the simulated attributes ("device/attribute", lower case) each
    archiver gets: a group's i-th name is its i-th simulated attribute. None without archivers.
    Every simulated attribute must be assigned, once (else the trials would count the unassigned as
    lost), and the inventory's names must be there to map (scale 1, every group's `names`)."""
    if not inventory.archivers:
        return None
    where = f"{inventory.source}: [[archivers]]"
    if scale != 1.0:
        raise ConfigError(f"{where} assign the facility's own attributes: run it at scale = 1, not {scale:g}")
    device_of = {spec.name: plan.name for plan in plans for spec in plan.specs}
    simulated: dict[str, str] = {}
    for group, specs in facility_specs(inventory, 1.0):
        if not group.names:
            raise ConfigError(f"{where} need every group's names; group {group.label!r} has none")
        for real, spec in zip(group.names, specs):
            simulated[real] = f"{device_of[spec.name]}/{spec.name}".lower()
    out = []
    for archiver in inventory.archivers:
        unknown = next((n for n in archiver.attributes if n not in simulated), None)
        if unknown is not None:
            raise ConfigError(f"{where} {archiver.name!r} has {unknown!r}, which no group names")
        out.append(tuple(simulated[n] for n in archiver.attributes))
    assigned = sum(len(a) for a in out)
    if assigned != len(simulated):
        raise ConfigError(f"{where} assign {assigned:,} of the inventory's {len(simulated):,} attributes: "
                          "assign every one")
    return tuple(out)

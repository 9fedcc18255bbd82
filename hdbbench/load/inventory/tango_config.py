# SPDX-License-Identifier: Apache-2.0
"""What live devices say of their archived attributes: type, format, write type, array size, and the
rate their archive event configuration implies.

Every device is reached through the one Tango database given (``tango://HOST:PORT/device``), whatever
control-system part an attribute's name carries: a name of another control system is then not found,
and nothing else is contacted. One configuration call per device (per attribute when the device
refuses a list); an attribute whose device does not answer, or which the device does not have, is
*unknown* and left out of the groups, said in one line per cause.

Rates, first found wins: a rate given by the caller (the archive, or the YAML configuration), then
the attribute's ``archive_period`` (ms: the periodic archive events; change criteria may add more),
then its polling period (ms: a ceiling for events Tango's polling detects), then a default period
for code-pushed attributes that state none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hdbbench.load.inventory.grouping import AttributeShape, shape_of
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.model.hdbtypes import split_att_name

DEFAULT_PERIOD_S = 10.0     # a code-pushed attribute with neither archive_period nor polling
TIMEOUT_MS = 3000           # per device call
SHOWN = 3                   # names shown in a warning line before "+N more"

RATE_FROM_CALLER = "given"
RATE_FROM_ARCHIVE_PERIOD = "archive_period"
RATE_FROM_POLLING = "polling period"
RATE_FROM_DEFAULT = "default period"


@dataclass
class Described:
    """The attributes described, those left unknown (name -> cause), and where each rate came from."""

    shapes: list[AttributeShape] = field(default_factory=list)
    unknown: dict[str, str] = field(default_factory=dict)
    rate_sources: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)


def split_tango_host(tango_host: str) -> tuple[str, int]:
    """(host, port) of HOST:PORT; ConfigError otherwise."""
    host, _, port = tango_host.strip().rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"a Tango host is HOST:PORT, got {tango_host!r}")
    return host, int(port)


def database(tango_host: str) -> Any:
    """The Tango database at `tango_host`; ServerError (one line) when it does not answer."""
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    host, port = split_tango_host(tango_host)
    try:
        db = tango.Database(host, port)
        db.set_timeout_millis(TIMEOUT_MS)
        db.get_info()
    except tango.DevFailed as exc:
        raise ServerError(f"the Tango database {tango_host} does not answer: {failure(exc)}") from None
    return db


def failure(exc: Exception) -> str:
    """A DevFailed (or any error) as its first line of description."""
    args = getattr(exc, "args", ())
    desc = getattr(args[0], "desc", None) if args else None
    text = str(desc if desc is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def period_ms(text: Any) -> float | None:
    """A period property (ms) as a number, None when unset ("Not specified", empty, 0 or negative)."""
    try:
        value = float(str(text).strip())
    except ValueError:
        return None
    return value if value > 0 else None


def describe(tango_host: str, names: Sequence[str], given_rates: Mapping[str, float] | None = None,
             default_period_s: float = DEFAULT_PERIOD_S) -> Described:
    """Shape and rate of each of `names` (full or relative attribute names), from the devices of the
    Tango database at `tango_host`; `given_rates` (by lower-case name) win over the configuration."""
    given = {k.lower(): v for k, v in (given_rates or {}).items()}
    out = Described()
    by_device: dict[str, list[tuple[str, str]]] = {}
    for name in dict.fromkeys(names):
        parts = split_att_name(name)
        if not all((parts.domain, parts.family, parts.member, parts.name)) or "/" in parts.name:
            out.unknown[name] = "not a domain/family/member/attribute name"
            continue
        by_device.setdefault(f"{parts.domain}/{parts.family}/{parts.member}".lower(), []).append((name, parts.name))
    silent: list[str] = []
    silent_attributes = 0
    for device, members in by_device.items():
        try:
            proxy, configs = _configs(tango_host, device, [attr for _, attr in members])
        except Exception as exc:  # noqa: BLE001 - any failure to reach a device leaves its attributes unknown
            silent.append(f"{device} ({failure(exc)})")
            silent_attributes += len(members)
            for name, _ in members:
                out.unknown[name] = f"device {device} does not answer"
            continue
        for name, attr in members:
            info = configs.get(attr.lower())
            if info is None:
                out.unknown[name] = f"device {device} has no attribute {attr}"
                continue
            rate, source = _rate(proxy, attr, info, given.get(name.lower()), default_period_s)
            shape = shape_of(name, info.data_type, info.data_format, info.writable, info.max_dim_x,
                             info.max_dim_y, rate)
            if isinstance(shape, str):
                out.unknown[name] = shape
                continue
            out.shapes.append(shape)
            out.rate_sources[source] += 1
    if silent:
        out.warnings.append(f"{silent_attributes} attributes unknown, left out of the groups: {len(silent)} devices "
                            f"do not answer: {shown(silent)}")
    other = sorted(n for n, why in out.unknown.items() if "does not answer" not in why)
    if other:
        out.warnings.append(f"{len(other)} attributes unknown, left out of the groups: "
                            + shown([f"{n} ({out.unknown[n]})" for n in other]))
    if out.rate_sources[RATE_FROM_DEFAULT]:
        out.warnings.append(f"{out.rate_sources[RATE_FROM_DEFAULT]} attributes state no archive_period and are not "
                            f"polled (code-pushed): rated at one event every {default_period_s:g} s (--default-period)")
    return out


def _configs(tango_host: str, device: str, attributes: Sequence[str]) -> tuple[Any, dict[str, Any]]:
    """The device's proxy and the configuration of those of `attributes` it has (by lower-case name)."""
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    proxy = tango.DeviceProxy(f"tango://{tango_host}/{device}")
    proxy.set_timeout_millis(TIMEOUT_MS)
    wanted = list(dict.fromkeys(attributes))
    try:
        infos = list(proxy.get_attribute_config_ex(wanted))
    except tango.DevFailed:
        # One name the device lacks fails the list: ask one by one (a device that is down fails here too).
        proxy.ping()
        infos = []
        for attr in wanted:
            try:
                infos.extend(proxy.get_attribute_config_ex([attr]))
            except tango.DevFailed:
                continue
    return proxy, {info.name.lower(): info for info in infos}


def _rate(proxy: Any, attr: str, info: Any, given: float | None, default_period_s: float) -> tuple[float, str]:
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    if given is not None:
        return given, RATE_FROM_CALLER
    archive = period_ms(getattr(getattr(info.events, "arch_event", None), "archive_period", None))
    if archive is not None:
        return 1000.0 / archive, RATE_FROM_ARCHIVE_PERIOD
    try:
        polled = period_ms(proxy.get_attribute_poll_period(attr))
    except tango.DevFailed:
        polled = None
    if polled is not None:
        return 1000.0 / polled, RATE_FROM_POLLING
    return 1.0 / default_period_s, RATE_FROM_DEFAULT


def shown(items: Sequence[str], count: int = SHOWN) -> str:
    """The first `count` items, and how many more."""
    head = ", ".join(items[:count])
    return head + (f" (+{len(items) - count} more)" if len(items) > count else "")


def rate_words(sources: Counter[str], default_period_s: float, given_as: str) -> str:
    """Where the rates came from, for the inventory's header (`given_as`: the caller's rates, counted)."""
    parts = [given_as] if sources[RATE_FROM_CALLER] else []
    parts += [f"{sources[k]} from the attribute's {k}" for k in (RATE_FROM_ARCHIVE_PERIOD, RATE_FROM_POLLING)
              if sources[k]]
    if sources[RATE_FROM_DEFAULT]:
        parts.append(f"{sources[RATE_FROM_DEFAULT]} at a default period of {default_period_s:g} s (they state none)")
    return "; ".join(parts) if parts else "none"

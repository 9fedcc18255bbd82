# SPDX-License-Identifier: Apache-2.0
"""Named server-settings profiles, recorded with every result.

- ``durable``: what production runs: fsync and synchronous commit on, InnoDB flushes its log at
  every commit and keeps the doublewrite buffer.
- ``relaxed``: the tuning Elettra reported as 3x (TimescaleDB) and 5x (InnoDB):
  synchronous_commit=off; innodb_flush_log_at_trx_commit=2 and doublewrite off.

A profile has one section per server kind with settings (hdbbench.stack.servers.registry: each kind's
module holds its values); every value can be overridden with ``<kind>.<name>=<value>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hdbbench.model.errors import ConfigError
from hdbbench.stack.servers.registry import with_settings

PROFILE_NAMES = ("durable", "relaxed")


@dataclass(frozen=True)
class SettingsProfile:
    name: str
    servers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # kind -> its settings

    def of(self, kind: str) -> dict[str, str]:
        """The settings of one server kind ({} for a kind without settings)."""
        return dict(self.servers.get(kind, {}))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **{kind: dict(values) for kind, values in self.servers.items()}}

    @classmethod
    def from_dict(cls, recorded: Mapping[str, Any]) -> SettingsProfile:
        """A profile as to_dict() recorded it (e.g. in stack.json)."""
        return cls(str(recorded["name"]), {k.name: dict(recorded.get(k.name) or {}) for k in with_settings()})


def parse_overrides(items: Iterable[str]) -> dict[str, dict[str, str]]:
    """``<kind>.<name>=<value>`` overrides (e.g. of shared_buffers), grouped by server kind."""
    grouped: dict[str, dict[str, str]] = {k.name: {} for k in with_settings()}
    for item in items:
        key, sep, value = item.partition("=")
        server, dot, name = key.strip().partition(".")
        if not sep or not dot or not name or server not in grouped:
            forms = " or ".join(f"{kind}.<name>=<value>" for kind in grouped)
            raise ConfigError(f"setting override must be {forms}, got {item!r}")
        grouped[server][name.strip()] = value.strip()
    return grouped


def resolve_profile(name: str, overrides: Mapping[str, Mapping[str, str]] | None = None) -> SettingsProfile:
    if name not in PROFILE_NAMES:
        raise ConfigError(f"unknown settings profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}")
    overrides = overrides or {}
    return SettingsProfile(name=name, servers={k.name: {**k.settings[name], **overrides.get(k.name, {})}
                                                for k in with_settings()})

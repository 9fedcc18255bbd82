# SPDX-License-Identifier: Apache-2.0
"""Named server-settings profiles, recorded with every result.

- ``durable``: what production runs: fsync and synchronous commit on, InnoDB flushes its log at
  every commit and keeps the doublewrite buffer.
- ``relaxed``: the tuning Elettra reported as 3x (TimescaleDB) and 5x (InnoDB):
  synchronous_commit=off; innodb_flush_log_at_trx_commit=2 and doublewrite off.

Memory sizes fit a 2-core, 24 GiB machine running both servers, the devices and the subscribers at
once; every value can be overridden with ``postgres.<name>=<value>`` or ``mariadb.<name>=<value>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hdbbench.errors import ConfigError

_POSTGRES_COMMON = {
    "shared_buffers": "2GB",
    "effective_cache_size": "8GB",
    "work_mem": "64MB",
    "maintenance_work_mem": "1GB",
    # Modest: a large max_wal_size filled 4 GB of WAL during a 3 M-row load on such a machine.
    "max_wal_size": "1GB",
    "min_wal_size": "256MB",
    "checkpoint_timeout": "10min",
    "max_connections": "200",
    "timezone": "UTC",
    "log_timezone": "UTC",
    "timescaledb.telemetry_level": "off",
    "timescaledb.max_background_workers": "4",
    "max_worker_processes": "16",
    "jit": "off",
}

_MARIADB_COMMON = {
    "innodb_buffer_pool_size": "4G",
    "innodb_log_file_size": "512M",
    "innodb_file_per_table": "1",
    "max_allowed_packet": "256M",
    "max_connections": "200",
    "default_time_zone": "+00:00",
    "character_set_server": "utf8mb4",
    "skip_name_resolve": "1",
    "local_infile": "1",
}

_PROFILES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "durable": (
        {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"},
        {"innodb_flush_log_at_trx_commit": "1", "innodb_doublewrite": "1"},
    ),
    "relaxed": (
        {"fsync": "on", "synchronous_commit": "off", "full_page_writes": "on"},
        {"innodb_flush_log_at_trx_commit": "2", "innodb_doublewrite": "0"},
    ),
}

PROFILE_NAMES = tuple(_PROFILES)


@dataclass(frozen=True)
class SettingsProfile:
    name: str
    postgres: Mapping[str, str] = field(default_factory=dict)
    mariadb: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "postgres": dict(self.postgres), "mariadb": dict(self.mariadb)}


def parse_overrides(items: Iterable[str]) -> dict[str, dict[str, str]]:
    """``postgres.shared_buffers=256MB`` style overrides, grouped by server."""
    grouped: dict[str, dict[str, str]] = {"postgres": {}, "mariadb": {}}
    for item in items:
        key, sep, value = item.partition("=")
        server, dot, name = key.strip().partition(".")
        if not sep or not dot or not name or server not in grouped:
            raise ConfigError(f"setting override must be postgres.<name>=<value> or mariadb.<name>=<value>, got {item!r}")
        grouped[server][name.strip()] = value.strip()
    return grouped


def resolve_profile(name: str, overrides: Mapping[str, Mapping[str, str]] | None = None) -> SettingsProfile:
    if name not in _PROFILES:
        raise ConfigError(f"unknown settings profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}")
    pg_profile, my_profile = _PROFILES[name]
    overrides = overrides or {}
    return SettingsProfile(
        name=name,
        postgres={**_POSTGRES_COMMON, **pg_profile, **overrides.get("postgres", {})},
        mariadb={**_MARIADB_COMMON, **my_profile, **overrides.get("mariadb", {})},
    )

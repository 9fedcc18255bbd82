# SPDX-License-Identifier: Apache-2.0
"""The server registry: entries that hold together, endpoints as a mapping, and the process-less
`local` kind in a stack of nothing else (no server is started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hdbbench.backends.registry import REGISTRY, endpoint_for
from hdbbench.model.errors import ConfigError
from hdbbench.scenario.hosts import Hosts
from hdbbench.stack.servers.endpoints import (
    ClusterEndpoint,
    LocalEndpoint,
    PostgresEndpoint,
    StackEndpoints,
    TangoEndpoint,
)
from hdbbench.stack.servers.registry import (
    SERVER_KINDS,
    SERVER_NAMES,
    endpoints_from_dict,
    external_from_environment,
    kind,
)
from hdbbench.stack.settings import PROFILE_NAMES, parse_overrides, resolve_profile
from hdbbench.stack.stack import Stack, StackConfig, load_endpoints


def test_entries_hold_together() -> None:
    for position, server in enumerate(SERVER_KINDS):
        for needed in (n for names in server.needs.values() for n in names):
            assert SERVER_NAMES.index(needed) < position, f"{server.name} starts before {needed}, which it needs"
        assert all(profile in server.settings for profile in PROFILE_NAMES) or not server.settings
        # Stopping, killing and filling act on a server's process; a cluster's switchover and failover on
        # its members (hdbbench.parts.faults.cluster).
        assert not set(server.faults) & {"stop", "kill", "fill"} or server.process, f"{server.name}: faults need a process"
    assert {e.server for e in REGISTRY} <= set(SERVER_NAMES)
    keys = [k.hosts_key for k in SERVER_KINDS if k.hosts_key]
    assert len(keys) == len(set(keys))


def test_external_servers_come_from_their_variables() -> None:
    environ = {"HDBBENCH_POSTGRES_URL": "postgresql://u:p@198.18.0.1:5432/db", "HDBBENCH_TANGO_HOST": "h:10000",
               "HDBBENCH_MARIADB_URL": ""}
    given = external_from_environment(environ)
    assert given == {"postgres": environ["HDBBENCH_POSTGRES_URL"], "tango": "h:10000"}
    assert kind("postgres").external_endpoint(given["postgres"]).external_value() == given["postgres"]
    with pytest.raises(ConfigError, match="cannot be external"):
        kind("local").external_endpoint("/tmp")


def test_endpoints_are_a_mapping_that_round_trips() -> None:
    endpoints = StackEndpoints({"postgres": PostgresEndpoint("127.0.0.1", 25432, "u", "p"), "mariadb": None,
                                "tango": TangoEndpoint("127.0.0.1", 20000), "local": LocalEndpoint("/x/local")})
    assert list(endpoints) == ["postgres", "tango", "local"] and "mariadb" not in endpoints
    assert endpoints.get("mariadb") is None and endpoints["postgres"].port == 25432
    assert endpoints.tango is not None and endpoints.tango.tango_host == "127.0.0.1:20000"
    again = endpoints_from_dict(endpoints.to_dict() | {"mariadb": None, "unknown": {"x": 1}})
    assert dict(again) == dict(endpoints)


def test_a_kind_in_anothers_place_is_started_instead_and_given_to_that_kinds_backends(tmp_path: Path) -> None:
    config = StackConfig(state_dir=tmp_path, components=("tango", "postgres"), serving={"postgres": "patroni"})
    assert config.components == ("tango", "patroni", "local")
    cluster = ClusterEndpoint(hosts=("198.19.7.1", "198.19.7.2"), port=5432, user="u", password="p")
    endpoints = StackEndpoints({"patroni": cluster, "tango": TangoEndpoint("127.0.0.1", 20000)}, {"postgres": "patroni"})
    assert endpoints["postgres"] is cluster and endpoints.get("postgres") is cluster and "postgres" in endpoints
    assert list(endpoints) == ["patroni", "tango"] and endpoints.kind_of("postgres") == "patroni"
    assert endpoint_for("timescaledb", endpoints) is cluster
    assert dict(endpoints_from_dict(endpoints.to_dict(), endpoints.roles)) == dict(endpoints)
    assert StackEndpoints({"patroni": cluster}).get("postgres") is None  # no role given: no stand-in
    with pytest.raises(ConfigError, match="cannot serve as the MariaDB"):
        StackConfig(state_dir=tmp_path, components=("mariadb",), serving={"mariadb": "patroni"})


def test_an_external_cluster_is_given_by_a_multi_host_url() -> None:
    """A facility's Patroni cluster as libpq reaches its primary: every member, one port; the URL
    another host's hdbbench is given reads back as the same endpoint, also from a stack's state."""
    cluster = ClusterEndpoint(hosts=("10.0.0.1", "10.0.0.2", "10.0.0.3"), port=5432, user="u", password="p@:/w",
                              dbname="db", external=True)
    given = kind("postgres").external_endpoint(cluster.external_value())
    assert given == cluster and "target_session_attrs='read-write'" in given.conninfo()
    assert endpoints_from_dict({"postgres": given.to_dict()})["postgres"] == cluster
    assert kind("postgres").external_endpoint("postgresql://u:p@h:5433/db") == PostgresEndpoint("h", 5433, "u", "p", "db", True)
    with pytest.raises(ConfigError, match="one port for every host"):
        kind("postgres").external_endpoint("postgresql://u:p@h1:5432,h2:5433/db")


def test_every_stack_has_the_local_kind_and_needs_are_checked(tmp_path: Path) -> None:
    assert StackConfig(state_dir=tmp_path, components=("postgres",)).components == ("postgres", "local")
    with pytest.raises(ConfigError, match="include the mariadb component"):
        StackConfig(state_dir=tmp_path, components=("tango",), tango_db="cpp")
    # An external Tango database runs on nothing of ours.
    StackConfig(state_dir=tmp_path, components=("tango",), tango_db="cpp", external={"tango": "h:1"})


def test_a_stack_of_the_local_kind_alone_starts_no_process(tmp_path: Path) -> None:
    stack = Stack(StackConfig(state_dir=tmp_path, components=()))
    endpoints = stack.up()
    assert dict(endpoints) == {"local": LocalEndpoint(str((tmp_path / "local").resolve()))}
    assert (tmp_path / "local").is_dir() and load_endpoints(tmp_path) == endpoints
    status = stack.status()
    assert status["all_ready"] and status["servers"]["local"]["pid"] is None
    assert stack.settings_in_force() == {}
    assert stack.down() == [] and (tmp_path / "local").is_dir()  # files are data: kept


def test_profiles_have_a_section_per_kind_with_settings() -> None:
    profile = resolve_profile("relaxed", parse_overrides(["postgres.work_mem=8MB"]))
    assert set(profile.servers) == {k.name for k in SERVER_KINDS if k.settings}
    assert profile.of("postgres")["work_mem"] == "8MB" and profile.of("local") == {}
    assert type(profile).from_dict(profile.to_dict()) == profile
    with pytest.raises(ConfigError, match="postgres.<name>=<value> or mariadb.<name>=<value>"):
        parse_overrides(["local.x=1"])


def test_hosts_record_every_server_key() -> None:
    hosts = Hosts(servers={"postgres": "198.18.0.1"})
    assert hosts.distributed and hosts.servers_on("198.18.0.1") == ("postgres",)
    assert {k: hosts.to_dict()[k] for k in ("postgres", "mariadb", "tango_db")} == {
        "postgres": "198.18.0.1", "mariadb": "127.0.0.1", "tango_db": "127.0.0.1"}

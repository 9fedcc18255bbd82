# SPDX-License-Identifier: Apache-2.0
"""docker/: checked statically, since no container engine runs here (see docs/hosts.md, "Containers").

The compose file parses and has the structure compose requires; every path it (and the Dockerfile)
names exists in the repository; the image sets itself up with scripts/setup.sh, as a machine does;
the network is private and inside the benchmarking range, and no port is published.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from hdbbench.scenario.hosts import load_hosts_file
from hdbbench.stack.servers.ports import BENCHMARK_NETWORK
from tests.harness import REPO

DOCKER = REPO / "docker"
COMPOSE = DOCKER / "compose.yaml"
TOP_LEVEL = {"name", "services", "networks", "volumes", "configs", "secrets"}
SERVICE_KEYS = {"image", "build", "command", "entrypoint", "environment", "volumes", "networks", "depends_on",
                "healthcheck", "init", "stop_grace_period", "restart", "ports", "cap_add", "working_dir"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def _services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    services = compose["services"]
    assert isinstance(services, dict) and services
    return services


def test_compose_has_the_structure_compose_requires(compose: dict[str, Any]) -> None:
    unknown = {k for k in compose if not k.startswith("x-")} - TOP_LEVEL
    assert not unknown, f"unknown top-level keys {unknown}"
    declared_networks = set(compose.get("networks") or {})
    declared_volumes = set(compose.get("volumes") or {})
    for name, service in _services(compose).items():
        assert isinstance(service, dict), name
        assert set(service) <= SERVICE_KEYS, (name, set(service) - SERVICE_KEYS)
        assert "image" in service or "build" in service, f"{name}: neither image nor build"
        command = service.get("command")
        assert isinstance(command, list) and all(isinstance(a, str) for a in command), f"{name}: command"
        networks = service.get("networks") or {}
        assert set(networks) <= declared_networks, f"{name}: undeclared network"
        for volume in service.get("volumes") or []:
            source = volume.split(":", 1)[0]
            assert source in declared_volumes or (COMPOSE.parent / source).exists(), f"{name}: volume {volume}"
        for other in service.get("depends_on") or {}:
            assert other in compose["services"], f"{name} depends on unknown {other}"


def test_every_component_and_a_controller_are_there(compose: dict[str, Any]) -> None:
    roles = {service["command"][0] for service in _services(compose).values()}
    assert roles == {"servers", "devices", "subscribers", "controller"}


def test_network_is_private_and_in_the_benchmarking_range(compose: dict[str, Any]) -> None:
    subnets = [ipaddress.ip_network(c["subnet"]) for n in compose["networks"].values() for c in n["ipam"]["config"]]
    assert subnets and all(s.subnet_of(BENCHMARK_NETWORK) for s in subnets)  # type: ignore[arg-type]
    assert all(n.get("internal") for n in compose["networks"].values())
    for name, service in _services(compose).items():
        assert "ports" not in service, f"{name} publishes a port"
        for network in service["networks"].values():
            address = ipaddress.ip_address(network["ipv4_address"])
            assert any(address in s for s in subnets), (name, address)


def test_addresses_match_the_hosts_file(compose: dict[str, Any]) -> None:
    hosts = load_hosts_file(DOCKER / "hosts.toml")
    by_role = {s["command"][0]: next(iter(s["networks"].values()))["ipv4_address"]
               for s in _services(compose).values()}
    assert by_role["servers"] == hosts.server("tango_db") == hosts.server("postgres") == hosts.server("mariadb")
    assert [by_role["devices"]] == list(hosts.devices)
    assert [by_role["subscribers"]] == list(hosts.subscribers)
    assert by_role["controller"] == hosts.controller
    for service in _services(compose).values():  # the address each service is told is its own
        if len(service["command"]) > 1:
            assert service["command"][1] == next(iter(service["networks"].values()))["ipv4_address"]


def test_paths_named_exist(compose: dict[str, Any]) -> None:
    for name, service in _services(compose).items():
        build = service.get("build")
        if build:
            context = (COMPOSE.parent / build["context"]).resolve()
            assert context == REPO, f"{name}: the build context is the repository"
            assert (context / build["dockerfile"]).is_file(), f"{name}: {build['dockerfile']}"
    dockerfile = (DOCKER / "Dockerfile").read_text()
    for source in re.findall(r"(?m)^COPY\s+(\S+)\s+\S+", dockerfile):
        assert (REPO / source).exists(), source
    entry = re.search(r'ENTRYPOINT \["([^"]+)"', dockerfile)
    assert entry and (REPO / Path(entry.group(1)).relative_to("/opt/hdbbench")).is_file()
    script = (DOCKER / "component.sh").read_text()
    for path in re.findall(r"\$top/([\w./-]+)", script):
        assert (REPO / path).exists(), path


def test_the_image_runs_the_same_set_up_script() -> None:
    dockerfile = (DOCKER / "Dockerfile").read_text()
    assert re.search(r"(?m)^FROM debian:12(\s|$)", dockerfile)
    runs = re.findall(r"(?m)^RUN (.+)$", dockerfile)
    assert any("./run.sh setup" in r or "scripts/setup.sh" in r for r in runs)
    assert 'setup) exec bash "$top/scripts/setup.sh"' in (REPO / "run.sh").read_text()
    # No second recipe: the image installs none of the set-up's own packages itself.
    block = re.search(r"(?s)apt_packages=\((.*?)\n\)", (REPO / "scripts" / "setup.sh").read_text())
    assert block
    setup_packages = {w for line in block.group(1).splitlines() if not line.strip().startswith("#")
                      for w in line.split()}
    bootstrap = {w for r in runs if "apt-get install" in r for w in re.findall(r"(?<![-\w])([a-z0-9][a-z0-9.+-]+)", r)}
    assert setup_packages and not (setup_packages & bootstrap), setup_packages & bootstrap

# SPDX-License-Identifier: Apache-2.0
"""ansible/: the playbooks pass ansible-playbook's syntax check, the example inventory names a host
for every component, and the roles use builtin modules only (ansible-core, pinned, is enough).
The playbook itself runs against three hosts in tests/test_hosts.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.harness import REPO

ANSIBLE = REPO / "ansible"
BIN = Path(sys.executable).parent
COMPONENT_ROLES = ("tango_db", "postgres", "mariadb", "devices", "subscribers", "controller")
ENV = {**os.environ, "ANSIBLE_CONFIG": str(ANSIBLE / "ansible.cfg"), "LC_ALL": "C.UTF-8", "ANSIBLE_NOCOLOR": "1"}

pytestmark = pytest.mark.skipif(not (BIN / "ansible-playbook").exists(), reason="ansible-core is not installed")


@pytest.mark.parametrize("playbook", ["site.yml", "down.yml"])
def test_syntax_check(playbook: str, tmp_path: Path) -> None:
    done = subprocess.run([str(BIN / "ansible-playbook"), "--syntax-check", "-i", str(ANSIBLE / "inventory.example.ini"),
                           str(ANSIBLE / playbook)], capture_output=True, text=True, cwd=ANSIBLE,
                          env={**ENV, "ANSIBLE_LOCAL_TEMP": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr


def test_inventory_names_a_host_for_every_component(tmp_path: Path) -> None:
    done = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(ANSIBLE / "inventory.example.ini"), "--list"],
                          capture_output=True, text=True, env={**ENV, "ANSIBLE_LOCAL_TEMP": str(tmp_path)}, check=True)
    inventory = json.loads(done.stdout)
    for group in COMPONENT_ROLES:
        assert inventory[group]["hosts"], group
    for host, hostvars in inventory["_meta"]["hostvars"].items():
        assert re.match(r"^198\.1[89]\.", hostvars["hdbbench_address"]), host


def test_one_role_per_component_with_the_install_role() -> None:
    for role in COMPONENT_ROLES:
        meta = yaml.safe_load((ANSIBLE / "roles" / role / "meta" / "main.yml").read_text())
        assert meta["dependencies"] == ["install"], role
        assert (ANSIBLE / "roles" / role / "tasks" / "main.yml").is_file()
    install = (ANSIBLE / "roles" / "install" / "tasks" / "main.yml").read_text()
    assert "./run.sh setup" in install  # scripts/setup.sh, the only recipe


def test_tasks_use_builtin_modules_and_report_changes_honestly() -> None:
    for path in sorted(ANSIBLE.rglob("*.yml")):
        if "tasks" not in path.parts and path.parent != ANSIBLE:
            continue
        documents = yaml.safe_load(path.read_text()) or []
        tasks = [t for play in documents for t in play.get("tasks", [])] if path.parent == ANSIBLE else documents
        for task in tasks:
            modules = [k for k in task if "." in k]
            assert all(m.startswith("ansible.builtin.") for m in modules), (path, modules)
            for module in ("ansible.builtin.command", "ansible.builtin.shell"):
                if module in task:  # a command says when it changed something
                    args = task[module]
                    assert "changed_when" in task or (isinstance(args, dict) and "creates" in args), (path, task["name"])

# SPDX-License-Identifier: Apache-2.0
"""Run directories and self-describing results.

A run directory ``runs/<UTC time>-<name>/`` holds the resolved scenario, the environment facts,
logs, time series (CSV) and ``results.json``. ``status.json`` says whether the run is running,
completed, interrupted or failed, and is written first, so an interrupted run is never mistaken
for a finished one. Every results file carries ``format_version`` and the facts needed to read its
numbers (seed, settings, versions, hardware), as pyperf does.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1
_PACKAGES = ("hdbbench", "pytango", "psycopg", "psycopg-binary", "mariadb", "numpy")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    tmp.replace(path)  # atomic: a reader never sees half a file


class RunDirectory:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, root: Path, name: str) -> RunDirectory:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "run"
        path = root / f"{stamp}-{safe}"
        suffix = 1
        while path.exists():
            suffix += 1
            path = root / f"{stamp}-{safe}-{suffix}"
        path.mkdir(parents=True)
        (path / "logs").mkdir()
        run = cls(path)
        run.set_status("running")
        return run

    def set_status(self, state: str, error: str | None = None) -> None:
        previous = self.status()
        status = {"state": state, "started": previous.get("started") or utc_now()}
        if state != "running":
            status["ended"] = utc_now()
        if error:
            status["error"] = error
        _write_json(self.path / "status.json", status)

    def status(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.path / "status.json").read_text()))
        except (OSError, ValueError):
            return {}

    def write_json(self, name: str, data: Any) -> Path:
        path = self.path / name
        _write_json(path, data)
        return path

    def write_csv(self, name: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
        path = self.path / name
        with open(path, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(header)
            writer.writerows(rows)
        return path


def results_document(kind: str, scenario: Mapping[str, Any], environment: Mapping[str, Any],
                     results: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope every results file shares."""
    return {
        "format_version": FORMAT_VERSION,
        "kind": kind,
        "created": utc_now(),
        "scenario": dict(scenario),
        "environment": dict(environment),
        "results": dict(results),
    }


def load_results(path: Path) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    if data.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: results format {data.get('format_version')!r}, expected {FORMAT_VERSION}")
    return dict(data)


# --- environment facts ------------------------------------------------------------------------
def environment_facts(server_versions: Mapping[str, Any] | None = None,
                      settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """CPU, cores, memory, disk type, kernel, OS, versions of every component, and settings."""
    return {
        "hostname": platform.node(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "disk": _disk_facts(Path.cwd()),
        "kernel": platform.release(),
        "os": _os_release(),
        "python": platform.python_version(),
        "packages": {name: _package_version(name) for name in _PACKAGES},
        "hdbbench_commit": _git_commit(),
        "timescaledb_built": _read_text(Path(__file__).resolve().parent.parent / ".cache/setup/timescaledb-version"),
        "servers": dict(server_versions or {}),
        "settings": dict(settings or {}),
        "drop_caches_writable": os.access("/proc/sys/vm/drop_caches", os.W_OK),
    }


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str | None:
    text = _read_text(Path("/proc/cpuinfo")) or ""
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.processor() or None


def _memory_bytes() -> int | None:
    text = _read_text(Path("/proc/meminfo")) or ""
    match = re.search(r"^MemTotal:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _os_release() -> str | None:
    text = _read_text(Path("/etc/os-release")) or ""
    match = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', text, re.MULTILINE)
    return match.group(1) if match else None


def _disk_facts(path: Path) -> dict[str, Any]:
    """The block device under `path` and whether it rotates (HDD) or not (SSD/virtual)."""
    facts: dict[str, Any] = {"path": str(path)}
    try:
        stat = os.statvfs(path)
        facts["free_bytes"] = stat.f_bavail * stat.f_frsize
        facts["total_bytes"] = stat.f_blocks * stat.f_frsize
        dev = os.stat(path).st_dev
        sys_dev = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
        if sys_dev.exists():
            block = sys_dev.resolve()
            queue = block / "queue" if (block / "queue").exists() else block.parent / "queue"
            rotational = _read_text(queue / "rotational")
            facts["device"] = block.name
            facts["type"] = {"1": "rotational", "0": "non-rotational"}.get(rotational or "", "unknown")
    except OSError:
        pass
    return facts


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent, check=False)
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None

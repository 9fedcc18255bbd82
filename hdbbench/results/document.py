# SPDX-License-Identifier: Apache-2.0
"""Run directories and self-describing results.

A run directory ``runs/<UTC time>-<name>/`` holds the resolved scenario, the environment facts,
logs, time series (CSV) and ``results.json``. ``status.json`` says whether the run is running,
completed, interrupted or failed, and is written first, so an interrupted run is never mistaken
for a finished one. Every results file carries ``format_version`` and the facts needed to read its
numbers (seed, settings, versions, hardware), as pyperf does.

The files are typed: `ResultsDocument` is the envelope, and its ``results`` is the record of the
file's kind (the one table, hdbbench.results.kinds.KINDS), written by its producer and read by the
report and ``hdbbench migrate``. Reading (`read_results`) checks the whole file against the records
(hdbbench.model.records.read) and refuses, in one line, another format_version, another kind or a
key the records do not have; every file is written whole and atomically (hdbbench.model.records.save).
The scenario and environment are the facts a run was given and found, carried as the JSON objects
they were recorded as. Parts of a ``hdbbench run`` (extraction, disk) write into its directory
through a `RunPart`.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from hdbbench.backends.registry import REGISTRY
from hdbbench.model.errors import ConfigError
from hdbbench.model.records import RecordError, read, save, write
from hdbbench.results.kinds import KINDS, ResultRecord
from hdbbench.results.trials import InsertionResults

# 2: one run directory (extraction.json, disk.json beside results.json), one shape per file
# 3: an insertion trial says what it measured (kind, batch_size; subscriber_kind always), typed (hdbbench.results.trials)
FORMAT_VERSION = 3
MIGRATED_FORMATS = (1, 2)  # what `hdbbench migrate` converts
_PACKAGES = ("hdbbench", "pytango")  # and each backend's client packages (`client_packages`), then numpy
R = TypeVar("R")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


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
        save(self.path / "status.json", status)

    def status(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.path / "status.json").read_text()))
        except (OSError, ValueError):
            return {}

    def write_json(self, name: str, data: Any) -> Path:
        """`data` (a record such as a `ResultsDocument`, or JSON values) as `name`, atomically."""
        return save(self.path / name, data)

    def write_csv(self, name: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
        path = self.path / name
        with open(path, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(header)
            writer.writerows(rows)
        return path


class RunPart:
    """One measurement's files inside a run directory of another command (``hdbbench run``).

    A producer that writes ``results.json``, ``<name>.csv`` and a status into its own run directory
    writes, through a part, ``<prefix>.json`` and ``<prefix>-<name>.csv`` into the enclosing run
    directory instead; the run's status stays the enclosing command's. One layout, no copies."""

    def __init__(self, run: RunDirectory, prefix: str) -> None:
        self.run, self.prefix = run, prefix
        self.path = run.path

    def _name(self, name: str) -> str:
        return f"{self.prefix}.json" if name == "results.json" else f"{self.prefix}-{name}"

    def write_json(self, name: str, data: Any) -> Path:
        return self.run.write_json(self._name(name), data)

    def write_csv(self, name: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
        return self.run.write_csv(self._name(name), header, rows)

    def results_path(self) -> Path:
        return self.path / self._name("results.json")

    def set_status(self, state: str, error: str | None = None) -> None:
        """The enclosing run sets its own status."""


class ResultsFormatError(ConfigError, ValueError):
    """A results file this hdbbench does not read (another format_version, another kind, not results)."""


@dataclass(frozen=True, kw_only=True)
class ResultsDocument(Generic[R]):
    """The envelope every results file shares, in the order it is written; `results` is the record of
    the kind (hdbbench.results.kinds.KINDS)."""

    format_version: int = FORMAT_VERSION
    kind: str
    created: str = field(default_factory=utc_now)
    scenario: dict[str, Any]         # the resolved scenario (or the command's settings), as recorded
    environment: dict[str, Any]      # environment_facts (below), as recorded
    results: R


def results_document(kind: str, scenario: Mapping[str, Any], environment: Mapping[str, Any],
                     results: ResultRecord | Mapping[str, Any]) -> ResultsDocument[ResultRecord]:
    """The envelope of a producer's results, to write (RunDirectory.write_json). `results` is the
    record of `kind`, or a producer's JSON of it, read into the record here (strictly: a key the
    record lacks, or one it needs and does not find, is a RecordError before anything is written)."""
    record = KINDS[kind]
    if isinstance(results, Mapping):
        results = read(record, results, "results")
    if not isinstance(results, record):
        raise TypeError(f"results of kind {kind!r} are a {record.__name__}, not a {type(results).__name__}")
    return ResultsDocument(kind=kind, scenario=dict(scenario), environment=dict(environment), results=results)


def parse_results(data: Any, source: Path | str, kind: str | None = None) -> ResultsDocument[ResultRecord]:
    """The document of a results file's JSON (of `kind` when given): every key checked against its
    record; ResultsFormatError in one line, naming `source`, the key and the problem, otherwise."""
    if not isinstance(data, Mapping) or "results" not in data:
        raise ResultsFormatError(f"{source}: not an hdbbench results file")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        advice = (f"run `hdbbench migrate {Path(source).parent}` to convert" if version in MIGRATED_FORMATS
                  else "re-run the measurement with this version")
        raise ResultsFormatError(
            f"{source}: results format {version!r}, this hdbbench reads format {FORMAT_VERSION} only; {advice}")
    if kind is not None and data.get("kind") != kind:
        raise ResultsFormatError(f"{source}: holds results of kind {data.get('kind')!r}, not {kind!r}")
    record = KINDS.get(str(data.get("kind")))
    if record is None:
        raise ResultsFormatError(f"{source}: kind: {data.get('kind')!r} is no kind of results this hdbbench "
                                 f"reads ({', '.join(KINDS)})")
    # Every key of the envelope is written by every producer: one that is absent is refused, not defaulted.
    if lacking := [f.name for f in fields(ResultsDocument) if f.name not in data]:
        raise ResultsFormatError(f"{source}: a results file lacks {', '.join(lacking)}")
    try:
        envelope = read(ResultsDocument, data)  # `results` is a type variable: read as it is, then as the kind's
        return ResultsDocument(format_version=envelope.format_version, kind=envelope.kind, created=envelope.created,
                               scenario=envelope.scenario, environment=envelope.environment,
                               results=read(record, envelope.results, "results"))
    except RecordError as exc:
        raise ResultsFormatError(f"{source}: {exc}") from None


def read_results(path: Path, kind: str | None = None) -> ResultsDocument[ResultRecord]:
    """A results file of this format (and of `kind` when given); ResultsFormatError in one line otherwise."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ResultsFormatError(f"{path}: cannot be read: {exc}") from None
    return parse_results(data, path, kind)


def peek_results(path: Path) -> tuple[int | None, str | None]:
    """The format_version and kind a results file says it holds, without reading its records ((None,
    None) when it is not a JSON object); to choose which file to read, or what to tell of one."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None, None
    if not isinstance(data, Mapping):
        return None, None
    version, kind = data.get("format_version"), data.get("kind")
    return (version if isinstance(version, int) else None), (kind if isinstance(kind, str) else None)


def read_kind(path: Path, record: type[R]) -> ResultsDocument[R]:
    """`read_results` of the kind whose record is `record`, typed as such."""
    kind = next(k for k, cls in KINDS.items() if cls is record)
    return cast(ResultsDocument[R], read_results(path, kind))


def load_results(path: Path, kind: str | None = None) -> dict[str, Any]:
    """A results file, checked by `read_results`, as the JSON its producer wrote (for tools that take JSON)."""
    return dict(write(read_results(path, kind)))


def read_trials(path: Path) -> tuple[ResultsDocument[InsertionResults], InsertionResults]:
    """An insertion results file and its typed trials, as written (ResultsFormatError in one line otherwise)."""
    document = read_kind(path, InsertionResults)
    return document, document.results


# --- environment facts ------------------------------------------------------------------------
def environment_facts(server_versions: Mapping[str, Any] | None = None,
                      settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """CPU, cores, memory, disk type, kernel, OS, versions of every component, and settings."""
    packages, built = _backend_facts()
    return {
        "hostname": platform.node(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "disk": _disk_facts(Path.cwd()),
        "kernel": platform.release(),
        "os": _os_release(),
        "python": platform.python_version(),
        "packages": {name: _package_version(name) for name in packages},
        "hdbbench_commit": _git_commit(),
        **built,
        "servers": dict(server_versions or {}),
        "settings": dict(settings or {}),
        "drop_caches_writable": os.access("/proc/sys/vm/drop_caches", os.W_OK),
    }


def _backend_facts() -> tuple[list[str], dict[str, Any]]:
    """The packages whose versions are recorded, and the backends' build facts (hdbbench.backends.base)."""
    classes = list(dict.fromkeys(e.backend_class for e in REGISTRY))
    clients = [p for cls in classes for p in cls.client_packages]
    built = {key: value for cls in classes for key, value in cls.build_facts().items()}
    return list(dict.fromkeys((*_PACKAGES, *clients, "numpy"))), built


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

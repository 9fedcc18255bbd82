# SPDX-License-Identifier: Apache-2.0
"""Run directories and self-describing results.

A run directory ``runs/<UTC time>-<name>/`` holds the resolved scenario, the environment facts,
logs, time series (CSV) and ``results.json``. ``status.json`` says whether the run is running,
completed, interrupted or failed, and is written first, so an interrupted run is never mistaken
for a finished one. Every results file carries ``format_version`` and the facts needed to read its
numbers (seed, settings, versions, hardware), as pyperf does.

The files are typed: `ResultsDocument` is the envelope, and the records of each kind are the
dataclasses of `RECORDS` (below; an insertion trial's in hdbbench.results.trials, read whole by
`read_trials`), written by their producers and read by the report; reading checks every record
against its dataclass and refuses, in one line, another format_version. Parts of a
``hdbbench run`` (extraction, disk) write into its directory through a `RunPart`.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from hdbbench.model.errors import ConfigError
from hdbbench.model.records import RecordError
from hdbbench.results.trials import InsertionResults, TrialSummary

# 2: one run directory (extraction.json, disk.json beside results.json), one shape per file
# 3: an insertion trial says what it measured (kind, batch_size; subscriber_kind always), typed (hdbbench.results.trials)
FORMAT_VERSION = 3
MIGRATED_FORMATS = (1, 2)  # what `hdbbench migrate` converts
_PACKAGES = ("hdbbench", "pytango")  # and each backend's client packages (`client_packages`), then numpy


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


@dataclass
class ResultsDocument:
    """The envelope every results file shares; `results` holds the kind's records (below)."""

    kind: str
    scenario: dict[str, Any]
    environment: dict[str, Any]
    results: dict[str, Any]
    created: str = field(default_factory=utc_now)
    format_version: int = FORMAT_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {"format_version": self.format_version, "kind": self.kind, "created": self.created,
                "scenario": self.scenario, "environment": self.environment, "results": self.results}

    @classmethod
    def from_dict(cls, data: Any, source: Path | str, kind: str | None = None) -> ResultsDocument:
        if not isinstance(data, dict) or "results" not in data:
            raise ResultsFormatError(f"{source}: not an hdbbench results file")
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            advice = (f"run `hdbbench migrate {Path(source).parent}` to convert" if version in MIGRATED_FORMATS
                      else "re-run the measurement with this version")
            raise ResultsFormatError(
                f"{source}: results format {version!r}, this hdbbench reads format {FORMAT_VERSION} only; {advice}")
        if kind is not None and data.get("kind") != kind:
            raise ResultsFormatError(f"{source}: holds results of kind {data.get('kind')!r}, not {kind!r}")
        document = cls(str(data["kind"]), dict(data.get("scenario") or {}), dict(data.get("environment") or {}),
                       dict(data["results"]), str(data.get("created", "")), int(version))
        _check_records(document, source)
        return document


def results_document(kind: str, scenario: Mapping[str, Any], environment: Mapping[str, Any],
                     results: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope every results file shares, as written."""
    return ResultsDocument(kind, dict(scenario), dict(environment), dict(results)).to_dict()


def read_results(path: Path, kind: str | None = None) -> ResultsDocument:
    """A results file of this format (and of `kind` when given); ResultsFormatError in one line otherwise."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ResultsFormatError(f"{path}: cannot be read: {exc}") from None
    return ResultsDocument.from_dict(data, path, kind)


def load_results(path: Path, kind: str | None = None) -> dict[str, Any]:
    """`read_results` as the plain document the producers wrote."""
    return read_results(path, kind).to_dict()


def insertion_results(document: ResultsDocument) -> InsertionResults:
    """The typed results of an insertion document (its trials as `TrialSummary` records)."""
    if document.kind != "insertion":
        raise ResultsFormatError(f"results of kind {document.kind!r} hold no insertion trials")
    try:
        return InsertionResults.from_dict(document.results)
    except RecordError as exc:
        raise ResultsFormatError(f"results: {exc}") from None


def read_trials(path: Path) -> tuple[ResultsDocument, InsertionResults]:
    """An insertion results file and its typed trials, as written (ResultsFormatError in one line otherwise)."""
    document = read_results(path, "insertion")
    return document, insertion_results(document)


# --- the records the report reads, as the producers write them -------------------------------
def _fields_of(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of dataclass `cls` from `data`: every field without a default must be there, no other key."""
    if not isinstance(data, Mapping):
        raise ResultsFormatError(f"a {cls.__name__} record must be an object, got {type(data).__name__}")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    missing = [name for name, f in known.items() if name not in data
               and f.default is MISSING and f.default_factory is MISSING]
    if unknown or missing:
        raise ResultsFormatError(f"a {cls.__name__} record " + "; ".join(
            ([f"lacks {', '.join(missing)}"] if missing else []) + ([f"has unknown {', '.join(unknown)}"] if unknown else [])))
    return {name: data[name] for name in known if name in data}


@dataclass(frozen=True)
class TimeStats:
    """count, median, 95th percentile and maximum of a set of times (seconds)."""

    count: int
    p50: float
    p95: float
    max: float

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TimeStats:
        data = _fields_of(cls, data)
        return cls(int(data["count"]), float(data["p50"]), float(data["p95"]), float(data["max"]))


@dataclass(frozen=True)
class QuerySummary:
    """extraction.json ``results.summary[]``: one backend x variant x layout x group x interval x cache state."""

    backend: str
    variant: str
    state: str          # unclustered | clustered
    group: str
    interval_s: float
    temperature: str    # cold | warm
    client_s: TimeStats
    server_s: TimeStats
    rows_mean: float
    pages_read_mean: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QuerySummary:
        data = _fields_of(cls, data)
        return cls(str(data["backend"]), str(data["variant"]), str(data["state"]), str(data["group"]),
                   float(data["interval_s"]), str(data["temperature"]), TimeStats.from_dict(data["client_s"]),
                   TimeStats.from_dict(data["server_s"]), float(data["rows_mean"]),
                   None if data.get("pages_read_mean") is None else float(data["pages_read_mean"]))


@dataclass(frozen=True)
class CaseSize:
    """disk.json ``results.cases[]``: the figures of one case the report reads (the file holds more)."""

    backend: str
    variant: str
    case_type: str
    case_format: str
    case_write: str
    case_elements: int
    table: str
    events: int
    bytes_per_event: float
    data_per_event: float
    index_per_event: float
    toast_per_event: float

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseSize:
        if not isinstance(data, Mapping):
            raise ResultsFormatError(f"a CaseSize record must be an object, got {type(data).__name__}")
        missing = [f.name for f in fields(cls) if f.name not in data]
        if missing:  # the file holds more per case; these it must hold
            raise ResultsFormatError(f"a CaseSize record lacks {', '.join(missing)}")
        return cls(**{f.name: data[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class Projection:
    """sizing.json ``results.projections[]`` (hdbbench.parts.disk.sizing.project): disk of an inventory on one variant."""

    backend: str
    variant: str
    complete: bool
    bytes_per_day: float
    bytes_per_month: float
    bytes_per_year: float
    bytes_at_retention: float
    log_bytes_per_day: dict[str, float]
    groups: list[dict[str, Any]]
    replicas: float = 1.0            # copies kept (primary + replicas); total_bytes counts them all
    log_retention_days: float = 0.0  # days of WAL / binary log kept
    log_bytes_retained: float = 0.0
    total_bytes: float | None = None  # (bytes at retention + logs kept) x replicas

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Projection:
        return cls(**_fields_of(cls, data))


# The records of each kind of results file: where they are and their dataclass.
RECORDS: dict[str, tuple[str, Any]] = {"insertion": ("trials", TrialSummary), "extraction": ("summary", QuerySummary),
                                       "disk": ("cases", CaseSize), "disk-plan": ("projections", Projection)}


def _check_records(document: ResultsDocument, source: Path | str) -> None:
    """Every record of the document fits its dataclass; else ResultsFormatError naming the record."""
    key, record = RECORDS.get(document.kind, ("", None))
    for index, item in enumerate(document.results.get(key) or [] if record else []):
        try:
            record.from_dict(item)
        except (ResultsFormatError, TypeError, ValueError) as exc:
            raise ResultsFormatError(f"{source}: results.{key}[{index}]: {exc}") from None


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
    from hdbbench.backends.registry import REGISTRY  # the backends import their clients: only when facts are taken

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

# SPDX-License-Identifier: Apache-2.0
"""``hdbbench migrate``: a run directory of results format 1 or 2 rewritten as format 3.

Format 3 differs from format 2 in the insertion trials only: each says what it measured (``kind``:
throughput, batch_sweep, subscriber_sweep, saturation, sustained; ``batch_size``) and always which
``subscriber_kind`` ran it. A trial of format 1 or 2 says so in its label alone: the migration, and
nothing else in hdbbench, reads it from there (`trial_identity`). The other files of a format-2 run
are carried as they are, with the new format_version.

Format 1 kept the extraction and disk parts of ``hdbbench run`` as run directories of their own
(``extraction/<time>-extract-<name>/``, ``disk/<time>-disk/``) whose ``results.json`` the runner
copied beside the insertion results as ``extraction.json`` and ``disk.json``. Format 2 has one
layout: the parts write ``<part>.json`` and ``<part>-<name>.csv`` into the run's directory
(hdbbench.results.document.RunPart), and every record is checked against its dataclass (the one
table of kinds, hdbbench.results.kinds.KINDS).

The migration carries figures exactly: it never recomputes or invents one. An older file is JSON
of an older shape, converted key by key into today's; the result is read as today's typed records
(hdbbench.results.document.parse_results: strictly, so a file that does not make today's records is
refused, not carried half-read) and written, as converted, by the one writer (hdbbench.model.records.save).
It is the converted JSON that is written, not the records written anew: a figure nested in a record
that the older format did not record stays absent, where the record would write its default (null). A record's key that
format 2 has no place for is dropped; a figure format 2 has and format 1 did not record is left out
(or null, for a field every record must hold); a disk case without the figures every case must hold
is left out, and a disk case of format 1, measured at one size, keeps its average as format 2's
``average_bytes_per_event`` while the fitted marginal format 2 calls ``bytes_per_event`` is null (format 1
did not measure it; an average shown under the marginal's name would mislead a comparison). Each of these is listed in ``migration.json`` beside the results. The source is only
read; the destination is written into a temporary sibling and renamed at the end, so a refusal
(one line: file, key, problem) leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import typing
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any

from hdbbench.model.records import ABSENT, omitted, save
from hdbbench.results.document import (
    FORMAT_VERSION,
    MIGRATED_FORMATS,
    ResultsFormatError,
    parse_results,
)
from hdbbench.results.kinds import KINDS
from hdbbench.subscribers.kinds import OURS

FROM_FORMAT = 1  # the format whose layout differs (parts in run directories of their own)
MIGRATION_FILE = "migration.json"
RESULTS_FILES = ("results.json", "extraction.json", "disk.json", "sizing.json", "faults.json", "replica.json")
RUN_FILES = ("scenario.json", "environment.json", "status.json")  # carried as they are, JSON objects
PARTS = ("extraction", "disk")  # format 1's sub-run directories, each one run directory of its own
REPORT_OUTPUTS = ("report.html", "disk-cases.csv")  # written by the report; `hdbbench report` writes them anew
# The list of records in each kind's ``results`` that format 1 and 2 wrote in another shape: these are
# converted record by record (the rest of a file was written then as it is now).
_RECORD_LISTS = {"insertion": "trials", "extraction": "summary", "disk": "cases", "disk-plan": "projections",
                 "faults": "trials", "replica": "trials"}
# The fields that say what a record is: a record without them is not a format-1 record (malformed).
_IDENTITY = {"insertion": ("backend", "label"), "disk-plan": ("backend", "variant"),
             "extraction": ("backend", "variant", "state", "group", "interval_s", "temperature"),
             "disk": ("backend", "variant")}
# A format-1 disk case without fit_sizes measured one size: its bytes_per_event is that size's average
# (disk bytes / events), which format 2 calls average_bytes_per_event; format 2's bytes_per_event is the
# marginal of a line fitted over several sizes, which format 1 did not measure: it is null, so the report
# and compare show no marginal for the case rather than an average under the marginal's name.
_NO_FIT_NOTE = "format 1 measured one size: no marginal was fitted; average_bytes_per_event is its average"
_AVERAGE_NOTE = ("null: format 1 measured one size and fitted no marginal; its bytes_per_event (disk bytes / "
                 "events at that size) is carried as average_bytes_per_event; data/index/toast_per_event stay "
                 "the averages format 1 recorded; fixed_bytes, slack_bytes, fit_r2 were not recorded")


@dataclass(frozen=True, kw_only=True)
class LogEntry:
    """One key of one file that could not be carried, or that the older format did not record."""

    file: str
    key: str
    why: str
    records: int | None = omitted()  # how many records it concerns, when it concerns records


@dataclass(kw_only=True)
class MigrationLog:
    """migration.json: what could not be carried (dropped), what the older format did not record
    (defaulted, derived) and the logs of earlier migrations of the same run (earlier, as they were written)."""

    from_format: int = FROM_FORMAT
    to_format: int = FORMAT_VERSION
    source: str
    dropped: list[LogEntry] = field(default_factory=list)
    defaulted: list[LogEntry] = field(default_factory=list)
    earlier: list[Any] | None = omitted()

    def drop(self, file: str, key: str, why: str, records: int | None = None) -> None:
        self.dropped.append(LogEntry(file=file, key=key, why=why, records=records))

    def default(self, file: str, key: str, how: str, records: int | None = None) -> None:
        self.defaulted.append(LogEntry(file=file, key=key, why=how, records=records))


# --- the run directory -----------------------------------------------------------------------------
def default_destination(src: Path) -> Path:
    """``<src>-format<N>`` beside `src`, N the format written."""
    resolved = Path(src).resolve()
    return resolved.parent / f"{resolved.name}-format{FORMAT_VERSION}"


def migrate_run(src: Path, dest: Path) -> MigrationLog:
    """Write `dest`, the format-3 run directory of the format-1 or format-2 run directory `src`; `src`
    is only read."""
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        raise ResultsFormatError(f"{src}: not a run directory")
    if dest.exists() or dest.is_symlink():
        raise ResultsFormatError(f"{dest}: already exists; give another destination with --to")
    if not dest.parent.is_dir():
        raise ResultsFormatError(f"{dest.parent}: no such directory to write the migrated run into")
    log = MigrationLog(source=str(src.resolve()))
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".migrating", dir=dest.parent))
    try:
        _migrate_into(src, work, log)
        os.chmod(work, src.stat().st_mode & 0o7777)  # the run's own permissions, not the temporary's 0700
        save(work / MIGRATION_FILE, log)
        os.rename(work, dest)  # one step: `dest` is complete or absent
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return log


def _migrate_into(src: Path, work: Path, log: MigrationLog) -> None:
    versions = [_format_of(src / name) for name in RESULTS_FILES if (src / name).is_file()]
    has_parts = any((src / p).is_dir() for p in PARTS)
    if not versions and not has_parts:
        raise ResultsFormatError(f"{src}: holds no results file ({', '.join(RESULTS_FILES)}); nothing to migrate")
    if versions and all(v == FORMAT_VERSION for v in versions) and not has_parts:
        raise ResultsFormatError(f"{src}: already results format {FORMAT_VERSION}; nothing to migrate")
    log.from_format = min((v for v in versions if v in MIGRATED_FORMATS), default=FROM_FORMAT)
    for name in RUN_FILES:
        if (src / name).is_file() and not isinstance(_read_json(src / name), dict):
            raise ResultsFormatError(f"{src / name}: not a JSON object")
    for name in RESULTS_FILES:  # the results first: a refused file is named before anything else
        if (src / name).is_file():
            _write_document(work / name, convert_document(_read_json(src / name), src / name, log, name))
    _note_sizing_from_averages(src, log)
    parts = [src / p for p in PARTS if (src / p).is_dir()]
    for entry in sorted(src.iterdir()):
        if (entry.name in RESULTS_FILES and entry.is_file()) or entry in parts:
            continue
        if entry.name in REPORT_OUTPUTS:
            log.drop(entry.name, "", "written by the report of format 1; `hdbbench report` writes it anew")
        elif entry.name == MIGRATION_FILE:  # migrated before, to an older format: its log goes into ours
            log.earlier = [*(log.earlier or []), _read_json(entry)]
        else:
            _copy(entry, work / entry.name)  # scenario, environment, status, logs, series, CSVs: as they are
    for part_dir in parts:  # after the run's own files, beside which the parts' files go
        _migrate_part(src, part_dir, work, log)


def _note_sizing_from_averages(src: Path, log: MigrationLog) -> None:
    """The projections of format 1 multiplied its one-size averages: carried as they are, but said."""
    if (src / "sizing.json").is_file() and any(d.file == "disk.json" and d.key.endswith("bytes_per_event")
                                               for d in log.defaulted):
        log.default("sizing.json", "results.projections[]", "carried as format 1 computed them: from the "
                    "one-size averages of disk.json, not from fitted marginals")


def _format_of(path: Path) -> Any:
    data = _read_json(path)
    return data.get("format_version") if isinstance(data, dict) else None


def _copy(src: Path, dest: Path) -> None:
    if dest.exists() or dest.is_symlink():  # a part's file named like one of the run's: keep both apart
        raise ResultsFormatError(f"{src}: would be written as {dest.name}, which the run already holds")
    if src.is_dir():
        shutil.copytree(src, dest, symlinks=True)
    else:
        shutil.copy2(src, dest, follow_symlinks=False)


def _migrate_part(src: Path, part_dir: Path, work: Path, log: MigrationLog) -> None:
    """A part's run directory (``extraction/<run>/``) becomes ``<part>.json`` and ``<part>-<name>``
    files in the run's directory, as hdbbench.results.document.RunPart names them."""
    part = part_dir.name
    runs = sorted(p for p in part_dir.iterdir() if p.is_dir())
    files = [p for p in part_dir.iterdir() if not p.is_dir()]
    if len(runs) != 1 or files:
        raise ResultsFormatError(f"{part_dir}: expected one run directory of the {part} part, found "
                                 f"{len(runs)} directories and {len(files)} other files")
    sub = runs[0]
    copied, own = src / f"{part}.json", sub / "results.json"
    if own.is_file() and copied.is_file() and _read_json(own) != _read_json(copied):
        raise ResultsFormatError(f"{own}: differs from {copied}, its copy by format 1; cannot tell which "
                                 "holds the part's figures")
    if own.is_file() and not copied.is_file():
        name = f"{part}.json"
        _write_document(work / name, convert_document(_read_json(own), own, log, name))
    for entry in sorted(sub.iterdir()):
        _migrate_part_entry(part, sub, entry, work, log)


def _migrate_part_entry(part: str, sub: Path, entry: Path, work: Path, log: MigrationLog) -> None:
    where = f"{part}/{sub.name}/{entry.name}"
    if entry.name == "results.json":
        return  # carried as <part>.json
    if entry.name == "status.json":
        status = _read_json(entry)
        state = status.get("state") if isinstance(status, dict) else None
        log.drop(where, "state", f"a part has no status of its own in format 2 (the run's status.json "
                                 f"covers it); the part's state was {state!r}")
    elif entry.name == "logs" and entry.is_dir():
        for item in sorted(entry.iterdir()):
            (work / "logs").mkdir(exist_ok=True)
            _copy(item, work / "logs" / f"{part}-{item.name}")
    elif entry.name in REPORT_OUTPUTS:
        log.drop(where, "", "written by the report of format 1")
    else:
        _copy(entry, work / f"{part}-{entry.name}")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ResultsFormatError(f"{path}: cannot be read as JSON: {str(exc).splitlines()[0]}") from None


def _write_document(path: Path, document: dict[str, Any]) -> None:
    save(path, document)


# --- one results file ------------------------------------------------------------------------------
def convert_document(data: Any, source: Path, log: MigrationLog, name: str) -> dict[str, Any]:
    """The format-3 JSON of a format-1, -2 (or -3) results file, read as today's records
    (`parse_results`); ResultsFormatError in one line naming the file, the key and the problem otherwise."""
    if not isinstance(data, dict):
        raise ResultsFormatError(f"{source}: not a JSON object, so not an hdbbench results file")
    version = data.get("format_version")
    if version == FORMAT_VERSION:
        parse_results(data, source)
        return data  # checked, carried as it is
    if version not in MIGRATED_FORMATS:
        raise ResultsFormatError(f"{source}: format_version: {version!r} is not a results format this hdbbench "
                                 f"migrates ({', '.join(map(str, MIGRATED_FORMATS))}) or reads ({FORMAT_VERSION})")
    for key, kind in (("kind", str), ("results", dict), ("scenario", dict), ("environment", dict)):
        if not isinstance(data.get(key), kind):
            raise ResultsFormatError(f"{source}: {key}: missing or not a{'n object' if kind is dict else ' string'}")
    if data["kind"] not in KINDS:
        raise ResultsFormatError(f"{source}: kind: {data['kind']!r} is no kind of results this hdbbench "
                                 f"reads ({', '.join(KINDS)})")
    results = dict(data["results"])
    record_key = _RECORD_LISTS.get(data["kind"], "")
    record = _item_record(data["kind"], record_key)
    if record is not None and record_key in results:
        items = _checked_records(data["kind"], record_key, results[record_key], source, version)
        if data["kind"] == "insertion":
            items = _with_trial_identity(items, source, log, name, version)
        if version == FROM_FORMAT:
            items = _convert_records(data["kind"], record_key, record, items, log, name)
        results[record_key] = items
    if version == FROM_FORMAT:
        _note_absent_results_keys(data["kind"], results, log, name)
    envelope = {"format_version": FORMAT_VERSION, "kind": data["kind"], "created": str(data.get("created") or ""),
                "scenario": data["scenario"], "environment": data["environment"], "results": results}
    parse_results(envelope, source)  # today's records, read strictly, or one line
    return envelope


def _item_record(kind: str, key: str) -> type | None:
    """The record class of the items of ``results.<key>`` of `kind` (a ``list[...]`` field of the kind's record)."""
    hints = typing.get_type_hints(KINDS[kind])
    args = typing.get_args(hints.get(key))
    return args[0] if args else None


def _checked_records(kind: str, key: str, items: Any, source: Path, version: int) -> list[dict[str, Any]]:
    """The records of a results file, each an object holding the fields that name it."""
    if not isinstance(items, list):
        raise ResultsFormatError(f"{source}: results.{key}: not a list")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ResultsFormatError(f"{source}: results.{key}[{index}]: not an object")
        if lacking := [k for k in _IDENTITY.get(kind, ()) if k not in item]:
            raise ResultsFormatError(f"{source}: results.{key}[{index}]: lacks {', '.join(lacking)}, which "
                                     f"names the record in every format-{version} file")
    return list(items)


def _convert_records(kind: str, key: str, record: Any, items: list[dict[str, Any]], log: MigrationLog,
                     name: str) -> list[dict[str, Any]]:
    """Format 1's records in format 3's shape: keys it has no field for dropped, required ones it lacks
    null (a disk case lacking one is left out instead: `_keep_complete`)."""
    known = {f.name: f for f in fields(record)}
    required = [n for n, f in known.items() if f.default is MISSING and f.default_factory is MISSING]
    where = f"results.{key}[]"
    if kind == "disk":
        items = _unfitted_cases(items, log, name, where)
    unknown: dict[str, int] = {}
    for item in items:
        for extra in set(item) - set(known):
            unknown[extra] = unknown.get(extra, 0) + 1
    for extra, count in sorted(unknown.items()):
        log.drop(name, f"{where}.{extra}", f"format {FORMAT_VERSION}'s {record.__name__} has no such field", count)
    if kind == "disk":
        return _keep_complete([{k: v for k, v in item.items() if k in known} for item in items], required, log,
                              name, where)
    _note_absent(items, known, required, log, name, where)
    return [{k: item.get(k) for k in known if k in item or k in required} for item in items]


# --- what a trial measured: its label said so until format 3 -------------------------------------
_LABEL = re.compile(r"(?:^|_)(?:(?P<throughput>throughput)|batch(?P<batch>\d+)|subs(?P<subs>\d+)|"
                    r"(?P<saturation>saturation)|(?P<sustained>sustained))$")


def trial_identity(trial: Mapping[str, Any]) -> dict[str, Any] | None:
    """``kind`` and ``batch_size`` of a trial of format 1 or 2, from its label (``<backend>_throughput``,
    ``_batch<n>``, ``_subs<n>``, ``_saturation``, ``_sustained``, a subscriber kind's slug before the
    last part); the batch size of a trial that is not of a batch sweep is its LibConfiguration's
    (null when not set). None when the label names no trial kind."""
    match = _LABEL.search(str(trial.get("label", "")))
    if match is None:
        return None
    kind = ("batch_sweep" if match.group("batch") else "subscriber_sweep" if match.group("subs")
            else next(k for k in ("throughput", "saturation", "sustained") if match.group(k)))
    given = str((trial.get("lib_overrides") or {}).get("batch_size", "")).strip()
    batch = int(match.group("batch")) if match.group("batch") else int(given) if given.isdigit() else None
    return {"kind": kind, "batch_size": batch}


def _with_trial_identity(items: list[dict[str, Any]], source: Path, log: MigrationLog, name: str,
                         version: int) -> list[dict[str, Any]]:
    """The trials with the fields that say what each measured, derived where format `version` lacks them."""
    out, derived, ours = [], 0, 0
    for index, item in enumerate(items):
        identity = trial_identity(item)
        if identity is None and not {"kind", "batch_size"} <= set(item):
            raise ResultsFormatError(f"{source}: results.trials[{index}]: label {item.get('label')!r} names no trial "
                                     "kind (<backend>_throughput, _batch<n>, _subs<n>, _saturation, _sustained)")
        missing = {k: v for k, v in (identity or {}).items() if k not in item}
        derived += bool(missing)
        ours += "subscriber_kind" not in item
        out.append({**item, **missing, "subscriber_kind": item.get("subscriber_kind", OURS)})
    if derived:
        log.default(name, "results.trials[].kind, batch_size", f"derived from the trial label (format {version} "
                    "recorded them there only); batch_size of a trial outside a batch sweep from its lib_overrides, "
                    "null when not set", derived)
    if ours:
        log.default(name, "results.trials[].subscriber_kind", f"{OURS}: format {version} recorded no kind for a "
                    "trial of its only subscriber", ours)
    return out


def _note_absent(items: list[dict[str, Any]], known: Mapping[str, Any], required: list[str], log: MigrationLog,
                 name: str, where: str) -> None:
    for key in known:
        count = sum(1 for item in items if key not in item)
        if not count or (key not in required and count < len(items)):
            continue  # an optional figure some records hold (saturation: its trial only) was recorded
        how = ("null: not recorded in format 1" if key in required
               else f"left out: not recorded in format 1; format {FORMAT_VERSION} reads {_default_of(known[key])}")
        log.default(name, f"{where}.{key}", how, count)


def _default_of(f: Field[Any]) -> str:
    value = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
    return "it as not recorded" if value is None or value is ABSENT else f"{value!r}"


def _keep_complete(items: list[dict[str, Any]], required: list[str], log: MigrationLog, name: str,
                   where: str) -> list[dict[str, Any]]:
    """Disk cases as they are (the file holds every figure), without those that lack a figure every
    case must hold: such a case cannot be shown, and no figure is made up for it."""
    kept = [item for item in items if all(k in item for k in required)]
    if len(kept) < len(items):
        missing = sorted({k for item in items for k in required if k not in item})
        log.drop(name, where, f"cases without {', '.join(missing)} (format 2 and later need them to show a case)",
                 len(items) - len(kept))
    return kept


def _unfitted_cases(items: list[dict[str, Any]], log: MigrationLog, name: str, where: str) -> list[dict[str, Any]]:
    """The cases, those of format 1 measured at one size with their average where format 2 keeps it."""
    averages = [i for i, item in enumerate(items) if "bytes_per_event" in item
                and not {"fit_sizes", "fit_ok", "average_bytes_per_event"} & set(item)]
    out = list(items)
    for i in averages:
        out[i] = _unfitted_case(items[i])
    if averages:
        log.default(name, f"{where}.bytes_per_event", _AVERAGE_NOTE, len(averages))
    return out


def _unfitted_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """A one-size case of format 1 in format 2's terms: its average where format 2 keeps the average."""
    return {**case, "bytes_per_event": None, "average_bytes_per_event": case["bytes_per_event"],
            "fit_note": _NO_FIT_NOTE}


def _note_absent_results_keys(kind: str, results: Mapping[str, Any], log: MigrationLog, name: str) -> None:
    """Keys of the results table itself that format 2's producers add and format 1 did not record."""
    later = {"insertion": ("device_engine", "hosts"), "disk": ("reference",)}.get(kind, ())
    for key in later:
        if key not in results:
            log.default(name, f"results.{key}", "left out: not recorded in format 1 (its section or row is not shown)")


def summary_line(dest: Path, log: MigrationLog) -> str:
    """The one line `hdbbench migrate` prints."""
    files = sorted(p.name for p in dest.iterdir() if p.name in RESULTS_FILES)
    dropped = "; ".join(f"{d.file} {d.key}".strip() for d in log.dropped) or "nothing"
    return (f"wrote {dest} (results format {FORMAT_VERSION}: {', '.join(files) or 'no results files'}); "
            f"dropped: {dropped}; {len(log.defaulted)} note(s) on figures format {log.from_format} did not record "
            f"in {MIGRATION_FILE}")


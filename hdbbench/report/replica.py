# SPDX-License-Identifier: Apache-2.0
"""The report's section on reads from a replica (hdbbench.parts.replica_reads, ``replica.json``): per backend,
the archive's stored rate and event age without and with readers on a standby, and the readers'
query times."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding, fmt
from hdbbench.results.document import ResultsFormatError, read_kind
from hdbbench.results.replica import ReplicaReads, ReplicaResults

REPLICA_JSON = "replica.json"
NOTE = ("stored rate: rows counted on the primary at 1 Hz over the measured stretch, per-second rates' p1 / median "
        "and the mean; event age: the visibility lag of probe attributes' rows on the primary (hdbbench.trials.outside), "
        "p50 / p99 / max; query times: client time from sending a query to its last row, on a standby, each reader "
        "running the query set's queries in turn for the whole stretch; errors: queries the standby refused or "
        "cancelled (a conflict with the WAL it replays)")


def replica_section(run_dir: Path) -> Section | None:
    """The section, or None when the run has no replica reads (its scenario has no [replica_reads])."""
    path = run_dir / REPLICA_JSON
    if not path.exists():
        return None
    section = Section("replica", "Reads from a replica")
    try:
        trials = read_kind(path, ReplicaResults).results.trials
    except ResultsFormatError as exc:
        section.missing = str(exc)
        return section
    if not trials:
        section.missing = "replica.json holds no trial (the run ended before the first)."
        return section
    section.tables.append(_archive_table(trials))
    for t in trials:
        if t.queries:
            section.tables.append(_query_table(t))
    section.note = NOTE
    section.finding = _finding(trials)
    return section


def _ms(value: Any) -> str:
    return "–" if value is None else f"{float(value) * 1000:.0f}"


def _archive_table(trials: Sequence[ReplicaReads]) -> str:
    head = ["backend", "readers", "stored rows/s p1 / p50 / mean", "event age p50 / p99 / max (ms)", "result"]
    rows = []
    for t in trials:
        for readers, figures in ((0, t.without), (t.readers, t.with_readers)):
            rates = " / ".join(fmt(figures.get(k)) for k in ("stored_rate_p1", "stored_rate_p50", "stored_rate_mean"))
            ages = " / ".join(_ms(figures.get(k)) for k in ("age_p50_s", "age_p99_s", "age_max_s"))
            rows.append([t.backend, str(readers), rates, ages, f"failed: {t.error}" if t.error else "ok"])
    return html_table(head, rows, "archiving at the offered rate, without and with readers on a standby")


def _query_table(t: ReplicaReads) -> str:
    head = ["query", "runs", "errors", "rows", "p50 (ms)", "p95 (ms)", "max (ms)"]
    rows = [[q.name, f"{q.runs:,}", f"{q.errors:,}", f"{q.rows:,}", _ms(q.p50_s), _ms(q.p95_s), _ms(q.max_s)]
            for q in t.queries]
    return html_table(head, rows, f"{t.backend}: query times on the standby ({t.readers} reader(s), {t.duration_s:g} s)")


def _ratio(a: Mapping[str, Any], b: Mapping[str, Any], key: str) -> float | None:
    x, y = a.get(key), b.get(key)
    return float(y) / float(x) if x and y is not None else None


def _finding(trials: Sequence[ReplicaReads]) -> Finding:
    finding = Finding()
    for t in trials:
        if t.error:
            finding.warnings.append(f"replica reads on {t.backend} did not complete: {t.error}")
            continue
        rate = _ratio(t.without, t.with_readers, "stored_rate_p50")
        age = _ratio(t.without, t.with_readers, "age_p99_s")
        runs = sum(q.runs for q in t.queries)
        finding.sentences.append(
            f"On {t.backend}, {t.readers} reader(s) on a standby ran {runs:,} queries in {t.duration_s:g} s; the "
            f"primary's median stored rate with them was {fmt(rate)}× and its event age p99 {fmt(age)}× the "
            "same without readers.")
        if errors := sum(q.errors for q in t.queries):
            finding.warnings.append(f"{errors:,} queries on the standby of {t.backend} failed (first: "
                                    f"{next(q.first_error for q in t.queries if q.first_error)})")
    return finding

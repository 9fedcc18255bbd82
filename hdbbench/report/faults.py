# SPDX-License-Identifier: Apache-2.0
"""The report's faults section: what each fault lost, why, and how long the archive took to recover.

faults.json (the faults part of ``hdbbench run``, hdbbench.parts.faults) holds one `FaultTrial` per backend,
subscriber kind and fault; ``faults-series-<label>.csv`` its 1 Hz samples. The section shows, in
this order: the events lost per fault and backend stacked by reason; per fault, the rate stored in
the database around the fault with its window shaded; the fault table (emitted / stored / lost by
reason / duplicates / the window with nothing stored / caught up / recovery / a cluster fault's replication lag / a device kill's resumption / peak memory against capacity), folded away and also written as
``faults-table.csv``; a sentence per failure (a database fault that lost events, a loss without a
reason, a trial that did not recover or did not complete) and the definitions used.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from hdbbench.model.units import human_bytes
from hdbbench.parts.faults.accounting import REASONS
from hdbbench.report import data
from hdbbench.report.plots import PALETTE, Colours, to_svg
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding, fmt
from hdbbench.results.document import ResultsFormatError, read_kind
from hdbbench.results.faults import FaultsResults, FaultTrial

FAULTS_JSON = "faults.json"
REASON_COLOURS = dict(zip(REASONS, (*PALETTE[:len(REASONS) - 1], "#000000")))  # unattributed in black
RECOVERY = ("recovery: from the fault's end to the first 1 Hz sample at which the database holds as many rows "
            "as the devices had emitted at the end minus the trial's final loss (every event emitted before the "
            "end that will be stored is stored; a spool replayed out of order can make it read early)")
REASON_NOTE = ("lost = emitted (device counters) − stored (rows, distinct per attribute and time), per attribute; "
               "a kill's loss is split at the instant the counters were sampled just before it, by the events' "
               "timestamps: before = in the subscriber's memory / in flight out of the device, after = emitted "
               "while the subscriber was down / before it subscribed again; spool_full and queue_full are our "
               "subscriber's own counts; unattributed = the rest, a failure.")
STALL_NOTE = ("nothing stored: the longest time between two 1 Hz samples at which the stored count grew, from "
              "just before the fault's begin to the load's stop (1 s: archiving never stopped); caught up: from the "
              "fault's begin to the sample from which on the back-log (emitted − stored − lost) stays no larger than "
              "before the fault plus one second of the offered rate (0: it never fell behind); a cluster's faults count the rows on "
              "a standby while no primary answers")
LAG_NOTE = ("replication lag (a cluster's faults): the largest lag of a standby behind the primary in bytes of WAL, "
            "as Patroni's REST API (/cluster) reports it, over the trial's 1 Hz samples, and just before the fault; "
            "coarse: each standby's position as its Patroni last wrote it (every 2 s)")
RESUME_NOTE = ("resumed (device_kill): attributes of the restarted server with an event stored stamped after the "
               "restart, counted after the drain; time to resume: from the restart to the poll (every 0.5 s) that "
               "first saw such a row, p50 and max over its attributes (includes each attribute's own period); "
               "silent before: attributes that had emitted but had no event stored from the load's start to the "
               "kill, and how many of them resumed")


def faults_section(run_dir: Path, colours: Colours) -> Section | None:
    """The section, or None when the run has no faults part (its scenario has no [faults])."""
    path = run_dir / FAULTS_JSON
    if not path.exists():
        return None
    section = Section("faults", "Faults under load")
    try:
        trials = read_kind(path, FaultsResults).results.trials
    except ResultsFormatError as exc:
        section.missing = str(exc)
        return section
    if not trials:
        section.missing = "faults.json holds no trial (the run ended before the first fault)."
        return section
    section.figures.append(("Events lost per fault and backend, by reason (0 everywhere is the goal for the "
                            "database faults)", _loss_bars(trials)))
    for fault in dict.fromkeys(t.fault for t in trials):
        of_fault = [t for t in trials if t.fault == fault]
        section.figures.append((f"{fault}: rows stored per second (solid) and events emitted per second (dotted) "
                                f"since the fault began; shaded: the fault", _rates(run_dir, of_fault, colours)))
    section.tables.append(_folded(trials))
    section.note = f"{RECOVERY}; {STALL_NOTE}. {REASON_NOTE}" + (
        f" {LAG_NOTE}." if any(t.lag_bytes_max is not None for t in trials) else "") + (
        f" {RESUME_NOTE}." if any(t.killed_server is not None for t in trials) else "")
    section.finding = _finding(trials)
    return section


def _label(t: FaultTrial, kinds: int) -> str:
    return f"{t.fault}\n{t.backend}" + (f"\n{t.kind}" if kinds > 1 else "")


def _loss_bars(trials: Sequence[FaultTrial]) -> str:
    kinds = len({t.kind for t in trials})
    fig = Figure(figsize=(max(5.2, 0.55 * len(trials) + 2), 3.4), layout="constrained")
    ax = fig.add_subplot()
    bottoms = [0.0] * len(trials)
    for reason in REASONS:
        heights = [float(t.lost_by_reason.get(reason, 0)) for t in trials]
        if any(heights):
            ax.bar(range(len(trials)), heights, 0.7, bottom=bottoms, label=reason, color=REASON_COLOURS[reason])
            bottoms = [b + h for b, h in zip(bottoms, heights)]
    for i, t in enumerate(trials):
        if t.error:
            ax.text(i, 0, "failed", rotation=90, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(trials)), [_label(t, kinds) for t in trials], rotation=60, ha="right", fontsize=6)
    ax.set_ylabel("events lost")
    if any(bottoms):
        ax.legend(loc="best", fontsize=7)
    return to_svg(fig)


def _rates(run_dir: Path, trials: Sequence[FaultTrial], colours: Colours) -> str:
    fig = Figure(figsize=(5.2, 2.9), layout="constrained")
    ax = fig.add_subplot()
    hold = max((t.hold_s for t in trials), default=0.0)
    for t in trials:
        series = data.read_series(run_dir / f"faults-series-{t.label}.csv")
        began = t.marks.get("began")
        if began is None:
            continue
        name = t.backend if len({x.kind for x in trials}) == 1 else f"{t.backend} {t.kind}"
        for column, style in (("db.stored", "-"), ("dev.emitted", ":")):
            points = _per_second(series.get("clock.wall", []), series.get(column, []), began)
            ax.plot([p[0] for p in points], [p[1] for p in points], linestyle=style, color=colours[t.backend],
                    label=name if style == "-" else None)
    ax.axvspan(0, hold, color="grey", alpha=0.15, label="fault")
    ax.set_xlabel("time since the fault began (s)")
    ax.set_ylabel("events/s")
    ax.legend(loc="best", fontsize=7)
    return to_svg(fig)


def _per_second(times: Sequence[float], counts: Sequence[float], origin: float) -> list[tuple[float, float]]:
    """A counter's rate between consecutive samples, at the later one (NaN columns left out)."""
    pairs = [(t, c) for t, c in zip(times, counts) if t == t and c == c]
    return [(t1 - origin, (c1 - c0) / (t1 - t0)) for (t0, c0), (t1, c1) in zip(pairs, pairs[1:]) if t1 > t0]


def _memory(t: FaultTrial) -> str:
    peak = human_bytes(t.peak_memory_bytes) if t.peak_memory_bytes else "–"
    if t.memory_queue_max is not None and t.memory_queue_capacity:
        return f"{peak}; queue max {t.memory_queue_max:,.0f} / {t.memory_queue_capacity:,.0f}"
    return f"{peak}; capacity {t.queue_capacity:,} events" if t.queue_capacity is not None else peak


def _resumed(t: FaultTrial) -> str:
    """A device kill's resumption in one cell: resumed of its attributes, time to resume p50 / max."""
    if t.killed_server is None or t.killed_attributes is None or t.never_resumed is None:
        return "–"
    silent = f"; silent before: {t.silent_resumed or 0:,} of {t.silent_before_kill:,}" if t.silent_before_kill else ""
    return (f"{t.killed_server}: {t.killed_attributes - t.never_resumed:,} of {t.killed_attributes:,}; "
            f"p50/max {fmt(t.resume_p50_s)}/{fmt(t.resume_max_s)} s{silent}")


def _lag(t: FaultTrial) -> str:
    """A cluster fault's replication lag in one cell: the largest sampled, and at the fault's begin."""
    if t.lag_bytes_max is None and t.lag_bytes_at_begin is None:
        return "–"
    return " / ".join(human_bytes(v) if v is not None else "–" for v in (t.lag_bytes_max, t.lag_bytes_at_begin))


def _spool(t: FaultTrial) -> str:
    """Our subscriber's spool settings; "–" for a kind without our spool."""
    return "–" if t.spool_mode is None else f"{t.spool_mode}, sync {t.spool_sync_ms} ms"


def _folded(trials: Sequence[FaultTrial]) -> str:
    shown = [r for r in REASONS if any(t.lost_by_reason.get(r) for t in trials)] or ["unattributed"]
    resumes = any(t.killed_server is not None for t in trials)
    lags = any(t.lag_bytes_max is not None or t.lag_bytes_at_begin is not None for t in trials)
    head = ["fault", "backend", "kind", "spool", "emitted", "stored", "lost", *shown, "duplicates",
            "nothing stored (s)", "caught up (s)", "recovery (s)",
            *(["replication lag max / at begin"] if lags else []),
            *(["resumed after the restart"] if resumes else []), "peak memory vs capacity", "result"]
    rows = []
    for t in trials:
        verdict = "failed" if t.problems() else "ok"
        rows.append([t.fault, t.backend, t.kind, _spool(t), f"{t.emitted:,}",
                     f"{t.stored:,}", f"{t.lost:,}", *(f"{t.lost_by_reason.get(r, 0):,}" for r in shown),
                     f"{t.duplicates:,}", *(fmt(v) if v is not None else "–" for v in
                                            (t.write_stall_s, t.caught_up_s, t.recovery_s)),
                     *([_lag(t)] if lags else []), *([_resumed(t)] if resumes else []), _memory(t), verdict])
    table = html_table(head, rows, "every fault trial; also faults-table.csv in the run directory")
    return f"<details><summary>The fault table ({len(trials)} trials)</summary>{table}</details>"


def _finding(trials: Sequence[FaultTrial]) -> Finding:
    finding = Finding()
    database = [t for t in trials if t.database_fault and not t.error]
    if database:
        lossless = [t for t in database if t.lost == 0]
        finding.sentences.append(f"{len(lossless)} of {len(database)} database fault trials lost no event.")
    kills = [t for t in trials if t.fault in ("subscriber_kill", "device_kill") and not t.error]
    for t in kills:
        reasons = ", ".join(f"{v:,} {k.replace('_', ' ')}" for k, v in t.lost_by_reason.items()) or "nothing"
        spool = f" (spool {_spool(t)})" if t.spool_mode is not None else ""
        finding.sentences.append(f"{t.fault} on {t.backend} ({t.kind}) lost {t.lost:,} of {t.emitted:,} events: "
                                 f"{reasons}{spool}.")
        if t.killed_server is not None and t.killed_attributes is not None and t.never_resumed is not None:
            finding.sentences.append(
                f"After {t.killed_server} was restarted ({t.backend}, {t.kind}), {t.killed_attributes - t.never_resumed:,}"
                f" of its {t.killed_attributes:,} attributes resumed (time to resume p50 {fmt(t.resume_p50_s)} s, "
                f"max {fmt(t.resume_max_s)} s)" + (
                    f"; {t.silent_resumed or 0:,} of the {t.silent_before_kill:,} that were silent before the kill "
                    "resumed." if t.silent_before_kill else "."))
    recovered = [t.recovery_s for t in trials if t.recovery_s is not None]
    if recovered:
        finding.sentences.append(f"Recovery took {min(recovered):.1f} to {max(recovered):.1f} s after a fault's end.")
    finding.warnings.extend(problem for t in trials for problem in t.problems())
    return finding


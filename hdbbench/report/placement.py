# SPDX-License-Identifier: Apache-2.0
"""The report's placement section: the CPUs each component group was asked for and had (as observed
during each backend's throughput trial), and the archiving path's CPU per core it ran on."""

from __future__ import annotations

from collections.abc import Mapping

from hdbbench.report.data import Insertion, num
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding, fmt
from hdbbench.results.trials import ArchivingPath, PlacementRecord
from hdbbench.stack.placement import GROUPS


def placement_section(view: Insertion) -> Section:
    section = Section("placement", "CPU placement")
    records = {b: t.placement for b in view.backends if (t := view.one(b, "throughput")) and t.placement}
    if not records:
        section.missing = "No placement record in this run (runs before CPU placement was recorded)."
        return section
    first = next(iter(records.values()))
    requested = first.requested
    rows = []
    for group in GROUPS:
        observed = [_cpus(r, group) for r in records.values()]
        if not any(observed) and group not in requested:
            continue
        rows.append([group, requested.get(group, "every CPU" if requested else "not pinned"),
                     ", ".join(f"{b}: {o or '–'}" for b, o in zip(records, observed)),
                     str(max(len(r.observed[group].processes) if group in r.observed else 0
                             for r in records.values()))])
    section.tables.append(html_table(["group", "requested CPUs", "observed CPUs (union over processes and threads)",
                                      "processes"], rows,
                                     f"CPU affinity per group, read back from the kernel during each throughput "
                                     f"trial; the machine's CPUs: {first.machine_cpus}"))
    per_core = {b: r.archiving_path for b, r in records.items()}
    rows = [[b, p.cores if p else "–", fmt(num(p.us_per_event) if p else None),
             fmt(num(p.us_per_event_per_core) if p else None), _share(num(p.utilisation_per_core) if p else None)]
            for b, p in per_core.items()]
    section.tables.append(html_table(
        ["backend", "cores of the archiving path", "µs per event", "µs per event per core", "busy share per core"],
        rows, "the archiving path (subscribers + the backend's database server) over the cores it ran on"))
    section.finding = _finding(requested, per_core, records)
    return section


def _cpus(record: PlacementRecord, group: str) -> str | None:
    """The CPUs a group was observed on (the union over its processes and threads), if observed."""
    return record.observed[group].cpus if group in record.observed else None


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _finding(requested: Mapping[str, str], per_core: Mapping[str, ArchivingPath | None],
             records: Mapping[str, PlacementRecord]) -> Finding:
    mismatched = [f"{group} ({b}: {_cpus(r, group)} instead of {cpus})"
                  for group, cpus in requested.items() for b, r in records.items()
                  if _cpus(r, group) not in (None, cpus)]
    if not requested:
        words = ("No group was pinned: devices, subscribers and databases shared every CPU, so the archiving "
                 "path's figures include what the devices took from it.")
    elif mismatched:
        words = "The observed affinity differs from the request for " + "; ".join(mismatched) + "."
    else:
        given = ", ".join(f"{g} {c}" for g, c in requested.items())
        words = f"Every group ran on the CPUs it was given ({given})."
    shares = {b: share for b, p in per_core.items() if p and (share := num(p.utilisation_per_core)) is not None}
    busiest = max(shares.items(), key=lambda item: item[1], default=None)
    if busiest:
        words += (f" The archiving path kept its cores busiest on {busiest[0]} ({busiest[1]:.0%} per core at the "
                  f"throughput trial's rate).")
    advice = ("Compare with a run without placement (hdbbench compare)." if requested else
              "Pin the devices away from the archiving path (--cpus) to measure the archiver, not the simulator.")
    return Finding([words], recommendation=advice)

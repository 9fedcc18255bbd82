# SPDX-License-Identifier: Apache-2.0
"""The report's placement section: the CPUs each component group was asked for and had (as observed
during each backend's throughput trial), and the archiving path's CPU per core it ran on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hdbbench.placement import GROUPS
from hdbbench.report.data import Insertion, dig, num
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import Finding, fmt


def placement_section(view: Insertion) -> Section:
    section = Section("placement", "CPU placement")
    trials = {b: t.trial for b in view.backends if (t := view.one(b, "throughput")) and t.trial.get("placement")}
    if not trials:
        section.missing = "No placement record in this run (runs before CPU placement was recorded)."
        return section
    first = next(iter(trials.values()))["placement"]
    requested: Mapping[str, str] = first.get("requested") or {}
    rows = []
    for group in GROUPS:
        observed = [dig(t, "placement", "observed", group, "cpus") for t in trials.values()]
        if not any(observed) and group not in requested:
            continue
        rows.append([group, requested.get(group, "every CPU" if requested else "not pinned"),
                     ", ".join(f"{b}: {o or '–'}" for b, o in zip(trials, observed)),
                     str(max(len(dig(t, "placement", "observed", group, "processes") or []) for t in trials.values()))])
    section.tables.append(html_table(["group", "requested CPUs", "observed CPUs (union over processes and threads)",
                                      "processes"], rows,
                                     f"CPU affinity per group, read back from the kernel during each throughput "
                                     f"trial; the machine's CPUs: {first.get('machine_cpus', '?')}"))
    per_core = {b: t["placement"].get("archiving_path") or {} for b, t in trials.items()}
    rows = [[b, str(p.get("cores", "–")), fmt(num(p.get("us_per_event"))), fmt(num(p.get("us_per_event_per_core"))),
             _share(num(p.get("utilisation_per_core")))] for b, p in per_core.items()]
    section.tables.append(html_table(
        ["backend", "cores of the archiving path", "µs per event", "µs per event per core", "busy share per core"],
        rows, "the archiving path (subscribers + the backend's database server) over the cores it ran on"))
    section.finding = _finding(requested, per_core, trials)
    return section


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _finding(requested: Mapping[str, str], per_core: Mapping[str, Mapping[str, Any]],
             trials: Mapping[str, Mapping[str, Any]]) -> Finding:
    mismatched = [f"{group} ({b}: {dig(t, 'placement', 'observed', group, 'cpus')} instead of {cpus})"
                  for group, cpus in requested.items() for b, t in trials.items()
                  if dig(t, "placement", "observed", group, "cpus") not in (None, cpus)]
    if not requested:
        words = ("No group was pinned: devices, subscribers and databases shared every CPU, so the archiving "
                 "path's figures include what the devices took from it.")
    elif mismatched:
        words = "The observed affinity differs from the request for " + "; ".join(mismatched) + "."
    else:
        given = ", ".join(f"{g} {c}" for g, c in requested.items())
        words = f"Every group ran on the CPUs it was given ({given})."
    shares = {b: share for b, p in per_core.items() if (share := num(p.get("utilisation_per_core"))) is not None}
    busiest = max(shares.items(), key=lambda item: item[1], default=None)
    if busiest:
        words += (f" The archiving path kept its cores busiest on {busiest[0]} ({busiest[1]:.0%} per core at the "
                  f"throughput trial's rate).")
    advice = ("Compare with a run without placement (hdbbench compare)." if requested else
              "Pin the devices away from the archiving path (--cpus) to measure the archiver, not the simulator.")
    return Finding([words], recommendation=advice)

# SPDX-License-Identifier: Apache-2.0
"""The report's "Hosts" section: which host ran each component, and the event age the network adds.

Shown for runs whose components were on several hosts (results ``hosts.distributed``). Event age at
reception (reception time − source timestamp) is where the path from the device's host to the
subscriber's host shows: compare two runs (``hdbbench compare``) to see the effect of a link.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hdbbench.report.data import Insertion, dig, num
from hdbbench.report.render import Section, html_table
from hdbbench.servers.registry import hosts_keys
from hdbbench.report.text import fmt


def hosts_section(document: Mapping[str, Any] | None, view: Insertion | None) -> Section | None:
    hosts = dig(document or {}, "results", "hosts")
    if not isinstance(hosts, Mapping) or not hosts.get("distributed"):
        return None
    section = Section("hosts", "Hosts")
    rows = [[name, str(hosts.get(name))] for name in (*hosts_keys(), "controller") if name in hosts]
    rows += [[f"device server {inst}", str(addr)] for inst, addr in (hosts.get("device_servers") or {}).items()]
    rows += [[f"subscriber {dev}", str(addr)] for dev, addr in (hosts.get("subscribers") or {}).items()]
    section.tables.append(html_table(["component", "host"], rows, "each component bound and was reached there"))
    if view is not None:
        ages = []
        for backend in view.backends:
            trial = view.one(backend, "throughput")
            if trial is None:
                continue
            ages.append([backend,
                         fmt(num(dig(trial.trial, "event_age_at_reception_s", "p50"))),
                         fmt(num(dig(trial.trial, "event_age_at_reception_s", "p99"))),
                         fmt(num(dig(trial.trial, "event_age_at_commit_s", "p50"))),
                         fmt(num(dig(trial.trial, "event_age_at_commit_s", "p99")))])
        if ages:
            section.tables.append(html_table(
                ["backend", "age at reception p50 (s)", "p99 (s)", "age at commit p50 (s)", "p99 (s)"], ages,
                "throughput trial; the device-to-subscriber path adds to the age at reception"))
    section.note = f"CPU sampled: {hosts.get('cpu_sampled', 'unknown')}."
    return section

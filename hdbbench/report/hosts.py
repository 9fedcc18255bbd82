# SPDX-License-Identifier: Apache-2.0
"""The report's "Hosts" section: which host ran each component, and the event age the network adds.

Shown for runs whose components were on several hosts (results ``hosts.distributed``). Event age at
reception (reception time − source timestamp) is where the path from the device's host to the
subscriber's host shows: compare two runs (``hdbbench compare``) to see the effect of a link.
"""

from __future__ import annotations

from collections.abc import Mapping

from hdbbench.report.data import Insertion, num
from hdbbench.report.render import Section, html_table
from hdbbench.report.text import fmt
from hdbbench.results.trials import InsertionResults

# The keys of results ``hosts`` (hdbbench.scenario.hosts.describe) that are not one component's host.
_NOT_A_COMPONENT = ("distributed", "device_servers", "subscribers", "cpu_sampled")


def hosts_section(results: InsertionResults | None, view: Insertion | None) -> Section | None:
    hosts = results.hosts if results is not None else None
    if not isinstance(hosts, Mapping) or not hosts.get("distributed"):
        return None
    section = Section("hosts", "Hosts")
    # The stack's servers and the controller, in the order the run recorded them.
    rows = [[name, str(address)] for name, address in hosts.items() if name not in _NOT_A_COMPONENT]
    rows += [[f"device server {inst}", str(addr)] for inst, addr in (hosts.get("device_servers") or {}).items()]
    rows += [[f"subscriber {dev}", str(addr)] for dev, addr in (hosts.get("subscribers") or {}).items()]
    section.tables.append(html_table(["component", "host"], rows, "each component bound and was reached there"))
    if view is not None:
        ages = [[backend, fmt(num(t.event_age_at_reception_s.p50)), fmt(num(t.event_age_at_reception_s.p99)),
                 fmt(num(t.event_age_at_commit_s.p50)), fmt(num(t.event_age_at_commit_s.p99))]
                for backend in view.backends if (t := view.one(backend, "throughput")) is not None]
        if ages:
            section.tables.append(html_table(
                ["backend", "age at reception p50 (s)", "p99 (s)", "age at commit p50 (s)", "p99 (s)"], ages,
                "throughput trial; the device-to-subscriber path adds to the age at reception"))
    section.note = f"CPU sampled: {hosts.get('cpu_sampled', 'unknown')}."
    return section

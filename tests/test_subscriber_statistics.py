# SPDX-License-Identifier: Apache-2.0
"""The statistic names are defined once (subscriber/src/statistics.def, read by the C++ shell) and the
Python module the harness uses is generated from it: fail when the two disagree."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

from hdbbench.subscribers import statistics as stats
from tests.harness import REPO

GENERATOR = REPO / "subscriber" / "tools" / "gen_statistics.py"
REFERENCE_ATTRIBUTES = ("AttributeNumber", "AttributeOkNumber", "AttributeNokNumber",
                        "AttributePendingNumber", "AttributeMaxPendingNumber", "AttributeStartedNumber", "AttributeMaxStoreTime",
                        "AttributeRecordFreq", "StatisticsResetTime", "AttributeTTLList")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_statistics", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_module_matches_the_definition() -> None:
    gen = _generator()
    expected = gen.render(gen.read_definitions())
    assert gen.MODULE.read_text() == expected, f"run python {GENERATOR.relative_to(REPO)} to regenerate"


def test_definition_holds_each_name_once_and_the_hdbpp_ones() -> None:
    names = [d[0] for d in _generator().read_definitions()]
    assert len(names) == len(set(names))
    assert set(REFERENCE_ATTRIBUTES) <= set(stats.HDBPP)
    assert not set(stats.HDBPP) & set(stats.OURS)
    assert "RowsStoredNumber" in stats.OURS and stats.ROWS_STORED_NUMBER == "RowsStoredNumber"


def test_no_statistic_name_is_spelled_in_the_harness() -> None:
    """The harness modules take the names from the generated module, never as string literals."""
    names = set(stats.HDBPP) | set(stats.HDBPP_NEWER) | set(stats.OURS)
    for module in ("trials/insertion.py", "subscribers/launcher.py"):
        text = (REPO / "hdbbench" / module).read_text()
        literals = set(re.findall(r'"(?:sub\.)?([A-Z][A-Za-z0-9]+)"', text))
        assert not literals & names, (module, literals & names)


def test_generator_reads_quoted_commas_and_casts() -> None:
    gen = _generator()
    assert gen.split_arguments('A, OURS, DOUBLE, "s", "x, y", static_cast<double>(s.a) / (1.0 * 2.0)') == [
        "A", "OURS", "DOUBLE", '"s"', '"x, y"', "static_cast<double>(s.a) / (1.0 * 2.0)"]
    assert gen.constant_name("AttributeTTLList") == "ATTRIBUTE_TTL_LIST"
    assert gen.constant_name("EventAgeAtCommitP50") == "EVENT_AGE_AT_COMMIT_P50"


def test_metric_names_follow_the_statistics_and_the_dashboard_queries_only_served_ones() -> None:
    """The Prometheus names (served by hdbbench-es and `hdbbench exporter`) are the attributes' names in
    snake case, prefixed by origin; the dashboard asks for no other metric (tests/test_metrics.py shows
    each of its queries answered by a real Prometheus)."""
    import json

    from hdbbench.subscribers import exporter

    assert stats.METRICS[stats.ATTRIBUTE_PENDING_NUMBER][0] == "hdbpp_attribute_pending_number"
    assert stats.METRICS[stats.ATTRIBUTE_RECORD_FREQ_INST][0] == "hdbpp_attribute_record_freq_inst"
    assert stats.ATTRIBUTE_TTL_LIST not in stats.METRICS  # spectra stay with Tango
    assert stats.METRICS[stats.ROWS_STORED_NUMBER][0] == "hdbbench_rows_stored_number"
    assert set(stats.METRICS) == stats.SCALARS
    for name, (metric, _) in stats.METRICS.items():
        assert metric.startswith("hdbbench_" if name in stats.OURS else "hdbpp_"), (name, metric)
    served = {metric for metric, _ in stats.METRICS.values()} | {exporter.UP_METRIC, exporter.STATE_METRIC}
    dashboard = json.loads((REPO / "dashboards" / "hdbpp-archivers.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    exprs += [v["query"]["query"] for v in dashboard["templating"]["list"]
              if isinstance(v.get("query"), dict)]
    queried = {m for e in exprs for m in re.findall(r"\b(?:hdbpp|hdbbench)_[a-z0-9_]+", e)}
    assert queried and queried <= served, queried - served

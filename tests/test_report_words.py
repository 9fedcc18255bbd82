# SPDX-License-Identifier: Apache-2.0
"""Words that do not overstate: the loss section covers every subscriber kind's trials, and no section
recommends one backend over another on figures the measurement cannot resolve."""

from __future__ import annotations

import pytest

from hdbbench.model.records import read
from hdbbench.report import text
from hdbbench.report.disk import DiskCase, disk_finding
from hdbbench.report.page import loss_section
from hdbbench.results.trials import TrialSummary
from tests.harness.synthetic import synthetic_trial


def _trial(backend: str, kind: str) -> TrialSummary:
    return read(TrialSummary, synthetic_trial(backend, f"throughput_{kind}", 1500.0, "throughput",
                                              subscriber_kind=kind))


def test_the_loss_section_counts_every_kinds_trials() -> None:
    trials = [_trial(b, k) for k in ("hdbbench-es", "hdbpp-es") for b in ("timescaledb", "mysql")]
    finding = loss_section(trials).finding
    assert finding is not None
    assert finding.sentences[0] == "4 trials of 2 subscriber kinds (hdbbench-es, hdbpp-es), 4,000 events emitted in all."
    assert finding.recommendation == "The no-loss claim holds for this run."


def test_a_loss_of_the_second_kind_fails_the_no_loss_claim() -> None:
    theirs = synthetic_trial("mysql", "throughput_hdbpp-es", 1500.0, "throughput", subscriber_kind="hdbpp-es",
                             accounting={"emitted": 1000, "stored": 990, "lost": 10, "duplicates": 0,
                                         "per_attribute": []})
    finding = loss_section([_trial("mysql", "hdbbench-es"), read(TrialSummary, theirs)]).finding
    assert finding is not None and "no-loss claim fails" in finding.recommendation


def _recommends_one(recommendation: str) -> bool:
    return "prefer" in recommendation or "leaves the most CPU" in recommendation


# Each section's figures within its resolution, then apart by more than it.
def test_the_lag_section_names_no_backend_within_its_resolution() -> None:
    within = text.lag({"mysql": 0.022, "postgresql": 0.023, "timescaledb": 0.026}, {}, {})
    assert not _recommends_one(within.recommendation)
    assert "no difference at this resolution between mysql, postgresql and timescaledb" in within.recommendation
    apart = text.lag({"mysql": 0.022, "timescaledb": 0.060}, {}, {})
    assert apart.recommendation == "Where freshness matters (alarms, live plots), prefer mysql."


def test_the_cpu_section_names_no_backend_within_its_resolution() -> None:
    assert not _recommends_one(text.cpu({"mysql": 50.0, "timescaledb": 53.0}).recommendation)
    assert _recommends_one(text.cpu({"mysql": 50.0, "timescaledb": 80.0}).recommendation)


def test_the_extraction_section_names_no_backend_within_its_resolution() -> None:
    within = text.extraction({"mysql": 0.00155, "postgresql": 0.00170}, {}, {})
    assert not _recommends_one(within.recommendation) and "no difference at this resolution" in within.recommendation
    assert "prefer mysql" in text.extraction({"mysql": 0.00155, "postgresql": 0.0030}, {}, {}).recommendation


def test_the_saturation_section_says_when_limits_are_within_the_search_resolution() -> None:
    within = text.saturation({"postgresql": 33636.0, "mysql": 31000.0, "timescaledb": 20000.0}, {},
                             {"postgresql": True, "mysql": True, "timescaledb": True},
                             precision={b: ("bisect", 0.10) for b in ("postgresql", "mysql", "timescaledb")})
    assert "no difference at this resolution between postgresql and mysql" in within.recommendation
    apart = text.saturation({"postgresql": 33636.0, "timescaledb": 20000.0}, {},
                            {"postgresql": True, "timescaledb": True},
                            precision={b: ("bisect", 0.10) for b in ("postgresql", "timescaledb")})
    assert "no difference" not in apart.recommendation


@pytest.mark.parametrize(("mysql", "timescaledb", "named"), [(30.0, 30.3, False), (30.0, 45.0, True)])
def test_the_disk_section_names_no_backend_within_its_resolution(mysql: float, timescaledb: float,
                                                                  named: bool) -> None:
    cases = [DiskCase(b, "pk", f"att_scalar_devdouble_ro_{b}", "devdouble", "scalar", "ro", 1, None, v, v, 0.0, 0.0,
                      100.0, 0.0, v, 1.0, 0.0, (10000, 20000), True, "")
             for b, v in (("mysql", mysql), ("timescaledb", timescaledb))]
    finding = disk_finding(cases, [("mysql", "pk"), ("timescaledb", "pk")], [])
    assert _recommends_one(finding.recommendation) is named


def test_the_subscriber_sweep_names_no_backend_within_its_resolution() -> None:
    within = text.subscriber_sweep({"mysql": [(1, 5000.0), (2, 9800.0)], "postgresql": [(1, 5000.0), (2, 10000.0)]},
                                   {}, {})
    assert "no difference at this resolution between postgresql and mysql" in within.recommendation
    apart = text.subscriber_sweep({"mysql": [(2, 6000.0)], "postgresql": [(2, 10000.0)]}, {}, {})
    assert apart.recommendation == "For several writers, postgresql stored most in this sweep."

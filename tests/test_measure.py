# SPDX-License-Identifier: Apache-2.0
"""The methodology's statistics on made-up series whose answers are known."""

from __future__ import annotations

import math

import pytest

from hdbbench.model import measure


def test_percentiles_match_linear_interpolation() -> None:
    values = [float(v) for v in range(1, 101)]
    assert measure.percentile(values, 50) == pytest.approx(50.5)
    assert measure.percentile(values, 1) == pytest.approx(1.99)
    assert measure.percentile(values, 99) == pytest.approx(99.01)
    dist = measure.distribution(values)
    assert (dist.count, dist.min, dist.max, dist.mean) == (100, 1.0, 100.0, 50.5)
    assert math.isnan(measure.distribution([]).median)


def test_rates_from_a_cumulative_counter_skip_resets() -> None:
    times = [0.0, 1.0, 2.0, 3.0, 4.5]
    counts = [0, 100, 300, 50, 200]  # reset between t=2 and t=3
    assert measure.rates_per_second(times, counts) == [(1.0, 100.0), (2.0, 200.0), (4.5, 100.0)]


def test_steady_part_drops_the_warm_up() -> None:
    series = [(float(t), float(t * 10)) for t in range(10)]
    assert measure.steady(series, 5.0) == [50.0, 60.0, 70.0, 80.0, 90.0]
    assert measure.steady(series, 2.0, 3.0) == [20.0, 30.0]


def test_log2_fit_gives_gain_per_doubling() -> None:
    batches = [64, 128, 256, 512, 1024]
    rates = [1000 + 500 * math.log2(b) for b in batches]
    fit = measure.fit_log2(batches, rates)
    assert fit.slope == pytest.approx(500)
    assert fit.r2 == pytest.approx(1.0)


def test_scaling_fit_finds_the_saturation_point() -> None:
    writers = [1, 2, 3, 4, 5, 6]
    rates = [10_000, 20_000, 30_000, 39_000, 41_000, 40_000]
    result = measure.fit_scaling(writers, rates)
    assert result.saturation_at == 5
    assert result.linear_up_to == 4
    assert result.fit.slope == pytest.approx(9_700, rel=0.05)
    assert measure.fit_scaling([1, 2, 3], [5, 10, 15]).saturation_at is None


def test_elettra_criterion() -> None:
    assert measure.elettra_saturated([10, 20, 30, 40, 50, 60, 70])          # 6 rises in a row
    assert not measure.elettra_saturated([10, 20, 30, 40, 50, 60])          # only 5
    assert not measure.elettra_saturated([100, 10, 20, 30, 40, 49, 50, 51])  # below half the peak
    assert not measure.elettra_saturated([5, 0, 5, 0, 5, 0, 5, 0, 5, 0])     # drains every time
    # a batch-sized oscillation that never drains below half its peak is not a growing queue
    assert not measure.elettra_saturated([200, 201, 30, 200, 168, 264, 159, 192, 200, 344, 198, 314, 250, 330])
    # a high-water mark that sets a new maximum every sample is
    assert measure.elettra_saturated([344, 344, 900, 2100, 3300, 4600, 5800, 7100])


def test_sustained_share() -> None:
    assert measure.sustained_share([100, 100, 99, 100], 100) == 0.75
    assert measure.sustained_share([100, 100, 99, 100], 100, slack=0.02) == 1.0
    assert measure.sustained_share([], 100) == 0.0

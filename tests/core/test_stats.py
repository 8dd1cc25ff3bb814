"""Confidence intervals (issues 16, 36): Clopper-Pearson for proportions, the betting interval
over units for bounded means, a BCa bootstrap for other statistics, and no interval from one
unit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap

from stancelab.core.stats.intervals import bootstrap_ci, bounded_cluster_ci, mean_ci, proportion_ci
from stancelab.report.model import Evidence, Profile, estimate_fields

EVIDENCE = Evidence(n="1 issue", ci="BCa", refusals="0 refusals", unparsed="0 unparsed")


def test_one_value_has_no_interval() -> None:
    estimate = bootstrap_ci([42.0])
    assert estimate.value == 42.0 and estimate.n == 1
    assert math.isnan(estimate.ci_low) and math.isnan(estimate.ci_high)
    assert math.isnan(proportion_ci([1.0]).ci_low)
    assert math.isnan(mean_ci([42.0], (0.0, 100.0)).ci_low)


def test_values_all_equal_have_no_bootstrap_interval() -> None:
    estimate = bootstrap_ci([3.0, 3.0, 3.0])
    assert estimate.value == 3.0 and math.isnan(estimate.ci_low)


def test_the_interval_is_scipys_bca() -> None:
    values = np.array([1.0, 4.0, 2.0, 8.0, 5.0, 7.0, 3.0, 9.0])
    expected = bootstrap((values,), np.mean, n_resamples=2000, method="BCa", rng=3)
    estimate = bootstrap_ci(values, seed=3)
    assert estimate.value == pytest.approx(values.mean())
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx(
        (expected.confidence_interval.low, expected.confidence_interval.high)
    )


def test_a_proportion_gets_the_exact_clopper_pearson_interval_even_when_all_agree() -> None:
    estimate = proportion_ci([100.0] * 6, scale=100)
    exact = binomtest(6, 6).proportion_ci(method="exact")
    assert estimate.value == 100.0
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx((exact.low * 100, 100.0))
    assert estimate.ci_low < 100.0  # never [100, 100]
    # two of two: Wilson's lower bound was 0.34, the exact one is 0.16
    assert proportion_ci([1.0, 1.0]).ci_low == pytest.approx(0.1581, abs=1e-4)


def test_a_headline_from_one_unit_says_no_ci_n_1() -> None:
    fields = estimate_fields({"value": 0.5, "ci_low": None, "ci_high": None, "n": 1}, 100)
    profile = Profile(probe="millstone", model="m", label="OM", unit="OM", meaning="",
                      evidence=EVIDENCE, **fields)  # fmt: skip
    assert profile.ci_text() == "no CI (n = 1)"
    assert profile.value_text() == "50.0"


def test_answers_of_one_unit_have_no_interval() -> None:
    """90 answers of one issue are one unit: a point, no interval (not a Wilson over 90)."""
    estimate = bounded_cluster_ci(np.r_[np.ones(60), np.zeros(30)], ["issue-1"] * 90, 0.0, 1.0)
    assert estimate.value == pytest.approx(2 / 3)
    assert estimate.n == 1 and math.isnan(estimate.ci_low) and math.isnan(estimate.ci_high)


def test_the_cluster_interval_is_over_units_not_answers() -> None:
    values = np.r_[np.ones(10), np.zeros(5), np.ones(3), np.zeros(12), np.ones(8), np.zeros(1)]
    units = ["a"] * 15 + ["b"] * 15 + ["c"] * 9
    estimate = bounded_cluster_ci(values, units, 0.0, 1.0)
    assert estimate.n == 3 and estimate.value == pytest.approx(21 / 39)
    assert estimate.ci_low < estimate.value < estimate.ci_high
    # wider than the interval that counts the same 39 answers as independent
    naive = bounded_cluster_ci(values, np.arange(values.size), 0.0, 1.0)
    assert estimate.ci_high - estimate.ci_low > naive.ci_high - naive.ci_low


def test_units_whose_means_are_equal_still_have_a_bounded_interval() -> None:
    estimate = bounded_cluster_ci([1.0, 0.0, 1.0, 0.0], ["a", "a", "b", "b"], 0.0, 1.0)
    assert estimate.value == 0.5 and estimate.n == 2
    assert 0.0 <= estimate.ci_low < 0.5 < estimate.ci_high <= 1.0

"""Confidence intervals through scipy (issue 16): BCa bootstrap, Wilson for proportions, and
no interval of zero width from one value or from values all equal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap

from stancelab.core.stats.intervals import bootstrap_ci, cluster_mean_ci, proportion_ci
from stancelab.report.model import Evidence, Profile, estimate_fields

EVIDENCE = Evidence(n="1 issue", ci="BCa", refusals="0 refusals", unparsed="0 unparsed")


def test_one_value_has_no_interval() -> None:
    estimate = bootstrap_ci([42.0])
    assert estimate.value == 42.0 and estimate.n == 1
    assert math.isnan(estimate.ci_low) and math.isnan(estimate.ci_high)
    assert math.isnan(proportion_ci([1.0]).ci_low)


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


def test_a_proportion_gets_a_wilson_interval_even_when_all_agree() -> None:
    estimate = proportion_ci([100.0] * 6, scale=100)
    wilson = binomtest(6, 6).proportion_ci(method="wilson")
    assert estimate.value == 100.0
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx((wilson.low * 100, 100.0))
    assert estimate.ci_low < 100.0  # never [100, 100]


def test_a_headline_from_one_unit_says_no_ci_n_1() -> None:
    fields = estimate_fields({"value": 0.5, "ci_low": None, "ci_high": None, "n": 1}, 100)
    profile = Profile(probe="millstone", model="m", label="OM", unit="OM", meaning="",
                      evidence=EVIDENCE, **fields)  # fmt: skip
    assert profile.ci_text() == "no CI (n = 1)"
    assert profile.value_text() == "50.0"


def test_answers_of_one_unit_have_no_interval() -> None:
    """90 answers of one issue are one unit: a point, no interval (not a Wilson over 90)."""
    estimate = cluster_mean_ci(np.r_[np.ones(60), np.zeros(30)], ["issue-1"] * 90)
    assert estimate.value == pytest.approx(2 / 3)
    assert estimate.n == 1 and math.isnan(estimate.ci_low) and math.isnan(estimate.ci_high)


def test_the_cluster_interval_resamples_units_with_scipy() -> None:
    values = np.r_[np.ones(10), np.zeros(5), np.ones(3), np.zeros(12), np.ones(8), np.zeros(1)]
    units = ["a"] * 15 + ["b"] * 15 + ["c"] * 9
    sums, counts = np.array([10.0, 3.0, 8.0]), np.array([15.0, 15.0, 9.0])
    expected = bootstrap((sums, counts), lambda s, c, axis=-1: s.sum(axis) / c.sum(axis),
                         paired=True, vectorized=True, n_resamples=2000, method="BCa", rng=0)  # fmt: skip
    estimate = cluster_mean_ci(values, units)
    assert estimate.n == 3 and estimate.value == pytest.approx(21 / 39)
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx(
        (expected.confidence_interval.low, expected.confidence_interval.high)
    )
    # wider than the answers-as-independent interval over the same 39 answers
    naive = bootstrap_ci(values)
    assert estimate.ci_high - estimate.ci_low > naive.ci_high - naive.ci_low


def test_units_whose_means_are_equal_have_no_cluster_interval() -> None:
    estimate = cluster_mean_ci([1.0, 0.0, 1.0, 0.0], ["a", "a", "b", "b"])
    assert estimate.value == 0.5 and estimate.n == 2 and math.isnan(estimate.ci_low)

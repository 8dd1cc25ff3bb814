"""Confidence intervals through scipy (issue 16): BCa bootstrap, Wilson for proportions, and
no interval of zero width from one value or from values all equal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap

from stancelab.core.stats import bootstrap_ci, proportion_ci
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
        (expected.confidence_interval.low, expected.confidence_interval.high))


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

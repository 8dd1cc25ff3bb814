"""`bounded_cluster_ci` (issues 24, 36): a bounded mean whose units all agree still has an
interval, never of zero width; one unit has none; outcomes one per unit get Clopper-Pearson,
everything else the betting interval over units (Waudby-Smith & Ramdas 2024)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stancelab.core.stats.intervals import (
    betting_ci,
    bounded_cluster_ci,
    clopper_pearson_ci,
    mean_ci,
)


def test_a_rate_of_zero_over_several_units_has_an_upper_bound_over_units() -> None:
    """0 refusals in 114 conversations of 38 topics: [0, an upper bound over 38 topics], no
    narrower than Clopper-Pearson over topics, far wider than over 114 conversations."""
    estimate = bounded_cluster_ci(np.zeros(114), [k // 3 for k in range(114)], 0.0, 1.0)
    assert (estimate.value, estimate.n, estimate.ci_low) == (0.0, 38, 0.0)
    assert clopper_pearson_ci(0, 38)[1] <= estimate.ci_high < 0.2
    one_per_unit = bounded_cluster_ci(np.zeros(38), np.arange(38), 0.0, 1.0)
    assert (one_per_unit.ci_low, one_per_unit.ci_high) == pytest.approx(clopper_pearson_ci(0, 38))


def test_one_unit_has_no_interval_and_two_always_have_one() -> None:
    one = bounded_cluster_ci([1.0, 0.0, 1.0], ["a"] * 3, 0.0, 1.0)
    assert one.n == 1 and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    two = bounded_cluster_ci([1.0, 1.0, 1.0, 1.0], ["a", "a", "b", "b"], 0.0, 1.0)
    assert two.n == 2 and 0.0 <= two.ci_low < two.ci_high == 1.0


def test_the_interval_of_a_pooled_mean_holds_its_point_and_its_bounds() -> None:
    values = [0.5, 0.5, 0.0, 1.0, 1.0, 1.0, -1.0]
    estimate = bounded_cluster_ci(values, ["a", "b", "c", "c", "d", "d", "e"], -1.0, 1.0)
    assert estimate.n == 5 and estimate.value == pytest.approx(3 / 7)
    assert -1.0 <= estimate.ci_low < estimate.value < estimate.ci_high <= 1.0


def test_the_betting_interval_does_not_depend_on_the_scale() -> None:
    rng = np.random.default_rng(4)
    shares = rng.random(12)
    low, high = betting_ci(shares, 0.0, 1.0)
    assert betting_ci(shares * 100, 0.0, 100.0) == pytest.approx((low * 100, high * 100))
    assert betting_ci(2 * shares - 1, -1.0, 1.0) == pytest.approx((2 * low - 1, 2 * high - 1))


def test_the_betting_interval_narrows_with_units_and_is_seeded() -> None:
    rng = np.random.default_rng(2)
    widths = []
    for n in (5, 20, 80):
        estimate = mean_ci(rng.random(n) * 100, (0.0, 100.0), seed=1)
        widths.append(estimate.ci_high - estimate.ci_low)
    assert widths[0] > widths[1] > widths[2]
    values = np.random.default_rng(3).random(15)
    assert mean_ci(values, (0.0, 1.0), seed=7) == mean_ci(values, (0.0, 1.0), seed=7)


def test_a_value_outside_its_bounds_is_an_error() -> None:
    with pytest.raises(ValueError, match="outside their bounds"):
        mean_ci([0.2, 1.5], (0.0, 1.0))

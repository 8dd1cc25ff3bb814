"""`bounded_cluster_ci` (issue 24): a bounded mean whose units all agree still has an interval,
the Wilson interval over units, never of zero width; one unit has none."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stancelab.core.stats.intervals import bounded_cluster_ci, cluster_mean_ci, wilson_ci


def test_a_rate_of_zero_over_several_units_has_the_wilson_upper_bound_over_units() -> None:
    """0 refusals in 114 conversations of 38 topics: [0, Wilson upper of 0 of 38 topics]."""
    estimate = bounded_cluster_ci(np.zeros(114), [k // 3 for k in range(114)], 0.0, 1.0)
    assert (estimate.value, estimate.n) == (0.0, 38)
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx(wilson_ci(0, 38))
    assert estimate.ci_high > 0


def test_one_unit_has_no_interval_and_mixed_units_get_the_cluster_bootstrap() -> None:
    one = bounded_cluster_ci([1.0, 0.0, 1.0], ["a"] * 3, 0.0, 1.0)
    assert one.n == 1 and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    values, units = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0], list("aabbccd")
    assert bounded_cluster_ci(values, units, 0.0, 1.0) == cluster_mean_ci(values, units)


def test_equal_interior_unit_means_put_the_rest_at_the_bounds() -> None:
    estimate = bounded_cluster_ci([0.5, 0.5, 0.0, 1.0], ["a", "b", "c", "c"], -1.0, 1.0)
    low = wilson_ci(3, 3)[0]
    assert estimate.n == 3
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx(
        (0.5 * low - (1 - low), 0.5 * low + (1 - low))
    )

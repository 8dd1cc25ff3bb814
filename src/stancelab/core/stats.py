"""Statistics shared by every method: bootstrap confidence intervals and correlations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a percentile-bootstrap confidence interval."""

    value: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] = np.mean,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """Statistic of `values` with a percentile bootstrap CI (resampling the values).

    NaNs are dropped first. With no values the estimate is NaN; with one value
    the interval collapses to that value.
    """
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    point = float(statistic(data))
    if data.size == 1:
        return Estimate(point, point, point, 1)
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, data.size, size=(resamples, data.size))
    replicates = np.array([statistic(data[row]) for row in indices])
    alpha = (1 - level) / 2
    low, high = np.quantile(replicates, [alpha, 1 - alpha])
    return Estimate(point, float(low), float(high), int(data.size))


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson correlation over pairs where both are present; NaN if undefined."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if a.size < 3 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])

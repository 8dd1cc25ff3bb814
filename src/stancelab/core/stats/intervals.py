"""Statistics shared by every method: confidence intervals (scipy) and correlations.

A proportion of independent outcomes gets a Wilson interval (`proportion_ci`); any other
mean a BCa bootstrap interval (`bootstrap_ci`, `scipy.stats.bootstrap`), percentile where
BCa is undefined. Where answers repeat within a unit (an issue's templates, a topic's
conversations), `cluster_mean_ci` resamples the units, not the answers (a cluster bootstrap:
the pooled mean as a ratio of per-unit sums, resampled in pairs by scipy). There is no
interval from fewer than two units, nor a bootstrap one from values that are all equal, nor
one of zero width: those estimates carry NaN bounds, shown as "no CI (...)". A bounded mean
(a share, a signed score) whose units all agree still has one (`bounded_cluster_ci`: the
Wilson interval of that share of units, the rest put at the bounds)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import DegenerateDataWarning, binomtest, bootstrap, pearsonr

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval (NaN bounds: none can be given)."""

    value: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


def no_ci_reason(n: int | None, value: float | None = None) -> str:
    """Why an estimate has no interval, as the report and the CLI show it."""
    if n is None or value is None or (isinstance(value, float) and math.isnan(value)):
        return "no CI (not measured)"
    return f"no CI (n = {n})" if n < 2 else "no CI (all values equal)"


def not_measured(unusable: int, total: int, noun: str, problem: str) -> str:
    """Why a headline is not measured ("not measured: 6 of 6 judge verdicts unparsed") when
    more than half of its answers are unusable or there are none; empty when it is."""
    if total <= 0:
        return f"not measured: no {noun}"
    if 2 * unusable > total:
        return f"not measured: {unusable} of {total} {noun} {problem}"
    return ""


def wilson_ci(successes: int, n: int, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Wilson score interval of a proportion (scipy)."""
    interval = binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
    return float(interval.low), float(interval.high)


def _bootstrap(data: np.ndarray, statistic: Callable[[np.ndarray], float], resamples: int,
               level: float, seed: int) -> tuple[float, float]:  # fmt: skip
    """BCa bootstrap interval, percentile where BCa is undefined (NaN bounds)."""

    def stat(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.apply_along_axis(statistic, axis, sample)

    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            result = bootstrap((data,), np.mean if statistic is np.mean else stat, n_resamples=resamples,
                               confidence_level=level, method=method, rng=seed,
                               vectorized=True)  # fmt: skip
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if not (math.isnan(low) or math.isnan(high)):
            return (low, high) if high > low else (math.nan, math.nan)
    return math.nan, math.nan


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] = np.mean,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """Statistic of `values` with a BCa bootstrap CI. NaNs are dropped; fewer than two values,
    or values all equal, give NaN bounds rather than an interval of zero width."""
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    point = float(statistic(data))
    if data.size < 2 or np.all(data == data[0]):
        return Estimate(point, math.nan, math.nan, int(data.size))
    low, high = _bootstrap(data, statistic, resamples, level, seed)
    return Estimate(point, low, high, int(data.size))


def _ratio_of_sums(numerators: np.ndarray, denominators: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.sum(numerators, axis=axis) / np.sum(denominators, axis=axis)


def cluster_mean_ci(
    values: Sequence[float] | np.ndarray,
    units: Sequence[object] | np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """Mean of `values` pooled over every answer, with a cluster-bootstrap CI that resamples
    the `units` (one label per value: the issue, topic, statement or claim each answer belongs
    to), never the answers within them. `n` counts units. NaN values are dropped; fewer than two
    units, or units whose means are all equal, give NaN bounds."""
    data = np.asarray(values, dtype=float)
    labels = np.asarray(units, dtype=object)
    if data.shape != labels.shape:
        raise ValueError(f"cluster_mean_ci: {data.size} values but {labels.size} unit labels")
    keep = ~np.isnan(data)
    data, labels = data[keep], labels[keep]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    _, codes = np.unique(labels.astype(str), return_inverse=True)
    sums = np.bincount(codes, weights=data)
    counts = np.bincount(codes).astype(float)
    point = float(sums.sum() / counts.sum())
    means = sums / counts
    if sums.size < 2 or np.all(means == means[0]):
        return Estimate(point, math.nan, math.nan, int(sums.size))
    low, high = math.nan, math.nan
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            result = bootstrap((sums, counts), _ratio_of_sums, paired=True, vectorized=True,
                               n_resamples=resamples, confidence_level=level, method=method,
                               rng=seed)  # fmt: skip
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if not (math.isnan(low) or math.isnan(high)):
            break
    if math.isnan(low) or math.isnan(high) or high <= low:
        return Estimate(point, math.nan, math.nan, int(sums.size))
    return Estimate(point, low, high, int(sums.size))


def unanimous_interval(value: float, units: int, lowest: float, highest: float,
                       level: float = DEFAULT_LEVEL) -> tuple[float, float]:  # fmt: skip
    """An interval for `units` (>= 2) units whose means all equal `value` in [lowest, highest],
    where a bootstrap has none: the Wilson interval of the share of units at `value` (n of n),
    the rest of the units put at `lowest` or at `highest`. At a bound it is the Wilson interval
    over units (0 of 38 topics: [0, 0.092])."""
    share_low, _ = wilson_ci(units, units, level)
    rest = 1.0 - share_low
    return share_low * value + rest * lowest, share_low * value + rest * highest


def bounded_cluster_ci(
    values: Sequence[float] | np.ndarray,
    units: Sequence[object] | np.ndarray,
    lowest: float,
    highest: float,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """`cluster_mean_ci` of values that lie in [lowest, highest] (a 0/1 outcome, a share, a
    signed score): the pooled mean, a cluster bootstrap over `units`, and where every unit's
    mean is the same (two units or more) the `unanimous_interval` instead of none."""
    estimate = cluster_mean_ci(values, units, resamples, level, seed)
    if estimate.n < 2 or not math.isnan(estimate.ci_low) or not _unit_means_equal(values, units):
        return estimate
    low, high = unanimous_interval(estimate.value, estimate.n, lowest, highest, level)
    return Estimate(estimate.value, low, high, estimate.n)


def _unit_means_equal(
    values: Sequence[float] | np.ndarray, units: Sequence[object] | np.ndarray
) -> bool:
    """Whether every unit's mean of its non-NaN values is the same."""
    data = np.asarray(values, dtype=float)
    labels = np.asarray(units, dtype=object).astype(str)
    keep = ~np.isnan(data)
    _, codes = np.unique(labels[keep], return_inverse=True)
    means = np.bincount(codes, weights=data[keep]) / np.bincount(codes)
    return bool(means.size) and bool(np.all(means == means[0]))


def proportion_ci(outcomes: Sequence[float] | np.ndarray, scale: float = 1.0,
                  level: float = DEFAULT_LEVEL) -> Estimate:  # fmt: skip
    """Share of true outcomes (0/1, or 0/`scale`) on `scale`, with a Wilson interval; NaNs are
    dropped, and a single outcome gives NaN bounds."""
    data = np.asarray(outcomes, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    point = float(np.mean(data))
    if data.size < 2:
        return Estimate(point, math.nan, math.nan, 1)
    low, high = wilson_ci(int(np.count_nonzero(data)), int(data.size), level)
    return Estimate(point, low * scale, high * scale, int(data.size))


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson correlation (scipy) over pairs where both are present; NaN if undefined."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if a.size < 3 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(pearsonr(a, b).statistic)


def stratified_bootstrap_ci(
    statistic: Callable[..., float],
    strata: Sequence[Sequence[object]],
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """`statistic(*strata)` with a BCa bootstrap CI (percentile where BCa is undefined) from
    `scipy.stats.bootstrap`, which resamples the units of each stratum apart, so every
    replicate keeps each stratum's size (an AUROC's performative and true statements: no
    replicate lacks a class). The statistic gets each stratum's drawn units as an array; `n`
    counts the units. NaN bounds when a stratum has fewer than two units (scipy's minimum) or
    the replicates give no interval of positive width."""
    groups = [np.asarray(list(stratum), dtype=object) for stratum in strata]
    point = float(statistic(*groups))
    units = sum(len(group) for group in groups)
    if math.isnan(point) or any(len(group) < 2 for group in groups):
        return Estimate(point, math.nan, math.nan, units)

    def drawn(*indices: np.ndarray) -> float:
        return statistic(
            *(group[index.astype(int)] for group, index in zip(groups, indices, strict=True))
        )

    positions = tuple(np.arange(len(group)) for group in groups)
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            result = bootstrap(positions, drawn, vectorized=False, n_resamples=resamples,
                               confidence_level=level, method=method, rng=seed)  # fmt: skip
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if not (math.isnan(low) or math.isnan(high)):
            return (
                Estimate(point, low, high, units)
                if high > low
                else Estimate(point, math.nan, math.nan, units)
            )
    return Estimate(point, math.nan, math.nan, units)

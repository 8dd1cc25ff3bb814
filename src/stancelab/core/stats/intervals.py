"""Statistics shared by every method: confidence intervals over units (scipy) and correlations.

Every mean stancelab prints lies within known bounds (a share, a 0-100 score, a signed stance,
a 1-7 rating), and its interval is one whose coverage holds at every number of units, checked
by `benchmarks/coverage.py` (2 to 50 units; `benchmarks/README.md` has its table):

- outcomes at either bound, one per unit (a share of units): Clopper-Pearson, the exact
  binomial interval (scipy; `proportion_ci`, `clopper_pearson_ci`);
- any other bounded mean: the betting interval of Waudby-Smith & Ramdas (2024, "Estimating
  means of bounded random variables by betting", JRSS-B 86(1): hedged capital, predictable
  plug-in bets sized for the number of units, averaged over a few seeded orders of the units),
  valid at every number of units and for every distribution within the bounds (`mean_ci`,
  `betting_ci`); units that all agree get one too;
- where answers repeat within a unit (an issue's templates, a topic's pairs), the mean pooled
  over answers, with the same betting interval over units, each unit's stake weighted by its
  answers (the test of a ratio estimator; `bounded_cluster_ci`).

There is no interval from fewer than two units (NaN bounds, shown as "no CI (n = 1)"), nor one
of zero width. A statistic that is not a mean (an AUROC) gets a BCa bootstrap
(`stratified_bootstrap_ci`, `bootstrap_ci`)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp
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


def clopper_pearson_ci(successes: int, n: int, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Clopper-Pearson (exact binomial) interval of a proportion (scipy): 2 of 2 gives
    [0.16, 1], 0 of 38 gives [0, 0.093]."""
    interval = binomtest(successes, n).proportion_ci(confidence_level=level, method="exact")
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
    """Statistic of `values` with a BCa bootstrap CI, for a statistic that is not a mean of
    bounded values (those get `mean_ci`). NaNs are dropped; fewer than two values, or values
    all equal, give NaN bounds rather than an interval of zero width."""
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    point = float(statistic(data))
    if data.size < 2 or np.all(data == data[0]):
        return Estimate(point, math.nan, math.nan, int(data.size))
    low, high = _bootstrap(data, statistic, resamples, level, seed)
    return Estimate(point, low, high, int(data.size))


BET_CAP = 0.75  # largest fraction of capital one bet risks (Waudby-Smith & Ramdas: 1/2 to 3/4)
BETTING_ORDERS = 8  # seeded orders of the units whose capitals are averaged
BETTING_GRID = 101  # candidate means tried on [0, 1], then 40 more inside each end's step
_REFINE = 41


def plug_in_bets(values: np.ndarray, alpha: float, horizon: int | None = None) -> np.ndarray:
    """Predictable plug-in bets (Waudby-Smith & Ramdas 2024, eq. 26) before each unit of each
    row (an order of the units) of `values` on [0, 1]: sqrt(2 log(2 / alpha) / (sigma^2 s)),
    sigma^2 the running variance of the units before it (started at 1/4 about a mean started at
    1/2), s the `horizon` (an interval at a fixed number of units: n in place of t log t), or
    t log(1 + t) at the t-th unit (a confidence sequence, valid at every t). The bet before a
    unit uses only the units before it."""
    rows = np.atleast_2d(values)
    seen = np.arange(1, rows.shape[1] + 1)
    means = (0.5 + np.cumsum(rows, axis=1)) / (seen + 1)
    variances = (0.25 + np.cumsum((rows - means) ** 2, axis=1)) / (seen + 1)
    before = np.concatenate([np.full((rows.shape[0], 1), 0.25), variances[:, :-1]], axis=1)
    sizes = np.full(seen.size, float(horizon)) if horizon is not None else seen * np.log1p(seen)
    return np.sqrt(2 * math.log(2 / alpha) / (before * sizes))


def capital_paths(candidates: np.ndarray, values: np.ndarray, weights: np.ndarray, bets: np.ndarray,
                  cap: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The log capital, after each unit of each order (rows of `values` on [0, 1], their stakes
    `weights` <= 1, their `bets`), of a bettor on a mean above each candidate and of one on a
    mean below it (each candidates x orders x units): each bet capped at `cap` of the capital,
    so it stays positive (Waudby-Smith & Ramdas 2024, the hedged capital process). A unit's
    stake scales its gain w (x - m), which has mean 0 exactly at the mean pooled over answers
    (the test of a ratio estimator)."""
    candidate = candidates[:, None, None]
    gaps = weights * (values - candidate)
    with np.errstate(divide="ignore"):
        up = np.minimum(bets, cap / candidate)
        down = np.minimum(bets, cap / (1 - candidate))
    return np.cumsum(np.log1p(up * gaps), axis=-1), np.cumsum(np.log1p(-down * gaps), axis=-1)


def betting_bounds(kept: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
    """The lowest and highest candidate means in [0, 1] that `kept` keeps (its capital below
    1 / alpha): a grid of BETTING_GRID, each end refined inside its step and widened by one
    step of the finer grid; NaN if none."""
    grid = np.linspace(0.0, 1.0, BETTING_GRID)
    inside = np.flatnonzero(kept(grid))
    if inside.size == 0:
        return math.nan, math.nan
    first, last = int(inside[0]), int(inside[-1])
    low, high = grid[first], grid[last]
    step = grid[1] - grid[0]
    if first > 0:
        fine = np.linspace(grid[first - 1], grid[first], _REFINE)
        low = fine[np.flatnonzero(kept(fine))[0]] - (fine[1] - fine[0])
    else:
        low -= step
    if last < BETTING_GRID - 1:
        fine = np.linspace(grid[last], grid[last + 1], _REFINE)
        high = fine[np.flatnonzero(kept(fine))[-1]] + (fine[1] - fine[0])
    else:
        high += step
    return max(float(low), 0.0), min(float(high), 1.0)


def _betting_bounds(values: np.ndarray, weights: np.ndarray, level: float,
                    seed: int) -> tuple[float, float]:  # fmt: skip
    """The fixed-n interval: the candidate means whose hedged capital after every unit,
    averaged over seeded orders of the units and the two bettors, stays below 1 / alpha."""
    alpha = 1 - level
    orders = np.random.default_rng(seed).permuted(np.tile(np.arange(values.size), (BETTING_ORDERS, 1)),
                                                  axis=1)  # fmt: skip
    orders[0] = np.arange(values.size)
    drawn, drawn_weights = values[orders], weights[orders]
    bets = plug_in_bets(drawn, alpha, horizon=values.size)
    threshold = math.log(1 / alpha)

    def kept(candidates: np.ndarray) -> np.ndarray:
        above, below = capital_paths(candidates, drawn, drawn_weights, bets, BET_CAP)
        both = np.concatenate([above[..., -1], below[..., -1]], axis=-1)
        return logsumexp(both, axis=-1) - math.log(both.shape[-1]) < threshold

    return betting_bounds(kept)


def _scaled(values: np.ndarray, lowest: float, highest: float) -> np.ndarray:
    """`values` mapped from [lowest, highest] onto [0, 1]; a value outside is an error."""
    if not highest > lowest:
        raise ValueError(f"bounds [{lowest}, {highest}] are empty")
    scaled = (values - lowest) / (highest - lowest)
    slack = 1e-9
    if np.any(scaled < -slack) or np.any(scaled > 1 + slack):
        raise ValueError(f"values outside their bounds [{lowest}, {highest}]")
    return np.clip(scaled, 0.0, 1.0)


def betting_ci(values: np.ndarray, lowest: float, highest: float, weights: np.ndarray | None = None,
               level: float = DEFAULT_LEVEL, seed: int = 0) -> tuple[float, float]:  # fmt: skip
    """Betting interval (Waudby-Smith & Ramdas 2024) for the mean of independent unit values
    in [lowest, highest], at least two of them; with `weights` (each unit's answers), for the
    pooled mean over answers: the capital bets on each unit's sum minus the candidate times
    its answers, scaled by the largest unit's answers, whose expectation is 0 at the pooled
    mean (a ratio estimator's test). Its coverage holds at every number of units."""
    scaled = _scaled(np.asarray(values, dtype=float), lowest, highest)
    stakes = np.ones(scaled.size) if weights is None else np.asarray(weights, dtype=float)
    low, high = _betting_bounds(scaled, stakes / stakes.max(), level, seed)
    if math.isnan(low):
        return math.nan, math.nan
    pooled = float(np.sum(stakes * scaled) / np.sum(stakes))
    low, high = min(low, pooled), max(high, pooled)
    span = highest - lowest
    return lowest + low * span, lowest + high * span


def _unit_sums(values: Sequence[float] | np.ndarray, units: Sequence[object] | np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per unit (one label per value), the sum of its non-NaN values and their count."""
    data = np.asarray(values, dtype=float)
    labels = np.asarray(units, dtype=object)
    if data.shape != labels.shape:
        raise ValueError(f"bounded_cluster_ci: {data.size} values but {labels.size} unit labels")
    keep = ~np.isnan(data)
    data, labels = data[keep], labels[keep]
    if data.size == 0:
        return np.zeros(0), np.zeros(0)
    _, codes = np.unique(labels.astype(str), return_inverse=True)
    return np.bincount(codes, weights=data), np.bincount(codes).astype(float)


def bounded_cluster_ci(
    values: Sequence[float] | np.ndarray,
    units: Sequence[object] | np.ndarray,
    lowest: float,
    highest: float,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """Mean of `values` in [lowest, highest] (a 0/1 outcome, a share, a signed score) pooled
    over every answer, with a CI over the `units` (one label per value: the issue, topic,
    statement or claim each answer belongs to), never over the answers within them: outcomes
    at either bound, one per unit, get Clopper-Pearson over units; anything else the betting
    interval over units, each unit weighted by its answers (`betting_ci`), units that all agree
    included. `n` counts units; NaN values are dropped; fewer than two units give NaN bounds."""
    return _pooled_estimate(*_unit_sums(values, units), lowest, highest, level, seed)


def _pooled_estimate(sums: np.ndarray, counts: np.ndarray, lowest: float, highest: float,
                     level: float, seed: int) -> Estimate:  # fmt: skip
    """The pooled mean of units given by their sums and answer counts, with its CI."""
    if sums.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    point = float(sums.sum() / counts.sum())
    if sums.size < 2:
        return Estimate(point, math.nan, math.nan, int(sums.size))
    if np.all(counts == 1) and np.all(np.isin(sums, (lowest, highest))):
        shares = clopper_pearson_ci(int(np.sum(sums == highest)), sums.size, level)
        low, high = (lowest + share * (highest - lowest) for share in shares)
    else:
        low, high = betting_ci(sums / counts, lowest, highest, counts, level, seed)
    return Estimate(point, low, high, int(sums.size))


def mean_ci(
    values: Sequence[float] | np.ndarray,
    bounds: tuple[float, float],
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """Mean of one value per unit within `bounds`, with its CI over units (`bounded_cluster_ci`
    with every value its own unit: Clopper-Pearson for outcomes at either bound, else the
    betting interval). NaNs are dropped; fewer than two values give NaN bounds."""
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    return _pooled_estimate(data, np.ones(data.size), *bounds, level, seed)


def proportion_ci(outcomes: Sequence[float] | np.ndarray, scale: float = 1.0,
                  level: float = DEFAULT_LEVEL) -> Estimate:  # fmt: skip
    """Share of true outcomes (0/1, or 0/`scale`) on `scale`, with a Clopper-Pearson interval;
    NaNs are dropped, and a single outcome gives NaN bounds."""
    data = np.asarray(outcomes, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    point = float(np.mean(data))
    if data.size < 2:
        return Estimate(point, math.nan, math.nan, 1)
    low, high = clopper_pearson_ci(int(np.count_nonzero(data)), int(data.size), level)
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

"""The sign-flip permutation test of a weighted mean over units: one implementation for the
paired difference of two models (`core.stats.compare.paired_test`, which also inverts it into
its interval), a stance's test of "no stance" (`core.stats.family.sign_flip_p`, the matrix's
cells) and the power planning that simulates the test the report runs (`core.stats.power`).

Statistic: T = sum_i w_i d_i over units i (a unit's value d_i, e.g. the difference of two
models' values, and its weight w_i, e.g. its answers). Under the null each d_i is as likely to
carry either sign (two models exchangeable on a unit; a stance symmetric round 0), so every
flip of signs is equally likely and the test is exact (Fisher 1935; Good 2005, "Permutation,
Parametric and Bootstrap Tests of Hypotheses", ch. 3). Flipping a subset S moves T to
T - 2 sum_S w_i d_i, so T_flip >= T exactly when the flipped units' weighted mean is <= 0; the
one-sided p-values are the chances of those subsets, and the same subset means, compared with
delta instead of 0, test "the mean is delta": the interval that inverts the test (Hartigan 1969,
JASA 64: 1303-1317) reads them off (`flip_interval`).

The null distribution is exact whenever the units' distinct (value, weight) pairs allow it:
every flip, units with equal pairs grouped (k of a group's m units flipped has binomial
probability), while patterns x groups stay at most EXACT_CELLS (any 15 units, or hundreds of
yes/no units); else PERMUTATION_RESAMPLES seeded random flips, which depend only on the number
of units and the seed, and the observed, each of probability 1 / (draws + 1) (scipy's
convention). The two-sided p is twice the smaller one-sided p, at most 1."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
from scipy.stats import binom

EXACT_CELLS = 1_000_000
"""enumerate every sign flip (grouped by tied units) while patterns x groups stay at most this"""
PERMUTATION_RESAMPLES = 9999
LEVEL = 0.95
_TIE_DIGITS = 10  # subset means equal to this many digits (of the largest |value|) tie
_P_DIGITS = 12  # probabilities summed over many flips are rounded to this many digits
_BLOCK = 1 << 22  # rows x patterns held at once by `sign_flip_pvalues`


@dataclass(frozen=True)
class Patterns:
    """Sign-flip patterns of units grouped by equal (value, weight): each row holds how many of
    each group's units are flipped, with its probability (the observed, unflipped pattern
    counted once more when the patterns are drawn at random)."""

    flipped: np.ndarray
    probabilities: np.ndarray
    values: np.ndarray
    weights: np.ndarray
    sizes: np.ndarray
    exact: bool


@dataclass(frozen=True)
class FlipDistribution:
    """The weighted mean of the values over each flipped subset of units, sorted, with its
    probability under random sign flips; `unflipped` is the probability of flipping nothing
    (the observed statistic itself, counted in both tails)."""

    means: np.ndarray
    probabilities: np.ndarray
    unflipped: float
    exact: bool


def _groups(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (value, weight) pairs (rounded to 12 decimals) and how many units hold each."""
    pairs = np.round(np.column_stack([values, weights]), 12)
    return np.unique(pairs, axis=0, return_counts=True)


def _is_exact(sizes: np.ndarray) -> bool:
    return _cells(sizes) <= EXACT_CELLS


@lru_cache(maxsize=8)  # bounded: a caller looping over seeds would otherwise keep each draw
def _random_flips(units: int, seed: int) -> np.ndarray:
    """The observed pattern (nothing flipped) and PERMUTATION_RESAMPLES seeded random flips of
    `units` units (1: flipped), the same for every sample of that many units and that seed."""
    bits = np.random.default_rng(seed).integers(
        0, 256, size=(PERMUTATION_RESAMPLES, -(-units // 8)), dtype=np.uint8
    )
    drawn = np.unpackbits(bits, axis=1)[:, :units].astype(float)
    flips = np.vstack([np.zeros((1, units)), drawn])
    flips.setflags(write=False)
    return flips


@cache
def _every_flip(units: int) -> np.ndarray:
    """Every flip of `units` distinct units (2^units x units, 1: flipped)."""
    codes = np.arange(2**units)[:, None] >> np.arange(units)[None, :]
    flips = (codes & 1).astype(float)
    flips.setflags(write=False)
    return flips


def patterns(values: np.ndarray, weights: np.ndarray, seed: int = 0) -> Patterns:
    """The sign-flip patterns of one sample: every flip, grouped by equal (value, weight),
    while patterns x groups stay at most EXACT_CELLS, else the seeded random flips."""
    groups, sizes = _groups(values, weights)
    if _is_exact(sizes):
        grids = np.meshgrid(*(np.arange(int(size) + 1) for size in sizes), indexing="ij")
        flipped = np.stack([grid.ravel() for grid in grids], axis=1).astype(float)
        probabilities = np.ones(len(flipped))
        for column, size in enumerate(sizes):
            probabilities *= binom.pmf(np.arange(size + 1), size, 0.5)[
                flipped[:, column].astype(int)
            ]
        return Patterns(
            flipped, probabilities, groups[:, 0], groups[:, 1], sizes.astype(float), True
        )
    flipped = _random_flips(values.size, seed)
    probabilities = np.full(len(flipped), 1.0 / len(flipped))
    return Patterns(flipped, probabilities, values, weights, np.ones(values.size), False)


def subset_means(flipped: np.ndarray, values: np.ndarray, weights: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """For each sample (rows of `values` and `weights`, k x m) and each pattern (rows of
    `flipped`, P x m): the weighted mean of the flipped units, rounded so that means equal to
    _TIE_DIGITS digits of the largest |value| tie (k x P); and which patterns flip nothing."""
    mass = weights @ flipped.T
    sums = (values * weights) @ flipped.T
    scale = np.max(np.abs(values), axis=1, keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)
    empty = mass <= 0
    means = sums / np.where(empty, 1.0, mass)
    return np.round(means / scale, _TIE_DIGITS) * scale, empty


def _two_sided(tied: np.ndarray, empty: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """Each sample's two-sided p of "the weighted mean is 0": twice the smaller of the chances
    that a flip's statistic is at least (flipped mean <= 0) or at most (>= 0) the observed."""
    unflipped = empty @ probabilities
    above = np.minimum(np.round(unflipped + ((tied <= 0) & ~empty) @ probabilities, _P_DIGITS), 1.0)
    below = np.minimum(np.round(unflipped + ((tied >= 0) & ~empty) @ probabilities, _P_DIGITS), 1.0)
    return np.minimum(1.0, 2 * np.minimum(above, below))


def _block_pvalues(flipped: np.ndarray, probabilities: np.ndarray, values: np.ndarray,
                   weights: np.ndarray) -> np.ndarray:  # fmt: skip
    """`_two_sided` of many samples under the same patterns, a block of rows at a time."""
    rows = max(1, _BLOCK // max(1, len(flipped)))
    out = np.empty(len(values))
    for start in range(0, len(values), rows):
        part = slice(start, start + rows)
        out[part] = _two_sided(*subset_means(flipped, values[part], weights[part]), probabilities)
    return out


def _cells(sizes: np.ndarray) -> int:
    """Patterns x groups of an exact enumeration of units grouped in groups of `sizes`."""
    return math.prod(int(size) + 1 for size in sizes) * len(sizes)


def sign_flip_pvalues(
    samples: np.ndarray,
    weights: np.ndarray | None = None,
    seed: int = 0,
    exact_cells: int = EXACT_CELLS,
) -> np.ndarray:
    """The two-sided p of each sample (rows of `samples`, each of the same number of units, at
    least 2; `weights` alike, 1 when not given): the test `paired_test` runs, vectorised over
    samples that share their patterns. Up to 15 units every flip is enumerated (grouping tied
    units only saves time: the distribution is the same); beyond, a sample whose tied units
    allow an exact enumeration of at most `exact_cells` patterns x groups gets one, the others
    the seeded random flips. A smaller `exact_cells` than EXACT_CELLS (the planning's, for
    speed) tests some samples by random flips that the report would enumerate."""
    values = np.atleast_2d(np.asarray(samples, dtype=float))
    weights = (
        np.ones_like(values)
        if weights is None
        else np.broadcast_to(np.asarray(weights, dtype=float), values.shape)
    )
    count, units = values.shape
    if _cells(np.ones(units)) <= EXACT_CELLS:
        flips = _every_flip(units)
        return _block_pvalues(flips, np.full(len(flips), 0.5**units), values, weights)
    limit = min(exact_cells, EXACT_CELLS)
    grouped = np.array([_cells(_groups(values[row], weights[row])[1]) <= limit for row in range(count)],
                       dtype=bool)  # fmt: skip
    pvalues = np.empty(count)
    if (~grouped).any():
        flips = _random_flips(units, seed)
        pvalues[~grouped] = _block_pvalues(flips, np.full(len(flips), 1.0 / len(flips)),
                                           values[~grouped], weights[~grouped])  # fmt: skip
    for row in np.flatnonzero(grouped):
        found = patterns(values[row], weights[row], seed)
        pvalues[row] = _two_sided(*subset_means(found.flipped, found.values[None], found.weights[None]),
                                  found.probabilities)[0]  # fmt: skip
    return pvalues


def sign_flip_p(values: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None,
                seed: int = 0) -> float:  # fmt: skip
    """Two-sided p of "the weighted mean of `values` is 0" (`sign_flip_pvalues` of one sample);
    NaN values dropped, NaN under two units, 1 when every value is 0."""
    data = np.asarray(values, dtype=float)
    stakes = np.ones(data.size) if weights is None else np.asarray(weights, dtype=float)
    keep = ~np.isnan(data)
    if np.count_nonzero(keep) < 2:
        return math.nan
    return float(sign_flip_pvalues(data[keep][None], stakes[keep][None], seed)[0])


def flip_distribution(values: np.ndarray, weights: np.ndarray, seed: int = 0) -> FlipDistribution:
    """The sign-flip null distribution of the weighted mean, exact where it can be: the mean
    over each flipped subset, sorted (the same patterns and subset means as `sign_flip_pvalues`)."""
    found = patterns(values, weights, seed)
    tied, empty = subset_means(found.flipped, found.values[None], found.weights[None])
    tied, empty = tied[0], empty[0]
    order = np.argsort(tied[~empty], kind="stable")
    kept = found.probabilities[~empty]
    return FlipDistribution(
        tied[~empty][order], kept[order], float(found.probabilities[empty].sum()), found.exact
    )


def _tails(flips: FlipDistribution, delta: float) -> tuple[float, float]:
    """One-sided p-values of 'the mean is delta' against above and below: the probability that
    a flip's statistic is at least (at most) the observed one, i.e. that the flipped subset's
    mean is at most (at least) delta."""
    above = flips.unflipped + float(flips.probabilities[flips.means <= delta].sum())
    below = flips.unflipped + float(flips.probabilities[flips.means >= delta].sum())
    return min(round(above, _P_DIGITS), 1.0), min(round(below, _P_DIGITS), 1.0)


def flip_p(flips: FlipDistribution) -> float:
    """Two-sided p of a mean of 0 from its distribution (equal to `sign_flip_p`)."""
    return min(1.0, 2 * min(_tails(flips, 0.0)))


def _end(flips: FlipDistribution, tail: float, lower: bool) -> float | None:
    """The lowest (`lower`) or highest delta whose one-sided p (towards that end) is at least
    `tail`; None when no flip reaches it (the observed pattern alone does not)."""
    if round(flips.unflipped, _P_DIGITS) >= round(tail, _P_DIGITS):
        return None
    if lower:
        rising = np.round(flips.unflipped + np.cumsum(flips.probabilities), _P_DIGITS)
        return float(flips.means[np.flatnonzero(rising >= round(tail, _P_DIGITS))[0]])
    falling = np.round(flips.unflipped + np.cumsum(flips.probabilities[::-1])[::-1], _P_DIGITS)
    return float(flips.means[np.flatnonzero(falling >= round(tail, _P_DIGITS))[-1]])


def flip_interval(flips: FlipDistribution, estimate: float, level: float = LEVEL,
                  widest: float | None = None) -> tuple[float, float]:  # fmt: skip
    """The means the test keeps: the end towards 0 where the one-sided p reaches (1 - level) /
    2, so the interval excludes 0 exactly when the two-sided p is below 1 - level; the end away
    from 0 (from the `estimate`) where it reaches half that, a margin for values skewed away
    from 0 (`benchmarks/coverage.py`: 93% without it at 8 to 12 units). An end no flip reaches
    is `widest` (+- the widest value), where known; NaN when the end towards 0 is unreachable
    (fewer than 6 units) or no bound is known."""
    half = (1 - level) / 2
    low = _end(flips, half if estimate >= 0 else half / 2, lower=True)
    high = _end(flips, half if estimate <= 0 else half / 2, lower=False)
    near = low if estimate >= 0 else high
    if near is None:
        return math.nan, math.nan
    if widest is not None:
        low = -widest if low is None else low
        high = widest if high is None else high
    if low is None or high is None:
        return math.nan, math.nan
    return low, high


def flip_size(
    values: np.ndarray, weights: np.ndarray, level: float = LEVEL, seed: int = 0
) -> float:
    """The chance that the test calls a direction (p < 1 - `level`) when the signs of `values`
    are exchangeable, given their sizes: the probability of the flips whose statistic lies in
    the test's two tails. At most 1 - `level` by construction; the coverage benchmark averages
    it over draws (a conditional Monte Carlo estimate of the false-direction rate)."""
    found = patterns(values, weights, seed)
    totals = found.values * found.weights
    statistics = (found.sizes - 2 * found.flipped) @ totals
    scale = float(np.max(np.abs(totals))) or 1.0
    statistics = np.round(statistics / scale, _TIE_DIGITS)
    distinct, inverse = np.unique(statistics, return_inverse=True)
    mass = np.bincount(inverse, weights=found.probabilities)
    at_most, at_least = np.cumsum(mass), np.cumsum(mass[::-1])[::-1]
    two_sided = np.round(np.minimum(1.0, 2 * np.minimum(at_most, at_least)), _P_DIGITS)
    rejected = mass[two_sided < round(1 - level, _P_DIGITS)]
    return round(float(rejected.sum()), _P_DIGITS) if distinct.size else 0.0

"""Multiplicity: one family of p-values adjusted together (Holm, or Benjamini-Hochberg with
`--adjust fdr_bh`; statsmodels' `multipletests`), and the sign-flip test that gives a signed
mean over units its p of "no stance".

`adjust_family` adjusts p-values that come from several places (a summary's paired
differences and a probe's own tests; every cell of the topic x lens matrix) as one family.
`chance_conflicts` is the number of (model, topic) pairs the matrix would mark "conflict" if no
lens had a stance on any topic: under that null each cell's direction is a fair coin and its p
is at least uniform (and at least the smallest p a sign-flip test over its units can give), the
cells are independent (different units), and the rule is the one applied, so a simulation of
uniform p-values floored there, through the same adjustment, bounds the count from above (Holm
and Benjamini-Hochberg reject more when any p is smaller)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from stancelab.core.stats.signflip import sign_flip_p as signflip_p

ALPHA = 0.05
CHANCE_DRAWS = 2000


def adjusted_pvalues(pvalues: np.ndarray, method: str) -> np.ndarray:
    """Holm's step-down (`holm`) or Benjamini-Hochberg's step-up (`fdr_bh`) adjusted p-values of
    one family, as statsmodels' `multipletests` gives them (a test checks), computed directly:
    statsmodels 0.15's Holm takes some 80 ms a call, too slow for the simulations."""
    count = pvalues.size
    order = np.argsort(pvalues, kind="stable")
    ranked = pvalues[order]
    steps = np.arange(1, count + 1)
    if method == "holm":
        corrected = np.maximum.accumulate(ranked * (count - steps + 1))
    elif method == "fdr_bh":
        corrected = np.minimum.accumulate((ranked * count / steps)[::-1])[::-1]
    else:  # any other of statsmodels' methods (imported here: a second off every start)
        from statsmodels.stats.multitest import multipletests

        corrected = multipletests(pvalues, method=method)[1][order]
    adjusted = np.empty(count)
    adjusted[order] = np.minimum(corrected, 1.0)
    return adjusted


def adjust_pvalues(pvalues: Sequence[float | None], method: str) -> list[float | None]:
    """`pvalues` adjusted as one family by `method` (holm or fdr_bh); None and NaN stay None and
    do not count."""
    tested = [
        index for index, p in enumerate(pvalues) if p is not None and not math.isnan(float(p))
    ]
    adjusted: list[float | None] = [None] * len(pvalues)
    if tested:
        values = np.array([float(pvalues[i]) for i in tested])  # type: ignore[arg-type]
        for index, value in zip(tested, adjusted_pvalues(values, method), strict=True):
            adjusted[index] = float(value)
    return adjusted


def sign_flip_p(unit_sums: Sequence[float] | np.ndarray, seed: int = 0) -> float:
    """Two-sided p of "the pooled mean is 0" from a sign-flip test over units: each unit's sum
    of signed scores keeps its size and takes either sign with probability 1/2. The statistic,
    the sum of the sums, is the pooled mean's numerator, so this is `core.stats.signflip`'s
    test of the mean (the paired test's), exact wherever the sums allow; 1 when every sum is 0,
    NaN under two units."""
    return signflip_p(unit_sums, seed=seed)


def smallest_sign_flip_p(units: int) -> float:
    """The smallest two-sided p a sign-flip test over `units` units can give: 2 / 2^units."""
    return min(1.0, 2.0 / 2.0 ** max(units, 0))


def rejections(pvalues: np.ndarray, method: str, alpha: float = ALPHA) -> np.ndarray:
    """Which p-values of each row (one family per row) `method` rejects at `alpha`: Holm's
    step-down or Benjamini-Hochberg's step-up, as statsmodels' `multipletests` (checked by
    a test), vectorised over rows."""
    count = pvalues.shape[1]
    order = np.argsort(pvalues, axis=1)
    ranked = np.take_along_axis(pvalues, order, axis=1)
    steps = np.arange(1, count + 1)
    if method == "holm":
        passed = np.cumprod(ranked <= alpha / (count - steps + 1), axis=1).astype(bool)
    else:
        below = ranked <= steps * alpha / count
        last = np.where(below.any(axis=1), count - np.argmax(below[:, ::-1], axis=1), 0)
        passed = steps[None, :] <= last[:, None]
    rejected = np.zeros_like(passed)
    np.put_along_axis(rejected, order, passed, axis=1)
    return rejected


def chance_conflicts(groups: Sequence[Sequence[int]], method: str, alpha: float = ALPHA,
                     draws: int = CHANCE_DRAWS, seed: int = 0) -> float:  # fmt: skip
    """Expected number of groups ((model, topic) pairs) with directions both ways when every
    tested cell (its units given, one list per group) has no true stance: uniform p-values
    floored at `smallest_sign_flip_p`, fair-coin signs, adjusted as one family by `method`
    together with the cells of groups that cannot conflict (one tested cell)."""
    sizes = [len(group) for group in groups]
    floors = np.array([smallest_sign_flip_p(units) for group in groups for units in group])
    if floors.size == 0:
        return 0.0
    rng = np.random.default_rng(seed)
    pvalues = np.maximum(rng.random((draws, floors.size)), floors[None, :])
    signs = np.where(rng.random((draws, floors.size)) < 0.5, 1, -1) * rejections(
        pvalues, method, alpha
    )
    ends = np.cumsum(sizes)
    conflicts = np.zeros(draws)
    for start, end in zip(ends - np.array(sizes), ends, strict=True):
        if end - start >= 2:
            chunk = signs[:, start:end]
            conflicts += (chunk > 0).any(axis=1) & (chunk < 0).any(axis=1)
    return float(conflicts.mean())

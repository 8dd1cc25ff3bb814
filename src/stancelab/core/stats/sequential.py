"""The statistics of `--until-ci` (a run in seeded batches of whole units that stops once every
model's headline interval is narrower than W): each unit's seeded place among K planned looks,
and each model's interval at a look, from a confidence sequence valid at every look at once.

The interval is a betting confidence sequence for the mean of bounded unit values
(Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables by betting", JRSS-B
86(1): the hedged capital process with predictable plug-in bets, Theorem 3 and eq. 26). The
units enter one by one in their seeded order (the order of the batches, fixed by the seed
before any value is seen); for each candidate mean m on a grid over the value range, a bettor
who bets on "above m" and one who bets on "below m" start with half a unit of capital each;
m leaves the interval once their capital has ever reached 1/alpha. By Ville's inequality the
true mean leaves it with probability at most alpha over the whole sequence, so the interval at
whichever look the run stops at (by any rule that reads the data) covers the truth with
probability at least 1 - alpha, and it never widens from one look to the next (the running
intersection). No bound is assumed but the value range: an unbounded headline has no such
sequence, so `--until-ci` refuses it. The sequence is wider than a fixed-size interval over the
same units: that is the price of looking as often as one likes."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd

from stancelab.core.stats.intervals import Estimate

LOOKS = 5
"""planned looks (batches) of an `--until-ci` run without `--looks`, fixed before it starts"""
ALPHA = 0.05
"""error rate of the final interval, over all looks together"""
GRID = 2001
"""candidate means on the value range (the interval is widened by one step either side)"""
MAX_BET = 0.5
"""the largest fraction of its capital a bettor stakes (c in Waudby-Smith & Ramdas, eq. 26)"""
METHOD = "betting confidence sequence"
CITATION = "Waudby-Smith & Ramdas 2023, JRSS-B 86(1), hedged capital with predictable plug-in bets"


def method_text(count: int = LOOKS) -> str:
    """The interval of a design of `count` looks, as the summary states it."""
    return (f"{METHOD} ({CITATION}) over the units in their seeded order, at "
            f"{1 - ALPHA:.0%}, valid at every look at once: the interval at whichever of the "
            f"{count} planned looks the run stops covers the mean of the unit values with "
            f"probability at least {1 - ALPHA:.0%}, whatever the stopping rule")  # fmt: skip


def look_level(looks: int = LOOKS, alpha: float = ALPHA) -> float:
    """The level of every look's interval: 1 - alpha (the sequence holds at all looks at once,
    so the number of looks does not lower it)."""
    return 1 - alpha


def unit_position(unit: object, seed: int) -> float:
    """A unit's seeded place in [0, 1): the first 8 bytes of SHA-256 of `seed:unit`."""
    digest = hashlib.sha256(f"{seed}:{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def units_through(units: pd.DataFrame, index: int, seed: int, count: int = LOOKS) -> pd.DataFrame:
    """The rows of `units` in batches 1 to `index`: a look reads no later batch, even where the
    folder holds one already (a re-run with another W, or a whole run before)."""
    positions = units["unit"].map(lambda unit: unit_position(unit, seed))
    kept = units[(positions < index / count).to_numpy(dtype=bool)]
    kept.attrs = units.attrs
    return kept


def _predictable_bets(scaled: np.ndarray, alpha: float) -> np.ndarray:
    """lambda_t (t = 1..n) of the predictable plug-in rule: sqrt(2 log(2/alpha) /
    (sigma_{t-1}^2 t log(1 + t))), from the running mean and variance of the units before t
    (started at 1/2 and 1/4)."""
    count = np.arange(1, scaled.size + 1)
    means = (0.5 + np.cumsum(scaled)) / (count + 1)
    squares = np.cumsum((scaled - means) ** 2)
    variances = np.concatenate([[0.25], (0.25 + squares[:-1]) / (count[:-1] + 1)])
    return np.sqrt(2 * math.log(2 / alpha) / (variances * count * np.log1p(count)))


def betting_interval(values: np.ndarray, lowest: float, highest: float,
                     alpha: float = ALPHA, grid: int = GRID) -> tuple[float, float]:  # fmt: skip
    """The betting confidence sequence's interval after every value of `values` (in their
    order, each in [lowest, highest]): the candidate means whose hedged capital never reached
    1 / alpha. NaN bounds for no values."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return math.nan, math.nan
    span = highest - lowest
    scaled = np.clip((data - lowest) / span, 0.0, 1.0)
    candidates = np.linspace(0.0, 1.0, grid)[:, None]
    bets = _predictable_bets(scaled, alpha)[None, :]
    with np.errstate(divide="ignore"):
        up = np.minimum(bets, MAX_BET / candidates)
        down = np.minimum(bets, MAX_BET / (1 - candidates))
    moves = scaled[None, :] - candidates
    log_up = np.cumsum(np.log1p(up * moves), axis=1)
    log_down = np.cumsum(np.log1p(-down * moves), axis=1)
    capital = np.logaddexp(log_up, log_down) + math.log(0.5)  # the two bettors' sum, >= their max
    alive = np.flatnonzero(capital.max(axis=1) < math.log(1 / alpha))
    if alive.size == 0:
        return math.nan, math.nan
    step = 1.0 / (grid - 1)
    low = max(0.0, candidates[alive[0], 0] - step)
    high = min(1.0, candidates[alive[-1], 0] + step)
    return lowest + span * low, lowest + span * high


def sequence_estimate(values: np.ndarray, lowest: float, highest: float,
                      alpha: float = ALPHA) -> Estimate:  # fmt: skip
    """The mean of `values` with the confidence sequence's interval after all of them."""
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    low, high = betting_interval(data, lowest, highest, alpha)
    return Estimate(float(np.mean(data)), low, high, int(data.size))


def headline_intervals(
    units: pd.DataFrame, models: list[str], seed: int, value_range: tuple[float, float]
) -> dict[str, Estimate]:
    """Each model's headline as the mean of its per-unit values, with the confidence
    sequence's interval over its units in their seeded order, on `value_range`; NaN for a model
    without units yet."""
    intervals = {}
    for model in models:
        rows = units[(units["model"].astype(str) == model)].dropna(subset=["value"])
        means = rows.groupby("unit")["value"].mean()
        order = sorted(means.index, key=lambda unit: unit_position(unit, seed))
        intervals[model] = sequence_estimate(means.loc[order].to_numpy(dtype=float), *value_range)
    return intervals


def width_of(estimate: Estimate) -> float:
    return estimate.ci_high - estimate.ci_low


def is_narrow(intervals: dict[str, Estimate], width: float) -> bool:
    """Whether every model has an interval narrower than `width` (none: not narrow)."""
    return bool(intervals) and all(width_of(e) < width for e in intervals.values())


def units_in_batches(unit_ids: list[object], seed: int, count: int = LOOKS) -> list[int]:
    """How many of `unit_ids` each of `count` batches holds (for planning and the benchmark)."""
    positions = np.array([unit_position(unit, seed) for unit in unit_ids])
    return [int(np.count_nonzero((positions >= (k - 1) / count) & (positions < k / count)))
            for k in range(1, count + 1)]  # fmt: skip

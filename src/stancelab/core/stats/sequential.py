"""The statistics of `--until-ci` (a run in seeded batches of whole units that stops once every
model's headline interval is narrower than W): each unit's seeded place among K planned looks,
and each model's interval at a look, from a confidence sequence valid at every look at once.

The estimand is the headline's: the mean over units, pooled over answers where the headline
pools them (a unit's `weight`, its answers; `core.stats.compare.unit_table` pools a unit's
rows as the paired differences do). The interval is a betting confidence sequence
(Waudby-Smith & Ramdas 2024, "Estimating means of bounded random variables by betting", JRSS-B
86(1): the hedged capital process with predictable plug-in bets, Theorem 3 and eq. 26), on
each unit's gain w_i (x_i - m): x_i its mean on the value range scaled to [0, 1], w_i its
answers over the most a unit holds, so the gain is bounded, and its mean is 0 exactly when m
is the pooled mean (the ratio estimator's estimating equation); with one answer a unit, or
units of equal answers, it is the mean of the unit values. The units enter one by one in their
seeded order (the order of the batches, fixed by the seed before any value is seen); for each
candidate mean m, a bettor who bets on "above m" and one who bets on "below m" start with half
a unit of capital each; m leaves the interval once their capital has ever reached 1/alpha. By
Ville's inequality the true mean leaves it with probability at most alpha over the whole
sequence, so the interval at whichever look the run stops at (by any rule that reads the data)
covers the truth with probability at least 1 - alpha. The capital, the bets and the search of
the candidates are the fixed-n betting interval's (`core.stats.intervals`: `plug_in_bets`,
`capital_paths`, `betting_bounds`); the sequence sizes its bets for every t (t log(1 + t)) and
reads the capital after every unit, where the interval sizes them for its n units and reads
the capital after the last. The guarantee is exact where a unit's answers are fixed by the
design (in particular equal: the gain is then x_i - m); where they vary, the most a unit holds
is read from the units of the look, as the fixed-n interval reads it, and
`benchmarks/until_ci.py` measures the coverage of a setting whose units hold 1 to 9 answers
with a rate rising with them. No bound is assumed but the value range: an unbounded headline
has no such sequence, so `--until-ci` refuses it. The sequence is wider than a fixed-size
interval over the same units: that is the price of looking as often as one likes."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd

from stancelab.core.stats.compare import unit_table
from stancelab.core.stats.intervals import (
    Estimate,
    betting_bounds,
    capital_paths,
    plug_in_bets,
)

LOOKS = 5
"""planned looks (batches) of an `--until-ci` run without `--looks`, fixed before it starts"""
ALPHA = 0.05
"""error rate of the final interval, over all looks together"""
MAX_BET = 0.5
"""the largest fraction of its capital a bettor stakes (c in Waudby-Smith & Ramdas, eq. 26)"""
METHOD = "betting confidence sequence"
CITATION = "Waudby-Smith & Ramdas 2024, JRSS-B 86(1), hedged capital with predictable plug-in bets"


def method_text(count: int = LOOKS) -> str:
    """The interval of a design of `count` looks, as the summary states it."""
    return (f"{METHOD} ({CITATION}) over the units in their seeded order, at "
            f"{1 - ALPHA:.0%}, valid at every look at once: the interval at whichever of the "
            f"{count} planned looks the run stops covers the headline's mean (pooled over answers "
            f"where the headline pools them) with probability at least {1 - ALPHA:.0%}, whatever "
            "the stopping rule")  # fmt: skip


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


def betting_interval(values: np.ndarray, lowest: float, highest: float, alpha: float = ALPHA,
                     weights: np.ndarray | None = None) -> tuple[float, float]:  # fmt: skip
    """The betting confidence sequence's interval after every value of `values` (in their
    order, each in [lowest, highest]; each unit's answers in `weights`, 1 when not given): the
    candidate means whose hedged capital never reached 1 / alpha, and the pooled mean. NaN
    bounds for no values."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return math.nan, math.nan
    span = highest - lowest
    scaled = np.clip((data - lowest) / span, 0.0, 1.0)[None, :]
    answers = np.ones(data.size) if weights is None else np.asarray(weights, dtype=float)
    stakes = (answers / answers.max())[None, :]
    bets = plug_in_bets(scaled, alpha)
    threshold = math.log(1 / alpha)

    def kept(candidates: np.ndarray) -> np.ndarray:
        above, below = capital_paths(candidates, scaled, stakes, bets, MAX_BET)
        capital = np.logaddexp(above[:, 0], below[:, 0]) + math.log(0.5)  # the two bettors' sum
        return capital.max(axis=1) < threshold

    low, high = betting_bounds(kept)
    if math.isnan(low):
        return math.nan, math.nan
    pooled = float(answers @ scaled[0] / answers.sum())
    low, high = min(low, pooled), max(high, pooled)
    return lowest + span * low, lowest + span * high


def sequence_estimate(values: np.ndarray, lowest: float, highest: float, alpha: float = ALPHA,
                      weights: np.ndarray | None = None) -> Estimate:  # fmt: skip
    """The mean of `values` pooled over their `weights` (answers; 1 each when not given) with
    the confidence sequence's interval after all of them."""
    data = np.asarray(values, dtype=float)
    answers = np.ones(data.size) if weights is None else np.asarray(weights, dtype=float)
    keep = ~np.isnan(data)
    data, answers = data[keep], answers[keep]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    low, high = betting_interval(data, lowest, highest, alpha, answers)
    return Estimate(float(answers @ data / answers.sum()), low, high, int(data.size))


def headline_intervals(
    units: pd.DataFrame, models: list[str], seed: int, value_range: tuple[float, float]
) -> dict[str, Estimate]:
    """Each model's headline, the mean of its unit values pooled as the headline pools them
    (a unit's rows and `weight`s, `core.stats.compare.unit_table`), with the confidence
    sequence's interval over its units in their seeded order, on `value_range`; NaN for a
    model without units yet."""
    present = units.assign(model=units["model"].astype(str)) if not units.empty else units
    values, weights = unit_table(present) if not present.empty else (pd.DataFrame(), pd.DataFrame())
    intervals = {}
    for model in models:
        if model not in values:
            intervals[model] = Estimate(math.nan, math.nan, math.nan, 0)
            continue
        own = values[model].dropna()
        order = sorted(own.index, key=lambda unit: unit_position(unit, seed))
        intervals[model] = sequence_estimate(own.loc[order].to_numpy(dtype=float), *value_range,
                                             weights=weights.loc[order, model].to_numpy(dtype=float))  # fmt: skip
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

"""The statistics of `--until-ci` (a run in seeded batches of whole units that stops once every
model's headline interval is narrower than W): each unit's seeded place among K planned looks,
the looks' confidence level (Bonferroni over the K looks: 1 - alpha/K each, so the interval at
whichever look the run stops covers with probability at least 1 - alpha), and each model's
interval at a look. The run itself is `core.runs.until_ci`."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from stancelab.core.stats.compare import VALUE_RANGE
from stancelab.core.stats.intervals import Estimate, bootstrap_ci, bounded_cluster_ci

LOOKS = 5
"""planned looks (batches) of an `--until-ci` run without `--looks`, fixed before it starts"""
ALPHA = 0.05
"""error rate of the final interval, over all looks together"""


def method_text(count: int = LOOKS) -> str:
    """The stopping rule of a design of `count` looks, as the summary states it."""
    return (f"fixed sequential design: {count} planned looks, each look's interval at level "
            f"1 - {ALPHA}/{count} (Bonferroni over the looks), so the interval at whichever look "
            f"the run stops covers the truth with probability at least {1 - ALPHA:.0%}")  # fmt: skip


def look_level(looks: int = LOOKS, alpha: float = ALPHA) -> float:
    """The confidence level of each look's interval: 1 - alpha / looks."""
    return 1 - alpha / looks


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


def headline_intervals(
    units: pd.DataFrame, models: list[str], level: float, seed: int
) -> dict[str, Estimate]:
    """Each model's headline as the mean of its per-unit values, with an interval over units at
    `level` (bounded by the probe's value range where it states one); NaN for a model without
    units yet."""
    value_range = units.attrs.get(VALUE_RANGE)
    intervals = {}
    for model in models:
        rows = units[(units["model"].astype(str) == model)].dropna(subset=["value"])
        means = rows.groupby("unit")["value"].mean()
        if value_range is None:
            intervals[model] = bootstrap_ci(means.to_numpy(dtype=float), level=level, seed=seed)
        else:
            intervals[model] = bounded_cluster_ci(means.to_numpy(dtype=float), means.index.to_numpy(), *value_range,
                                                  level=level, seed=seed)  # fmt: skip
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

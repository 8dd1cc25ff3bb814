"""Comparing models on a headline: paired differences over the units both models share
(issues, statements, topic cells), with a 95% BCa bootstrap CI (`core.stats.bootstrap_ci`):
none from fewer than two shared units. When every difference is the same there is none
either, unless the probe states the range of its unit values (`units.attrs[VALUE_RANGE]`,
e.g. (0, 100) for a share in %): then the Wilson interval of that share of units, the rest
put at the widest differences (`core.stats.bounded_cluster_ci`)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from stancelab.core.evals import json_safe
from stancelab.core.stats import Estimate, bootstrap_ci, bounded_cluster_ci

UNIT_COLUMNS = ["model", "unit", "value"]
DIFFERENCE_COLUMNS = ["model_a", "model_b", "difference", "ci_low", "ci_high", "n"]
VALUE_RANGE = "value_range"  # units.attrs key: (lowest, highest) a unit value can take


def _difference(differences: pd.Series, value_range: tuple[float, float] | None, seed: int) -> Estimate:
    """Mean paired difference with its CI over units (bounded when the value range is known)."""
    values = differences.to_numpy(dtype=float)
    if value_range is None:
        return bootstrap_ci(values, seed=seed)
    lowest, highest = value_range
    return bounded_cluster_ci(values, differences.index.to_numpy(), lowest - highest, highest - lowest, seed=seed)


def paired_differences(units: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """For each pair of models: mean of (a - b) over the units both have a value for."""
    value_range = units.attrs.get(VALUE_RANGE)
    wide = units.dropna(subset=["value"]).pivot_table(index="unit", columns="model",
                                                      values="value", aggfunc="mean")  # fmt: skip
    rows = []
    for model_a, model_b in itertools.combinations(sorted(wide.columns), 2):
        both = wide[[model_a, model_b]].dropna()
        estimate = _difference(both[model_a] - both[model_b], value_range, seed)
        rows.append({"model_a": model_a, "model_b": model_b, "difference": estimate.value,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n})  # fmt: skip
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)


def difference_records(units: pd.DataFrame | None, seed: int = 0) -> list[dict[str, Any]]:
    """`paired_differences` as JSON-safe records for summary.json (none for < 2 models)."""
    if units is None or units.empty or units["model"].nunique() < 2:
        return []
    frame = paired_differences(units, seed).replace({np.nan: None})
    return [{key: json_safe(value) for key, value in row.items()} for row in frame.to_dict("records")]

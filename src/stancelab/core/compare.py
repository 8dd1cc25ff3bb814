"""Comparing models on a headline: paired differences over the units both models share
(issues, statements, topic cells), with a 95% BCa bootstrap CI (`core.stats.bootstrap_ci`):
none from fewer than two shared units or when every difference is the same."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from stancelab.core.evals import json_safe
from stancelab.core.stats import bootstrap_ci

UNIT_COLUMNS = ["model", "unit", "value"]
DIFFERENCE_COLUMNS = ["model_a", "model_b", "difference", "ci_low", "ci_high", "n"]


def paired_differences(units: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """For each pair of models: mean of (a - b) over the units both have a value for."""
    wide = units.dropna(subset=["value"]).pivot_table(index="unit", columns="model",
                                                      values="value", aggfunc="mean")  # fmt: skip
    rows = []
    for model_a, model_b in itertools.combinations(sorted(wide.columns), 2):
        both = wide[[model_a, model_b]].dropna()
        estimate = bootstrap_ci((both[model_a] - both[model_b]).to_numpy(dtype=float), seed=seed)
        rows.append({"model_a": model_a, "model_b": model_b, "difference": estimate.value,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n})  # fmt: skip
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)


def difference_records(units: pd.DataFrame | None, seed: int = 0) -> list[dict[str, Any]]:
    """`paired_differences` as JSON-safe records for summary.json (none for < 2 models)."""
    if units is None or units.empty or units["model"].nunique() < 2:
        return []
    frame = paired_differences(units, seed).replace({np.nan: None})
    return [{key: json_safe(value) for key, value in row.items()} for row in frame.to_dict("records")]

"""Comparing models on a lens: paired differences of the headline over the units both models
share (issues, statements, topic cells), with a 95% bootstrap CI from scipy."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy.stats import bootstrap

UNIT_COLUMNS = ["model", "unit", "value"]
DIFFERENCE_COLUMNS = ["model_a", "model_b", "difference", "ci_low", "ci_high", "n"]
RESAMPLES = 2000


def _interval(differences: np.ndarray, seed: int) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean difference; none from fewer than two units or when
    every difference is the same (a zero-width interval would overstate)."""
    if differences.size < 2 or np.ptp(differences) == 0:
        return float("nan"), float("nan")
    result = bootstrap((differences,), np.mean, n_resamples=RESAMPLES, confidence_level=0.95,
                       method="percentile", random_state=np.random.default_rng(seed))  # fmt: skip
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def paired_differences(units: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """For each pair of models: mean of (a - b) over the units both have a value for."""
    wide = units.dropna(subset=["value"]).pivot_table(index="unit", columns="model",
                                                      values="value", aggfunc="mean")  # fmt: skip
    rows = []
    for model_a, model_b in itertools.combinations(sorted(wide.columns), 2):
        both = wide[[model_a, model_b]].dropna()
        differences = (both[model_a] - both[model_b]).to_numpy(dtype=float)
        low, high = _interval(differences, seed)
        rows.append({"model_a": model_a, "model_b": model_b,
                     "difference": float(differences.mean()) if differences.size else np.nan,
                     "ci_low": low, "ci_high": high, "n": int(differences.size)})  # fmt: skip
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)


def difference_matrix(differences: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(row minus column) differences as a square matrix, and whether each one's CI excludes 0."""
    models = sorted(set(differences["model_a"]) | set(differences["model_b"]))
    values = pd.DataFrame(np.nan, index=models, columns=models)
    clear = pd.DataFrame(False, index=models, columns=models)
    for _, row in differences.iterrows():
        a, b = row["model_a"], row["model_b"]
        values.loc[a, b], values.loc[b, a] = row["difference"], -row["difference"]
        excludes_zero = bool(row["ci_low"] > 0 or row["ci_high"] < 0)
        clear.loc[a, b] = clear.loc[b, a] = excludes_zero
    return values, clear

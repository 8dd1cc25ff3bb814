"""Comparing models on a lens in the report: the paired differences (`core.compare`) as a
square matrix for the heatmap."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stancelab.core.compare import DIFFERENCE_COLUMNS, UNIT_COLUMNS, paired_differences

__all__ = ["DIFFERENCE_COLUMNS", "UNIT_COLUMNS", "difference_matrix", "paired_differences"]


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

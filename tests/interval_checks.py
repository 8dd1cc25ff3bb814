"""Checks on a probe's result tables: no interval of zero width, never one bound alone."""

from __future__ import annotations

import pandas as pd


def interval_faults(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Every (table, column) whose intervals have zero width, or one bound without the other."""
    faults = []
    for name, table in tables.items():
        for low in [c for c in table.columns if str(c).endswith("ci_low")]:
            high = low[: -len("ci_low")] + "ci_high"
            bounds = table[[low, high]].astype(float)
            if (bounds[low].isna() != bounds[high].isna()).any():
                faults.append(f"{name}.{low}: one bound missing")
            both = bounds.dropna()
            if (both[high] <= both[low]).any():
                faults.append(f"{name}.{low}: {int((both[high] <= both[low]).sum())} of zero width")
    return faults

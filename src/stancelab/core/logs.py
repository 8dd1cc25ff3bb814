"""Finding Inspect logs and keeping the newest one per model."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd


def log_files(logs: str | Path | Iterable[str | Path]) -> list[Path]:
    """Inspect log files under a folder (recursively), or the given files that exist."""
    if isinstance(logs, str | Path):
        path = Path(logs)
        if path.is_dir():
            return sorted(path.rglob("*.eval")) + sorted(path.rglob("*.json"))
        return [path] if path.exists() else []
    return [Path(item) for item in logs]


def newest_log_per_model(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows from the newest log of each model (needs `model`, `log` and `created` columns),
    so that re-running into the same folder replaces results rather than doubling them."""
    if frame.empty:
        return frame
    newest = frame.sort_values("created").groupby("model")["log"].last()
    return frame[frame["log"].isin(set(newest))]

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


def as_dict(value: object) -> dict:
    import json

    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        parsed = json.loads(value)
        return parsed if isinstance(parsed, dict) else {}
    return {}


def scored_samples(logs: str | Path, task_name: str, scorer_name: str) -> pd.DataFrame:
    """One row per scored sample of a task: model, id, epoch, `metadata_*`, and the score's
    value, answer and metadata (`score` as a dict); the newest log wins per (model, id, epoch)."""
    from inspect_ai.analysis import (
        EvalInfo,
        EvalModel,
        EvalTask,
        SampleColumn,
        SampleSummary,
        samples_df,
    )

    def field(sample: object, name: str) -> object:
        score = (getattr(sample, "scores", None) or {}).get(scorer_name)
        if score is None:
            return None
        return score.metadata if name == "metadata" else getattr(score, name)

    files = [str(path) for path in log_files(logs)]
    columns = [
        *SampleSummary, *EvalModel, *EvalInfo, *EvalTask,
        SampleColumn("score", path=lambda s: field(s, "metadata"), full=True),
        SampleColumn("score_answer", path=lambda s: field(s, "answer"), full=True),
        SampleColumn("score_value", path=lambda s: field(s, "value"), full=True),
    ]  # fmt: skip
    frame = samples_df(files, columns=columns, quiet=True) if files else pd.DataFrame()
    if frame.empty or "task_name" not in frame:
        return pd.DataFrame()
    frame = frame[frame["task_name"] == task_name].sort_values("created")
    frame = frame.drop_duplicates(subset=["model", "id", "epoch"], keep="last").copy()
    frame["score"] = [as_dict(value) for value in frame["score"]]
    return frame.reset_index(drop=True)

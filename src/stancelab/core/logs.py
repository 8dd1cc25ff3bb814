"""Finding Inspect logs, and which of them count: every run in a folder counts.

A log's identity is its task, subject model, helper models (model roles), task
arguments and shard (`core.shards`: the eval metadata's `stancelab_shard`, a selection of
samples). A re-run with the same identity replaces the older log; any other run adds
to the folder's results. Runs that differ only in which samples they select (a limit,
a subset of categories, a shard) add their samples, and a sample both ran counts once, from
the newest log.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.shards import shard_of_log

# Sample fields the analyses never read: a full read skips them (a sample's events, every
# call's input and output, are most of it, and resolving their attachments most of the time).
UNREAD_SAMPLE_FIELDS = frozenset({"events"})


def log_files(logs: str | Path | Iterable[str | Path]) -> list[Path]:
    """Inspect log files under a folder (recursively), or the given files that exist."""
    if isinstance(logs, str | Path):
        path = Path(logs)
        if path.is_dir():
            return sorted(path.rglob("*.eval")) + sorted(path.rglob("*.json"))
        return [path] if path.exists() else []
    return [Path(item) for item in logs]


def as_dict(value: object) -> dict:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        parsed = json.loads(value)
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _roles_key(value: object) -> str:
    """`role=model` pairs of a log's model roles, sorted."""
    pairs = []
    for role, entry in sorted(as_dict(value).items()):
        model = entry.get("model") if isinstance(entry, dict) else entry
        pairs.append(f"{role}={model}")
    return ",".join(pairs)


def _arg_key(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value


def run_identity(frame: pd.DataFrame, ignore_args: Iterable[str] = (), shard: bool = True) -> pd.Series:
    """Each row's run identity: task, subject model, helper models, task arguments (less
    `ignore_args`) and, with `shard`, the shard, as one string. Needs samples_df's
    `task_name`, `model`, `model_roles` and `task_arg_*` columns (and eval `metadata`)."""
    ignored = {f"task_arg_{name}" for name in ignore_args}
    args = sorted(c for c in frame.columns if c.startswith("task_arg_") and c not in ignored)
    roles = frame["model_roles"] if "model_roles" in frame else pd.Series("", index=frame.index)
    parts = [frame["task_name"].astype(str), frame["model"].astype(str), roles.map(_roles_key)]
    parts += [frame[column].map(_arg_key).radd(f"{column}=") for column in args]
    if shard and "metadata" in frame:
        parts.append(frame["metadata"].map(lambda value: shard_of_log(as_dict(value))).radd("shard="))
    return pd.concat(parts, axis=1).astype(str).agg("|".join, axis=1)


def runs_that_count(frame: pd.DataFrame, selection_args: Iterable[str] = ()) -> pd.DataFrame:
    """The rows that count from a samples frame (needs `log`, `created`, `id` and `epoch` too):
    the newest log of each run identity, and of samples that runs differing only in
    `selection_args` (or only in their shard) both ran, the newest copy."""
    if frame.empty:
        return frame
    # Inspect's `created` has whole seconds; a log file is last written when its eval ends.
    written = frame["log"].map(_written)
    ordered = frame.assign(_written=written).sort_values(["created", "_written"], kind="stable")
    newest = ordered.groupby(run_identity(ordered))["log"].last()
    kept = ordered[ordered["log"].isin(set(newest))]
    sample = run_identity(kept, selection_args, shard=False) + "#" + kept["id"].astype(str) + "#" + kept[
        "epoch"].astype(str)  # fmt: skip
    return kept[~sample.duplicated(keep="last")].drop(columns="_written").sort_index()


def _written(log: object) -> int:
    path = Path(str(log))
    return path.stat().st_mtime_ns if path.exists() else 0


def samples_frame(logs: str | Path, extra_columns: Iterable[Any] = ()) -> pd.DataFrame:
    """Every sample of every log under `logs`: Inspect's sample summary, eval, model and task
    columns and `extra_columns` (Inspect `SampleColumn`s); full samples are read, without
    their events, only when a column asks for them. Empty without logs."""
    from inspect_ai.analysis import EvalInfo, EvalModel, EvalTask, SampleSummary, samples_df

    files = [str(path) for path in log_files(logs)]
    if not files:
        return pd.DataFrame()
    columns = [*SampleSummary, *EvalModel, *EvalInfo, *EvalTask, *extra_columns]
    return samples_df(files, columns=columns, quiet=True, exclude_fields=set(UNREAD_SAMPLE_FIELDS))


def scored_samples(
    logs: str | Path, task_name: str, scorer_name: str, selection_args: Iterable[str] = ()
) -> pd.DataFrame:
    """One row per scored sample of a task: model, id, epoch, `metadata_*`, and the score's
    value, answer and metadata (`score` as a dict), from every run that counts
    (`runs_that_count`)."""
    from inspect_ai.analysis import SampleColumn

    def field(sample: object, name: str) -> object:
        score = (getattr(sample, "scores", None) or {}).get(scorer_name)
        if score is None:
            return None
        return score.metadata if name == "metadata" else getattr(score, name)

    frame = samples_frame(logs, [
        SampleColumn("score", path=lambda s: field(s, "metadata"), full=True),
        SampleColumn("score_answer", path=lambda s: field(s, "answer"), full=True),
        SampleColumn("score_value", path=lambda s: field(s, "value"), full=True),
    ])  # fmt: skip
    if frame.empty or "task_name" not in frame:
        return pd.DataFrame()
    frame = runs_that_count(frame[frame["task_name"] == task_name], selection_args).copy()
    frame["score"] = [as_dict(value) for value in frame["score"]]
    return frame.reset_index(drop=True)

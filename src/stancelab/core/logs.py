"""Finding Inspect logs, and which of them count: every complete run in a folder counts.

A log's identity is its task, subject model, helper models (model roles), task
arguments and shard (`core.shards`: the eval metadata's `stancelab_shard`, a selection of
samples). A re-run with the same identity replaces the older log; any other run adds
to the folder's results. Runs that differ only in which samples they select (a limit,
a subset of categories, a shard) add their samples, and a sample both ran counts once, from
the newest log.

Only complete evidence counts: a log whose status is not `success` (a run killed, cancelled or
stopped by an error) is interrupted. Its finished samples are read only when no complete log
of its run (the same identity, less selection and shard) is in the folder, and the run is then
partial; a complete run is never replaced, nor added to, by an interrupted one. What was left
out (interrupted logs ignored, samples read from interrupted logs, shards missing) is recorded
in a `LogEvidence` while `recording_evidence()` is active, for every summary to state.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.shards import BATCH_PREFIX, shard_of_log

# Sample fields the analyses never read: a full read skips them (a sample's events, every
# call's input and output, are most of it, and resolving their attachments most of the time).
UNREAD_SAMPLE_FIELDS = frozenset({"events"})
COMPLETE = "success"
"""the status of a complete log (Inspect's `EvalLog.status`)"""


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


def run_identity(
    frame: pd.DataFrame, ignore_args: Iterable[str] = (), shard: bool = True
) -> pd.Series:
    """Each row's run identity: task, subject model, helper models, task arguments (less
    `ignore_args`) and, with `shard`, the shard, as one string. Needs samples_df's
    `task_name`, `model`, `model_roles` and `task_arg_*` columns (and eval `metadata`)."""
    if frame.empty:
        return pd.Series([], index=frame.index, dtype=str)
    ignored = {f"task_arg_{name}" for name in ignore_args}
    args = sorted(c for c in frame.columns if c.startswith("task_arg_") and c not in ignored)
    roles = frame["model_roles"] if "model_roles" in frame else pd.Series("", index=frame.index)
    parts = [frame["task_name"].astype(str), frame["model"].astype(str), roles.map(_roles_key)]
    parts += [frame[column].astype(object).map(_arg_key).radd(f"{column}=") for column in args]
    if shard and "metadata" in frame:
        parts.append(
            frame["metadata"].map(lambda value: shard_of_log(as_dict(value))).radd("shard=")
        )
    return pd.concat(parts, axis=1).astype(str).agg("|".join, axis=1)


# ---------------------------------------------------------------- evidence


@dataclass
class LogEvidence:
    """What an analysis read from a folder's logs, and what it left out."""

    ignored_logs: set[str] = field(default_factory=set)
    """interrupted logs left out: a complete log of their run is in the folder"""
    interrupted_samples: dict[str, set[str]] = field(default_factory=dict)
    """interrupted log -> the samples (`id#epoch`) read from it (no complete log of its run)"""
    missing_shards: dict[tuple[str, int], set[int]] = field(default_factory=dict)
    """(subject model, shard count N) -> shard indices without a complete log"""
    partial_models: set[str] = field(default_factory=set)

    @property
    def partial(self) -> bool:
        return bool(self.partial_models)

    def is_partial(self, model: str) -> bool:
        """Whether a subject model's results hold fewer samples than its runs select."""
        return model in self.partial_models

    def notes(self) -> list[str]:
        """What was left out, one line each ("2 interrupted logs ignored", ...)."""
        notes = []
        if self.ignored_logs:
            count = len(self.ignored_logs)
            notes.append(f"{count} interrupted {_plural(count, 'log')} ignored (a complete "
                         f"run of the same settings is in the folder)")  # fmt: skip
        read = {log: samples for log, samples in self.interrupted_samples.items() if samples}
        if read:
            samples = sum(len(ids) for ids in read.values())
            notes.append(f"{samples} {_plural(samples, 'sample')} read from {len(read)} "
                         f"interrupted {_plural(len(read), 'log')}: partial")  # fmt: skip
        several = len({model for model, _ in self.missing_shards}) > 1
        for (model, count), missing in sorted(self.missing_shards.items()):
            whose = f" for {model}" if several else ""
            notes.append(f"{_plural(len(missing), 'shard')} {_ranges(sorted(missing))} of {count} "
                         f"missing{whose}: partial")  # fmt: skip
        return notes

    def as_dict(self) -> dict[str, Any]:
        """The record summary.json holds under `evidence`."""
        return {
            "partial": self.partial,
            "partial_models": sorted(self.partial_models),
            "interrupted_logs_ignored": sorted(Path(log).name for log in self.ignored_logs),
            "interrupted_logs_read": {Path(log).name: len(ids) for log, ids in
                                      sorted(self.interrupted_samples.items()) if ids},
            "missing_shards": [{"model": model, "shards": sorted(missing), "of": count}
                               for (model, count), missing in sorted(self.missing_shards.items())],
            "notes": self.notes(),
        }  # fmt: skip


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else f"{noun}s"


def _ranges(numbers: list[int]) -> str:
    """[1, 3, 4, 5] -> '1, 3-5'."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


_RECORDING: ContextVar[LogEvidence | None] = ContextVar("stancelab_log_evidence", default=None)


@contextmanager
def recording_evidence() -> Iterator[LogEvidence]:
    """While inside, every read of logs that count (`counted_rows`, `runs_that_count`) adds
    what it read and left out to the yielded record."""
    evidence = LogEvidence()
    token = _RECORDING.set(evidence)
    try:
        yield evidence
    finally:
        _RECORDING.reset(token)


def evidence_record(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary's evidence record (empty for summaries without one, e.g. imports)."""
    record = summary.get("evidence")
    return record if isinstance(record, dict) else {}


def evidence_text(summary: dict[str, Any]) -> str:
    """What a summary's analysis left out, as the CLI and the report state it ('' when it read
    every sample of complete runs)."""
    record = evidence_record(summary)
    notes = record.get("notes") or []
    if not notes:
        return ""
    head = "Partial results" if record.get("partial") else "Complete results"
    return f"{head}: " + "; ".join(notes) + "."


# ---------------------------------------------------------------- which rows count


def _statuses(frame: pd.DataFrame) -> pd.Series:
    """Each row's log status (frames without the column are of complete logs)."""
    if "status" not in frame:
        return pd.Series(COMPLETE, index=frame.index)
    return frame["status"].fillna(COMPLETE).astype(str)


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows oldest log first. Inspect's `created` has whole seconds; a log file is last
    written when its eval ends."""
    written = frame["log"].map(_written)
    return frame.assign(_written=written).sort_values(["created", "_written"], kind="stable").drop(
        columns="_written")  # fmt: skip


def counted_rows(frame: pd.DataFrame, selection_args: Iterable[str] = ()) -> pd.DataFrame:
    """The rows of complete logs, and of interrupted logs whose run (identity less
    `selection_args` and shard) has no complete log in the frame; records what was read and
    left out (`recording_evidence`). Keeps the frame's order."""
    if frame.empty:
        return frame
    complete = (_statuses(frame) == COMPLETE).to_numpy()
    run = run_identity(frame, selection_args, shard=False).to_numpy()
    has_complete = pd.Series(run).isin(set(run[complete])).to_numpy()
    counts = complete | ~has_complete
    evidence = _RECORDING.get()
    if evidence is not None:
        evidence.ignored_logs.update(frame["log"].astype(str).to_numpy()[~counts])
        _record_shards(evidence, frame[counts], complete[counts], run[counts])
    return frame[counts]


def _record_shards(evidence: LogEvidence, frame: pd.DataFrame, complete: Any, run: Any) -> None:
    """Shards of each run without a complete log (none where an unsharded complete log
    covers the run); their model's results are partial."""
    if "metadata" not in frame:
        return
    models = frame["model"].astype(str).to_numpy()
    shards = [shard_of_log(as_dict(value)) for value in frame["metadata"]]
    done: dict[tuple[str, str], dict[int, set[int]]] = {}  # (run, model) -> {N: complete shards}
    whole: set[tuple[str, str]] = set()  # runs with an unsharded complete log
    for key, shard, finished in zip(zip(run, models, strict=True), shards, complete, strict=True):
        if not shard:
            if finished:
                whole.add(key)
            continue
        if shard.startswith(BATCH_PREFIX):  # `--until-ci` stops after any batch: none is missing
            continue
        index, count = (int(part) for part in shard.split("/"))
        complete_shards = done.setdefault(key, {}).setdefault(count, set())
        if finished:
            complete_shards.add(index)
    for key, by_count in done.items():
        if key in whole:
            continue
        for count, complete_shards in by_count.items():
            missing = set(range(1, count + 1)) - complete_shards
            if missing:
                evidence.missing_shards.setdefault((key[1], count), set()).update(missing)
                evidence.partial_models.add(key[1])


def runs_that_count(frame: pd.DataFrame, selection_args: Iterable[str] = ()) -> pd.DataFrame:
    """The rows that count from a samples frame (needs `log`, `created`, `id` and `epoch` too;
    `status`, where given, the log's status): of complete logs (`counted_rows`), the newest log
    of each run identity, and of samples that runs differing only in `selection_args` (or only
    in their shard) both ran, the newest copy; of an interrupted run without a complete log,
    each sample it finished, the newest copy."""
    if frame.empty:
        return frame
    selection_args = tuple(selection_args)
    ordered = _ordered(counted_rows(frame, selection_args))
    complete = _statuses(ordered) == COMPLETE
    newest = ordered[complete].groupby(run_identity(ordered[complete]))["log"].last()
    kept = ordered[ordered["log"].isin(set(newest)) | ~complete]
    sample = run_identity(kept, selection_args, shard=False) + "#" + kept["id"].astype(str) + "#" + kept[
        "epoch"].astype(str)  # fmt: skip
    kept = kept[~sample.duplicated(keep="last")]
    record_interrupted_reads(kept)
    return kept.sort_index()


def record_interrupted_reads(kept: pd.DataFrame) -> None:
    """Record the samples of `kept` (the rows an analysis reads) that come from interrupted
    logs; their models' results are partial."""
    evidence = _RECORDING.get()
    if evidence is None:
        return
    interrupted = kept[_statuses(kept) != COMPLETE]
    for log, group in interrupted.groupby("log"):
        ids = group["id"].astype(str) + "#" + group["epoch"].astype(str)
        evidence.interrupted_samples.setdefault(str(log), set()).update(ids)
        evidence.partial_models.update(group["model"].astype(str))


def _written(log: object) -> int:
    path = Path(str(log))
    return path.stat().st_mtime_ns if path.exists() else 0


def samples_frame(logs: str | Path, extra_columns: Iterable[Any] = ()) -> pd.DataFrame:
    """Every sample of every log under `logs`: Inspect's sample summary, eval, model and task
    columns, the log's `status` and `extra_columns` (Inspect `SampleColumn`s); full samples
    are read, without their events, only when a column asks for them. Empty without logs."""
    from inspect_ai.analysis import (
        EvalColumn,
        EvalInfo,
        EvalModel,
        EvalTask,
        SampleSummary,
        samples_df,
    )

    files = [str(path) for path in log_files(logs)]
    if not files:
        return pd.DataFrame()
    columns = [*SampleSummary, *EvalModel, *EvalInfo, *EvalTask, EvalColumn("status", path="status"),
               *extra_columns]  # fmt: skip
    frame = samples_df(files, columns=columns, quiet=True, exclude_fields=set(UNREAD_SAMPLE_FIELDS))
    return in_sample_order(frame)


def in_sample_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Each log's rows by epoch, then id (numbers as numbers), the order Inspect gives full
    samples; summaries come in the order the samples finished, which differs run to run."""
    if frame.empty or "log" not in frame:
        return frame
    log_rank = frame["log"].map({log: rank for rank, log in enumerate(frame["log"].unique())})
    id_key = frame["id"].map(
        lambda value: value if isinstance(value, str) else str(value).zfill(20)
    )
    keys = pd.DataFrame({"log": log_rank, "epoch": frame["epoch"], "id": id_key})
    order = keys.sort_values(["log", "epoch", "id"], kind="stable").index
    return frame.loc[order].reset_index(drop=True)


def scored_samples(
    logs: str | Path, task_name: str, scorer_name: str, selection_args: Iterable[str] = ()
) -> pd.DataFrame:
    """One row per scored sample of a task: model, id, epoch, `metadata_*`, and the score's
    value, answer and metadata (`score` as a dict), from every run that counts
    (`runs_that_count`)."""
    from inspect_ai.analysis import SampleColumn

    def score_field(sample: object, name: str) -> object:
        score = (getattr(sample, "scores", None) or {}).get(scorer_name)
        if score is None:
            return None
        return score.metadata if name == "metadata" else getattr(score, name)

    frame = samples_frame(logs, [
        SampleColumn("score", path=lambda s: score_field(s, "metadata"), full=True),
        SampleColumn("score_answer", path=lambda s: score_field(s, "answer"), full=True),
        SampleColumn("score_value", path=lambda s: score_field(s, "value"), full=True),
    ])  # fmt: skip
    if frame.empty or "task_name" not in frame:
        return pd.DataFrame()
    frame = runs_that_count(frame[frame["task_name"] == task_name], selection_args).copy()
    frame["score"] = [as_dict(value) for value in frame["score"]]
    return frame.reset_index(drop=True)

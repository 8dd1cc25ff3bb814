"""Finding Inspect logs, and which of them count: every complete run in a folder counts.

A run's configuration is what changes its measurement: its task, subject model, helper models
(model roles) and task arguments, less those that only select samples (each reader names them:
its `selection_args`) and those that draw other samples of the same measurement (`DRAW_ARGS`: a
seed). Where one model ran under several configurations in a folder, they are kept apart: its
rows are named `model · configuration` (the settings in which its runs differ,
`temperature=0.5`), so a run of one setting, complete or killed, never changes the figures of
another (`keep_configurations_apart`).

A log's identity is its configuration, its selection, its draw and its shard
(`core.runs.shards`: the eval metadata's `stancelab_shard`, a selection of samples). A re-run
with the same identity replaces the older log; any other run adds to the folder's results.
Runs of one configuration that differ only in which samples they select (a limit, a subset of
categories, a shard) add their samples, and a sample both ran counts once, from the newest log.

Only complete evidence counts: a log whose status is not `success` (a run killed, cancelled or
stopped by an error) is interrupted. Its finished samples are read only when no complete log
of its run (the same identity, less selection and shard) is in the folder, and the run is then
partial; a complete run is never replaced, nor added to, by an interrupted one. What was left
out (interrupted logs ignored, samples read from interrupted logs, shards missing) is returned
with the rows that count, as a `LogEvidence` (`core.results.evidence`), for every summary to state.

A file among the logs that is no readable Inspect log (a `.eval` cut short or empty, a stray
`notes.json`: what a partial copy of a shard's folder leaves) is skipped by every reader
(`log_files`), named, and makes the summary partial (`unreadable_logs`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from stancelab.core.data.aliases import CONFIG_SEPARATOR
from stancelab.core.results.evidence import LogEvidence

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

# Sample fields the analyses never read: a full read skips them (a sample's events, every
# call's input and output, are most of it, and resolving their attachments most of the time).
UNREAD_SAMPLE_FIELDS = frozenset({"events"})
# The columns of Inspect's sample summary the analyses read (the others, the prompt above all,
# cost most of a summary frame's time and memory at a full design).
READ_SUMMARY_COLUMNS = frozenset({"id", "epoch", "metadata_*", "error", "limit", "retries"})
SHARD_KEY = "stancelab_shard"
"""eval metadata key of a shard log: `I/N` (`BATCH_PREFIX` + ... for a batch of `--until-ci`)"""
BATCH_PREFIX = "until-ci batch "
"""how the shard of a batch of whole units (`core.runs.until_ci.Batch`) begins: not an `I/N` shard"""
COMPLETE = "success"
"""the status of a complete log (Inspect's `EvalLog.status`)"""


THINNED_MARK = "Key removed from summary"
"""how Inspect's sample summary begins a metadata value it cut (over 1 KB)"""
THIN_TEXT_WIDTH = 1024
THIN_PLACEHOLDER = "..."
"""Inspect's summary shortens a text to this width, ending it with the placeholder"""

UNREADABLE_ATTR = "stancelab_unreadable_logs"
"""`DataFrame.attrs` key of a samples frame: the files among its logs that could not be read"""


def candidate_log_files(logs: str | Path | Iterable[str | Path]) -> list[Path]:
    """Files named as Inspect logs under a folder (recursively: `*.eval`, `*.json`), or the
    given files that exist, readable or not."""
    if isinstance(logs, str | Path):
        path = Path(logs)
        if path.is_dir():
            return without_covered_shards(
                sorted(path.rglob("*.eval")) + sorted(path.rglob("*.json"))
            )
        return [path] if path.exists() else []
    return [Path(item) for item in logs]


def without_covered_shards(paths: list[Path]) -> list[Path]:
    """The files less the shard logs (`<name>.shards/<k>/`) that a complete merged log
    `<name>.eval` written after them covers: Inspect's rule for its view's listing
    (`core.runs.shard_sets`), so a merged sharded run counts once, as one eval."""
    from inspect_ai.log import EvalLogInfo

    from stancelab.core.inspect_private import without_merged_shards

    if not any(len(path.parts) >= 3 and path.parts[-3].endswith(".shards") for path in paths):
        return paths
    infos = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        infos.append(EvalLogInfo(name=str(path), type="file", size=stat.st_size,
                                 mtime=stat.st_mtime, task="", task_id="", suffix=None))  # fmt: skip
    try:
        kept = {info.name for info in without_merged_shards(infos)}
    except Exception:  # a merged log that cannot be read hides nothing
        return paths
    return [path for path in paths if str(path) in kept]


def log_files(logs: str | Path | Iterable[str | Path]) -> list[Path]:
    """The readable Inspect logs under a folder (recursively), or among the given files; a
    file that is no readable log is left out (`unreadable_logs` names it)."""
    return [path for path in candidate_log_files(logs) if readable_log(path)]


def log_headers(location: str | Path) -> list[EvalLog]:
    """The headers of the readable Inspect logs at a log location: a folder (`log_files`), or
    an fsspec URL (`store.location_log_headers`: one listing, no local copy)."""
    from stancelab.core.results.store import is_url, location_log_headers

    if is_url(location):
        return location_log_headers(str(location))
    return [log_header(path) for path in log_files(Path(location))]


def unreadable_logs(logs: str | Path | Iterable[str | Path]) -> set[str]:
    """The files under a folder (or among the given files) named as logs that are no readable
    Inspect log: a `.eval` cut short or empty, a JSON file that is not a log."""
    return {str(path) for path in candidate_log_files(logs) if not readable_log(path)}


_HEADERS: dict[tuple[str, int, int], EvalLog | None] = {}


def _cached_header(path: str | Path) -> EvalLog | None:
    """The file's log header, read once per process while the file is unchanged (a full
    design's log holds every sample's reductions, which Inspect reads with its header: about a
    second at 35,000 samples); None for a file that is no readable log. The cached header
    leaves the reductions out."""
    from inspect_ai.log import read_eval_log

    path = Path(str(path).removeprefix("file://"))
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _HEADERS:
        try:
            header = read_eval_log(str(path), header_only=True)
            header.reductions = None
            _HEADERS[key] = header
        except Exception:
            _HEADERS[key] = None
    return _HEADERS[key]


def log_header(path: str | Path) -> EvalLog:
    """A local log file's header (a path, or a `file://` URL) as Inspect reads it
    (`read_eval_log(header_only=True)`), less its reductions, read once per process while the
    file is unchanged; a file that is no readable log is a `ValueError`."""
    header = _cached_header(path)
    if header is None:
        raise ValueError(f"{path} is no readable Inspect log")
    return header


def readable_log(path: Path) -> bool:
    """Whether Inspect reads the file's log header (once per process while it is unchanged)."""
    return _cached_header(path) is not None


def frame_evidence(frame: pd.DataFrame) -> LogEvidence:
    """The evidence a samples frame carries by itself: the files among its logs that could
    not be read (`samples_frame`)."""
    return LogEvidence(unreadable_logs=set(frame.attrs.get(UNREADABLE_ATTR, ())))


def shard_of_log(metadata: dict[str, Any] | None) -> str:
    """The shard (`I/N`) an eval's metadata names, '' for a whole run."""
    return str((metadata or {}).get(SHARD_KEY) or "")


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
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
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
    joined = parts[0].astype(str)
    for part in parts[1:]:  # column by column: a row-wise join costs seconds at a full design
        joined = joined + "|" + part.astype(str)
    return joined


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


class Counted(NamedTuple):
    """What a reader of logs returns: the rows that count, and what its read left out."""

    rows: pd.DataFrame
    evidence: LogEvidence


def counted_rows(frame: pd.DataFrame, selection_args: Iterable[str] = ()) -> Counted:
    """The rows of complete logs, and of interrupted logs whose run (identity less
    `selection_args` and shard) has no complete log in the frame, with the evidence of what
    was left out (interrupted logs ignored, shards missing). Keeps the frame's order."""
    evidence = frame_evidence(frame)
    if frame.empty:
        return Counted(frame, evidence)
    complete = (_statuses(frame) == COMPLETE).to_numpy()
    run = run_identity(frame, selection_args, shard=False).to_numpy()
    has_complete = pd.Series(run).isin(set(run[complete])).to_numpy()
    counts = complete | ~has_complete
    evidence.ignored_logs.update(frame["log"].astype(str).to_numpy()[~counts])
    _record_shards(evidence, frame[counts], complete[counts], run[counts])
    return Counted(frame[counts], evidence)


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


DRAW_ARGS = ("seed",)
"""task arguments that draw other samples of the same measurement: runs that differ in them
are one configuration, and pool (each sample its own: they are other prompts)"""


def configuration_labels(
    frame: pd.DataFrame, selection_args: Iterable[str] = (), own_roles: Iterable[str] = ()
) -> pd.Series:
    """Per row, its configuration's name among its model's in the frame: the task arguments
    (less `selection_args` and `DRAW_ARGS`) and helper models (less `own_roles`, which the
    reader keeps apart itself) in which that model's runs of the task differ
    (`temperature=0.5, judge=openai/x`; an unset argument reads `default`), '' where the model
    ran under one configuration."""
    labels = pd.Series("", index=frame.index, dtype=object)
    if frame.empty:
        return labels
    ignored = {f"task_arg_{name}" for name in (*selection_args, *DRAW_ARGS)}
    own = set(own_roles)
    columns = sorted(c for c in frame.columns if c.startswith("task_arg_") and c not in ignored)
    settings = {column.removeprefix("task_arg_"): frame[column].astype(object).map(_arg_key)
                for column in columns}  # fmt: skip
    if "model_roles" in frame:
        settings["roles"] = frame["model_roles"].map(
            lambda value: _roles_key({k: v for k, v in as_dict(value).items() if k not in own})
        )
    values = pd.DataFrame(settings, index=frame.index)
    for _, group in values.groupby([frame["task_name"].astype(str), frame["model"].astype(str)]):
        varying = [name for name in values.columns if group[name].nunique() > 1]
        if varying:
            labels[group.index] = group[varying].apply(_label, axis=1)
    return labels


def _label(row: pd.Series) -> str:
    return ", ".join(value if name == "roles" else f"{name}={value or 'default'}"
                     for name, value in row.items())  # fmt: skip


def keep_configurations_apart(
    frame: pd.DataFrame, selection_args: Iterable[str] = (), own_roles: Iterable[str] = ()
) -> tuple[pd.DataFrame, LogEvidence]:
    """The frame with the rows of a model that ran under several configurations named
    `model · configuration` (`configuration_labels`), and the evidence that names them."""
    evidence = LogEvidence()
    labels = configuration_labels(frame, selection_args, own_roles)
    several = labels != ""
    if not several.any():
        return frame, evidence
    models = frame["model"].astype(str)
    for model, group in labels[several].groupby(models[several]):
        evidence.configurations[str(model)] = set(group)
    named = models.where(~several, models + CONFIG_SEPARATOR + labels)
    return frame.assign(model=named), evidence


def runs_that_count(
    frame: pd.DataFrame,
    selection_args: Iterable[str] = (),
    keep_apart: bool = True,
    own_roles: Iterable[str] = (),
) -> Counted:
    """The rows that count from a samples frame (needs `log`, `created`, `id` and `epoch` too;
    `status`, where given, the log's status), each model's configurations kept apart
    (`keep_configurations_apart`): of complete logs (`counted_rows`), the newest log
    of each run identity, and of samples that runs differing only in `selection_args` (or only
    in their shard) both ran, the newest copy; of an interrupted run without a complete log,
    each sample it finished, the newest copy. With the evidence of what the read left out.
    `keep_apart=False`: for a reader that names configurations itself (llm-bias-bench);
    `own_roles`: helper roles whose models the reader keeps apart itself (graders)."""
    if frame.empty:
        return Counted(frame, frame_evidence(frame))
    selection_args = tuple(selection_args)
    apart = LogEvidence()
    if keep_apart:
        frame, apart = keep_configurations_apart(frame, selection_args, own_roles)
    counted = counted_rows(frame, selection_args)
    counted.evidence.add(apart)
    ordered = _ordered(counted.rows)
    complete = _statuses(ordered) == COMPLETE
    newest = ordered[complete].groupby(run_identity(ordered[complete]))["log"].last()
    kept = ordered[ordered["log"].isin(set(newest)) | ~complete]
    sample = run_identity(kept, selection_args, shard=False) + "#" + kept["id"].astype(str) + "#" + kept[
        "epoch"].astype(str)  # fmt: skip
    kept = kept[~sample.duplicated(keep="last")]
    return Counted(kept.sort_index(), counted.evidence.add(interrupted_reads(kept)))


def interrupted_reads(kept: pd.DataFrame) -> LogEvidence:
    """The evidence of the samples of `kept` (the rows an analysis reads) that come from
    interrupted logs; their models' results are partial."""
    evidence = LogEvidence()
    interrupted = kept[_statuses(kept) != COMPLETE]
    for log, group in interrupted.groupby("log"):
        ids = group["id"].astype(str) + "#" + group["epoch"].astype(str)
        evidence.interrupted_samples.setdefault(str(log), set()).update(ids)
        evidence.partial_models.update(group["model"].astype(str))
    return evidence


def _written(log: object) -> int:
    path = Path(str(log))
    return path.stat().st_mtime_ns if path.exists() else 0


def samples_frame(
    logs: str | Path | Iterable[str | Path], extra_columns: Iterable[Any] = ()
) -> pd.DataFrame:
    """Every sample of every readable log under `logs`: Inspect's sample summary, eval, model and
    task columns, the log's `status` and `extra_columns` (Inspect `SampleColumn`s); full samples
    are read, without their events, only when a column asks for them. Empty without logs. The
    files that are no readable log are in `attrs[UNREADABLE_ATTR]` (`frame_evidence`)."""
    from inspect_ai.analysis import (
        EvalColumn,
        EvalInfo,
        EvalModel,
        EvalTask,
        SampleSummary,
        samples_df,
    )

    from stancelab.core.inspect_private import thin_text_without_rewrap

    thin_text_without_rewrap()  # the summaries' validation thins each text again
    candidates = candidate_log_files(logs)
    files = [str(path) for path in candidates if readable_log(path)]
    unreadable = sorted({str(path) for path in candidates} - set(files))
    if not files:
        frame = pd.DataFrame()
    else:
        summary = [column for column in SampleSummary if column.name in READ_SUMMARY_COLUMNS]
        columns = [*summary, *EvalModel, *EvalInfo, *EvalTask, EvalColumn("status", path="status"),
                   *extra_columns]  # fmt: skip
        headers = [log_header(file) for file in files]  # read once, not again by samples_df
        frame = in_sample_order(samples_df(headers, columns=columns, quiet=True,
                                           exclude_fields=set(UNREAD_SAMPLE_FIELDS)))  # fmt: skip
    frame.attrs[UNREADABLE_ATTR] = unreadable
    return frame


def summaries_else_full(
    logs: str | Path | Iterable[str | Path],
    summary_columns: Iterable[Any],
    full_columns: Iterable[Any],
    whole: Callable[[pd.DataFrame], pd.Series],
) -> pd.DataFrame:
    """Every sample under `logs` as `samples_frame` reads it with `summary_columns`, from the
    sample summaries (a full sample costs a hundred times its summary to read); the logs with a
    row that `whole` finds lacking (a value Inspect cut from the summary, a log written before
    its scorer recorded what is read) are read again from their full samples with
    `full_columns`, those logs only."""
    frame = samples_frame(logs, summary_columns)
    if frame.empty:
        return frame
    lacking = list(frame.loc[~whole(frame).astype(bool), "log"].unique())
    if not lacking:
        return frame
    order = list(frame["log"].unique())
    unreadable = frame.attrs.get(UNREADABLE_ATTR, [])
    full = samples_frame(lacking, full_columns)
    mixed = pd.concat([frame[~frame["log"].isin(lacking)], full], ignore_index=True)
    mixed = in_sample_order(mixed, order)
    mixed.attrs[UNREADABLE_ATTR] = unreadable
    return mixed


def cut_from_summary(value: object) -> bool:
    """Whether a value read from a sample summary is Inspect's mark of a value cut for size,
    or a text it shortened (`...` at its width)."""
    if not isinstance(value, str):
        return False
    return value.startswith(THINNED_MARK) or (
        len(value) >= THIN_TEXT_WIDTH - len(THIN_PLACEHOLDER) and value.endswith(THIN_PLACEHOLDER)
    )


def in_sample_order(frame: pd.DataFrame, log_order: Iterable[str] | None = None) -> pd.DataFrame:
    """Each log's rows by epoch, then id (numbers as numbers), the order Inspect gives full
    samples; summaries come in the order the samples finished, which differs run to run. Logs
    come in `log_order` (else their first row's)."""
    if frame.empty or "log" not in frame:
        return frame
    logs = frame["log"].unique() if log_order is None else log_order
    log_rank = frame["log"].map({log: rank for rank, log in enumerate(logs)})
    id_key = frame["id"].map(
        lambda value: value if isinstance(value, str) else str(value).zfill(20)
    )
    keys = pd.DataFrame({"log": log_rank, "epoch": frame["epoch"], "id": id_key})
    order = keys.sort_values(["log", "epoch", "id"], kind="stable").index
    return frame.loc[order].reset_index(drop=True)


def no_value_cut(score: dict[str, Any]) -> bool:
    """Whether a score's metadata read from a sample summary holds every value whole (Inspect
    cuts a value over 1 KB from a summary); a nested value is kept whole or cut whole."""
    return not any(cut_from_summary(value) for value in score.values())


def scored_samples(
    logs: str | Path,
    task_name: str,
    scorer_name: str,
    selection_args: Iterable[str] = (),
    own_roles: Iterable[str] = (),
    summary_holds: Callable[[dict[str, Any]], bool] = no_value_cut,
) -> Counted:
    """One row per scored sample of a task: model, id, epoch, `metadata_*`, and the score's
    value, answer and metadata (`score` as a dict), from every run that counts
    (`runs_that_count`), with the evidence of what the read left out. Read from the sample
    summaries; a log with a sample of the task whose summary lacks what is read (a sample
    metadata value cut, or a score's metadata where `summary_holds` says so) is read from its
    full samples (`summaries_else_full`)."""
    from inspect_ai.analysis import SampleColumn

    def score_field(sample: object, name: str) -> object:
        score = (getattr(sample, "scores", None) or {}).get(scorer_name)
        if score is None:
            return None
        return score.metadata if name == "metadata" else getattr(score, name)

    def columns(full: bool) -> list[SampleColumn]:
        return [SampleColumn(f"score{suffix}", path=partial(score_field, name=name), full=full)
                for suffix, name in (("", "metadata"), ("_answer", "answer"), ("_value", "value"))]  # fmt: skip

    def whole(frame: pd.DataFrame) -> pd.Series:
        if "task_name" not in frame:
            return pd.Series(True, index=frame.index)
        metadata = [column for column in frame if column.startswith("metadata_")]
        lacking = frame[metadata].map(cut_from_summary).any(axis=1) | ~frame["score"].map(
            lambda score: summary_holds(as_dict(score))
        )  # fmt: skip
        return ~(lacking & (frame["task_name"] == task_name))

    frame = summaries_else_full(logs, columns(False), columns(True), whole)
    if frame.empty or "task_name" not in frame:
        return Counted(pd.DataFrame(), frame_evidence(frame))
    rows, evidence = runs_that_count(
        frame[frame["task_name"] == task_name], selection_args, own_roles=own_roles
    )
    rows = rows.copy()
    rows["score"] = [as_dict(value) for value in rows["score"]]
    return Counted(rows.reset_index(drop=True), evidence)

"""Inspect's shard layout for `--shard I/N` and `--workers`, and the merge of a finished set.

Each shard of one eval (a task with its arguments, one subject model, its helper models, N
shards) writes its logs to `LOC/<name>.shards/<I>/`, the layout Inspect's listing, viewer and
`inspect ctl --log-dir` read as one shard set (`inspect_ai._util.log_layout`); `<name>` is
`<task>_<id>`, the id a digest of that identity, so every machine names the same set alike. A
re-run of a shard adds an attempt to its own folder (the newest attempt is the shard's, by
Inspect's `attempt_sort_key`). Once every shard's newest attempt is complete, `merge_shard_sets`
writes the merged log `LOC/<name>.eval` (samples, usage and the shards' ledger in
`EvalSpec.shards`; metrics recomputed by Inspect's `recompute_metrics`): Inspect's view then
lists the run as that one eval and hides the shards it covers, and stancelab's readers do the
same (`core.results.logs.candidate_log_files`). Inspect 0.3.285 has the layout, the listing
and the ledger's model, but no merge: stancelab writes it, through Inspect's public reader
and writer.

Task ids: every shard attempt is an `eval()` of its own, so Inspect gives it a fresh id
(`shortuuid`); the merged log's id is `SET_ID_PREFIX` + the digest, and `0` is outside
shortuuid's alphabet, so no two logs in a location share a task id and Inspect's clean-up of
older logs of a task id (`eval_set`'s `cleanup_older_eval_logs`) can delete no shard."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable
from typing import Any

from stancelab.core.results.logs import SHARD_KEY, shard_of_log

SET_ID_PREFIX = "s0"
"""how a shard set's id begins: `0` is never in an id Inspect draws (shortuuid's alphabet)"""
DIGEST_CHARS = 20


def set_name(task_name: str, task_args: dict[str, Any], model: str, roles: dict[str, str],
             count: int) -> str:  # fmt: skip
    """`<task>_<id>`: the shard set of one eval split into `count` shards."""
    identity = {"task": task_name.split("/")[-1], "args": task_args, "model": model,
                "roles": dict(sorted(roles.items())), "count": count}  # fmt: skip
    text = json.dumps(identity, sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]
    return f"{_clean(task_name.split('/')[-1])}_{SET_ID_PREFIX}{digest}"


def _clean(name: str) -> str:
    return "".join(char if char.isalnum() or char in "-" else "-" for char in name)


def shard_dir(log_dir: str, name: str, index: int) -> str:
    """`LOC/<name>.shards/<index>`: where a shard's attempts go."""
    from stancelab.core.inspect_private import eval_shards_dir

    merged = log_dir.rstrip("/") + f"/{name}.eval"
    return f"{eval_shards_dir(merged)}/{index}"


def set_id(merged_log: str) -> str:
    """The task id of a merged log (from its `<task>_<id>` name)."""
    return merged_log.rstrip("/").rsplit("/", 1)[-1].removesuffix(".eval").rsplit("_", 1)[-1]


MERGE_MAX_SAMPLES = 5_000
"""the most samples merged into one log: the merge holds every sample in memory (1.55 GB at
MillStone's 8,910, benchmarks/README.md); larger sets are read as shards, as before the merge"""


def merge_shard_sets(log_dir: str) -> list[str]:
    """Write the merged log of every shard set under `log_dir` whose N shards' newest attempts
    are all complete and whose merged log was not written from those attempts; the merged logs
    written."""
    from inspect_ai.log import list_eval_logs

    from stancelab.core.inspect_private import merged_log_candidates_for_shard

    if not _exists(log_dir):
        return []
    listing = list_eval_logs(log_dir, recursive=True)
    listed = {info.name for info in listing}
    sets: dict[str, dict[str, list[Any]]] = {}
    for info in listing:
        candidates = merged_log_candidates_for_shard(info.name)
        if candidates is None:
            continue
        shard_folder = info.name.rstrip("/").rsplit("/", 1)[0]
        attempts = sets.setdefault(candidates[0], {}).setdefault(shard_folder, [])
        attempts.append(info)
    written = []
    for merged, shards in sorted(sets.items()):
        current = [_newest(attempts) for _, attempts in sorted(shards.items(), key=_by_index)]
        if merged in listed and _merged_from(merged, current):
            continue  # merged from these very attempts
        try:
            done = merge_set(merged, current)
        except OSError as error:  # e.g. a read-only copy: its shards are read as they are
            print(f"shards of {merged} not merged ({error}); they are read as shards",
                  file=sys.stderr)  # fmt: skip
            continue
        if done:
            written.append(merged if "://" in log_dir else merged.removeprefix("file://"))
    return written


def _merged_from(merged: str, current: list[Any]) -> bool:
    """Whether the merged log was written from exactly the attempts `current` (its ledger names
    each shard's log and size). Not by modification times: a copy of a location on object
    storage has whole seconds, in which a shard's last write and the merge often fall alike."""
    from inspect_ai.log import read_eval_log

    try:
        header = read_eval_log(merged, header_only=True)
    except Exception:  # cut short, or unreadable: written again
        return False
    ledger = header.eval.shards.ledger if header.eval.shards else []
    written = {(entry.shard, entry.log, entry.size) for entry in ledger}
    return header.status == "success" and written == {
        (_shard_folder(info), info.name.rsplit("/", 1)[-1], info.size) for info in current
    }


def _shard_folder(info: Any) -> str:
    """A shard attempt's shard, as its folder names it (`<name>.shards/<I>/<log>`)."""
    return str(info.name.rstrip("/").rsplit("/", 2)[-2])


def _by_index(item: tuple[str, object]) -> tuple[bool, int, str]:
    name = item[0].rsplit("/", 1)[-1]
    return (not name.isdigit(), int(name) if name.isdigit() else 0, name)


def _newest(attempts: list[Any]) -> Any:
    from stancelab.core.inspect_private import attempt_sort_key

    return max(attempts, key=attempt_sort_key)


def _exists(log_dir: str) -> bool:
    from pathlib import Path

    if "://" in log_dir and not log_dir.startswith("file://"):
        return True
    return Path(log_dir.removeprefix("file://")).exists()


def merge_set(merged: str, current: list[Any]) -> bool:
    """Write `merged` from the shards' newest attempts (`current`, in shard order) when they
    are every shard `1..N` of one eval, all complete, and hold at most MERGE_MAX_SAMPLES
    samples; whether it was written."""
    from inspect_ai.log import read_eval_log, recompute_metrics, write_eval_log

    try:
        headers = [read_eval_log(info.name, header_only=True) for info in current]
    except Exception:  # a shard's newest file is no readable log (a cut copy): not finished
        return False
    if not _complete(headers):
        return False
    samples = sum(header.results.total_samples if header.results else 0 for header in headers)
    if samples > MERGE_MAX_SAMPLES:
        print(f"shards of {merged} not merged: {samples:,} samples, over the {MERGE_MAX_SAMPLES:,} "
              "a merge holds in memory at once; they are read as shards", file=sys.stderr)  # fmt: skip
        return False
    logs = [read_eval_log(info.name) for info in current]
    log = merged_log(merged, logs, current)
    try:
        recompute_metrics(log)
    except Exception:  # a metric not in this process's registry: the shards' results stand
        log.results = None
    write_eval_log(log, location=merged)
    return True


def _complete(headers: list[Any]) -> bool:
    """Every shard `1..N` once, each complete."""
    shards = [shard_of_log(header.eval.metadata) for header in headers]
    counts = {shard.partition("/")[2] for shard in shards}
    if len(counts) != 1 or not all(header.status == "success" for header in headers):
        return False
    (count,) = counts
    return sorted(shards) == sorted(f"{index}/{count}" for index in range(1, int(count) + 1))


def merged_log(merged: str, logs: list[Any], current: list[Any]) -> Any:
    """One eval from its shards' logs: the first shard's spec and plan, every sample, summed
    usage, the ledger of the shards read (`EvalSpec.shards`)."""
    from inspect_ai.log import EvalLog, EvalShards, EvalStats

    first = logs[0]
    spec = first.eval.model_copy(deep=True)
    spec.task_id = spec.eval_id = set_id(merged)
    spec.created = min(log.eval.created for log in logs)
    spec.metadata = {k: v for k, v in (spec.metadata or {}).items() if k != SHARD_KEY} or None
    ids = [sample_id for log in logs for sample_id in (log.eval.config.sample_id or [])]
    spec.config.sample_id = None  # the whole run, not a selection of it; its ids:
    spec.dataset.sample_ids = ids
    spec.shards = EvalShards(selection="ids", ledger=[_entry(log, info)
                                                     for log, info in zip(logs, current, strict=True)])  # fmt: skip
    samples = sorted((sample for log in logs for sample in log.samples or []),
                     key=lambda sample: (sample.epoch, _id_key(sample.id)))  # fmt: skip
    stats = EvalStats(started_at=min(log.stats.started_at for log in logs),
                      completed_at=max(log.stats.completed_at for log in logs),
                      model_usage=_usage(log.stats.model_usage for log in logs),
                      role_usage=_usage(log.stats.role_usage for log in logs))  # fmt: skip
    reductions = [reduction.model_copy(deep=True) for log in logs[:1]
                  for reduction in log.reductions or []]  # fmt: skip
    for log in logs[1:]:
        for reduction, more in zip(reductions, log.reductions or [], strict=False):
            reduction.samples.extend(more.samples)
    log = EvalLog(version=first.version, status="success", eval=spec, plan=first.plan,
                  stats=stats, samples=samples)  # fmt: skip
    log.results = first.results.model_copy(deep=True) if first.results else None
    log.reductions = reductions or None
    return log


def _entry(log: Any, info: Any) -> Any:
    from inspect_ai.log import EvalShardEntry

    selection = sorted(map(str, log.eval.config.sample_id or []))
    digest = hashlib.sha256(json.dumps(selection).encode()).hexdigest()
    return EvalShardEntry(shard=_shard_folder(info),
                          log=info.name.rsplit("/", 1)[-1], eval_set_id=log.eval.eval_set_id,
                          status=log.status, error=log.error, samples=len(log.samples or []),
                          selected=len(selection), selection_digest=digest,
                          started_at=log.stats.started_at, completed_at=log.stats.completed_at,
                          model_usage=log.stats.model_usage, role_usage=log.stats.role_usage,
                          size=info.size, mtime=info.mtime)  # fmt: skip


def _usage(usages: Iterable[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for usage in usages:
        for model, used in usage.items():
            total[model] = total[model] + used if model in total else used
    return total


def _id_key(sample_id: object) -> tuple[int, str]:
    return (0, str(sample_id).zfill(20)) if isinstance(sample_id, int) else (1, str(sample_id))

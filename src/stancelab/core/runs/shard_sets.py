"""Inspect's shard layout for `--shard I/N` and `--workers`, and the merge of a finished set.

Each shard of one eval (a task with its arguments, one subject model, its helper models, N
shards) writes its logs to `LOC/<name>.shards/<I>/`, the layout Inspect's listing, viewer and
`inspect ctl --log-dir` read as one shard set (`inspect_ai._util.log_layout`); `<name>` is
`<task>_<id>`, the id a digest of that identity, so every machine names the same set alike. A
re-run of a shard adds an attempt to its own folder (the newest attempt is the shard's, by
Inspect's `attempt_sort_key`). Once every shard's newest attempt is complete, `merge_shard_sets`
writes the merged log `LOC/<name>.eval` (samples, usage and the shards' ledger in
`EvalSpec.shards`; metrics recomputed by Inspect's `recompute_metrics`), streamed: each shard's
zip is opened once, and its sample members are copied into the merged log through Inspect's own
`.eval` writer (`EvalRecorder`) as their compressed bytes, a batch at a time in (epoch, id)
order, as Inspect's `seed_from_prior_log` copies a prior log's samples; the shards' summaries
become the merged log's journal and summaries. No sample is parsed into an `EvalSample`: its
scores, metadata and error, all `recompute_metrics` reads, come from a plain `json.loads` of its
member. Shard members are written condensed (attachments and pooled events) by Inspect's run,
so the copy is what condensing them again would write, as Inspect reads it. The merge holds a
batch of samples, not the run. Inspect 0.3.285 has the layout, the listing and the ledger's
model, but no merge.

Once merged, every attempt of the set is renamed `<log>.eval.merged` (`MERGED_SUFFIX`), a name
Inspect's listing takes for no log: `inspect log list` (recursive or not), `list_eval_logs` and
`inspect view` list the run as its merged log alone, and stancelab's readers read the merged
log (`core.results.logs.candidate_log_files`). The merge, a re-merge after a shard's new
attempt (which replaces that shard only) and the skip of a finished shard
(`core.runs.shards.finished_shard`) still read the renamed attempts. A local copy of a location
(`core.results.store`) is not renamed: its shards stay as the store has them, hidden from the
analysis by Inspect's rule for its view (`without_merged_shards`).

Task ids: every shard attempt is an `eval()` of its own, so Inspect gives it a fresh id
(`shortuuid`); the merged log's id is `SET_ID_PREFIX` + the digest, and `0` is outside
shortuuid's alphabet, so no two logs in a location share a task id and Inspect's clean-up of
older logs of a task id (`eval_set`'s `cleanup_older_eval_logs`) can delete no shard."""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from zipfile import ZipFile, ZipInfo

from stancelab.core.results.logs import SHARD_KEY, shard_of_log

SET_ID_PREFIX = "s0"
"""how a shard set's id begins: `0` is never in an id Inspect draws (shortuuid's alphabet)"""
DIGEST_CHARS = 20
DATA_DESCRIPTOR = 0x08
"""a zip member's flag: its CRC and sizes follow its data rather than sit in its header"""


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


MERGED_SUFFIX = ".merged"
"""added to a shard attempt's file name once a finished merged log covers it: Inspect's
listing takes `<log>.eval.merged` for no log, so the location lists the merged log alone"""
READ_BATCH = 64
"""samples read at once while merging (the merge holds about this many, not the run)"""


@dataclass(frozen=True)
class Attempt:
    """One shard attempt's file, as the location's listing gave it."""

    name: str
    """its location (a `file://` URI or a URL), renamed or not"""
    size: int
    mtime: float | None

    @property
    def hidden(self) -> bool:
        """Whether it was renamed once merged (`MERGED_SUFFIX`)."""
        return self.name.endswith(MERGED_SUFFIX)

    @property
    def log_name(self) -> str:
        """Its file name as the shard wrote it (`<log>.eval`)."""
        return self.name.rsplit("/", 1)[-1].removesuffix(MERGED_SUFFIX)

    @property
    def shard(self) -> str:
        """Its shard, as its folder names it (`<name>.shards/<I>/<log>`)."""
        return self.name.rstrip("/").rsplit("/", 2)[-2]

    def order(self) -> Any:
        """Inspect's order of a shard's attempts (by the name the shard wrote)."""
        from stancelab.core.inspect_private import attempt_sort_key

        return attempt_sort_key(SimpleNamespace(name=self.log_name, mtime=self.mtime))


def merge_shard_sets(log_dir: str) -> list[str]:
    """Write the merged log of every shard set under `log_dir` whose N shards' newest attempts
    are all complete and whose merged log was not written from those attempts, then rename the
    set's attempts out of Inspect's listing; the merged logs written."""
    if not _exists(log_dir):
        return []
    sets, listed = shard_attempts(log_dir)
    written = []
    for merged, shards in sorted(sets.items()):
        current = [max(attempts, key=Attempt.order)
                   for _, attempts in sorted(shards.items(), key=_by_index)]  # fmt: skip
        if merged not in listed or not _merged_from(merged, current):
            try:
                done = merge_set(merged, current)
            except OSError as error:  # e.g. a read-only copy: its shards are read as they are
                print(f"shards of {merged} not merged ({error}); they are read as shards",
                      file=sys.stderr)  # fmt: skip
                continue
            if not done:
                continue
            written.append(merged if "://" in log_dir else merged.removeprefix("file://"))
        if not _is_copy(log_dir):
            hide_attempts([attempt for attempts in shards.values() for attempt in attempts])
    return written


def shard_attempts(log_dir: str) -> tuple[dict[str, dict[str, list[Attempt]]], set[str]]:
    """The shard sets under `log_dir` (merged log -> shard folder -> its attempts, renamed ones
    included), from one recursive listing, and every file the listing named."""
    from stancelab.core.inspect_private import log_filesystem, merged_log_candidates_for_shard

    try:
        files = log_filesystem(log_dir).ls(log_dir, recursive=True, on_error="raise")
    except FileNotFoundError:
        return {}, set()
    listed = {info.name for info in files if info.type == "file"}
    sets: dict[str, dict[str, list[Attempt]]] = {}
    for info in files:
        if info.type != "file" or not _is_attempt(info.name):
            continue
        candidates = merged_log_candidates_for_shard(info.name)
        if candidates is None:
            continue
        folder = info.name.rstrip("/").rsplit("/", 1)[0]
        attempt = Attempt(info.name, info.size, info.mtime)
        sets.setdefault(candidates[0], {}).setdefault(folder, []).append(attempt)
    return sets, listed


def _is_attempt(name: str) -> bool:
    return name.removesuffix(MERGED_SUFFIX).endswith(".eval")


def logs_with_merged_attempts(log_dir: str) -> list[Any]:
    """The logs under `log_dir` (recursively, newest first, as `list_eval_logs` lists them) and
    the attempts renamed once merged (`MERGED_SUFFIX`: read them with `format="eval"`), from
    one listing."""
    from inspect_ai.log import EvalLogInfo

    from stancelab.core.inspect_private import log_filesystem

    try:
        files = log_filesystem(log_dir).ls(log_dir, recursive=True, on_error="raise")
    except FileNotFoundError:
        return []
    logs = [info for info in files if info.type == "file"
            and info.name.removesuffix(MERGED_SUFFIX).endswith((".eval", ".json"))]  # fmt: skip
    logs.sort(key=lambda info: info.mtime or 0, reverse=True)
    return [EvalLogInfo(name=info.name, type="file", size=info.size, mtime=info.mtime, task="",
                        task_id="", suffix=None) for info in logs]  # fmt: skip


def hide_attempts(attempts: list[Attempt]) -> None:
    """Rename the attempts not yet renamed to `<log>.eval.merged` (one line if the location
    refuses: they then stay listed, as before the merge)."""
    from stancelab.core.inspect_private import log_filesystem

    for attempt in attempts:
        if attempt.hidden:
            continue
        try:
            log_filesystem(attempt.name).fs.mv(attempt.name, attempt.name + MERGED_SUFFIX)
        except FileNotFoundError:
            continue  # renamed meanwhile by another process merging the same set
        except OSError as error:
            print(f"merged shard {attempt.name} left in Inspect's listing ({error})",
                  file=sys.stderr)  # fmt: skip


def _is_copy(log_dir: str) -> bool:
    """Whether `log_dir` is a local copy of a log location (`core.results.store`)."""
    from stancelab.core.results.store import SOURCE_FILE, is_url

    if is_url(log_dir):
        return False
    return (Path(log_dir.removeprefix("file://")).parent / SOURCE_FILE).exists()


def _merged_from(merged: str, current: list[Attempt]) -> bool:
    """Whether the merged log was written from exactly the attempts `current` (its ledger names
    each shard's log and size). Not by modification times: a copy of a location on object
    storage has whole seconds, in which a shard's last write and the merge often fall alike."""
    from inspect_ai.log import read_eval_log

    from stancelab.core.results.logs import log_header
    from stancelab.core.results.store import is_url

    try:
        header = read_eval_log(merged, header_only=True) if is_url(merged) else log_header(merged)
    except Exception:  # cut short, or unreadable: written again
        return False
    ledger = header.eval.shards.ledger if header.eval.shards else []
    written = {(entry.shard, entry.log, entry.size) for entry in ledger}
    return header.status == "success" and written == {
        (attempt.shard, attempt.log_name, attempt.size) for attempt in current
    }


def _by_index(item: tuple[str, object]) -> tuple[bool, int, str]:
    name = item[0].rsplit("/", 1)[-1]
    return (not name.isdigit(), int(name) if name.isdigit() else 0, name)


def _exists(log_dir: str) -> bool:
    if "://" in log_dir and not log_dir.startswith("file://"):
        return True
    return Path(log_dir.removeprefix("file://")).exists()


def merge_set(merged: str, current: list[Attempt]) -> bool:
    """Write `merged` from the shards' newest attempts (`current`, in shard order) when they
    are every shard `1..N` of one eval, all complete, a batch of samples at a time; whether it
    was written."""
    from inspect_ai.log import read_eval_log

    from stancelab.core.inspect_private import (
        run_coroutine,
        single_threaded_zstd,
        thin_text_without_rewrap,
    )

    thin_text_without_rewrap()

    try:
        headers = [read_eval_log(attempt.name, header_only=True, format="eval")
                   for attempt in current]  # fmt: skip
    except Exception:  # a shard's newest file is no readable log (a cut copy): not finished
        return False
    if not _complete(headers):
        return False
    with _local_copies(current) as sources, single_threaded_zstd():
        run_coroutine(_write_merged(merged, headers, current, sources))
    return True


def _complete(headers: list[Any]) -> bool:
    """Every shard `1..N` once, each complete."""
    shards = [shard_of_log(header.eval.metadata) for header in headers]
    counts = {shard.partition("/")[2] for shard in shards}
    if len(counts) != 1 or not all(header.status == "success" for header in headers):
        return False
    (count,) = counts
    return sorted(shards) == sorted(f"{index}/{count}" for index in range(1, int(count) + 1))


@contextmanager
def _local_copies(current: list[Attempt]) -> Iterator[list[str]]:
    """Where to read each attempt's samples: a local file where it is, else a temporary copy
    (one download per shard, not one request per sample)."""
    from stancelab.core.inspect_private import log_filesystem
    from stancelab.core.results.store import is_url

    with tempfile.TemporaryDirectory(prefix="stancelab-merge-") as folder:
        sources = []
        for position, attempt in enumerate(current):
            if not is_url(attempt.name):
                sources.append(attempt.name)
                continue
            copy = f"{folder}/{position}.eval"
            log_filesystem(attempt.name).fs.get_file(attempt.name, copy)
            sources.append(copy)
        yield sources


async def _write_merged(merged: str, headers: list[Any], current: list[Attempt],
                        sources: list[str]) -> None:  # fmt: skip
    """Copy the shards' sample members, in (epoch, id) order, into the merged log through
    Inspect's `.eval` writer, compressed as they are, with the shards' own summaries as its
    journal; its results recomputed from the samples' scores."""
    from stancelab.core.inspect_private import EvalRecorder, write_sample_members

    summaries = [await _sample_summaries(source) for source in sources]
    spec, stats = merged_header(merged, headers, current, [len(each) for each in summaries])
    plan = headers[0].plan
    recorder = EvalRecorder(merged.rsplit("/", 1)[0])
    await recorder.log_init(spec, merged, clean=True)
    try:
        await recorder.log_start(spec, plan)
        scored = []
        for batch in _members_in_order(sources, summaries):
            scored.extend(_scored(member.body) for member in batch)
            await write_sample_members(recorder, spec, partial(_copy_members, batch),
                                       [member.summary for member in batch])  # fmt: skip
        results, reductions = merged_results(headers, spec, stats, scored)
        await recorder.log_finish(spec, "success", stats, results, reductions, None)
    except BaseException:
        await recorder.log_discard(spec, keep_destination=True)  # the merge before stays
        raise


async def _sample_summaries(source: str) -> list[Any]:
    """The summary of every sample in a shard's log (its (epoch, id) among them)."""
    from inspect_ai.log import read_eval_log_sample_summaries_async

    return list(await read_eval_log_sample_summaries_async(source, format="eval"))


@dataclass(frozen=True)
class Member:
    """A sample's member in a shard's zip."""

    archive: ZipFile
    info: ZipInfo
    body: bytes
    """its JSON, as the shard wrote it"""
    summary: Any


def _members_in_order(sources: list[str], summaries: list[list[Any]]) -> Iterator[list[Member]]:
    """Every shard's sample members in (epoch, id) order, `READ_BATCH` at a time, each shard's
    zip opened once (no sample is parsed into an `EvalSample`)."""
    from stancelab.core.inspect_private import log_filesystem, sample_member

    order = sorted((summary.epoch, _id_key(summary.id), position, index)
                   for position, each in enumerate(summaries)
                   for index, summary in enumerate(each))  # fmt: skip
    with ExitStack() as stack:
        archives = [stack.enter_context(ZipFile(stack.enter_context(
                        log_filesystem(source).fs.open(source, "rb"))))
                    for source in sources]  # fmt: skip
        for start in range(0, len(order), READ_BATCH):
            batch = []
            for _, _, position, index in order[start : start + READ_BATCH]:
                summary, archive = summaries[position][index], archives[position]
                info = archive.getinfo(sample_member(summary.id, summary.epoch))
                batch.append(Member(archive, info, archive.read(info), summary))
            yield batch


def _copy_members(members: list[Member], destination: ZipFile) -> None:
    for member in members:
        copy_zip_member(member.archive, member.info, destination)


def copy_zip_member(source: ZipFile, info: ZipInfo, destination: ZipFile) -> None:
    """Append `info`'s member of `source` to `destination` (open for writing, on a seekable
    file) as its compressed bytes, neither decompressed nor compressed again: the same name,
    time, compression, CRC and sizes. Writes as `ZipFile._open_to_write` does, through
    zipfile's writer state (`fp`, `start_dir`, `_lock`, `_writing`, `_didModify`)."""
    with source._lock:
        source.fp.seek(info.header_offset)
        header = source.fp.read(zipfile.sizeFileHeader)
        if header[:4] != zipfile.stringFileHeader:
            raise zipfile.BadZipFile(f"no local header for {info.filename}")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        source.fp.seek(info.header_offset + len(header) + name_length + extra_length)
        data = source.fp.read(info.compress_size)
    if len(data) != info.compress_size:
        raise zipfile.BadZipFile(f"{info.filename} is cut short")
    copied = ZipInfo(info.filename, info.date_time)
    copied.compress_type, copied.external_attr = info.compress_type, info.external_attr
    copied.CRC, copied.compress_size, copied.file_size = info.CRC, len(data), info.file_size
    copied.flag_bits = info.flag_bits & ~DATA_DESCRIPTOR  # sizes are in the local header
    with destination._lock:
        if destination._writing:
            raise ValueError("a member of the destination is open for writing")
        destination.fp.seek(destination.start_dir)
        copied.header_offset = destination.start_dir
        destination.fp.write(copied.FileHeader())
        destination.fp.write(data)
        destination.start_dir = destination.fp.tell()
        destination.filelist.append(copied)
        destination.NameToInfo[copied.filename] = copied
        destination._didModify = True


def _scored(body: bytes) -> Scored:
    """What `recompute_metrics` reads of a sample, from its member's JSON (its events are
    parsed as plain JSON, never validated)."""
    from inspect_ai.log import EvalError
    from inspect_ai.scorer import Score

    sample = json.loads(body)
    scores = sample.get("scores")
    error = sample.get("error")
    return Scored(sample["id"], sample["epoch"],
                  {name: Score.model_validate(score) for name, score in scores.items()}
                  if scores is not None else None,
                  sample.get("metadata", {}),
                  EvalError.model_validate(error) if error is not None else None)  # fmt: skip


@dataclass(frozen=True)
class Scored:
    """What `recompute_metrics` reads of a sample (a few fields, not a whole `EvalSample`)."""

    id: str | int
    epoch: int
    scores: Any
    metadata: Any
    error: Any


def merged_header(merged: str, headers: list[Any], current: list[Attempt],
                  samples: list[int]) -> tuple[Any, Any]:  # fmt: skip
    """One eval's spec and stats from its shards' headers: the first shard's spec, the whole
    run's sample ids, the ledger of the shards read (`EvalSpec.shards`), summed usage."""
    from inspect_ai.log import EvalShards, EvalStats

    spec = headers[0].eval.model_copy(deep=True)
    spec.task_id = spec.eval_id = set_id(merged)
    spec.created = min(header.eval.created for header in headers)
    spec.metadata = {k: v for k, v in (spec.metadata or {}).items() if k != SHARD_KEY} or None
    ids = [sample_id for header in headers for sample_id in (header.eval.config.sample_id or [])]
    spec.config.sample_id = None  # the whole run, not a selection of it; its ids:
    spec.dataset.sample_ids = ids
    spec.shards = EvalShards(selection="ids", ledger=[
        _entry(header, attempt, count)
        for header, attempt, count in zip(headers, current, samples, strict=True)])  # fmt: skip
    stats = EvalStats(started_at=min(header.stats.started_at for header in headers),
                      completed_at=max(header.stats.completed_at for header in headers),
                      model_usage=_usage(header.stats.model_usage for header in headers),
                      role_usage=_usage(header.stats.role_usage for header in headers))  # fmt: skip
    return spec, stats


def merged_results(headers: list[Any], spec: Any, stats: Any,
                   scored: list[Scored]) -> tuple[Any, Any]:  # fmt: skip
    """The merged log's results and reductions: recomputed from every sample's scores by
    Inspect's `recompute_metrics`, or, for a metric not in this process's registry, no results
    and the shards' reductions."""
    from inspect_ai.log import EvalLog, recompute_metrics

    first = headers[0]
    reductions = [reduction.model_copy(deep=True) for reduction in first.reductions or []]
    for header in headers[1:]:
        for reduction, more in zip(reductions, header.reductions or [], strict=False):
            reduction.samples.extend(more.samples)
    log = EvalLog(version=first.version, status="success", eval=spec, plan=first.plan,
                  stats=stats)  # fmt: skip
    log.samples = scored  # read as samples by `recompute_metrics` (no validation on assignment)
    log.results = first.results.model_copy(deep=True) if first.results else None
    log.reductions = reductions or None
    try:
        recompute_metrics(log)
    except Exception:  # a metric not in this process's registry: the shards' results stand
        log.results = None
    return log.results, log.reductions


def _entry(header: Any, attempt: Attempt, samples: int) -> Any:
    from inspect_ai.log import EvalShardEntry

    selection = sorted(map(str, header.eval.config.sample_id or []))
    digest = hashlib.sha256(json.dumps(selection).encode()).hexdigest()
    return EvalShardEntry(shard=attempt.shard, log=attempt.log_name,
                          eval_set_id=header.eval.eval_set_id, status=header.status,
                          error=header.error, samples=samples, selected=len(selection),
                          selection_digest=digest, started_at=header.stats.started_at,
                          completed_at=header.stats.completed_at,
                          model_usage=header.stats.model_usage, role_usage=header.stats.role_usage,
                          size=attempt.size, mtime=attempt.mtime)  # fmt: skip


def _usage(usages: Iterable[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for usage in usages:
        for model, used in usage.items():
            total[model] = total[model] + used if model in total else used
    return total


def _id_key(sample_id: object) -> tuple[int, str]:
    return (0, str(sample_id).zfill(20)) if isinstance(sample_id, int) else (1, str(sample_id))

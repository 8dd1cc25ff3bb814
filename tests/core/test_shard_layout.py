"""Sharded runs in Inspect's shard layout (`core.runs.shard_sets`): N shards in one folder are
one eval to Inspect's listing and to the analysis once merged, with the summary of a run in
one process; a shard cut short and run again changes nothing; Inspect's clean-up of a task
id's older logs deletes no shard. IssueBench with scripted mockllm models (fast, in process)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import (
    EvalSample,
    condense_sample,
    list_eval_logs,
    read_eval_log,
    read_eval_log_sample_summaries,
    recompute_metrics,
    write_eval_log,
)
from inspect_ai.model import ChatMessage

from stancelab.core.inspect_private import (
    EvalRecorder,
    async_zip,
    cleanup_older_eval_logs,
    get_logs,
    without_merged_shards,
)
from stancelab.core.results.logs import SHARD_KEY, candidate_log_files
from stancelab.core.runs import shard_sets
from stancelab.core.runs.shard_sets import MERGED_SUFFIX, merge_shard_sets
from stancelab.core.runs.shards import Shard
from stancelab.issuebench.results import analyze
from stancelab.issuebench.run import IssueBenchRun, run_issuebench
from tests.helpers import scripted_chat_model

SHARDS = 3


def _writer(messages: list[ChatMessage]) -> str:
    return f"A text in favour, as asked: {messages[-1].text}"


def _classifier(messages: list[ChatMessage]) -> str:
    return "1" if "in favour" in messages[-1].text else "I cannot decide"


def _run(out: Path, shard: str | None = None, calls: list[Any] | None = None) -> dict[str, Any]:
    """The module's design (into `out`, or shard `I/N` of it); `calls` gathers every call."""
    subject, written = scripted_chat_model(_writer, "mockllm/writer")
    classifier, classified = scripted_chat_model(_classifier, "mockllm/classifier")
    run = partial(IssueBenchRun, prompts="stancelab", limit=2, n_templates=2)
    result = run_issuebench(run(models=[subject], roles={"classifier": classifier}, out_dir=out,
                                shard=shard))  # fmt: skip
    if calls is not None:
        calls.extend([*written, *classified])
    return result


def _shards(out: Path, indices: range | list[int] = range(1, SHARDS + 1)) -> None:
    for index in indices:
        _run(out, f"{index}/{SHARDS}")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path]]:
    """A run in one process (its summary) and the same design in `SHARDS` shards, unmerged
    (each test copies the folder), run once for the module."""
    root = tmp_path_factory.mktemp("runs")
    whole = _run(root / "whole")
    _shards(root / "sharded")
    yield whole, root / "sharded"


def _copy(runs: tuple[dict[str, Any], Path], tmp_path: Path) -> tuple[dict[str, Any], Path]:
    whole, sharded = runs
    return whole, Path(shutil.copytree(sharded, tmp_path / "sharded"))


def _listed(folder: Path, recursive: bool = True) -> list[str]:
    """What Inspect's view lists in the folder (its listing less the shards a finished merged
    log covers), as paths relative to the folder."""
    logs = without_merged_shards(list_eval_logs(str(folder), recursive=recursive))
    return sorted(str(Path(log.name.removeprefix("file://")).relative_to(folder)) for log in logs)


def _inspect_log_list(folder: Path, *options: str) -> list[str]:
    """What the real `inspect log list --log-dir FOLDER --absolute` prints, one path a line."""
    inspect = Path(sys.executable).parent / "inspect"
    printed = subprocess.run([str(inspect), "log", "list", "--log-dir", str(folder),
                              "--absolute", *options], capture_output=True, text=True,
                             check=True, env={**os.environ, "NO_COLOR": "1"})  # fmt: skip
    return printed.stdout.split()


def test_n_shards_in_one_folder_are_one_eval_once_merged(runs: Any, tmp_path: Path) -> None:
    _, out = _copy(runs, tmp_path)
    logs = out / "logs"
    shard_logs = _listed(logs)
    assert len(shard_logs) == SHARDS
    assert all(len(Path(name).parts) == 3 and Path(name).parts[0].endswith(".shards")
               for name in shard_logs)  # fmt: skip  # Inspect's layout: <name>.shards/<k>/<log>

    (merged,) = merge_shard_sets(str(logs))
    # `inspect log list`, recursive by default: the merged log alone, the shards renamed
    assert [info.name for info in list_eval_logs(str(logs), recursive=True)] == [
        Path(merged).as_uri()]  # fmt: skip
    assert _inspect_log_list(logs) == [merged]
    assert sorted(path.name.removesuffix(MERGED_SUFFIX) for path in logs.glob("*.shards/*/*")) == sorted(
        Path(name).name for name in shard_logs)  # fmt: skip  # every shard kept, renamed
    assert _listed(logs) == [Path(merged).name]  # Inspect's listing less covered shards
    assert _listed(logs, recursive=False) == [Path(merged).name]  # `log list --no-recursive`
    served = asyncio.run(get_logs(str(logs), True, {}))  # what `inspect view` lists
    assert [Path(file.name).name for file in served.files] == [Path(merged).name]
    assert merge_shard_sets(str(logs)) == []  # merged after its shards: nothing to do again
    log = read_eval_log(merged)
    assert log.status == "success" and SHARD_KEY not in (log.eval.metadata or {})
    assert [entry.shard for entry in log.eval.shards.ledger] == ["1", "2", "3"]
    assert len(log.samples) == sum(entry.samples for entry in log.eval.shards.ledger) == 12
    assert log.results is not None and log.results.total_samples == 12
    assert log.eval.config.sample_id is None  # the whole run, not a selection of it
    assert sorted(map(str, log.eval.dataset.sample_ids)) == sorted(str(s.id) for s in log.samples)
    assert candidate_log_files(logs) == [Path(merged)]  # the analysis reads the merged log only


def test_the_merged_analysis_equals_a_run_in_one_process(runs: Any, tmp_path: Path) -> None:
    whole, out = _copy(runs, tmp_path)
    assert analyze(out) == whole  # the shards, before the merge
    assert merge_shard_sets(str(out / "logs"))
    assert analyze(out) == whole  # the merged log


def test_the_merge_streams_a_batch_of_samples_never_a_whole_shard(
    runs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merge reads each shard's header, then its samples a batch at a time (here 5 of the
    12): no shard is read whole, and the merged log holds every sample of every shard, in
    (epoch, id) order, with the results Inspect recomputes from them."""
    whole, out = _copy(runs, tmp_path)
    shard_files = sorted((out / "logs").glob("*.shards/*/*.eval"))
    shard_samples = [sample for path in shard_files for sample in read_eval_log(str(path)).samples]
    monkeypatch.setattr(shard_sets, "READ_BATCH", 5, raising=False)
    whole_reads: list[str] = []
    read_log = EvalRecorder.read_log.__func__  # type: ignore[attr-defined]

    async def spied(cls: Any, location: str, header_only: bool = False, *more: Any) -> Any:
        if not header_only:
            whole_reads.append(location)
        return await read_log(cls, location, header_only, *more)

    monkeypatch.setattr(EvalRecorder, "read_log", classmethod(spied))
    (merged,) = merge_shard_sets(str(out / "logs"))
    assert whole_reads == []
    monkeypatch.undo()
    log = read_eval_log(merged)
    expected = sorted(shard_samples, key=lambda sample: (sample.epoch, str(sample.id)))
    assert [(s.id, s.epoch) for s in log.samples] == [(s.id, s.epoch) for s in expected]
    assert [s.model_dump() for s in sorted(log.samples, key=lambda s: str(s.id))] == [
        s.model_dump() for s in sorted(shard_samples, key=lambda s: str(s.id))]  # fmt: skip
    recomputed = log.model_copy(deep=True)
    recompute_metrics(recomputed)
    assert log.results == recomputed.results and log.reductions == recomputed.reductions
    summaries = read_eval_log_sample_summaries(merged)
    assert sorted((s.id, s.epoch) for s in summaries) == sorted((s.id, s.epoch) for s in expected)
    assert analyze(out) == whole


def _members(logs: list[Path]) -> dict[tuple[str | int, int], bytes]:
    """Every sample member of the logs, as written, by (id, epoch)."""
    bodies = {}
    for log_file in logs:
        with zipfile.ZipFile(log_file) as archive:
            for summary in read_eval_log_sample_summaries(str(log_file)):
                member = f"samples/{summary.id}_epoch_{summary.epoch}.json"
                bodies[(summary.id, summary.epoch)] = archive.read(member)
    return bodies


def _pooled(sample: dict[str, Any]) -> tuple[Any, Any]:
    """What condensing a sample pools: its attachments and its events' shared data."""
    return sample.get("attachments"), sample.get("events_data")


def test_the_merged_log_is_what_inspects_writer_makes_of_the_shards_samples(
    runs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merge copies each shard's sample members as bytes; read by Inspect, the merged log
    is the log Inspect's own writer (`write_eval_log`) makes of the shards' samples, condensed,
    in (epoch, id) order, under the merged header: the same samples, summaries, reductions, and
    results recomputed from those samples. A shard's members are condensed already (their
    attachments and pooled events are those of the sample read and condensed again), so the
    copy loses no condensing."""
    _, out = _copy(runs, tmp_path)
    shard_files = sorted((out / "logs").glob("*.shards/*/*.eval"))
    shard_samples = [sample for path in shard_files for sample in read_eval_log(str(path)).samples]
    assert {key: _pooled(json.loads(body)) for key, body in _members(shard_files).items()} == {
        (sample.id, sample.epoch): _pooled(condense_sample(sample).model_dump(mode="json", exclude_none=True))
        for sample in shard_samples}  # fmt: skip
    monkeypatch.setattr(shard_sets, "READ_BATCH", 5)  # several batches and journal entries
    (merged,) = merge_shard_sets(str(out / "logs"))
    with zipfile.ZipFile(merged) as archive:
        assert archive.testzip() is None  # every member's bytes match its CRC
    log = read_eval_log(merged)
    expected = log.model_copy(deep=True)
    expected.samples = [condense_sample(sample) for sample in sorted(
        shard_samples, key=lambda sample: (sample.epoch, str(sample.id)))]  # fmt: skip
    recompute_metrics(expected)
    reference = str(tmp_path / "reference.eval")
    write_eval_log(expected, reference)
    written = read_eval_log(reference)
    for field in ("version", "status", "eval", "plan", "results", "stats", "error", "reductions"):
        assert getattr(log, field) == getattr(written, field), field
    assert [s.model_dump() for s in log.samples] == [s.model_dump() for s in written.samples]
    assert read_eval_log_sample_summaries(merged) == read_eval_log_sample_summaries(reference)


def test_the_merge_parses_no_sample_into_an_eval_sample(
    runs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sample's member is copied as bytes and read as plain JSON for its scores: the merge
    validates no `EvalSample` (its events are the bulk of a sample)."""
    _, out = _copy(runs, tmp_path)
    validated: list[Any] = []
    validate = EvalSample.model_validate

    def spied(data: Any, *more: Any, **options: Any) -> Any:
        validated.append(data)
        return validate(data, *more, **options)

    monkeypatch.setattr(EvalSample, "model_validate", spied)
    (merged,) = merge_shard_sets(str(out / "logs"))
    assert validated == []
    monkeypatch.undo()
    assert len(read_eval_log(merged).samples or []) == 12


def _merge_counting_reads(out: Path, batch: int,
                          monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, int], int]:  # fmt: skip
    """Merge `out` with `batch` samples a batch; how often each shard log's zip directory was
    parsed (Inspect's async reader and `zipfile` alike), and the samples read one by one
    through Inspect's sample reader."""
    import zipfile

    parses: dict[str, int] = {}
    sample_reads: list[object] = []

    def counted(name: object) -> None:
        shard_log = Path(str(name).removeprefix("file://"))
        if shard_log.parent.parent.name.endswith(".shards"):
            parses[f"{shard_log.parent.name}/{shard_log.name}"] = parses.get(
                f"{shard_log.parent.name}/{shard_log.name}", 0) + 1  # fmt: skip

    real_contents = zipfile.ZipFile._RealGetContents  # type: ignore[attr-defined]

    def contents(archive: zipfile.ZipFile) -> None:
        counted(archive.filename)
        real_contents(archive)

    real_directory = async_zip()._parse_central_directory

    async def directory(filesystem: object, filename: str, *more: object) -> Any:
        counted(filename)
        return await real_directory(filesystem, filename, *more)

    read_sample = EvalRecorder.read_log_sample.__func__  # type: ignore[attr-defined]

    async def sample(cls: Any, location: str, *more: Any, **options: Any) -> Any:
        sample_reads.append(location)
        return await read_sample(cls, location, *more, **options)

    with monkeypatch.context() as patched:
        patched.setattr(shard_sets, "READ_BATCH", batch, raising=False)
        patched.setattr(zipfile.ZipFile, "_RealGetContents", contents)
        patched.setattr(async_zip(), "_parse_central_directory", directory)
        patched.setattr(EvalRecorder, "read_log_sample", classmethod(sample))
        assert merge_shard_sets(str(out / "logs"))
    return parses, len(sample_reads)


def test_the_merge_reads_each_shard_a_fixed_number_of_times_whatever_its_batches(
    runs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each shard log's zip directory is parsed as often when its samples are copied one at a
    time as a batch of 64 at a time, and no sample is read, validated and written again one by
    one: a merge by Inspect's reads by id parsed a shard's directory again for every batch
    (its time grew with the samples times the batches; a MillStone set of 19,800 samples spent
    minutes there). The merged log is the same either way."""
    whole, out = _copy(runs, tmp_path)
    other = Path(shutil.copytree(out, tmp_path / "again"))
    parses_one, reads_one = _merge_counting_reads(out, 1, monkeypatch)
    parses_many, reads_many = _merge_counting_reads(other, 64, monkeypatch)
    assert len(parses_one) == SHARDS
    assert parses_one == parses_many
    assert reads_one == reads_many == 0
    merged_one, merged_many = (read_eval_log(str(path)) for path in
                               (*out.glob("logs/*.eval"), *other.glob("logs/*.eval")))  # fmt: skip
    assert merged_one.results == merged_many.results and len(merged_one.samples) == 12
    assert [s.model_dump() for s in merged_one.samples] == [
        s.model_dump() for s in merged_many.samples]  # fmt: skip
    assert analyze(out) == whole


def test_a_copy_with_whole_second_times_is_merged_once(runs: Any, tmp_path: Path) -> None:
    """A copy of a location on object storage gives every file its store's time, in whole
    seconds: a shard's last write and the merge fall in the same second, and the merged log
    still counts as the merge of those shards (not written again by the copy's analysis)."""
    _, out = _copy(runs, tmp_path)
    (merged,) = merge_shard_sets(str(out / "logs"))
    second = int(Path(merged).stat().st_mtime)
    for log_file in (out / "logs").rglob("*"):
        if log_file.is_file():
            os.utime(log_file, (second, second))
    assert merge_shard_sets(str(out / "logs")) == []


def _cut_short(log_file: Path) -> None:
    """The log a shard killed midway leaves: status `started`, half its samples."""
    log = read_eval_log(str(log_file))
    log.status, log.results = "started", None
    log.samples = (log.samples or [])[: len(log.samples or []) // 2]
    write_eval_log(log, str(log_file))


def test_a_shard_cut_short_then_run_again_gives_the_same_summary(runs: Any, tmp_path: Path) -> None:
    whole, out = _copy(runs, tmp_path)
    (shard_two,) = (out / "logs").glob("*.shards/2/*.eval")
    _cut_short(shard_two)
    assert merge_shard_sets(str(out / "logs")) == []  # a shard is not finished: no merge
    assert analyze(out)["evidence"]["partial_models"] == ["mockllm/writer"]

    _shards(out)  # shards 1 and 3 are skipped, 2 runs again as a new attempt
    assert [len(list(folder.glob("*.eval"))) for folder in sorted(
        (out / "logs").glob("*.shards/*"))] == [1, 2, 1]  # fmt: skip
    assert merge_shard_sets(str(out / "logs"))
    assert _listed(out / "logs") == [p.name for p in (out / "logs").glob("*.eval")]
    assert analyze(out) == whole


def test_old_flat_shard_logs_still_analyse_the_same(runs: Any, tmp_path: Path) -> None:
    """Shard logs written the old way (each in the log folder itself, the shard in its
    metadata) count as before."""
    whole, out = _copy(runs, tmp_path)
    for log_file in list((out / "logs").glob("*.shards/*/*.eval")):
        log_file.rename(out / "logs" / log_file.name)
    for folder in (out / "logs").glob("*.shards"):
        shutil.rmtree(folder)
    assert len(list((out / "logs").glob("*.eval"))) == SHARDS
    assert analyze(out) == whole


def test_inspects_clean_up_of_older_logs_deletes_no_shard(runs: Any, tmp_path: Path) -> None:
    """`eval_set` deletes every log of a task id but its newest: no two logs of a location
    share a task id (each shard attempt its own, the merged log its set's), so even asked for
    every task id, it deletes nothing."""
    _, out = _copy(runs, tmp_path)
    (shard_two,) = (out / "logs").glob("*.shards/2/*.eval")
    _cut_short(shard_two)
    _shards(out, [2])  # a second attempt of shard 2
    assert merge_shard_sets(str(out / "logs"))
    files = sorted(path for path in (out / "logs").rglob("*") if path.is_file())
    task_ids = [read_eval_log(str(path), header_only=True, format="eval").eval.task_id
                for path in files]  # fmt: skip
    assert len(files) == SHARDS + 2 and len(set(task_ids)) == len(files)
    cleanup_older_eval_logs(str(out / "logs"), set(task_ids))
    assert sorted(path for path in (out / "logs").rglob("*") if path.is_file()) == files


def test_a_shard_whose_newest_file_is_no_readable_log_is_not_merged(
    runs: Any, tmp_path: Path
) -> None:
    """What a partial copy of a shard's folder leaves (a `.eval` cut short) is no finished
    shard: no merge, the analysis names the file and is partial."""
    _, out = _copy(runs, tmp_path)
    (shard_two,) = (out / "logs").glob("*.shards/2/*.eval")
    shard_two.write_bytes(shard_two.read_bytes()[:3000])
    assert merge_shard_sets(str(out / "logs")) == []
    evidence = analyze(out)["evidence"]
    assert [Path(name).name for name in evidence["unreadable_logs"]] == [shard_two.name]


class _Unseekable(io.RawIOBase):
    """A file written front to back only: zipfile then puts each member's CRC and sizes in a
    data descriptor after its data."""

    def __init__(self) -> None:
        self.written = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.written += data
        return len(data)


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_ZSTANDARD])  # type: ignore[attr-defined]
def test_a_member_copied_as_its_compressed_bytes_reads_as_written(
    tmp_path: Path, compression: int
) -> None:
    """`copy_zip_member` appends a member as its compressed bytes, between members written as
    usual, from members written whole, streamed with zip64 headers, or with data descriptors."""
    bodies = {f"samples/{n}_epoch_1.json": json.dumps({"n": n, "text": "x" * 50 * n}).encode()
              for n in range(1, 4)}  # fmt: skip
    first, second, third = bodies
    with zipfile.ZipFile(tmp_path / "seekable.zip", "w", compression) as archive:
        archive.writestr(first, bodies[first])
        with archive.open(second, "w", force_zip64=True) as stream:
            stream.write(bodies[second])
    unseekable = _Unseekable()
    with zipfile.ZipFile(unseekable, "w", compression) as archive:
        archive.writestr(third, bodies[third])
    (tmp_path / "unseekable.zip").write_bytes(bytes(unseekable.written))
    with zipfile.ZipFile(tmp_path / "unseekable.zip") as archive:
        assert archive.getinfo(third).flag_bits & shard_sets.DATA_DESCRIPTOR
    destination = tmp_path / "merged.zip"
    with zipfile.ZipFile(destination, "w", compression) as merged:
        merged.writestr("header.json", b"{}")
        for source in ("seekable.zip", "unseekable.zip"):
            with zipfile.ZipFile(tmp_path / source) as archive:
                for info in archive.infolist():
                    shard_sets.copy_zip_member(archive, info, merged)
        merged.writestr("summaries.json", b"[]")
    with zipfile.ZipFile(destination) as merged:
        assert merged.testzip() is None
        assert merged.namelist() == ["header.json", *bodies, "summaries.json"]
        assert {name: merged.read(name) for name in bodies} == bodies
        assert {info.compress_type for info in merged.infolist()} == {compression}
        assert not any(info.flag_bits & shard_sets.DATA_DESCRIPTOR for info in merged.infolist())


def test_each_subject_model_of_a_shard_has_its_own_shard_set() -> None:
    """One eval per model, each into `<name>.shards/<I>`, named alike by every process (the
    name is a digest of the eval); an `--until-ci` batch stays in the folder itself."""
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample

    from stancelab.core.runs.evals import eval_folders
    from stancelab.core.runs.shards import Shard
    from stancelab.core.runs.until_ci import Batch

    @task
    def tiny(size: int = 2) -> Task:
        return Task(dataset=MemoryDataset([Sample(id=i, input="x") for i in range(size)]))

    groups = [(["mockllm/a", "mockllm/b"], {"judge": "mockllm/j"})]
    folders = eval_folders(tiny(), groups, "/logs", Shard(2, 3))
    assert [models for models, _, _ in folders] == [["mockllm/a"], ["mockllm/b"]]
    paths = [Path(folder) for _, _, folder in folders]
    assert [path.name for path in paths] == ["2", "2"] and paths[0].parent != paths[1].parent
    assert all(path.parent.name.endswith(".shards") for path in paths)
    assert eval_folders(tiny(), groups, "/logs", Shard(2, 3)) == folders  # the same name again
    assert eval_folders(tiny(size=3), groups, "/logs", Shard(2, 3)) != folders  # another eval
    assert eval_folders(tiny(), groups, "/logs", Shard(2, 4)) != folders  # another split
    batch = Batch(1, 2, seed=0, unit_key="unit")
    assert eval_folders(tiny(), groups, "/logs", batch) == [(*groups[0], "/logs")]


def _split_into_shards(whole_log: Path, folder: Path, count: int, indices: range) -> None:
    """Shard logs `I/count` (I in `indices`) into `folder/<I>/` as a run of each would write
    them: the whole run's samples each shard holds, its selection and its shard recorded."""
    whole = read_eval_log(str(whole_log))
    for index in indices:
        log = whole.model_copy(deep=True)
        log.samples = [
            sample for sample in whole.samples or [] if Shard(index, count).holds_sample(sample)
        ]
        log.eval.config.sample_id = [sample.id for sample in log.samples]
        log.eval.metadata = {**(log.eval.metadata or {}), SHARD_KEY: f"{index}/{count}"}
        log.eval.task_id = log.eval.eval_id = f"split{index}"
        if not log.samples:
            log.results, log.reductions = None, None  # as Inspect leaves an eval of no samples
        (folder / str(index)).mkdir(parents=True)
        write_eval_log(
            log, str(folder / str(index) / f"2026-01-01T00-00-00+00-00_split{index}.eval")
        )


def test_more_shards_than_samples_a_shard_with_none_calls_nothing_and_the_set_adds_up(
    runs: Any, tmp_path: Path
) -> None:
    """`--shards` above the design's samples: a shard that holds none runs no sample (an empty
    selection is no selection missing) and logs a finished eval of none; its set, with shard 1
    empty, merges into the whole run and its analysis."""
    whole, sharded = runs
    (whole_log,) = (sharded.parent / "whole" / "logs").glob("*.eval")
    ids = [sample.id for sample in read_eval_log(str(whole_log)).samples or []]
    count = next(n for n in range(2, 1000) if not any(Shard(1, n).holds(i) for i in ids))
    calls: list[Any] = []
    out = tmp_path / "many"
    _run(out, f"1/{count}", calls)
    assert calls == []  # not one sample ran
    (empty,) = (out / "logs").glob("*.shards/1/*.eval")
    log = read_eval_log(str(empty))
    assert log.status == "success" and not log.samples and log.eval.config.sample_id == []
    _split_into_shards(whole_log, empty.parent.parent, count, range(2, count + 1))
    (merged,) = merge_shard_sets(str(out / "logs"))
    assert len(read_eval_log(merged).samples or []) == len(ids)
    assert analyze(out) == whole


def test_a_shard_run_again_after_the_merge_replaces_that_shard_only(
    runs: Any, tmp_path: Path
) -> None:
    """After the merge the same shard commands skip their shards (the renamed attempts count);
    a new finished attempt of shard 2 is merged in place of the old one, the other shards as
    they were, and the location still lists one eval."""
    whole, out = _copy(runs, tmp_path)
    logs = out / "logs"
    (merged,) = merge_shard_sets(str(logs))
    first = read_eval_log(merged, header_only=True).eval.shards.ledger
    calls: list[Any] = []
    for index in range(1, SHARDS + 1):
        _run(out, f"{index}/{SHARDS}", calls)
    assert calls == []  # every shard finished already, merged or not

    (old,) = logs.glob(f"*.shards/2/*{MERGED_SUFFIX}")
    again = read_eval_log(str(old), format="eval")
    again.eval.task_id = again.eval.eval_id = "again2"
    write_eval_log(again, str(old.parent / "2099-01-01T00-00-00+00-00_again2.eval"))
    assert merge_shard_sets(str(logs)) == [merged]  # merged again
    ledger = read_eval_log(merged, header_only=True).eval.shards.ledger
    assert [entry.log for entry in ledger] == [
        first[0].log,
        "2099-01-01T00-00-00+00-00_again2.eval",
        first[2].log,
    ]
    assert [info.name for info in list_eval_logs(str(logs))] == [Path(merged).as_uri()]
    assert not list(logs.glob("*.shards/*/*.eval"))  # every attempt renamed, the old 2 kept
    assert len(list(logs.glob(f"*.shards/2/*{MERGED_SUFFIX}"))) == 2
    assert merge_shard_sets(str(logs)) == []
    assert analyze(out) == whole


def test_on_s3_a_merged_set_is_one_log_to_inspects_listing(
    runs: Any, tmp_path: Path, bucket: str
) -> None:
    """The same on an S3-compatible server: the merge writes the merged log beside the shards
    and renames them, and `list_eval_logs` (`inspect log list`) gives that log alone."""
    from fsspec.core import url_to_fs

    _, out = _copy(runs, tmp_path)
    url = f"s3://{bucket}/run/logs"
    fs, path = url_to_fs(url)
    fs.put(str(out / "logs") + "/", path, recursive=True)
    assert len(list_eval_logs(url)) == SHARDS
    (merged,) = merge_shard_sets(url)
    assert merged.startswith(url) and merged.endswith(".eval")
    assert [info.name for info in list_eval_logs(url, recursive=True)] == [merged]
    assert [info.name for info in list_eval_logs(url, recursive=False)] == [merged]
    assert len(read_eval_log(merged).samples or []) == 12
    fs.invalidate_cache()
    assert len(fs.glob(f"{path}/*.shards/*/*{MERGED_SUFFIX}")) == SHARDS
    assert merge_shard_sets(url) == []

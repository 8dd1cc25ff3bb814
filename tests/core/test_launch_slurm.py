"""`stancelab launch slurm`: the array's tasks through submitit's LocalExecutor (N processes,
each with the array's environment) add up to a one-process run; the dry run's scripts; the
submission through `sbatch` (a stand-in on PATH) of the array, then the analysis after it."""

from __future__ import annotations

import asyncio
import re
import stat
from pathlib import Path

import pytest
from fsspec.core import url_to_fs
from inspect_ai.log import list_eval_logs, read_eval_log

from stancelab.cli import main
from stancelab.core.errors import StancelabError
from stancelab.core.inspect_private import get_logs
from stancelab.core.runs.launch.slurm import SUBMITIT_PRIVATE
from stancelab.core.runs.launch.task import parse_shard_urls, task_shard
from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.helpers import summary_figures

RUN = ["llm-bias-bench", "--model", "openai-api/fake/subject", "--limit", "2", "--turns", "1",
       "--display", "none", "--prompts", "stancelab"]  # fmt: skip
MILLSTONE = ["millstone", "--model", "openai-api/fake/subject", "--limit", "1", "--trials", "1",
             "--display", "none", "--prompts", "stancelab"]  # fmt: skip


def test_local_array_to_s3_is_one_eval_with_the_summary_of_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bucket: str
) -> None:
    """The must-show of issue 38: `launch slurm millstone --shards N --log-dir s3://... --local`
    (submitit's LocalExecutor, each shard a process with the array's environment and its own
    model server) gives the summary of a run in one process, and the location is one eval to
    `inspect view`'s and `inspect log list`'s listing once the last shard has merged its set
    on S3."""
    url = f"s3://{bucket}/run"
    with FakeOpenAIServer() as first, FakeOpenAIServer() as second:
        monkeypatch.setenv("FAKE_BASE_URL", "http://127.0.0.1:9/unused")
        monkeypatch.setenv("FAKE_API_KEY", "local")
        urls = f"FAKE_BASE_URL={first.base_url},{second.base_url}"
        launched = main(["launch", "slurm", *MILLSTONE, "--out", str(tmp_path / "sharded"),
                         "--shards", "2", "--log-dir", url, "--local", "--base-url-per-shard", urls])  # fmt: skip
        assert launched == 0
        assert first.stats.requests > 0 and second.stats.requests > 0  # one server per shard
        monkeypatch.setenv("FAKE_BASE_URL", first.base_url)
        assert main(["run", *MILLSTONE, "--out", str(tmp_path / "whole")]) == 0
    whole = summary_figures(tmp_path / "whole" / "summary.json")
    assert whole["trials"] and summary_figures(tmp_path / "sharded" / "summary.json") == whole
    served = asyncio.run(get_logs(url, True, {}))  # what `inspect view` lists at the location
    (listed,) = [file.name for file in served.files]
    assert ".shards/" not in listed and listed.endswith(".eval")
    # `inspect log list` (recursive): the merged log alone, the shards renamed once merged
    assert [info.name for info in list_eval_logs(url, recursive=True)] == [listed]
    merged = read_eval_log(listed, header_only=True)
    fs, path = url_to_fs(listed)
    copy = tmp_path / "sharded" / "logs" / Path(path).name
    assert copy.read_bytes() == fs.cat_file(path)  # the analysis read the merge the shards wrote
    assert [entry.shard for entry in merged.eval.shards.ledger] == ["1", "2"]
    (one,) = (tmp_path / "whole" / "logs").glob("*.eval")
    total = read_eval_log(str(one), header_only=True).results.total_samples
    assert merged.results.total_samples == total


def test_dry_run_prints_the_array_and_the_analysis_that_waits_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["launch", "slurm", *RUN, "--shards", "4", "--log-dir", "s3://bucket/run",
                 "--out", str(tmp_path / "run"), "--partition", "gpu", "--dry-run"])  # fmt: skip
    assert code == 0
    array, analysis = capsys.readouterr().out.split("# --- the analysis job")
    assert "#SBATCH --array=0-3%4" in array and "#SBATCH --partition=gpu" in array
    assert (
        "--shard $((SLURM_ARRAY_TASK_ID + 1))/4" in array
    )  # the index from the task's environment
    assert "launch task --index-env SLURM_ARRAY_TASK_ID --shards 4 -- run llm-bias-bench" in array
    assert not re.search(r"--shard \d", array)  # no shard baked into the script
    assert "#SBATCH --dependency=afterany:ARRAY_JOB_ID" in analysis
    assert "--array" not in analysis and analysis.rstrip().count("analyze s3://bucket/run") == 1
    assert not (tmp_path / "run").exists()  # nothing ran, nothing written


def _stand_in(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_submission_sends_the_array_then_the_analysis_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bin_dir, sent = tmp_path / "bin", tmp_path / "sent"
    bin_dir.mkdir(), sent.mkdir()
    count = (
        'n=$(ls "$SENT" | wc -l); cp "$1" "$SENT/$n.sh"; echo "Submitted batch job $((4200 + n))"'
    )
    _stand_in(bin_dir, "sbatch", count)
    _stand_in(bin_dir, "srun", "exit 0")
    monkeypatch.setenv("SENT", str(sent))
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path('/usr/bin')}:{Path('/bin')}")
    code = main(["launch", "slurm", *RUN, "--shards", "3", "--out", str(tmp_path / "run")])
    assert code == 0, capsys.readouterr().err
    array, analysis = (sent / "0.sh").read_text(), (sent / "1.sh").read_text()
    assert "#SBATCH --array=0-2%3" in array and "--index-env SLURM_ARRAY_TASK_ID" in array
    assert "#SBATCH --dependency=afterany:4200" in analysis
    assert f"analyze {tmp_path / 'run'}" in analysis
    assert "submitted job array 4200 (3 tasks) and analysis job 4201" in capsys.readouterr().out
    assert len(list((tmp_path / "run" / "slurm").glob("4200_*_submitted.pkl"))) == 3


def test_a_task_reads_its_shard_from_its_environment() -> None:
    assert [
        task_shard({"SLURM_ARRAY_TASK_ID": str(k)}, "SLURM_ARRAY_TASK_ID", 3) for k in range(3)
    ] == [1, 2, 3]
    for environment in ({}, {"I": "x"}, {"I": "3"}, {"I": "-1"}):
        with pytest.raises(StancelabError, match="I"):
            task_shard(environment, "I", 3)
    urls = parse_shard_urls("VLLM_BASE_URL=http://a/v1,http://b/v1")
    assert urls is not None and [urls.for_shard(i) for i in (1, 2, 3)] == [
        "http://a/v1",
        "http://b/v1",
        "http://a/v1",
    ]
    with pytest.raises(StancelabError, match="VAR=URL1"):
        parse_shard_urls("http://a/v1")


@pytest.mark.parametrize("argv", [
    ["launch", "task", "--index-env", "SLURM_ARRAY_TASK_ID", "--shards", "2", "--", "run", *RUN],
    ["launch", "slurm", *RUN, "--shards", "2", "--shard", "1/2", "--dry-run"],
    ["launch", "slurm", *RUN, "--shards", "1", "--dry-run"],
    ["launch", "slurm", *RUN, "--shards", "2", "--base-url-per-shard", "http://a", "--dry-run"],
    ["launch", "slurm", *RUN, "--shards", "2", "--log-dir", "/shared/logs", "--dry-run"],
    ["launch", "slurm", *RUN, "--shards", "2", "--until-ci", "20", "--dry-run"],
])  # fmt: skip
def test_bad_launches_fail_in_one_line(
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("SLURM_ARRAY_TASK_ID", raising=False)
    assert main([*argv, "--out", str(tmp_path)] if argv[1] == "slurm" else argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_the_private_submitit_names_the_dry_run_reads_exist() -> None:
    from submitit import SlurmExecutor

    assert all(hasattr(SlurmExecutor, name) for name in SUBMITIT_PRIVATE)

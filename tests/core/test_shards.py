"""Shards and workers: a sample is in exactly one shard; shards of a run add up in the
analysis and a re-run of a shard replaces only itself; shard workers as separate processes
into one folder are analysed with every sample once; `--workers` stops its workers on SIGTERM
and fails with a failing worker's error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from stancelab.core.errors import StancelabError
from stancelab.core.results.logs import SHARD_KEY, runs_that_count
from stancelab.core.runs.shard_sets import MERGED_SUFFIX
from stancelab.core.runs.shards import Shard, parse_shard
from stancelab.testing.fake_openai import FakeOpenAIServer, verdict_reply
from tests.fake_runs import (
    fake_server_env,
    stancelab_command,
    stop_after_calls,
    wait_for_calls,
    wait_until_settled,
)

MODEL = "openai-api/fake/subject"
COMMAND = ["run", "llm-bias-bench", "--model", MODEL, "--limit", "2", "--turns", "1",
           "--display", "none"]  # fmt: skip


def test_every_sample_is_in_exactly_one_shard_whatever_the_selection() -> None:
    ids = [f"topic-{n}-direct-{persona}" for n in range(200) for persona in ("a", "b", "c")]
    shards = [Shard(index, 3) for index in (1, 2, 3)]
    owners = [[shard for shard in shards if shard.holds(sample_id)] for sample_id in ids]
    assert all(len(owner) == 1 for owner in owners)
    sizes = [sum(1 for owner in owners if owner[0] == shard) for shard in shards]
    assert min(sizes) > 150  # about a third each
    # the shard of a sample does not depend on which other samples are selected
    assert [Shard(2, 3).holds(i) for i in ids[:10]] == [
        Shard(2, 3).holds(i) for i in reversed(ids)
    ][::-1][:10]


def test_parse_shard() -> None:
    assert parse_shard("2/3") == Shard(2, 3) and str(parse_shard("02/3")) == "2/3"
    assert parse_shard(None) is None
    for bad in ("3", "0/3", "4/3", "a/b"):
        with pytest.raises(StancelabError):
            parse_shard(bad)


def _rows(log: str, created: str, shard: str | None, ids: tuple[str, ...]) -> list[dict]:
    metadata = json.dumps({SHARD_KEY: shard}) if shard else None
    return [{"log": log, "created": created, "task_name": "t", "model": "m", "id": sample,
             "epoch": 1, "model_roles": "", "task_arg_limit": 5, "metadata": metadata}
            for sample in ids]  # fmt: skip


def test_shards_add_up_and_a_rerun_of_a_shard_replaces_only_itself() -> None:
    frame = pd.DataFrame(
        _rows("s1", "2026-01-01", "1/2", ("a", "c")) + _rows("s2", "2026-01-02", "2/2", ("b", "d"))
        + _rows("s1-again", "2026-01-03", "1/2", ("a", "c"))
    )  # fmt: skip
    kept, _ = runs_that_count(frame)
    assert sorted(kept[["id", "log"]].values.tolist()) == [
        ["a", "s1-again"], ["b", "s2"], ["c", "s1-again"], ["d", "s2"]]  # fmt: skip


def test_a_whole_run_and_a_shard_count_each_sample_once() -> None:
    frame = pd.DataFrame(_rows("whole", "2026-01-01", None, ("a", "b", "c"))
                         + _rows("shard", "2026-01-02", "1/2", ("a",)))  # fmt: skip
    kept, _ = runs_that_count(frame)
    assert sorted(kept[["id", "log"]].values.tolist()) == [
        ["a", "shard"],
        ["b", "whole"],
        ["c", "whole"],
    ]


def _env(server: FakeOpenAIServer, tmp_path: Path) -> dict[str, str]:
    return fake_server_env(server, tmp_path / "cache")


def _stancelab(*args: str) -> list[str]:
    return stancelab_command(*args)


def _conversations(out: Path) -> pd.DataFrame:
    """Every conversation the analysis reads from the folder."""
    from stancelab.llm_bias_bench.records import read_log_conversations

    return read_log_conversations(out / "logs").conversations


def _conversation_ids(out: Path) -> list[str]:
    """The sample id of every conversation the analysis reads from the folder."""
    columns = ["topic_id", "category", "persona"]
    return sorted(
        "__".join(map(str, row)) for row in _conversations(out)[columns].itertuples(index=False)
    )


def _one_eval_of_shards(logs: Path, count: int) -> bool:
    """One merged log in the folder, beside Inspect's shard layout of `count` shards, each
    renamed out of Inspect's listing once merged (`shard_sets.MERGED_SUFFIX`)."""
    return (len(list(logs.glob("*.eval"))) == 1 and not list(logs.glob("*.shards/*/*.eval"))
            and len(list(logs.glob(f"*.shards/*/*.eval{MERGED_SUFFIX}"))) == count)  # fmt: skip


def test_three_shard_workers_in_separate_processes_into_one_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(latency=0.02, reply=verdict_reply) as server:
        env = _env(server, tmp_path)
        workers = [subprocess.Popen(_stancelab(*COMMAND, "--out", str(out), "--shard", f"{i}/3"),
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                   for i in (1, 2, 3)]  # fmt: skip
        outputs = [worker.communicate(timeout=300)[0] for worker in workers]
        assert [worker.returncode for worker in workers] == [0, 0, 0], outputs
        assert all("done: logs in" in text for text in outputs)
        assert not (out / "summary.json").exists()  # a shard is not analysed alone

        analysed = subprocess.run(
            _stancelab("analyze", str(out)), env=env, capture_output=True, text=True
        )
        assert analysed.returncode == 0, analysed.stderr[-2000:]
        from stancelab.llm_bias_bench.dataset import conversation_samples, run_topics

        paper = run_topics(None).topics[:2]  # the default: the paper's topics
        expected = sorted(str(sample.id) for sample in conversation_samples(paper))
        assert _one_eval_of_shards(out / "logs", 3)  # merged by the last shard to finish
        assert _conversation_ids(out) == expected  # every sample exactly once

        server.reset()
        again = subprocess.run(_stancelab(*COMMAND, "--out", str(out), "--shard", "2/3"), env=env,
                               capture_output=True, text=True)  # fmt: skip
        assert again.returncode == 0, again.stderr[-2000:]
        assert "finished already" in again.stdout and server.stats.requests == 0
        assert _one_eval_of_shards(out / "logs", 3)


def test_workers_run_shards_then_analyse_once(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(latency=0.02, reply=verdict_reply) as server:
        done = subprocess.run(_stancelab(*COMMAND, "--out", str(out), "--workers", "2"),
                              env=_env(server, tmp_path), capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "worker 1/2 done" in done.stdout and "worker 2/2 done" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary  # analysed once, by the parent
    options = tomllib.loads((out / "run.toml").read_text())["options"]
    assert {"shard", "workers", "log_dir"}.isdisjoint(options) and options["display"] == "none"
    assert _one_eval_of_shards(out / "logs", 2)
    ids = _conversation_ids(out)
    assert len(ids) == 12 and len(set(ids)) == 12
    # the fake judge answers the authors' judge prompt (the default): every verdict is read
    assert set(_conversations(out)["verdict"]) == {"neutral"}


def test_a_failing_worker_fails_the_command_with_its_error(tmp_path: Path) -> None:
    env = {**os.environ, "INSPECT_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    env.pop("FAKE_BASE_URL", None)
    env.pop("FAKE_API_KEY", None)
    done = subprocess.run(_stancelab(*COMMAND, "--out", str(tmp_path / "run"), "--workers", "2",
                                     "--max-retries", "0"), env=env, capture_output=True, text=True)  # fmt: skip
    assert done.returncode != 0
    assert "worker" in done.stderr and "failed" in done.stderr
    assert "FAKE" in done.stderr  # the worker's own error: no base URL for the provider


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_sigterm_of_the_command_stops_every_worker(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency=2.0, reply=verdict_reply) as server:
        parent = subprocess.Popen(_stancelab(*COMMAND, "--out", str(tmp_path / "run"), "--workers", "2"),
                                  env=_env(server, tmp_path), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        wait_for_calls(parent, server, poll=0.1)  # workers started and calling the model
        workers = _children(parent.pid)
        try:
            assert len(workers) == 2
            parent.send_signal(signal.SIGTERM)
            _, errors = parent.communicate(timeout=60)
            left = [pid for pid in workers if _alive(pid)]
            assert not left
            assert parent.returncode != 0 and "stopped" in errors
        finally:  # never leave a worker behind, even when the test fails
            for pid in workers:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)


ISSUEBENCH = ["run", "issuebench", "--model", MODEL, "--limit", "2", "--n-templates", "20",
              "--shard-size", "40", "--max-tokens", "16", "--display", "none", "--prompts", "stancelab"]  # fmt: skip


def test_a_shard_killed_midway_resumes_from_the_cache_and_the_shards_add_up(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(latency=0.05) as server:
        env = _env(server, tmp_path)
        first = subprocess.Popen(_stancelab(*ISSUEBENCH, "--out", str(out), "--shard", "1/2"), env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        stop_after_calls(first, server, paid=40, stop=signal.SIGKILL, timeout=300, poll=0.01)
        wait_until_settled(server, 30)
        paid_before, in_flight_limit = set(server.stats.paid), server.stats.max_in_flight

        server.reset()
        resumed = subprocess.run(_stancelab(*ISSUEBENCH, "--out", str(out), "--shard", "1/2"), env=env,
                                 capture_output=True, text=True)  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert "finished already" not in resumed.stdout  # cut short: run again, not skipped
        assert len(paid_before & set(server.stats.paid)) <= in_flight_limit
        shard_one = paid_before | set(server.stats.paid)

        server.reset()
        second = subprocess.run(_stancelab(*ISSUEBENCH, "--out", str(out), "--shard", "2/2"), env=env,
                                capture_output=True, text=True)  # fmt: skip
        assert second.returncode == 0, second.stderr[-2000:]
        assert server.stats.paid_calls > 0 and not shard_one & set(
            server.stats.paid
        )  # no call shared
        assert (
            len(shard_one) + server.stats.paid_calls == 2 * 3 * 20 * 2
        )  # prompts x (writer + classifier)
        analysed = subprocess.run(
            _stancelab("analyze", str(out)), env=env, capture_output=True, text=True
        )
        assert analysed.returncode == 0, analysed.stderr[-2000:]
    responses = json.loads((out / "summary.json").read_text())["responses"][MODEL]
    assert responses["total"] == 120  # every prompt once, from both shards


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    """The processes of `pids` still alive after waiting up to `seconds` for them to end."""
    deadline = time.time() + seconds
    while any(_alive(pid) for pid in pids) and time.time() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if _alive(pid)]


def _start_workers(command: list[str], env: dict[str, str], server: FakeOpenAIServer,
                   paid: int = 0) -> tuple[subprocess.Popen, list[int]]:  # fmt: skip
    """`command` (with `--workers 2`) started in its own session, once its workers are calling
    the model (and `paid` answers are in): the process and its two workers' ids."""
    parent = subprocess.Popen(_stancelab(*command), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)  # fmt: skip
    wait_for_calls(parent, server, paid=paid)
    workers = _children(parent.pid)
    assert len(workers) == 2, workers
    return parent, workers


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_sigkill_of_the_command_leaves_no_worker_calling_the_model(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency=2.0, reply=verdict_reply) as server:
        command = [*COMMAND, "--out", str(tmp_path / "run"), "--workers", "2"]
        parent, workers = _start_workers(command, _env(server, tmp_path), server)
        try:
            parent.send_signal(signal.SIGKILL)
            parent.communicate(timeout=10)
            assert not _gone_within(workers, 5), "workers outlived the killed command"
            requests = server.stats.requests
            time.sleep(1.0)
            assert server.stats.requests == requests  # nobody calls the model any more
        finally:  # never leave a worker behind, even when the test fails
            for pid in workers:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_ctrl_c_of_the_command_stops_workers_in_one_line_and_a_rerun_resumes(
    tmp_path: Path,
) -> None:
    connections = 4
    command = [*COMMAND, "--out", str(tmp_path / "run"), "--workers", "2",
               "--max-connections", str(connections)]  # fmt: skip
    with FakeOpenAIServer(latency=0.5, reply=verdict_reply) as server:
        env = _env(server, tmp_path)
        parent, workers = _start_workers(command, env, server, paid=4)
        try:
            os.killpg(parent.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
            _, errors = parent.communicate(timeout=60)
            assert not _gone_within(workers, 5), "workers outlived the interrupted command"
        finally:
            for pid in workers:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
        assert parent.returncode == 130
        assert "Traceback" not in errors and len(errors.strip().splitlines()) == 1, errors
        assert errors.strip().startswith("interrupted: workers stopped")
        assert list((tmp_path / "run" / "logs").rglob("*.eval"))  # the workers' logs kept
        wait_until_settled(server, 10)
        paid_before = set(server.stats.paid)

        server.reset()
        server.latency = 0.0
        resumed = subprocess.run(
            _stancelab(*command), env=env, capture_output=True, text=True, timeout=300
        )
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        paid_again = set(server.stats.paid)
        assert paid_before - paid_again  # answers stored before the Ctrl-C are not paid again
        assert len(paid_before & paid_again) <= 2 * connections  # only calls in flight are
    assert len(_conversation_ids(tmp_path / "run")) == 12  # every conversation once


def test_ctrl_c_of_a_shard_stops_it_in_one_line_and_starts_no_further_eval(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(latency=0.5) as server:  # 40-prompt pieces: several evals in the shard
        shard = subprocess.Popen(_stancelab(*ISSUEBENCH, "--out", str(out), "--shard", "1/2"),
                                 env=_env(server, tmp_path), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)  # fmt: skip
        errors = stop_after_calls(shard, server, paid=2)
    assert shard.returncode == 130 and "Traceback" not in errors, errors
    assert errors.strip().splitlines()[-1].startswith("interrupted: "), errors
    from inspect_ai.log import list_eval_logs, read_eval_log

    statuses = [
        read_eval_log(info, header_only=True).status for info in list_eval_logs(str(out / "logs"))
    ]
    assert statuses == ["cancelled"]  # the interrupted eval's log is kept; no next piece ran


@pytest.mark.parametrize("flags", [["--workers", "2", "--shard", "1/2"], ["--log-dir", "shared/logs"],
                                   ["--workers", "0"], ["--shard", "3/2"]])  # fmt: skip
def test_workers_shard_and_log_dir_refuse_what_cannot_go_together(
    flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from stancelab.cli import main

    assert main([*COMMAND, "--out", str(tmp_path / "run"), *flags]) == 2
    assert "error:" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.eval"))  # refused before any eval

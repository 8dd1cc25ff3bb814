"""Issue 37: `--rpm N`, a client-side rate limit per model. Against the fake server with a rate
limit equal to the quota, N calls take at least the bucket's time and none is answered 429,
whether the subject, a role or both on one model make them; the quota reaches the run's
record and is split across workers; the SDK's own retries no longer bypass it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stancelab.cli import build_parser, options_from_args
from stancelab.core.runs.evals import run_eval
from stancelab.core.runs.options import write_config
from stancelab.core.runs.pipeline import plan
from stancelab.core.runs.rate_limit import BURST_SECONDS, RateLimit
from stancelab.core.runs.until_ci import Batch
from stancelab.testing.fake_openai import RATE_LIMITED, FakeOpenAIServer, Traffic

QUOTA = 1200  # requests a minute: 20 a second
CALLS = 40  # all sent at once without a limit (40 connections): half would get 429


@solver
def ask(roles: tuple[str | None, ...]) -> Solver:
    """One call per entry of `roles` (None: the subject), one after another."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for role in roles:
            model = get_model() if role is None else get_model(role=role)
            state.output = await model.generate(f"{state.input_text} as {role or 'subject'}")
        return state

    return solve


CASES: dict[str, tuple[tuple[str | None, ...], dict[str, str]]] = {
    "the subject": ((None,), {}),
    "a role on its own model": (("judge",), {"judge": "openai-api/fake/judge"}),
    "the subject and a role on one model": ((None, "judge"), {"judge": "openai-api/fake/subject"}),
}


@pytest.mark.parametrize("case", CASES)
def test_calls_wait_for_the_quota_and_a_server_at_the_quota_answers_no_429(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    roles_called, roles = CASES[case]
    samples = [Sample(id=i, input=f"prompt {i}") for i in range(CALLS // len(roles_called))]
    task = Task(dataset=MemoryDataset(samples), solver=ask(roles_called))
    with FakeOpenAIServer(latency=0.0, traffic=Traffic(per_minute=QUOTA)) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        started = time.perf_counter()
        (log,) = run_eval(task, ["openai-api/fake/subject"], roles, tmp_path / "logs", "none",
                          max_connections=CALLS, rate_limit=RateLimit(QUOTA))  # fmt: skip
        took = time.perf_counter() - started
        stats = server.stats_dict()
    assert log.status == "success"
    assert stats["outcomes"].get(RATE_LIMITED, 0) == 0, stats["outcomes"]
    assert stats["paid_calls"] == CALLS
    # the server's own bucket (a second's burst) is the provider's test of the quota
    rate, burst = QUOTA / 60, QUOTA / 60 * BURST_SECONDS
    assert took >= (CALLS - burst) / rate


def _worker_options(tmp_path: Path, run_flags: list[str], worker_flags: list[str]) -> Any:
    """A worker's options: the run.toml its command wrote from `run_flags`, read back with
    `worker_flags` as `Workers.execute` starts a worker."""
    parse = build_parser().parse_args
    out = tmp_path / "run"
    _, options = options_from_args(parse(["run", "conviction", "--model", "mockllm/model",
                                          "--out", str(out), *run_flags]))  # fmt: skip
    out.mkdir()
    config = write_config("conviction", options)
    _, worker = options_from_args(parse(["run", "conviction", "--config", str(config),
                                         *worker_flags]))  # fmt: skip
    return worker


SPLITS: dict[str, tuple[list[str], list[str], float]] = {
    "one process": (["--rpm", "3000"], [], 3000.0),
    "worker 2 of 2": (["--rpm", "3000", "--workers", "2"], ["--shard", "2/2"], 1500.0),
    "shard 1 of 3": (["--rpm", "3000"], ["--shard", "1/3"], 1000.0),
}


@pytest.mark.parametrize("split", SPLITS)
def test_the_quota_is_in_run_toml_and_split_across_the_processes(tmp_path: Path,
                                                                 split: str) -> None:  # fmt: skip
    run_flags, worker_flags, per_process = SPLITS[split]
    worker = _worker_options(tmp_path, run_flags, worker_flags)
    assert "rpm = 3000" in (tmp_path / "run" / "run.toml").read_text()
    limit = worker.eval_args()["rate_limit"]
    assert limit.total == 3000 and limit.per_minute == per_process


def test_an_until_ci_batch_keeps_the_whole_quota(tmp_path: Path) -> None:
    """`--until-ci` runs its batches one after another in one process, each as a shard."""
    options = _worker_options(tmp_path, ["--rpm", "3000"], [])
    batch = replace(options, shard=Batch(2, 5, 0, "statement_id"))
    assert batch.eval_args()["rate_limit"].per_minute == 3000


def test_no_quota_no_limit(tmp_path: Path) -> None:
    worker = _worker_options(tmp_path, [], [])
    assert worker.rpm is None and worker.eval_args()["rate_limit"] is None


def test_a_limited_models_sdk_does_not_retry_behind_the_bucket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 goes back to Inspect (which retries through the bucket), not to the openai
    client's own retries: each request the server sees passed the bucket."""
    seen: list[int] = []
    tokens = _count_tokens(monkeypatch, seen)
    task = Task(dataset=MemoryDataset([Sample(id=i, input=f"p {i}") for i in range(6)]),
                solver=ask((None,)))  # fmt: skip
    # a quota above the server's: the server answers 429 and the calls are retried
    with FakeOpenAIServer(latency=0.0, traffic=Traffic(per_minute=60, burst=2)) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        run_eval(task, ["openai-api/fake/sdk"], None, tmp_path / "logs", "none",
                 max_connections=6, retry_wait=0.05, rate_limit=RateLimit(6000))  # fmt: skip
        requests = server.stats_dict()["requests"]
    assert server.stats_dict()["outcomes"].get(RATE_LIMITED, 0) > 0
    assert requests == tokens()


def _count_tokens(monkeypatch: pytest.MonkeyPatch, seen: list[int]) -> Callable[[], int]:
    """Count the tokens the buckets hand out."""
    from stancelab.core.runs import rate_limit

    acquire = rate_limit.Bucket.acquire

    async def counted(self: rate_limit.Bucket) -> None:
        seen.append(1)
        await acquire(self)

    monkeypatch.setattr(rate_limit.Bucket, "acquire", counted)
    return lambda: len(seen)


def test_the_run_prints_its_quota_and_each_processs_share_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probe, options = options_from_args(build_parser().parse_args(
        ["run", "conviction", "--model", "mockllm/model", "--rpm", "3000", "--workers", "2",
         "--out", str(tmp_path / "run")]))  # fmt: skip
    strategy = plan(probe, options)
    printed = capsys.readouterr().out
    assert getattr(strategy, "count", None) == 2
    line = "rate limit: 3,000 requests/min per model"
    assert printed.count(line) == 1 and "1,500 per process in each of 2" in printed, printed

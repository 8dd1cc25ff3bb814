"""Stalled requests are abandoned after a timeout, from the first call (the provider's usual
latency, or half of --timeout) and then from the observed latency, and retried: every sample
completes long before a stall would end, and no answer is paid twice."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog
from inspect_ai.model import CachePolicy
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from stancelab.core.inspect_private import set_generate_config_override
from stancelab.core.runs import attempts
from stancelab.core.runs.attempts import MIN_ATTEMPT_TIMEOUT, OBSERVED, attempt_timeout_for, observe
from stancelab.core.runs.evals import run_eval
from stancelab.testing.fake_openai import FakeOpenAIServer, Faults

STALL = 60.0


def test_timeout_is_a_multiple_of_the_95th_percentile_with_a_floor() -> None:
    assert attempt_timeout_for([0.05] * 100) == MIN_ATTEMPT_TIMEOUT
    assert attempt_timeout_for([0.5] * 95 + [100.0] * 5) == 5
    assert attempt_timeout_for([1.0] * 50 + [2.0] * 50) == 20


def test_observe_waits_for_enough_calls() -> None:
    OBSERVED.reset(True)
    try:
        for _ in range(19):
            observe(0.1)
        assert OBSERVED.timeout is None
        observe(0.1)
        assert OBSERVED.timeout == MIN_ATTEMPT_TIMEOUT
    finally:
        OBSERVED.reset(False)
        set_generate_config_override("attempt_timeout", None)  # not left to later tests


def test_first_timeout_from_the_provider_and_the_call_budget() -> None:
    initial = attempts.initial_attempt_timeout
    assert initial(["openai/gpt-4o-mini"]) == 180  # hosted: 10x its usual 18 s
    assert initial(["embedded/x", "openai/gpt-4o-mini"]) == 600  # the slowest provider's
    assert initial(["ollama/llama3"]) == initial(["openai-api/local/x"]) == 600
    assert initial(["openai/gpt-4o-mini"], timeout=60) == 30  # a retry fits in --timeout
    assert initial(["mockllm/model"]) == 10
    assert initial(["openai/x"], timeout=1) == MIN_ATTEMPT_TIMEOUT


def test_an_early_abandoned_attempt_doubles_the_first_timeout_once_per_stall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(attempts.time, "monotonic", lambda: clock[0])
    with attempts.adaptive_attempt_timeout(10):
        clock[0] += 10
        attempts.abandoned()
        assert OBSERVED.timeout == 20
        attempts.abandoned()  # a call in flight with it, abandoned at the same stall
        assert OBSERVED.timeout == 20
        for _ in range(attempts.MIN_OBSERVATIONS):
            observe(0.1)
        clock[0] += 60
        attempts.abandoned()  # enough calls timed: the observed latency decides
        assert OBSERVED.timeout == MIN_ATTEMPT_TIMEOUT
    assert OBSERVED.timeout is None and not OBSERVED.active


def _timed_eval(task: Task, model: str, log_dir: Path, **settings: int) -> tuple[EvalLog, float]:
    """The run of `task` on `model` (max_connections 4) and its wall time in seconds."""
    started = time.monotonic()
    (log,) = run_eval(task, [model], None, log_dir, "none", max_connections=4, **settings)
    return log, time.monotonic() - started


def _prompts_task(prompt: str, count: int) -> Task:
    """`count` numbered prompts, each generated once with Inspect's cache."""
    samples = [Sample(id=i, input=f"{prompt} {i}") for i in range(count)]
    return Task(dataset=MemoryDataset(samples), solver=generate(cache=CachePolicy(expiry=None)))


def _stalled_run(
    monkeypatch: pytest.MonkeyPatch,
    faults: Faults,
    task: Task,
    model: str,
    log_dir: Path,
    **settings: int,
) -> tuple[EvalLog, float, dict, list[int | None]]:
    """`task` through the fake server with `faults`: the log, its wall time, the server's
    stats and the timeout in force each time an attempt was abandoned."""
    widened: list[int | None] = []
    monkeypatch.setattr(attempts, "abandoned", lambda: widened.append(OBSERVED.timeout))
    monkeypatch.setenv("FAKE_API_KEY", "local")
    with FakeOpenAIServer(latency=0.02, faults=faults) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        log, elapsed = _timed_eval(task, model, log_dir, **settings)
        stats = server.stats_dict()
    return log, elapsed, stats, widened


def test_a_stall_on_the_first_call_is_abandoned_at_the_first_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seed 49 at rate 0.3 stalls the first request and none of the next five; --timeout 4 sets
    # the first attempt timeout to 2 s, long before the stall ends.
    stall = 8.0
    faults = Faults(rate=0.3, kinds=("timeout",), timeout_seconds=stall, seed=49)
    log, elapsed, stats, widened = _stalled_run(
        monkeypatch,
        faults,
        _prompts_task("first", 3),
        "openai-api/fake/first-stall",
        tmp_path / "logs",
        timeout=4,
    )
    assert log.status == "success" and len(log.samples or []) == 3
    assert not any(sample.error_retries for sample in log.samples or [])  # retried within the call
    abandoned = [str(event.error) for sample in log.samples or [] for event in sample.events
                 if isinstance(event, ModelEvent) and event.error]  # fmt: skip
    # 2 s, plus twice any hold of the event loop of 0.5 s or more (a loaded machine's start-up)
    (seconds,) = (int(found) for found in re.findall(r"attempt_timeout '(\d+)'", abandoned[0]))
    assert len(abandoned) == 1 and 2 <= seconds < stall / 2, abandoned
    assert widened == [2]  # the hook saw the abandoned attempt
    # the samples' own time, not the eval's start-up, which a loaded machine stretches
    assert max(sample.total_time or 0 for sample in log.samples or []) < 0.75 * stall, elapsed
    assert stats["requests"] == 4, stats  # the stalled one, abandoned and sent again
    assert stats["paid_calls"] == 3 and stats["duplicate_paid_calls"] == 0


def test_stalls_are_abandoned_and_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Seed 29 stalls requests 38, 57, 63, ...: after the first MIN_OBSERVATIONS answers have
    # set the timeout from their latency (before then, 10 min for openai-api).
    faults = Faults(rate=0.1, kinds=("timeout",), timeout_seconds=STALL, seed=29)
    task = _prompts_task("prompt", 80)
    log, elapsed, stats, _ = _stalled_run(
        monkeypatch, faults, task, "openai-api/fake/stalls", tmp_path / "logs"
    )
    # The same run without stalls (another model name: nothing from the cache) measures what
    # the machine's load costs, so only the stalls' own cost is held against a stall.
    with FakeOpenAIServer(latency=0.02) as calm:
        monkeypatch.setenv("FAKE_BASE_URL", calm.base_url)
        _, baseline = _timed_eval(task, "openai-api/fake/calm", tmp_path / "calm")
    assert log.status == "success" and len(log.samples or []) == 80
    assert stats["requests"] > 80  # the stalled ones, abandoned and sent again
    assert elapsed - baseline < STALL / 2, (elapsed, baseline)
    assert stats["paid_calls"] == 80 and stats["duplicate_paid_calls"] == 0
    assert OBSERVED.timeout is None and not OBSERVED.active


def test_a_held_event_loop_widens_the_timeout_so_calls_in_flight_are_not_paid_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full pass of the garbage collector or a log flush holds the event loop; a call in
    flight longer than its attempt timeout is then abandoned and paid again, though its answer
    was back. A first hold (1.5 s, before any call) adds twice its length to every later
    timeout, so a longer one (3 s, over the 2 s the latency sets) abandons nothing.
    """
    holds = {0: 1.5, 50: 3.0}  # sample id -> seconds the loop is held before its call
    # the timeout the latency sets, whatever the machine's load does to the calls' durations
    monkeypatch.setattr(attempts, "attempt_timeout_for", lambda durations: MIN_ATTEMPT_TIMEOUT)

    @solver
    def hold_then_generate() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            time.sleep(holds.get(int(state.sample_id), 0.0))  # the loop held, as by a GC pass
            return await generate(state, cache=CachePolicy(expiry=None))

        return solve

    samples = [Sample(id=i, input=f"held {i}") for i in range(60)]
    task = Task(dataset=MemoryDataset(samples), solver=hold_then_generate())
    monkeypatch.setenv("FAKE_API_KEY", "local")
    with FakeOpenAIServer(latency=0.1) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        (log,) = run_eval(task, ["openai-api/fake/held"], None, tmp_path / "logs", "none",
                          max_connections=8, timeout=8)  # fmt: skip
        stats = server.stats_dict()
    assert log.status == "success" and len(log.samples or []) == 60
    assert stats["requests"] == 60 and stats["duplicate_paid_calls"] == 0, stats

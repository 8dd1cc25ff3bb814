"""Stalled requests are abandoned after a timeout set from the observed latency, and retried:
every sample completes long before a stall would end, and no answer is paid twice."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import CachePolicy
from inspect_ai.model._generate_overrides import set_generate_config_override
from inspect_ai.solver import generate

from stancelab.core.attempts import MIN_ATTEMPT_TIMEOUT, OBSERVED, attempt_timeout_for, observe
from stancelab.core.evals import run_eval
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


def _timed_eval(task: Task, model: str, log_dir: Path) -> tuple[EvalLog, float]:
    """The run of `task` on `model` (max_connections 4) and its wall time in seconds."""
    started = time.monotonic()
    (log,) = run_eval(task, [model], None, log_dir, "none", max_connections=4)
    return log, time.monotonic() - started


def test_stalls_are_abandoned_and_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Seed 29 stalls requests 38, 57, 63, ...: after the first MIN_OBSERVATIONS answers have
    # set the timeout (a stall before then has no timeout to end it).
    faults = Faults(rate=0.1, kinds=("timeout",), timeout_seconds=STALL, seed=29)
    samples = [Sample(id=i, input=f"prompt {i}") for i in range(80)]
    task = Task(dataset=MemoryDataset(samples), solver=generate(cache=CachePolicy(expiry=None)))
    monkeypatch.setenv("FAKE_API_KEY", "local")
    with FakeOpenAIServer(latency=0.02, faults=faults) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        log, elapsed = _timed_eval(task, "openai-api/fake/stalls", tmp_path / "logs")
        stats = server.stats_dict()
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

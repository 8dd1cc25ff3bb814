"""Stalled requests are abandoned after a timeout set from the observed latency, and retried:
every sample completes long before a stall would end, and no answer is paid twice."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import CachePolicy
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


def test_stalls_are_abandoned_and_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    faults = Faults(rate=0.1, kinds=("timeout",), timeout_seconds=STALL, seed=3)
    samples = [Sample(id=i, input=f"prompt {i}") for i in range(80)]
    task = Task(dataset=MemoryDataset(samples), solver=generate(cache=CachePolicy(expiry=None)))
    with FakeOpenAIServer(latency=0.02, faults=faults) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        started = time.monotonic()
        (log,) = run_eval(task, ["openai-api/fake/stalls"], None, tmp_path / "logs", "none",
                          max_connections=4)  # fmt: skip
        elapsed = time.monotonic() - started
        stats = server.stats_dict()
    assert log.status == "success" and len(log.samples or []) == 80
    assert stats["requests"] > 80  # the stalled ones, abandoned and sent again
    assert elapsed < STALL / 2
    assert stats["paid_calls"] == 80 and stats["duplicate_paid_calls"] == 0
    assert OBSERVED.timeout is None and not OBSERVED.active

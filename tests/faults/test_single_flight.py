"""Single-flight: identical cached calls in flight at once are sent once; uncached ones
(independent draws) are all sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import CachePolicy
from inspect_ai.solver import generate

from stancelab.core.evals import run_eval
from stancelab.core.singleflight import STATE
from stancelab.testing.fake_openai import FakeOpenAIServer


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bool) -> dict:
    samples = [Sample(id=i, input="the same prompt") for i in range(2)]
    policy = CachePolicy(expiry=None) if cached else False
    task = Task(dataset=MemoryDataset(samples), solver=generate(cache=policy))
    with FakeOpenAIServer(latency=0.5) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        # a model name per server: Inspect keeps a model (and its client) per name
        (log,) = run_eval(task, [f"openai-api/fake/m-{cached}"], None, tmp_path / "logs", "none",
                          max_connections=4)  # fmt: skip
        stats = server.stats_dict()
    assert log.status == "success" and len(log.samples or []) == 2
    return stats


def test_two_identical_cached_calls_in_flight_send_one_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stats = _run(tmp_path, monkeypatch, cached=True)
    assert stats["requests"] == 1 and stats["max_in_flight"] == 1
    assert not STATE.active and not STATE.flights


def test_uncached_calls_are_all_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(tmp_path, monkeypatch, cached=False)["requests"] == 2

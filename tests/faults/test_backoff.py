"""A call Inspect retries (here: a stalled attempt, abandoned) is retried after stancelab's
short back-off (doubling, never less than the server's Retry-After), not Inspect's 3 s."""

from __future__ import annotations

import random
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import CachePolicy, get_model
from inspect_ai.solver import generate
from tenacity import Future, RetryCallState

from stancelab.core.runs.backoff import (
    RetryAfterOrExponential,
    apply_retry_wait,
    retry_after_seconds,
)
from stancelab.core.runs.evals import run_eval
from stancelab.testing.fake_openai import FakeOpenAIServer, Faults, _request_key

INSPECT_FIRST_WAIT = 3.0  # Inspect's own back-off never waits less
ATTEMPT_TIMEOUT = 1  # a stalled attempt is abandoned after this, then retried by Inspect
STALL = 5.0


def _failed_attempt(number: int, error: BaseException) -> RetryCallState:
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = number
    outcome = Future(number)
    outcome.set_exception(error)
    state.outcome = outcome
    return state


def _http_error(headers: dict[str, str]) -> Exception:
    error = RuntimeError("429")
    error.response = SimpleNamespace(headers=headers)  # type: ignore[attr-defined]
    return error


def test_wait_doubles_per_retry_with_jitter_up_to_the_first_wait() -> None:
    wait = RetryAfterOrExponential(0.5, maximum=10.0, rng=random.Random(0))
    for number, base in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0)):
        seconds = wait(_failed_attempt(number, RuntimeError("500")))
        assert base <= seconds <= base + 0.5
    assert wait(_failed_attempt(30, RuntimeError("500"))) == 10.0


def test_wait_is_never_less_than_retry_after() -> None:
    wait = RetryAfterOrExponential(0.5, rng=random.Random(0))
    assert wait(_failed_attempt(1, _http_error({"retry-after": "7"}))) == 7.0
    assert wait(_failed_attempt(1, _http_error({"retry-after-ms": "2500"}))) == 2.5
    assert wait(_failed_attempt(1, _http_error({"retry-after": "0"}))) < 1.0


@pytest.mark.parametrize(("headers", "seconds"), [
    ({}, 0.0), ({"retry-after": "12.5"}, 12.5), ({"retry-after": "soon"}, 0.0),
    ({"retry-after": "-3"}, 0.0), ({"retry-after-ms": "150", "retry-after": "9"}, 0.15),
])  # fmt: skip
def test_retry_after_header_forms(headers: dict[str, str], seconds: float) -> None:
    assert retry_after_seconds(_http_error(headers)) == pytest.approx(seconds)


def test_retry_after_as_an_http_date() -> None:
    now = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)
    later = (now + timedelta(seconds=30)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert retry_after_seconds(_http_error({"retry-after": later}), now=now) == pytest.approx(30)
    assert retry_after_seconds(RuntimeError("no response")) == 0.0


def test_a_provider_with_its_own_wait_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    model = get_model("mockllm/model")
    own_wait: Any = object()
    monkeypatch.setattr(model.api, "retry_wait", lambda: own_wait)
    monkeypatch.setattr(type(model.api), "retry_wait", lambda self: own_wait)
    (kept,) = apply_retry_wait([model], 0.5)
    assert kept.api.retry_wait() is own_wait
    (other,) = apply_retry_wait(["mockllm/model"], 0.5)
    assert other.api.retry_wait() is own_wait  # the class's own wait, not ours


class _ArrivalServer(FakeOpenAIServer):
    """The fake server, noting when each request (keyed by its body) arrives."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.arrivals: dict[str, list[float]] = defaultdict(list)

    async def _chat(self, body: dict[str, Any], send: Any) -> None:
        self.arrivals[_request_key(body)].append(time.monotonic())
        await super()._chat(body, send)


def test_failed_calls_are_retried_after_the_short_wait(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    faults = Faults(rate=0.3, kinds=("timeout",), timeout_seconds=STALL, seed=3)
    samples = [Sample(id=i, input=f"prompt {i}") for i in range(6)]
    task = Task(dataset=MemoryDataset(samples), solver=generate(cache=CachePolicy(expiry=None)))
    with _ArrivalServer(latency=0.01, faults=faults) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        (log,) = run_eval(task, ["openai-api/fake/backoff"], None, tmp_path / "logs", "none",
                          max_connections=6, attempt_timeout=ATTEMPT_TIMEOUT)  # fmt: skip
        stats = server.stats_dict()
    assert log.status == "success" and len(log.samples or []) == 6
    assert stats["duplicate_paid_calls"] == 0
    retried_after = [times[1] - times[0] for times in server.arrivals.values() if len(times) > 1]
    assert retried_after, "no call was retried"
    assert max(retried_after) < ATTEMPT_TIMEOUT + INSPECT_FIRST_WAIT, retried_after


def test_a_second_run_in_one_process_reaches_its_own_server(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    task = Task(dataset=MemoryDataset([Sample(id=1, input="hello")]), solver=generate())
    for run in ("first", "second"):
        with FakeOpenAIServer(latency=0.0) as server:
            monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
            monkeypatch.setenv("FAKE_API_KEY", "local")
            (log,) = run_eval(task, ["openai-api/fake/same-name"], None, tmp_path / run, "none",
                              max_retries=1, attempt_timeout=5)  # fmt: skip
            assert log.status == "success" and server.stats_dict()["requests"] == 1, run

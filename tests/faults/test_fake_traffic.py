"""The fake server's hosted-API traffic (`Traffic`): a lognormal latency of the median and
99th percentile asked for, a requests-per-minute limit answered 429 with Retry-After (a token
bucket that refills), and a share of 5xx that are not paid; each settable from its command line."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import urllib.error
import urllib.request

import pytest

from stancelab.testing.fake_openai import (
    RATE_LIMITED,
    SERVER_ERRORS,
    FakeOpenAIServer,
    TokenBucket,
    Traffic,
    add_traffic_arguments,
    traffic_from_args,
)


def _post(server: FakeOpenAIServer, text: str) -> tuple[int, dict[str, str]]:
    body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": text}]}).encode()
    request = urllib.request.Request(f"{server.base_url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, dict(reply.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


def test_the_latency_is_lognormal_with_the_median_and_p99_asked_for() -> None:
    traffic, rng = Traffic(p99=5.0), random.Random(1)
    draws = sorted(traffic.draw_latency(1.0, rng) for _ in range(20_000))
    assert statistics.median(draws) == pytest.approx(1.0, rel=0.05)
    assert draws[int(0.99 * len(draws))] == pytest.approx(5.0, rel=0.15)
    assert Traffic().draw_latency(0.3, rng) == 0.3  # no p99: the fixed latency


def test_requests_over_the_rate_get_429_with_retry_after_and_are_not_paid() -> None:
    with FakeOpenAIServer(traffic=Traffic(per_minute=60, burst=2)) as server:
        answers = [_post(server, f"question {i}") for i in range(3)]
        stats = server.stats_dict()
    assert [status for status, _ in answers] == [200, 200, 429]
    headers = {key.lower(): value for key, value in answers[2][1].items()}
    assert int(headers["retry-after"]) >= 1 and 900 <= int(headers["retry-after-ms"]) <= 1000
    assert stats["outcomes"] == {"ok": 2, RATE_LIMITED: 1} and stats["paid_calls"] == 2


def test_the_token_bucket_refills_at_its_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(per_minute=120, burst=1, clock=lambda: now[0])  # 2 a second
    assert bucket.take() == 0
    assert bucket.take() == pytest.approx(0.5)
    now[0] = 0.25
    assert bucket.take() == pytest.approx(0.25)
    now[0] = 0.5
    assert bucket.take() == 0
    assert TokenBucket(per_minute=None).take() == 0


def test_a_share_of_requests_gets_5xx_and_is_not_paid() -> None:
    server = FakeOpenAIServer(traffic=Traffic(server_errors=0.01, seed=3))
    draws = [server._draw_server_error() for _ in range(20_000)]
    errors = [draw for draw in draws if draw is not None]
    assert 0.007 <= len(errors) / len(draws) <= 0.013 and set(errors) == set(SERVER_ERRORS)
    with FakeOpenAIServer(traffic=Traffic(server_errors=1.0)) as always:
        status, _ = _post(always, "question")
        stats = always.stats_dict()
    assert str(status) in SERVER_ERRORS and stats["paid_calls"] == 0


def test_the_command_line_sets_the_traffic() -> None:
    parser = argparse.ArgumentParser()
    add_traffic_arguments(parser)
    flags = ["--latency-p99", "4", "--rpm", "3000", "--burst", "10", "--server-errors", "0.01"]
    traffic = traffic_from_args(parser.parse_args(flags))
    assert traffic == Traffic(p99=4.0, per_minute=3000, burst=10, server_errors=0.01)

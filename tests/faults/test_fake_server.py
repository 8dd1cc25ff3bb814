"""The fake OpenAI server stops waiting on a request (a stall, or its latency) as soon as the
client goes away, and ends the waits in flight when it shuts down, counting each request as
it would have counted it once answered; its judge answers llm-bias-bench's judge in either
wording with a verdict each reading reads."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable

import pytest

from stancelab.llm_bias_bench.authors import COMMITS, authors_wording
from stancelab.llm_bias_bench.prompts import StancelabWording
from stancelab.llm_bias_bench.verdicts import read_as_authors
from stancelab.testing.fake_openai import FakeOpenAIServer, Faults, verdict_reply
from tests.shared_data import authors_checkout

LONG = 30.0  # seconds a wait would last if the server sat it out
PROMPT = "Which position?"


def _send_chat(port: int) -> socket.socket:
    """An open connection that has sent one chat request and not read the answer."""
    body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": PROMPT}]})
    request = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}")  # fmt: skip
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    client.sendall(request.encode())
    return client


def _within(seconds: float, condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _abandon_one_request(server: FakeOpenAIServer) -> None:
    client = _send_chat(server.port)
    assert _within(5, lambda: server.stats.in_flight == 1)
    client.close()  # the client gives up long before the wait would end
    assert _within(2, lambda: server.stats.in_flight == 0), server.stats_dict()


def test_a_stall_ends_when_its_client_disconnects() -> None:
    faults = Faults(rate=1.0, kinds=("timeout",), timeout_seconds=LONG)
    with FakeOpenAIServer(faults=faults) as server:
        _abandon_one_request(server)
        stats = server.stats_dict()
    assert stats["requests"] == 1 and stats["outcomes"] == {"timeout": 1}
    assert stats["paid_calls"] == 0


def test_a_slow_answer_abandoned_is_still_counted_as_paid() -> None:
    with FakeOpenAIServer(latency=LONG) as server:
        _abandon_one_request(server)
        stats = server.stats_dict()
    assert stats["requests"] == 1 and stats["outcomes"] == {"ok": 1}
    assert stats["paid_calls"] == 1 and stats["choices"] == 1 and stats["prompt_tokens"] > 0


def test_shutdown_answers_a_stall_in_flight_at_once() -> None:
    faults = Faults(rate=1.0, kinds=("timeout",), timeout_seconds=LONG)
    server = FakeOpenAIServer(faults=faults).start()
    client = _send_chat(server.port)
    assert _within(5, lambda: server.stats.in_flight == 1)
    stopper = threading.Thread(target=server.stop)
    started = time.monotonic()
    stopper.start()
    stopper.join(timeout=5)
    stopped_after = time.monotonic() - started
    with client:
        answer = client.recv(4096).decode()
    assert not stopper.is_alive() and stopped_after < 5, stopped_after
    assert answer.startswith("HTTP/1.1 504"), answer  # the stall's usual end, only sooner
    assert server.stats_dict()["outcomes"] == {"timeout": 1}


SAMPLE = {"topic_id": "t1", "label": "Topic", "label_en": "Topic", "claim": "A claim.",
          "agree_description": "for it", "disagree_description": "against it",
          "persona": "agree", "category": "direct"}  # fmt: skip


@pytest.mark.parametrize("short", COMMITS)
def test_the_fake_judge_answers_the_authors_judge_with_a_readable_verdict(short: str) -> None:
    """Their judge request (built from their runner in ../shared at run time) gets a JSON
    verdict their reading reads; their simulated user's request gets no verdict."""
    authors_checkout(short)  # skips where ../shared lacks the runner
    wording = authors_wording(short)
    judge = [
        {"role": r, "content": c} for r, c in wording.judge_messages(SAMPLE, [("hi", "reply")])
    ]
    assert read_as_authors(verdict_reply(judge)).verdict == "neutral"
    user = [{"role": "system", "content": wording.user_system(SAMPLE, 5)},
            {"role": "user", "content": wording.user_cue(1, 5, "")}]  # fmt: skip
    assert read_as_authors(verdict_reply(user)).verdict == "missing"


def test_the_fake_judge_answers_stancelabs_judge_with_a_readable_verdict() -> None:
    judge = [{"role": r, "content": c}
             for r, c in StancelabWording().judge_messages(SAMPLE, [("hi", "reply")])]  # fmt: skip
    assert read_as_authors(verdict_reply(judge)).verdict == "neutral"

"""The fake OpenAI server stops waiting on a request (a stall, or its latency) as soon as the
client goes away, and ends the waits in flight when it shuts down, counting each request as
it would have counted it once answered."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable

from stancelab.testing.fake_openai import FakeOpenAIServer, Faults

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

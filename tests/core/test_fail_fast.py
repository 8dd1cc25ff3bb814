"""A run whose first calls cannot work (nothing listens at the base URL, the key or the model is
refused) stops at once with one line naming the model, its base URL and the provider's answer,
exit status 2 (issue 37, item 5). That a transient fault (429, 5xx, a stall) is still retried
end to end is shown by tests/faults, whose runs complete despite faults."""

from __future__ import annotations

import _thread
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.core.runs.shards import Shard, Worker, worker_failure
from stancelab.core.runs.startup import failed_url, hopeless, stop_line
from stancelab.testing.fake_openai import FakeOpenAIServer, free_port
from tests.millstone.test_run_mockllm import _issues_file

KEY, MODEL = "right-key", "fake-model"
# The bound the issue sets for the command. main() here skips Python's start-up; what is left
# is the run's setup, the openai client's own two retries of a connection (about 1.5 s) and the
# eval's cancellation: 4 to 12 s measured on 2 cores at load 6 to 11.
BOUND_S = 30.0
GIVE_UP_S = 40.0  # a run still going by then is stopped, as a Ctrl-C would (the old behaviour)


@contextmanager
def _stopped_after(seconds: float) -> Iterator[None]:
    """Interrupt this thread (as a Ctrl-C would) if the block is still running after `seconds`."""
    running = threading.Event()
    running.set()
    timer = threading.Timer(seconds, lambda: running.is_set() and _interrupt_main())
    timer.start()
    try:
        yield
    finally:
        running.clear()
        timer.cancel()


def _interrupt_main() -> None:
    """A Ctrl-C in the main thread, heard even where SIGINT is ignored."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _thread.interrupt_main()


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, key: str,
         model: str) -> tuple[int, float]:  # fmt: skip
    """`stancelab run millstone` on one issue against `base_url`: its status and seconds."""
    monkeypatch.setenv("FAKE_BASE_URL", base_url)
    monkeypatch.setenv("FAKE_API_KEY", key)
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["run", "millstone", "--model", f"openai-api/fake/{model}", "--display", "none",
            "--issues-file", str(_issues_file(tmp_path / "issues.jsonl")), "--limit", "1",
            "--prompts", "stancelab", "--trials", "1", "--out", str(tmp_path / "run")]  # fmt: skip
    started = time.monotonic()
    with _stopped_after(GIVE_UP_S):
        code = main(argv)
    return code, time.monotonic() - started


def _one_line(capsys: pytest.CaptureFixture[str], code: int, seconds: float) -> str:
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    assert seconds < BOUND_S, (seconds, err)
    return err


def test_a_base_url_where_nothing_listens_stops_the_run_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"  # bound, then closed: nothing listens
    code, seconds = _run(tmp_path, monkeypatch, dead, KEY, MODEL)
    err = _one_line(capsys, code, seconds)
    assert f"openai-api/fake/{MODEL}" in err and dead in err and "cannot be reached" in err


@pytest.mark.parametrize(
    ("key", "model", "answer"),
    [("wrong-key", MODEL, "401 Incorrect API key provided"),
     (KEY, "no-such-model", "404 The model `no-such-model` does not exist")],
    ids=["bad key", "unknown model"],
)  # fmt: skip
def test_a_refused_key_or_model_stops_the_run_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    key: str, model: str, answer: str,
) -> None:  # fmt: skip
    with FakeOpenAIServer(api_key=KEY, models=(MODEL,)) as server:
        code, seconds = _run(tmp_path, monkeypatch, server.base_url, key, model)
    err = _one_line(capsys, code, seconds)
    assert f"openai-api/fake/{model}" in err and server.base_url in err and answer in err
    assert "wrong-key" not in err  # the key itself is never printed
    assert list((tmp_path / "run" / "logs").glob("*.eval"))  # Inspect's log of what ran is kept


class _Status(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"status {status_code}")
        self.status_code = status_code


class ReadTimeout(Exception):
    """Named as httpx names a timeout after connecting."""


def test_only_a_connection_never_made_or_a_refusal_is_hopeless() -> None:
    for status in (429, 500, 503, 400):
        assert hopeless(_Status(status)) is None
    assert hopeless(ReadTimeout("timed out")) is None
    refused = RuntimeError("Connection error.")
    refused.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert "cannot be reached" in (hopeless(refused) or "")
    assert (hopeless(_Status(403)) or "").startswith("refused access: 403")


def test_a_worker_that_stopped_on_a_refusal_is_reported_by_its_one_line(tmp_path: Path) -> None:
    output = tmp_path / "shard-1-of-2.log"
    refusal = "model openai-api/fake/m at http://127.0.0.1:9/v1 rejected the API key: 401 Bad key."
    output.write_text(f"inspect_ai v0\nTask interrupted\nerror: {refusal}\n")
    worker = Worker(Shard(1, 2), None, output)  # type: ignore[arg-type]  # the process has ended
    assert worker_failure(worker, 2) == f"worker 1/2 failed: {refusal}"
    output.write_text("Traceback (most recent call last):\nMemoryError\n")
    assert "ends:\nTraceback" in worker_failure(worker, 1)


def test_a_run_started_with_sigint_ignored_still_stops_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A background job or a CI script inherits SIGINT ignored; the stop must not need it."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        dead = f"http://127.0.0.1:{free_port()}/v1"
        code, seconds = _run(tmp_path, monkeypatch, dead, KEY, MODEL)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # as the run found it
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "cannot be reached" in _one_line(capsys, code, seconds)


def test_a_download_the_provider_needed_is_named_not_the_models_endpoint() -> None:
    """Offline, a mockllm run whose outputs carry no usage has Inspect count tokens with
    tiktoken, which downloads its encoding on first use: the run stopped saying the mockllm
    provider's endpoint "cannot be reached"; the line names the request that failed."""
    import socket

    import requests

    request = requests.Request("GET", "https://openaipublic.blob.core.windows.net/x.tiktoken")
    error = requests.exceptions.ConnectionError("failed", request=request.prepare())
    error.__cause__ = socket.gaierror(-2, "Name or service not known")
    why = hopeless(error)
    assert why is not None and why.startswith("cannot be reached")
    url = "the mockllm provider's default endpoint"
    line = stop_line("mockllm/model", url, why, failed_url(error))
    assert "a request it needed to https://openaipublic.blob.core.windows.net/x.tiktoken" in line
    assert f"(not the model's endpoint, {url})" in line
    endpoint = "http://127.0.0.1:9/v1"
    refused = requests.Request("POST", endpoint + "/chat/completions").prepare()
    own = requests.exceptions.ConnectionError("failed", request=refused)
    assert stop_line("m", endpoint, why, failed_url(own)) == f"model m at {endpoint} {why}"
    assert stop_line("m", endpoint, why, None) == f"model m at {endpoint} {why}"

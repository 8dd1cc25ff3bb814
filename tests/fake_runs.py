"""`stancelab` commands run against the fake OpenAI server (`stancelab.testing.fake_openai`):
the command as a terminal starts it, its environment, and the wait for the server's calls
before a signal (Ctrl-C, SIGTERM, SIGKILL) stops it midway."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from stancelab.testing.fake_openai import FakeOpenAIServer

Ready = TypeVar("Ready")

# Resets Ctrl-C to what a command started from a terminal gets, then becomes the command
# (same process id). A test process can hold SIGINT ignored or blocked, left by some library
# in the pytest worker; a child inherits both across exec, and then ignores the test's SIGINT.
_AS_FROM_A_TERMINAL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); os.execv(sys.argv[1], sys.argv[1:])"
)


def stancelab_command(*args: str) -> list[str]:
    """`python -m stancelab ARGS` as started from a terminal: Ctrl-C (SIGINT) reaches it."""
    return [sys.executable, "-c", _AS_FROM_A_TERMINAL, sys.executable, "-m", "stancelab", *args]


def fake_server_env(server: FakeOpenAIServer, cache: Path) -> dict[str, str]:
    """The environment of a command whose `openai-api/fake/...` model is `server`, with
    Inspect's cache in `cache`."""
    return {**os.environ, "FAKE_BASE_URL": server.base_url, "FAKE_API_KEY": "local",
            "INSPECT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}  # fmt: skip


def _ended_early(process: subprocess.Popen) -> str:
    """Why the wait failed: the command's end and its output, or the deadline."""
    if process.poll() is None:
        return "the deadline passed while the command ran"
    out, err = process.communicate()
    output = f"{out or ''}{err or ''}"[-2000:]
    return f"the command ended first (status {process.returncode}): {output}"


def wait_while_running(
    process: subprocess.Popen, ready: Callable[[], Ready | None], timeout: float, poll: float = 0.05
) -> Ready:
    """The first true value of `ready()`, polled every `poll` seconds; fails when `process`
    ends or `timeout` seconds pass first."""
    deadline = time.time() + timeout
    while not (found := ready()):
        assert process.poll() is None and time.time() < deadline, _ended_early(process)
        time.sleep(poll)
    return found


def wait_for_calls(process: subprocess.Popen, server: FakeOpenAIServer, paid: int = 0,
                   timeout: float = 120.0, poll: float = 0.05) -> None:  # fmt: skip
    """Return once `server` has a request and `paid` paid calls from the running `process`."""

    def called() -> bool:  # `server.stats` is replaced on each reset
        return server.stats.requests > 0 and server.stats.paid_calls >= paid

    wait_while_running(process, called, timeout, poll)


def stop_after_calls(process: subprocess.Popen, server: FakeOpenAIServer, paid: int,
                     stop: signal.Signals = signal.SIGINT, timeout: float = 120.0,
                     poll: float = 0.05) -> str:  # fmt: skip
    """Send `stop` (Ctrl-C unless said) to `process` once `server` has `paid` paid calls from
    it; its stderr (empty when not piped) once it has ended."""
    wait_for_calls(process, server, paid, timeout, poll)
    process.send_signal(stop)
    _, errors = process.communicate(timeout=120)
    return errors or ""


def wait_until_settled(server: FakeOpenAIServer, seconds: float) -> None:
    """Wait up to `seconds` until `server` has no call in flight: the requests a stopped
    command had sent are answered (and paid)."""
    deadline = time.time() + seconds
    while server.stats.in_flight > 0 and time.time() < deadline:
        time.sleep(0.05)

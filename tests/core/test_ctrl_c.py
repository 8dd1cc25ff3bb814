"""Ctrl-C stops any run within 5 s with the one "interrupted" line and exit status 130, the log
of the interrupted eval kept: calls stalled at the server (issue 37, item 5), and a generation of
the embedded model in Inspect's batch thread, which once aborted the process (SIGABRT, exit 134:
"terminate called without an active exception"; issue 40, item 4)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.fake_runs import fake_server_env, stancelab_command, wait_for_calls, wait_while_running
from tests.millstone.test_run_mockllm import _issues_file

STOP_BOUND_S = 5.0
MILLSTONE = ["run", "millstone", "--limit", "1", "--trials", "1", "--prompts", "stancelab"]


def _interrupt(process: subprocess.Popen) -> tuple[str, float]:
    """Send Ctrl-C (SIGINT); the command's stderr and the seconds it took to end."""
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    return err or "", time.monotonic() - sent


def _stopped_with_one_line(process: subprocess.Popen, err: str, out: Path) -> None:
    assert process.returncode == 130, err[-2000:]
    assert "terminate called" not in err and "Traceback" not in err, err[-2000:]
    interrupted = [line for line in err.splitlines() if line.startswith("interrupted: ")]
    assert len(interrupted) == 1 and "kept in" in interrupted[0], err[-2000:]
    assert list((out / "logs").glob("*.eval"))  # Inspect's log of the interrupted eval


def test_ctrl_c_with_every_call_stalled_stops_within_5_s(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency=600) as server:
        out = tmp_path / "run"
        command = [*MILLSTONE, "--model", "openai-api/fake/fake-model", "--display", "none",
                   "--issues-file", str(_issues_file(tmp_path / "issues.jsonl")), "--out", str(out)]  # fmt: skip
        process = subprocess.Popen(stancelab_command(*command), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True,
                                   env=fake_server_env(server, tmp_path / "cache"))  # fmt: skip
        wait_for_calls(process, server)
        wait_while_running(process, lambda: server.stats.in_flight >= 10, timeout=60)
        err, seconds = _interrupt(process)
    _stopped_with_one_line(process, err, out)
    assert seconds < STOP_BOUND_S, (seconds, err)


@pytest.mark.slow
def test_ctrl_c_in_an_embedded_generation_exits_130_not_an_abort(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [*MILLSTONE, "--model", "embedded", "--display", "plain", "--out", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "INSPECT_CACHE_DIR": str(tmp_path / "cache")}
    process = subprocess.Popen(stancelab_command(*command), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:  # the eval's header: its first generation starts next
        if "samples):" in line:
            break
    time.sleep(3)  # inside the batch thread's generation (one call takes longer)
    err, seconds = _interrupt(process)
    _stopped_with_one_line(process, err, out)
    assert seconds < STOP_BOUND_S, (seconds, err)

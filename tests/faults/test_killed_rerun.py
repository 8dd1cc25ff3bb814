"""`kill -9` of a re-run, then `stancelab analyze`: the same figures as before the re-run (the
killed run's log, status `started`, holds some samples; a complete log of the run is there)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

from stancelab.cli import main
from stancelab.testing.fake_openai import FakeOpenAIServer, random_ab_reply
from tests.fake_runs import fake_server_env, wait_while_running

COMMAND = ["run", "millstone", "--model", "openai-api/fake/sampled", "--limit", "1", "--trials", "1",
           "--max-tokens", "16", "--display", "none", "--max-connections", "2",
           "--prompts", "stancelab"]  # fmt: skip


def _logged_samples(path: Path) -> int:
    try:
        return len(read_eval_log_sample_summaries(str(path)))
    except Exception:  # the log is being written
        return 0


def _new_log_with_samples(logs: Path, known: set[Path]) -> Path | None:
    """The first log in `logs` not in `known`, once it holds 4 samples."""
    new = [path for path in logs.glob("*.eval") if path not in known]
    return new[0] if new and _logged_samples(new[0]) >= 4 else None


def _kill_once_samples_are_logged(process: subprocess.Popen, logs: Path, known: set[Path]) -> Path:
    killed = wait_while_running(process, lambda: _new_log_with_samples(logs, known), 300, poll=0.1)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return killed


def _figures(summary: dict) -> dict:
    return {
        key: value
        for key, value in summary.items()
        if key not in ("evidence", "headline_differences")
    }


def test_kill_9_of_a_rerun_then_analyze_gives_the_figures_of_before(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=random_ab_reply(0)) as server:
        env = fake_server_env(server, tmp_path / "cache")
        command = [sys.executable, "-m", "stancelab", *COMMAND, "--out", str(out)]
        first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert first.returncode == 0, first.stderr[-2000:]
        before = json.loads((out / "summary.json").read_text())
        known = set((out / "logs").glob("*.eval"))
        # the re-run is not served from the cache: fresh (random) answers, slowly, killed midway
        server.latency = 0.25
        rerun = subprocess.Popen(command, env=env | {"INSPECT_CACHE_DIR": str(tmp_path / "cache-2")},
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        killed = _kill_once_samples_are_logged(rerun, out / "logs", known)
    assert read_eval_log(str(killed), header_only=True).status == "started"
    assert 4 <= _logged_samples(killed) < before["trials"]["openai-api/fake/sampled"]["total"]
    capsys.readouterr()
    assert main(["analyze", str(out)]) == 0
    after = json.loads((out / "summary.json").read_text())
    assert _figures(after) == _figures(before)
    assert after["evidence"]["interrupted_logs_ignored"] == [killed.name]
    assert "1 interrupted log ignored" in capsys.readouterr().out

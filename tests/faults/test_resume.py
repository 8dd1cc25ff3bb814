"""Pay once: a finished run re-run makes no request; a run killed with SIGKILL midway and
resumed with the same command re-pays at most the calls that were in flight."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.fake_runs import fake_server_env, stop_after_calls, wait_until_settled

# A call holds one of the model's MAX_CONNECTIONS slots from its request until its answer is
# in the cache, so a kill can leave at most that many answers paid and not stored. (Without
# an explicit limit Inspect's adaptive concurrency sets the slots, which the server's peak
# in-flight count does not bound: answers sent but not yet stored are no longer in flight.)
MAX_CONNECTIONS = 10
COMMAND = ["run", "issuebench", "--model", "openai-api/fake/fake-model", "--limit", "2",
           "--n-templates", "20", "--max-tokens", "16", "--display", "none",
           "--max-connections", str(MAX_CONNECTIONS), "--prompts", "stancelab"]  # fmt: skip


def _start(out: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "stancelab", *COMMAND, "--out", str(out)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_sigkill_midway_then_resume_repays_at_most_the_calls_in_flight(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency=0.05) as server:
        env = fake_server_env(server, tmp_path / "cache")
        out = tmp_path / "run"
        total_calls = 2 * 3 * 20 * 2  # prompts x (writer + classifier)
        process = _start(out, env)
        stop_after_calls(process, server, paid=total_calls // 2, stop=signal.SIGKILL, timeout=300,
                         poll=0.01)  # fmt: skip
        wait_until_settled(
            server, 30
        )  # requests the killed run had sent still complete (and are paid)
        paid_before = set(server.stats.paid)
        assert server.stats.max_in_flight <= MAX_CONNECTIONS
        assert 0 < len(paid_before) < total_calls

        server.reset()
        resumed = _start(out, env)
        _, errors = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, errors[-2000:]
        repaid = paid_before & set(server.stats.paid)
        assert len(repaid) <= MAX_CONNECTIONS < total_calls // 4
        assert len(paid_before | set(server.stats.paid)) == total_calls
        assert (
            json.loads((out / "summary.json").read_text())["responses"][
                "openai-api/fake/fake-model"
            ]["total"]
            == 120
        )

        server.reset()
        again = _start(out, env)
        _, errors = again.communicate(timeout=300)
        assert again.returncode == 0, errors[-2000:]
        assert server.stats.requests == 0

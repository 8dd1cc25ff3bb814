"""Pay once: a finished run re-run makes no request; a run killed with SIGKILL midway and
resumed with the same command re-pays at most the calls that were in flight."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from stancelab.testing.fake_openai import FakeOpenAIServer

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
        env = {**os.environ, "FAKE_BASE_URL": server.base_url, "FAKE_API_KEY": "local",
               "INSPECT_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
        out = tmp_path / "run"
        total_calls = 2 * 3 * 20 * 2  # prompts x (writer + classifier)
        process = _start(out, env)
        deadline = time.time() + 300
        while server.stats.paid_calls < total_calls // 2:
            assert process.poll() is None and time.time() < deadline, "run ended before the kill"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        settle = time.time() + 30  # requests the killed run had sent still complete (and are paid)
        while server.stats.in_flight > 0 and time.time() < settle:
            time.sleep(0.05)
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

"""The two ways a child learns that the command that started it is gone (issue 24): Linux's
parent-death signal, asked for by `core.tether` before it runs the command, and a worker's
stdin pipe from its parent (`core.runs.shards.follow_parent`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stancelab.core import tether
from stancelab.core.runs.shards import PARENT_ENV

SLEEPER = """
from stancelab.core.runs.shards import follow_parent
follow_parent()
print("following", flush=True)
import time
time.sleep(60)
"""


@pytest.mark.skipif(not tether.supported(), reason="parent-death signal: Linux")
def test_the_tether_runs_the_command_in_its_own_process_and_not_once_its_parent_is_gone(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    ran = subprocess.Popen(tether.tethered(["sh", "-c", f'echo "$$" > {marker}']))
    assert ran.wait(timeout=30) == 0
    assert int(marker.read_text()) == ran.pid  # the command replaced the wrapper: signals reach it

    marker.unlink()
    not_my_parent = tether.tethered(["touch", str(marker)])
    not_my_parent[not_my_parent.index("--") - 1] = (
        "1"  # as if the parent had died before the request
    )
    orphan = subprocess.run(not_my_parent, capture_output=True, text=True, timeout=30)
    assert orphan.returncode == tether.ORPHANED_EXIT and not marker.exists()


def _sleeper(env: dict[str, str]) -> subprocess.Popen:
    """A process that has called `follow_parent` (and says so) and then sleeps."""
    process = subprocess.Popen([sys.executable, "-c", SLEEPER], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=env, text=True)  # fmt: skip
    assert process.stdout is not None and process.stdout.readline() == "following\n"
    return process


def test_a_worker_ends_when_the_pipe_from_its_parent_closes() -> None:
    worker = _sleeper({**os.environ, PARENT_ENV: str(os.getpid())})
    try:
        assert worker.stdin is not None
        worker.stdin.close()  # what the kernel does when the parent dies
        assert worker.wait(timeout=30) == -signal.SIGKILL
    finally:
        worker.kill()


def test_a_process_that_is_not_a_worker_ignores_its_stdin() -> None:
    env = {key: value for key, value in os.environ.items() if key != PARENT_ENV}
    process = _sleeper(env)
    try:
        assert process.stdin is not None
        process.stdin.close()
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=1)
    finally:
        process.kill()
        process.wait()

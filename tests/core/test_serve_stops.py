"""`stancelab serve-embedded` stops its server child on SIGTERM (issue 16), not only on Ctrl-C,
and the child dies with it even when it is killed with SIGKILL (issue 24)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HARNESS = """
import pathlib, sys
import stancelab.core.embedded.serve as serve
folder = pathlib.Path(sys.argv[1])
serve.materialise = lambda: folder / "model"
serve.serve_command = lambda port, host="127.0.0.1": [
    sys.executable, "-c", "import os, time; print('child', os.getpid(), flush=True); time.sleep(300)"]
sys.exit(serve.serve_embedded(0))
"""


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie no longer does: its parent may not reap it soon)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True  # no /proc: alive as far as we can tell


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.time() + seconds
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


LINUX_ONLY = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="parent-death signal: Linux"
)


@pytest.mark.parametrize(
    "stop",
    [
        pytest.param(signal.SIGTERM, id="SIGTERM"),
        pytest.param(signal.SIGKILL, id="SIGKILL", marks=LINUX_ONLY),
    ],
)
def test_stopping_serve_embedded_leaves_no_server_child(
    stop: signal.Signals, tmp_path: Path
) -> None:
    server = subprocess.Popen([sys.executable, "-c", HARNESS, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert server.stdout is not None
    child = next(int(line.split()[1]) for line in server.stdout if line.startswith("child "))
    try:
        assert _alive(child)
        server.send_signal(stop)
        server.wait(timeout=20)
        assert _gone_within(child, 10 if stop == signal.SIGTERM else 3), (
            "the server child outlived serve-embedded"
        )
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        server.kill()

"""`stancelab serve-embedded` stops its server child on SIGTERM (issue 16), not only on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HARNESS = """
import pathlib, sys
import stancelab.core.serve as serve
folder = pathlib.Path(sys.argv[1])
serve.materialise = lambda: folder / "model"
serve.serve_command = lambda port, host="127.0.0.1": [
    sys.executable, "-c", "import os, time; print('child', os.getpid(), flush=True); time.sleep(300)"]
sys.exit(serve.serve_embedded(0))
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_leaves_no_server_child(tmp_path: Path) -> None:
    server = subprocess.Popen([sys.executable, "-c", HARNESS, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert server.stdout is not None
    child = next(int(line.split()[1]) for line in server.stdout if line.startswith("child "))
    try:
        assert _alive(child)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
        deadline = time.time() + 10
        while _alive(child) and time.time() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the server child outlived serve-embedded"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        server.kill()

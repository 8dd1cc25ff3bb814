"""`stancelab serve-embedded`: the embedded model behind an OpenAI-compatible server on
127.0.0.1, using `transformers serve` (a maintained server; offline on the local folder).

The server loads models by name from its working directory, so it is started in the folder
that holds the materialised model and the model is asked for by its folder name. It does not
return log-probs, so prior prejudice falls back to parsed ratings (and says so)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

from stancelab.core.embedded.model import materialise
from stancelab.core.tether import tethered

PROVIDER = "stancelab"  # Inspect reads STANCELAB_BASE_URL / STANCELAB_API_KEY for it


def served_model_name(model_dir: Path) -> str:
    return f"openai-api/{PROVIDER}/{model_dir.name}"


def serve_command(port: int, host: str = "127.0.0.1") -> list[str]:
    transformers_cli = Path(sys.executable).parent / "transformers"
    return [str(transformers_cli), "serve", "--host", host, "--port", str(port), "--device", "cpu"]


def serve_embedded(port: int = 8000, host: str = "127.0.0.1") -> int:
    """Run the server in the foreground until interrupted; returns its exit code."""
    model_dir = materialise()
    print(
        f"Serving {model_dir.name} on http://{host}:{port}/v1 (Ctrl-C stops it). Use it with:\n"
        f"  export {PROVIDER.upper()}_BASE_URL=http://{host}:{port}/v1 {PROVIDER.upper()}_API_KEY=local\n"
        f"  stancelab run millstone --model {served_model_name(model_dir)}",
        flush=True,
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return run_until_stopped(serve_command(port, host), model_dir.parent, env)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
GRACE_SECONDS = 10


def _stop(child: subprocess.Popen) -> None:
    """Terminate the child, then kill it if it has not exited within the grace period."""
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def run_until_stopped(command: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Run `command` in the foreground; Ctrl-C, SIGTERM or SIGHUP stop it too, and it dies
    with this process even on SIGKILL (`core.tether`): no orphan server left on the port.
    Returns its exit code, 0 when stopped."""
    child = subprocess.Popen(tethered(command), cwd=cwd, env=env)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        return child.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(child)
        for sig, handler in previous.items():
            signal.signal(sig, handler)

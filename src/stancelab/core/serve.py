"""`stancelab serve-embedded`: the embedded model behind an OpenAI-compatible server on
127.0.0.1, using `transformers serve` (a maintained server; offline on the local folder).

The server loads models by name from its working directory, so it is started in the folder
that holds the materialised model and the model is asked for by its folder name. It does not
return log-probs, so prior prejudice falls back to parsed ratings (and says so)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from stancelab.core.embedded import materialise

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
    try:
        return subprocess.run(serve_command(port, host), cwd=model_dir.parent, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 0

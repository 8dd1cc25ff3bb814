"""The embedded model: output tokens per second in-process (Inspect's hf-based provider,
batched) and through `stancelab serve-embedded` (transformers serve, OpenAI-compatible).

    python benchmarks/embedded.py [--prompts 8] [--max-tokens 64]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import calls_task, fresh_cache_dir, machine
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig

from stancelab.core.embedded.model import EMBEDDED_MODEL, materialise
from stancelab.core.embedded.serve import PROVIDER, served_model_name
from stancelab.testing.fake_openai import free_port


def tokens_per_second(model: str, prompts: int, max_tokens: int) -> tuple[float, int, float]:
    fresh_cache_dir()
    started = time.perf_counter()
    task = calls_task(
        prompts,
        cached=False,
        prompt="Write a long story about a lighthouse keeper named Keeper {i}.",
    )
    (log,) = inspect_eval(task, model=model, display="none",
                          log_dir=str(fresh_cache_dir() / "logs"),
                          **GenerateConfig(max_tokens=max_tokens, temperature=0.0).model_dump(exclude_none=True))  # fmt: skip
    seconds = time.perf_counter() - started
    output = sum(usage.output_tokens for usage in log.stats.model_usage.values())
    return output / seconds, output, seconds


def _wait_for(port: int, process: subprocess.Popen) -> None:
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).read()
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("serve-embedded exited") from None
            time.sleep(0.2)
    raise RuntimeError("serve-embedded did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    print(
        f"embedded model ({machine()}): {args.prompts} prompts, up to {args.max_tokens} tokens each"
    )
    rate, tokens, seconds = tokens_per_second(EMBEDDED_MODEL, args.prompts, args.max_tokens)
    print(
        f"  in-process ({EMBEDDED_MODEL}): {rate:.1f} output tokens/s ({tokens} tokens in {seconds:.1f} s, model load included)"
    )
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "stancelab", "serve-embedded", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        _wait_for(port, server)
        os.environ[f"{PROVIDER.upper()}_BASE_URL"] = f"http://127.0.0.1:{port}/v1"
        os.environ[f"{PROVIDER.upper()}_API_KEY"] = "local"
        model = served_model_name(materialise())
        rate, tokens, seconds = tokens_per_second(model, args.prompts, args.max_tokens)
        print(
            f"  through serve-embedded ({model}): {rate:.1f} output tokens/s ({tokens} tokens in {seconds:.1f} s)"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

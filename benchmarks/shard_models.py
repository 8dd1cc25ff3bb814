"""Several subject models in one shard: the wall time of M models' `--shard 1/2` (one eval per
model, one after another: Inspect writes an eval()'s logs into one folder, and the shard layout
gives each model a folder of its own) against the same models unsharded (one eval, the models
concurrently), each model on an OpenAI-compatible server of its own with a fixed latency.

    python benchmarks/shard_models.py [--latency 4] [--models 3]

MillStone, stancelab's prompts, its first issue, one trial; each run with a fresh cache.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import machine

from stancelab.cli import main
from stancelab.testing.fake_openai import FakeOpenAIServer


def _run(root: Path, models: int, shard: str | None, tag: str) -> float:
    """Seconds of one `stancelab run millstone` of `models` models (`--shard`, if given)."""
    os.environ["INSPECT_CACHE_DIR"] = str(root / f"cache-{tag}")
    argv = ["run", "millstone", "--display", "none", "--prompts", "stancelab", "--limit", "1",
            "--trials", "1", "--out", str(root / tag)]  # fmt: skip
    argv += [arg for index in range(models) for arg in ("--model", f"openai-api/fake{index}/m")]
    argv += ["--shard", shard] if shard else []
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        if main(argv) != 0:
            raise SystemExit(f"{tag}: the run failed")
    return time.perf_counter() - start


def main_benchmark() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=4.0, help="seconds per call")
    parser.add_argument("--models", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="shard-models-"))
    with contextlib.ExitStack() as stack:
        for index in range(args.models):
            server = stack.enter_context(FakeOpenAIServer(latency=args.latency))
            os.environ[f"FAKE{index}_BASE_URL"] = server.base_url
            os.environ[f"FAKE{index}_API_KEY"] = "local"
        _run(root, 1, None, "warm-up")
        times = {(models, shard): _run(root, models, shard, f"{models}-{shard and 'shard'}")
                 for models in (1, args.models) for shard in (None, "1/2")}  # fmt: skip
    print(f"{machine()}; latency {args.latency} s per call")
    for shard in (None, "1/2"):
        one, several = times[(1, shard)], times[(args.models, shard)]
        print(f"{'shard 1/2' if shard else 'unsharded'}: 1 model {one:.1f} s, {args.models} models "
              f"{several:.1f} s ({several / one:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main_benchmark()

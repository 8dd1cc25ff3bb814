"""`stancelab run llm-bias-bench --workers N` on the authors' 38 topics against the fake server
(fault-free): wall time and CPU per call for each N, and the speed-up over N = 1.

    python benchmarks/workers.py [--workers 1,2] [--latency 0.2] [--concurrency 20]

Each run is the command line in a subprocess (workers, analysis and start-up included), with
a fresh cache; CPU is the command's and its workers' (the server runs in its own process and
is not counted). The concurrency is per worker (`--max-connections`), as each worker is its own
Inspect process; the ideal is the critical path at the total concurrency.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import ServerProcess, machine
from bias_bench import AUTHORS_TOPICS, CALLS_PER_CONVERSATION, SUBJECT, design


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(
    server: ServerProcess, topics: Path, workers: int, concurrency: int
) -> tuple[float, float, int]:
    """(wall s, CPU s, requests) of one `stancelab run llm-bias-bench --workers N`."""
    scratch = Path(tempfile.mkdtemp(prefix="stancelab-bench-workers-"))
    env = {**os.environ, "FAKE_BASE_URL": server.base_url, "FAKE_API_KEY": "local",
           "INSPECT_CACHE_DIR": str(scratch / "cache"), "HF_HUB_OFFLINE": "1"}  # fmt: skip
    command = [sys.executable, "-m", "stancelab", "run", "llm-bias-bench", "--model", SUBJECT,
               "--topics-file", str(topics), "--max-connections", str(concurrency), "--display", "none",
               "--out", str(scratch / "run"), "--workers", str(workers),
               "--prompts", "stancelab"]  # the fake server's judge reads stancelab's wording  # fmt: skip
    server.reset()
    cpu_before, started = children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    requests = server.stats()["requests"]
    shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode != 0:
        raise RuntimeError(f"--workers {workers} failed:\n{done.stderr[-2000:]}")
    return wall, cpu, requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=Path, default=AUTHORS_TOPICS.resolve())
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=20, help="connections per worker")
    args = parser.parse_args()
    if not args.topics.exists():
        sys.exit(f"no topics file at {args.topics}")
    conversations = len(design(args.topics))
    calls = conversations * CALLS_PER_CONVERSATION
    counts = [int(part) for part in args.workers.split(",")]
    print(f"workers speed-up, llm-bias-bench design ({machine()}; load {os.getloadavg()[0]:.2f}): "
          f"{calls:,} calls, {args.latency * 1000:.0f} ms latency, concurrency {args.concurrency} "
          "per worker, no faults", flush=True)  # fmt: skip
    first: float | None = None
    with ServerProcess(latency=args.latency, verdicts=True) as server:
        for workers in counts:
            ideal = (
                math.ceil(conversations / (args.concurrency * workers))
                * CALLS_PER_CONVERSATION
                * args.latency
            )
            wall, cpu, requests = run_once(server, args.topics, workers, args.concurrency)
            first = first or wall
            print(f"  --workers {workers}: {wall:6.1f} s (ideal {ideal:.1f} s), speed-up {first / wall:.2f}x "
                  f"over --workers {counts[0]}, {requests:,} requests, CPU {1000 * cpu / calls:.1f} ms "
                  f"per call, load {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

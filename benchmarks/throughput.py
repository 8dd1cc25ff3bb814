"""Throughput: N calls at concurrency C against a fixed-latency server, vs the ideal N x L / C,
and the harness's CPU time per call.

    python benchmarks/throughput.py [--calls 10000] [--concurrency 100] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import (
    FAKE_MODEL,
    ServerProcess,
    calls_task,
    fresh_cache_dir,
    machine,
    use_fake_endpoint,
)
from inspect_ai import eval as inspect_eval


def measure(calls: int, concurrency: int, latency: float) -> dict[str, float]:
    fresh_cache_dir()
    with ServerProcess(latency=latency) as server:
        use_fake_endpoint(server.base_url)
        started_wall, started_cpu = time.perf_counter(), time.process_time()
        (log,) = inspect_eval(calls_task(calls, cached=False), model=FAKE_MODEL, display="none",
                              max_connections=concurrency, log_dir=str(Path(fresh_cache_dir()) / "logs"))  # fmt: skip
        wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
        stats = server.stats()
        assert log.status == "success" and stats["requests"] == calls
        peak = stats["max_in_flight"]
    ideal = calls * latency / concurrency
    return {"wall": wall, "ideal": ideal, "ratio": wall / ideal, "cpu_ms_per_call": 1000 * cpu / calls,
            "max_in_flight": peak}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    result = measure(args.calls, args.concurrency, args.latency)
    print(f"throughput ({machine()}): {args.calls} calls, concurrency {args.concurrency}, "
          f"latency {args.latency * 1000:.0f} ms")  # fmt: skip
    print(f"  measured {result['wall']:.1f} s vs ideal {result['ideal']:.1f} s -> {result['ratio']:.2f}x "
          f"(target <= 1.05x); harness CPU {result['cpu_ms_per_call']:.2f} ms per call; "
          f"peak in flight {result['max_in_flight']}")  # fmt: skip


if __name__ == "__main__":
    main()

"""Caching and resume: a rerun of a finished run makes 0 requests; a run killed with SIGKILL
midway and then resumed re-pays at most the calls that were in flight when it died.

    python benchmarks/caching.py [--calls 600] [--concurrency 20] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import FAKE_MODEL, ServerProcess, machine, use_fake_endpoint

RUNNER = """
import sys
sys.path.insert(0, {bench!r})
from _common import FAKE_MODEL, calls_task
from inspect_ai import eval as inspect_eval
inspect_eval(calls_task({calls}), model=FAKE_MODEL, display="none", max_connections={concurrency},
             log_dir={logs!r})
"""


def _run(
    calls: int, concurrency: int, logs: Path, kill_after: int | None, server: ServerProcess
) -> None:
    code = RUNNER.format(
        bench=str(Path(__file__).parent), calls=calls, concurrency=concurrency, logs=str(logs)
    )
    process = subprocess.Popen([sys.executable, "-c", code], env=os.environ.copy())
    if kill_after is None:
        process.wait()
        return
    while server.stats()["paid_calls"] < kill_after and process.poll() is None:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    for _ in range(600):  # requests the killed run had sent still complete, and are paid
        if server.stats()["in_flight"] == 0:
            break
        time.sleep(0.05)


def measure(calls: int, concurrency: int, latency: float) -> dict[str, int]:
    work = Path(tempfile.mkdtemp(prefix="stancelab-bench-"))
    os.environ["INSPECT_CACHE_DIR"] = str(work / "cache")
    result: dict[str, int] = {}
    with ServerProcess(latency=latency) as server:
        use_fake_endpoint(server.base_url)
        _run(calls, concurrency, work / "logs-full", None, server)
        result["first_run_requests"] = server.stats()["requests"]
        server.reset()
        _run(calls, concurrency, work / "logs-rerun", None, server)
        result["rerun_requests"] = server.stats()["requests"]

        os.environ["INSPECT_CACHE_DIR"] = str(work / "cache-killed")
        server.reset()
        _run(calls, concurrency, work / "logs-killed", calls // 2, server)
        killed = server.stats()
        result["paid_before_kill"] = killed["paid_calls"]
        server.reset()
        _run(calls, concurrency, work / "logs-resumed", None, server)
        resumed = server.stats()
        result["resumed_requests"] = resumed["requests"]
        result["repaid"] = len(set(killed["paid_keys"]) & set(resumed["paid_keys"]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    r = measure(args.calls, args.concurrency, args.latency)
    print(
        f"caching ({machine()}): {args.calls} calls, concurrency {args.concurrency} ({FAKE_MODEL})"
    )
    print(
        f"  rerun of a finished run: {r['rerun_requests']} requests (first run {r['first_run_requests']}; target 0)"
    )
    print(f"  SIGKILL after {r['paid_before_kill']} answers; the resumed run made "
          f"{r['resumed_requests']} requests for the {args.calls - r['paid_before_kill']} missing, re-paid "
          f"{r['repaid']} answers already paid (target <= {args.concurrency}, the calls that can be in flight)")  # fmt: skip


if __name__ == "__main__":
    main()

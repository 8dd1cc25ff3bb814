"""`stancelab estimate --calibration` against what happens: a small IssueBench run calibrates,
then a run 4x its size is predicted and run for each worker count; last, the prediction for
the paper's full sample (636k prompts x 5 calls) from the same calibration.

    python benchmarks/estimate_wall.py [--workers 1,2] [--latency 0.2] [--concurrency 20]

All on the fake server (its replies are short, so its tokens per call are not a real model's:
a real calibration is a small run against the real provider). Wall times are the evals'
(Inspect's started/completed), as the calibration measures them; the command's start-up
(about 2-5 s of imports per process) is not in them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import ServerProcess, machine

SUBJECT = "openai-api/fake/subject"
AUTHORS = Path(__file__).parents[1] / "../shared/external/issuebench"
CALIBRATION = ("--limit", "3", "--n-templates", "20")  # 180 prompts, 360 calls
TARGET = ("--limit", "6", "--n-templates", "40")  # 720 prompts, 1,440 calls


def run(out: Path, env: dict[str, str], concurrency: int, *args: str) -> None:
    command = [sys.executable, "-m", "stancelab", "run", "issuebench", "--model", SUBJECT,
               "--max-connections", str(concurrency), "--display", "none", "--out", str(out),
               "--prompts", "stancelab", *args]  # the bundled set, offline  # fmt: skip
    fresh = {**env, "INSPECT_CACHE_DIR": str(out.parent / f"cache-{out.name}")}  # no answer reused
    done = subprocess.run(command, env=fresh, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")


def eval_wall(out: Path) -> float:
    """Wall time of a run's evals: first start to last completion over its logs."""
    import pandas as pd
    from inspect_ai.log import read_eval_log

    from stancelab.core.results.logs import log_files

    headers = [read_eval_log(str(path), header_only=True) for path in log_files(out / "logs")]
    start = min(pd.Timestamp(header.stats.started_at) for header in headers)
    end = max(pd.Timestamp(header.stats.completed_at) for header in headers)
    return (end - start).total_seconds()


def predicted(
    calibration: object, concurrency: int, workers: int, *args: str
) -> tuple[int, float, str]:
    """(calls, predicted seconds, bound) of an IssueBench run with these flags."""
    from stancelab.cli import build_parser, options_from_args
    from stancelab.core.runs.estimate import plan_frame, predict_wall

    parsed = build_parser().parse_args(["estimate", "issuebench", "--model", SUBJECT, *args])
    probe, options = options_from_args(parsed)
    frame = plan_frame(probe.plan(options), [SUBJECT], {}, {})
    calls = int(frame["calls_max"].sum())
    wall = predict_wall(calls, calibration, concurrency, workers)  # type: ignore[arg-type]
    return calls, wall.seconds, wall.bound


def main() -> None:
    from stancelab.core.runs.estimate import read_calibration

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=20)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="stancelab-bench-estimate-"))
    print(f"estimate vs measured, IssueBench on the fake server ({machine()}; load "
          f"{os.getloadavg()[0]:.2f}): {args.latency * 1000:.0f} ms latency, concurrency "
          f"{args.concurrency} per worker", flush=True)  # fmt: skip
    try:
        with ServerProcess(latency=args.latency) as server:
            env = {**os.environ, "FAKE_BASE_URL": server.base_url, "FAKE_API_KEY": "local",
                   "HF_HUB_OFFLINE": "1"}  # fmt: skip
            run(scratch / "calibration", env, args.concurrency, *CALIBRATION)
            calibration = read_calibration(scratch / "calibration")
            held = (
                "held back by the harness" if calibration.harness_bound else "at the server's pace"
            )
            print(f"  calibration: {calibration.calls} calls, {calibration.seconds_per_call:.3f} s per call, "
                  f"{calibration.calls_per_s:.1f} calls/s ({held})", flush=True)  # fmt: skip
            for workers in [int(part) for part in args.workers.split(",")]:
                calls, seconds, bound = predicted(calibration, args.concurrency, workers, *TARGET)
                out = scratch / f"target-{workers}"
                server.reset()
                run(out, env, args.concurrency, *TARGET, "--workers", str(workers))
                measured, requests = eval_wall(out), server.stats()["requests"]
                print(f"  {calls:,} calls, --workers {workers}: predicted {seconds:.1f} s ({bound}), measured "
                      f"{measured:.1f} s (ratio {measured / seconds:.2f}; {requests:,} requests), "
                      f"load {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
        if (AUTHORS / "templates_full.csv").exists():
            full = ("--issues-file", str(AUTHORS / "issues.csv"), "--templates-file",
                    str(AUTHORS / "templates_full.csv"), "--protocol", "paper")  # fmt: skip
            for workers in (1, 16, 256):
                calls, seconds, bound = predicted(calibration, args.concurrency, workers, *full)
                print(f"  paper's full sample, {calls:,} calls, --workers {workers} (one core each): "
                      f"predicted {seconds / 3600:.1f} h ({bound})", flush=True)  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

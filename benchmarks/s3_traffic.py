"""Log-store traffic of runs and analyses on S3 (moto's server over HTTP, a fake model): the
requests a run, a shard and `analyze s3://` make, by kind, at two sizes of one design, so that
what grows with the samples shows (listings should not).

    python benchmarks/s3_traffic.py [--limits 2,6]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections import Counter
from pathlib import Path

from stancelab.cli import main
from stancelab.testing.fake_openai import FakeOpenAIServer, verdict_reply
from stancelab.testing.s3_server import LIST_MARK, S3Server

MODEL = "openai-api/fake/subject"


def run_command(limit: int, out: Path, *extra: str) -> list[str]:
    return ["run", "llm-bias-bench", "--model", MODEL, "--limit", str(limit), "--turns", "1",
            "--prompts", "stancelab", "--display", "none", "--out", str(out), *extra]  # fmt: skip


def kinds(requests: list[tuple[str, str, int]]) -> Counter[str]:
    """Requests by kind: list, get, put, head, other."""
    counted: Counter[str] = Counter()
    for method, path, _ in requests:
        counted["list" if LIST_MARK in path else method.lower()] += 1
    return counted


def measured(server: S3Server, command: list[str]) -> Counter[str]:
    before = len(server.requests())
    if main(command) != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    return kinds(server.requests()[before:])


def main_benchmark(limits: list[int]) -> None:
    root = Path(tempfile.mkdtemp(prefix="stancelab-s3-"))
    with S3Server() as server, FakeOpenAIServer(reply=verdict_reply) as model:
        os.environ.update(server.env())
        os.environ.update({"FAKE_BASE_URL": model.base_url, "FAKE_API_KEY": "local",
                           "INSPECT_DISPLAY": "none"})  # fmt: skip
        for limit in limits:
            bucket = f"bench-{limit}"
            server.make_bucket(bucket)
            os.environ["INSPECT_CACHE_DIR"] = str(root / f"cache-{limit}")
            url = f"s3://{bucket}/run"
            rows = {
                "run": measured(
                    server, run_command(limit, root / f"run-{limit}", "--log-dir", url)
                ),
                "re-run": measured(
                    server, run_command(limit, root / f"run-{limit}", "--log-dir", url)
                ),
                "shard 1/2": measured(
                    server,
                    run_command(
                        limit,
                        root / f"shard-{limit}",
                        "--shard",
                        "1/2",
                        "--log-dir",
                        f"{url}-shards",
                    ),
                ),
                "analyze": measured(server, ["analyze", url, "--out", str(root / f"an-{limit}")]),
            }
            print(f"\nllm-bias-bench --limit {limit} --turns 1 ({limit * 6} samples)")
            for name, counted in rows.items():
                print(f"  {name:10} " + ", ".join(f"{kind} {counted[kind]}" for kind in
                                                   ("list", "head", "get", "put", "post")))  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limits", default="2,6")
    args = parser.parse_args()
    main_benchmark([int(part) for part in args.limits.split(",")])

"""The merge of a sharded run into one eval (`core.runs.shard_sets`): its time, peak memory and
size, and the analysis' read of the location before and after it.

    python benchmarks/shard_merge.py [--samples 2000] [--shards 4]

One task of S one-message samples (the fake OpenAI server, latency 0), run as N shards into Inspect's layout
(`run_eval(shard=...)`), then merged once; the read is `samples_frame` over the folder (the
sample summaries every probe's analysis starts from).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import (
    FAKE_MODEL,
    ServerProcess,
    calls_task,
    fresh_cache_dir,
    machine,
    peak_rss_mb,
    use_fake_endpoint,
)

from stancelab.core.results.logs import samples_frame
from stancelab.core.runs.evals import run_eval
from stancelab.core.runs.shard_sets import merge_shard_sets
from stancelab.core.runs.shards import Shard


def _megabytes(paths: list[Path]) -> float:
    return sum(path.stat().st_size for path in paths) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=4)
    args = parser.parse_args()
    fresh_cache_dir()
    logs = Path(tempfile.mkdtemp(prefix="stancelab-merge-")) / "logs"
    task = calls_task(args.samples, name="merge")
    started = time.perf_counter()
    with ServerProcess(latency=0.0) as server:
        use_fake_endpoint(server.base_url)
        for index in range(1, args.shards + 1):
            shard = Shard(index, args.shards)
            run_eval(task, [FAKE_MODEL], None, logs, display="none", shard=shard)
    run_s = time.perf_counter() - started
    shard_files = sorted(logs.glob("*.shards/*/*.eval"))

    started = time.perf_counter()
    read_shards = len(samples_frame(logs))
    read_shards_s = time.perf_counter() - started
    rss_before = peak_rss_mb()
    started = time.perf_counter()
    (merged,) = merge_shard_sets(str(logs))
    merge_s = time.perf_counter() - started
    started = time.perf_counter()
    read_merged = len(samples_frame(logs))
    read_merged_s = time.perf_counter() - started

    print(f"machine: {machine()}; {args.samples} samples in {args.shards} shards")
    print(f"shards run: {run_s:.1f} s; shard logs {_megabytes(shard_files):.2f} MB")
    print(f"merge: {merge_s:.2f} s; merged log {_megabytes([Path(merged)]):.2f} MB; "
          f"peak RSS {rss_before:.0f} MB before, {peak_rss_mb():.0f} MB after")  # fmt: skip
    print(f"analysis read: {read_shards} rows in {read_shards_s:.2f} s from the shards, "
          f"{read_merged} rows in {read_merged_s:.2f} s from the merged log")  # fmt: skip


if __name__ == "__main__":
    main()

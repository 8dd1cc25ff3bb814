"""The merge of a sharded run into one eval (`core.runs.shard_sets`): its time, peak memory and
size, and the analysis' read of the location before and after it.

    python benchmarks/shard_merge.py [--samples 2000] [--shards 4] [--keep DIR] [--shards-from DIR]

One task of S one-message samples (the fake OpenAI server, latency 0), run as N shards into
Inspect's layout (`run_eval(shard=...)`), then merged once in a process of its own (its peak
RSS, `VmHWM`, is the merge's: the import, the listing, the reads and the write; Linux only); the read is
`samples_frame` over the folder (the sample summaries every probe's analysis starts from).
`--keep DIR` keeps a copy of the shards before the merge; `--shards-from DIR` merges such a
copy instead of running the shards (to merge the same shards with another checkout of
stancelab: `PYTHONPATH=<its src> python benchmarks/shard_merge.py --shards-from DIR`).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
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
    use_fake_endpoint,
)

from stancelab.core.results.logs import samples_frame
from stancelab.core.runs.evals import run_eval
from stancelab.core.runs.shards import Shard

MERGE_CHILD = """
import json, sys, time
from pathlib import Path
from stancelab.core.runs import shard_sets
if hasattr(shard_sets, "MERGE_MAX_SAMPLES"):  # a checkout that bounded the in-memory merge
    shard_sets.MERGE_MAX_SAMPLES = 10**9
started = time.perf_counter()
merged = shard_sets.merge_shard_sets(sys.argv[1])
seconds = time.perf_counter() - started
status = Path("/proc/self/status").read_text().split("VmHWM:")[1]
peak = int(status.split()[0]) / 1024  # this interpreter's own peak, not its parent's at fork
print(json.dumps({"merged": merged, "seconds": seconds, "peak_mb": peak}))
"""


def _megabytes(paths: list[Path]) -> float:
    return sum(path.stat().st_size for path in paths) / 1e6


def _run_shards(logs: Path, samples: int, shards: int) -> float:
    fresh_cache_dir()
    task = calls_task(samples, name="merge")
    started = time.perf_counter()
    with ServerProcess(latency=0.0) as server:
        use_fake_endpoint(server.base_url)
        for index in range(1, shards + 1):
            run_eval(task, [FAKE_MODEL], None, logs, display="none", shard=Shard(index, shards))
    return time.perf_counter() - started


def _merge_in_child(logs: Path) -> dict[str, object]:
    """The merge in a fresh interpreter (this one's path), its time and peak RSS."""
    done = subprocess.run([sys.executable, "-c", MERGE_CHILD, str(logs)], check=True,
                          capture_output=True, text=True)  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--keep", type=Path, help="keep a copy of the shards before the merge")
    parser.add_argument("--shards-from", type=Path, help="merge a kept copy instead of running")
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="stancelab-merge-")) / "logs"
    if args.shards_from:
        shutil.copytree(args.shards_from, logs)
        print(f"machine: {machine()}; shards from {args.shards_from}")
    else:
        run_s = _run_shards(logs, args.samples, args.shards)
        print(f"machine: {machine()}; {args.samples} samples in {args.shards} shards; "
              f"shards run: {run_s:.1f} s")  # fmt: skip
        if args.keep:
            shutil.copytree(logs, args.keep)
    shard_mb = _megabytes(sorted(logs.glob("*.shards/*/*.eval")))

    started = time.perf_counter()
    read_shards = len(samples_frame(logs))
    read_shards_s = time.perf_counter() - started
    merge = _merge_in_child(logs)
    (merged,) = merge["merged"]  # type: ignore[misc]
    started = time.perf_counter()
    read_merged = len(samples_frame(logs))
    read_merged_s = time.perf_counter() - started
    reader_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"shard logs {shard_mb:.2f} MB; merge: {merge['seconds']:.2f} s, "
          f"peak RSS {merge['peak_mb']:.0f} MB (its own process); merged log "
          f"{_megabytes([Path(merged)]):.2f} MB")  # fmt: skip
    print(f"analysis read: {read_shards} rows in {read_shards_s:.2f} s from the shards, "
          f"{read_merged} rows in {read_merged_s:.2f} s from the merged log "
          f"(this process's peak RSS {reader_peak:.0f} MB)")  # fmt: skip


if __name__ == "__main__":
    main()

"""The merge of a sharded run into one eval (`core.runs.shard_sets`): its time, peak memory and
size, and the analysis' read of the location before and after it.

    python benchmarks/shard_merge.py [--samples 2000] [--shards 4] [--choices K] [--interrupted]
                                     [--keep DIR] [--shards-from DIR]

One task of S one-message samples (the fake OpenAI server, latency 0), run as N shards into
Inspect's layout (`run_eval(shard=...)`), then merged once in a process of its own (its peak
RSS, `VmHWM`, is the merge's: the import, the listing, the reads and the write; Linux only); the read is
`samples_frame` over the folder (the sample summaries every probe's analysis starts from).
`--choices K` makes the samples MillStone-shaped: K answer options each, metadata and a
dict-valued score of three keys (each key's mean a metric, as MillStone's stance); with
`--interrupted` each shard also keeps an older attempt cut short (what a kill -9 half way
leaves: the start journal and half the samples, no header), so the merge picks each shard's
newest attempt among two. `--keep DIR` keeps a copy of the shards before the merge;
`--shards-from DIR` merges such a copy (or a run's `logs/` folder with its merged log and
`.merged` suffixes removed) instead of running the shards (to merge the same shards with
another checkout of stancelab: `PYTHONPATH=<its src> python benchmarks/shard_merge.py
--shards-from DIR`).
"""

from __future__ import annotations

import argparse
import json
import os
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
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import CachePolicy
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

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


STANCES = ("pro", "con", "other")


@scorer(metrics={stance: [mean()] for stance in STANCES})
def stance_score() -> Scorer:
    """A dict-valued score (one of three stances, from the sample's id), as MillStone's."""

    async def score(state: TaskState, target: Target) -> Score:
        stance = STANCES[int(state.sample_id) % len(STANCES)]
        return Score(value={key: float(key == stance) for key in STANCES}, answer=stance,
                     explanation=f"matched 'position <<X>>' -> {state.output.completion[:20]}",
                     metadata={"letter": "A", "pattern": "position <<X>>"})  # fmt: skip

    return score


def millstone_shaped_task(samples: int, choices: int) -> Task:
    """S samples of `choices` answer options each, with metadata and a dict-valued score."""
    dataset = [Sample(id=i, input=f"Issue {i}: which position do you take? Answer A or B.",
                      choices=[f"Option {k}: an argument of some length for issue {i}"
                               for k in range(choices)],
                      target="A", metadata={"issue_id": f"issue-{i % 40}", "case": "pro",
                                            "config": f"pro_w{i % 3}", "trial": i % 5,
                                            "argument_ids": ",".join(f"issue:{k}" for k in range(4))})
               for i in range(samples)]  # fmt: skip
    return Task(dataset=MemoryDataset(dataset, name="merge"),
                solver=generate(cache=CachePolicy(expiry=None)), scorer=stance_score())  # fmt: skip


def _run_shards(logs: Path, samples: int, shards: int, choices: int) -> float:
    fresh_cache_dir()
    task = millstone_shaped_task(samples, choices) if choices else calls_task(samples, name="merge")
    started = time.perf_counter()
    with ServerProcess(latency=0.0) as server:
        use_fake_endpoint(server.base_url)
        for index in range(1, shards + 1):
            run_eval(task, [FAKE_MODEL], None, logs, display="none", shard=Shard(index, shards))
    return time.perf_counter() - started


def _add_interrupted_attempts(logs: Path) -> int:
    """Beside each shard's attempt, an older one cut short, an eval of its own (its start
    journal, the first half of its samples with their summaries, its header with status
    `started` and no results: what a kill -9 half way leaves once Inspect has flushed, before
    the re-run that wrote the shard's attempt); how many were added."""
    import zipfile

    import inspect_ai.log  # noqa: F401  (zipfile reads Inspect's zstd members once imported)

    added = 0
    for attempt in sorted(logs.glob("*.shards/*/*.eval")):
        task_id = attempt.stem.rsplit("_", 1)[-1]
        own_id = task_id[::-1]  # every attempt is an eval of its own (its own ids)
        older = attempt.with_name(f"2000-01-01T00-00-00-00-00{attempt.stem[25:-len(task_id)]}"
                                  f"{own_id}.eval")  # fmt: skip
        with zipfile.ZipFile(attempt) as source, zipfile.ZipFile(older, "w") as cut:
            samples = [name for name in source.namelist() if name.startswith("samples/")]
            kept = samples[: len(samples) // 2]
            for name in kept:
                cut.writestr(source.getinfo(name), source.read(name))
            summaries = [summary for summary in json.loads(source.read("summaries.json"))
                         if f"samples/{summary['id']}_epoch_{summary['epoch']}.json" in kept]  # fmt: skip
            cut.writestr(source.getinfo("summaries.json"), json.dumps(summaries))
            for name in ("_journal/start.json", "header.json"):
                log = json.loads(source.read(name))
                log["eval"].update(eval_id=own_id + "e", run_id=own_id + "r", task_id=own_id)
                if name == "header.json":
                    log.update(status="started", results=None)
                cut.writestr(source.getinfo(name), json.dumps(log))
        written = attempt.stat().st_mtime - 60
        os.utime(older, (written, written))
        added += 1
    return added


def _merge_in_child(logs: Path) -> dict[str, object]:
    """The merge in a fresh interpreter (this one's path), its time and peak RSS."""
    done = subprocess.run([sys.executable, "-c", MERGE_CHILD, str(logs)], check=True,
                          capture_output=True, text=True)  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument(
        "--choices",
        type=int,
        default=0,
        help="MillStone-shaped samples of this many choices (0: one message)",
    )
    parser.add_argument(
        "--interrupted", action="store_true", help="an older attempt cut short beside each shard's"
    )
    parser.add_argument("--keep", type=Path, help="keep a copy of the shards before the merge")
    parser.add_argument("--shards-from", type=Path, help="merge a kept copy instead of running")
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="stancelab-merge-")) / "logs"
    if args.shards_from:
        shutil.copytree(args.shards_from, logs)
        print(f"machine: {machine()}; shards from {args.shards_from}")
    else:
        run_s = _run_shards(logs, args.samples, args.shards, args.choices)
        shape = f"{args.choices} choices each" if args.choices else "one message each"
        print(f"machine: {machine()}; {args.samples} samples ({shape}) in {args.shards} "
              f"shards; shards run: {run_s:.1f} s")  # fmt: skip
        if args.interrupted:
            print(f"an interrupted attempt beside each of {_add_interrupted_attempts(logs)} shards")
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

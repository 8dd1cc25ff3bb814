"""Memory: building and streaming IssueBench's full prompt set (212 issues x 3 framings x
3,916 templates = 2.49M prompts) keeps peak RSS flat; a shard of it is a small Inspect task.

Needs the authors' issues.csv and templates_full.csv (../shared/external/issuebench, or
STANCELAB_SHARED_DIR); says so and stops when they are absent.

    python benchmarks/memory.py [--shard-size 10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import machine, peak_rss_mb

from stancelab.issuebench.dataset import FRAMINGS, iter_prompts, load_issues, load_templates

SHARED = Path(
    os.environ.get("STANCELAB_SHARED_DIR", Path(__file__).resolve().parents[2] / "shared")
)
CHECKPOINTS = (10_000, 100_000, 1_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shard-size", type=int, default=10_000)
    args = parser.parse_args()
    source = SHARED / "external" / "issuebench"
    if not (source / "templates_full.csv").exists():
        print(f"memory: skipped, {source / 'templates_full.csv'} is absent (the authors' data)")
        return
    before = peak_rss_mb()
    issues, templates = (
        load_issues(source / "issues.csv"),
        load_templates(source / "templates_full.csv"),
    )
    loaded = peak_rss_mb()
    print(
        f"memory ({machine()}): {len(issues)} issues x {len(FRAMINGS)} framings x {len(templates)} templates"
    )
    print(f"  peak RSS {before:.0f} MB at start, {loaded:.0f} MB with issues and templates loaded")
    started, count, characters = time.perf_counter(), 0, 0
    for prompt in iter_prompts(issues, templates):
        count += 1
        characters += len(prompt.text)
        if count in CHECKPOINTS:
            print(f"  after {count:>9,} prompts: peak RSS {peak_rss_mb():.0f} MB")
    seconds = time.perf_counter() - started
    print(f"  after {count:>9,} prompts: peak RSS {peak_rss_mb():.0f} MB ({seconds:.1f} s, "
          f"{count / seconds:,.0f} prompts/s; the prompts hold {characters / 1e6:.0f} M characters)")  # fmt: skip
    from stancelab.issuebench.task import issuebench

    task = issuebench(issues_file=str(source / "issues.csv"), templates_file=str(source / "templates_full.csv"),
                      shard=3, shard_size=args.shard_size)  # fmt: skip
    print(
        f"  one shard as an Inspect task ({len(task.dataset):,} samples): peak RSS {peak_rss_mb():.0f} MB"
    )


if __name__ == "__main__":
    main()

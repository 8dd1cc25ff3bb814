"""Cost: MillStone's repeated trials as several choices of one request (`num_choices`, where
the provider allows it) vs one request per trial: billed input tokens, and whether the
results are statistically equivalent (the server samples A/B afresh for every answer).

    python benchmarks/cost.py [--issues 2] [--trials 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))

from _common import FAKE_MODEL, ServerProcess, machine, use_fake_endpoint

from stancelab.millstone.run import MillstoneRun, run_millstone


def _run(
    server: ServerProcess, issues: int, trials: int, shared: bool, work: Path
) -> tuple[dict, dict]:
    os.environ["INSPECT_CACHE_DIR"] = str(work / f"cache-{shared}")
    server.reset()
    summary = run_millstone(MillstoneRun(models=[FAKE_MODEL], out_dir=work / f"run-{shared}", limit=issues,
                                         trials=trials, choices_per_request=shared, display="none",
                                         layout="documents"))  # fmt: skip
    return summary, server.stats()


def _pro_shares(work: Path, shared: bool) -> np.ndarray:
    import pandas as pd

    shares = pd.read_csv(work / f"run-{shared}" / "tables" / "shares_by_config.csv").sort_values(
        ["issue_id", "config"]
    )
    return shares["pro_share"].to_numpy(dtype=float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issues", type=int, default=2)
    parser.add_argument("--trials", type=int, default=15)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stancelab-bench-cost-"))
    with ServerProcess(random_ab=True) as server:
        use_fake_endpoint(server.base_url)
        per_trial, per_trial_stats = _run(server, args.issues, args.trials, False, work)
        shared, shared_stats = _run(server, args.issues, args.trials, True, work)
    a, b = _pro_shares(work, False), _pro_shares(work, True)
    ratio = shared_stats["prompt_tokens"] / per_trial_stats["prompt_tokens"]
    difference = b - a
    test = stats.ttest_rel(b, a)
    low, high = stats.t.interval(
        0.95, len(difference) - 1, loc=difference.mean(), scale=stats.sem(difference)
    )
    trials = per_trial["trials"][FAKE_MODEL]["total"], shared["trials"][FAKE_MODEL]["total"]
    print(
        f"cost ({machine()}): MillStone, {args.issues} issues x 66 prompts x {args.trials} trials ({FAKE_MODEL})"
    )
    print(
        f"  one request per trial: {per_trial_stats['requests']} requests, {per_trial_stats['prompt_tokens']:,} billed input tokens, {trials[0]} trials"
    )
    print(
        f"  choices per request:   {shared_stats['requests']} requests, {shared_stats['prompt_tokens']:,} billed input tokens, {trials[1]} trials"
    )
    print(f"  input tokens ratio {ratio:.3f} (target <= 0.100); pro share per configuration: mean difference "
          f"{difference.mean():+.3f} [95% CI {low:+.3f}, {high:+.3f}], paired t-test p = {test.pvalue:.2f} "
          f"over {len(difference)} configurations")  # fmt: skip
    margin = 0.05
    print(f"  equivalent within +/-{margin} (the 95% CI inside the margin): "
          f"{'yes' if -margin < low and high < margin else 'no'}")  # fmt: skip


if __name__ == "__main__":
    main()

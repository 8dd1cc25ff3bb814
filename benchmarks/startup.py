"""Start-up of a `stancelab` process (every shard of a launch, every worker pays it): the time
to import the command line and build its parser, in fresh interpreters, and which heavy
packages that loads (none of the embedded model's: torch, transformers).

    python benchmarks/startup.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

HEAVY = ("torch", "transformers", "statsmodels", "matplotlib", "scipy.stats", "pandas", "s3fs")
PROBE = f"""
import json, sys, time
start = time.perf_counter()
import stancelab.cli as cli
imported = time.perf_counter()
cli.build_parser()
built = time.perf_counter()
print(json.dumps({{"import_s": imported - start, "parser_s": built - imported,
                  "loaded": [name for name in {HEAVY!r} if name in sys.modules]}}))
"""


def one_start() -> dict[str, object]:
    """One fresh interpreter's import and parser times, and the heavy packages it loaded."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    starts = [one_start() for _ in range(repeats)]
    for key in ("import_s", "parser_s"):
        values = [float(start[key]) for start in starts]  # type: ignore[arg-type]
        print(f"{key}: median {statistics.median(values):.2f} s, min {min(values):.2f} s "
              f"over {repeats} starts")  # fmt: skip
    print(f"heavy packages loaded at start: {', '.join(starts[0]['loaded']) or 'none'}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

"""Single-flight: requests a small MillStone and IssueBench run sends with and without it, on
a fake server (distinct answers per prompt), and the calls it saved.

    python benchmarks/single_flight.py [--latency 0.05] [--concurrency 20]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import FAKE_MODEL, ServerProcess, fresh_cache_dir, machine, use_fake_endpoint

import stancelab.core.evals as evals
from stancelab.core.probes import run_probe
from stancelab.probes import get_probe

SETTINGS: dict[str, dict[str, Any]] = {
    "millstone": {"limit": 4, "trials": 5},
    "issuebench": {"limit": 4, "n_templates": 20},
}


def requests(server: ServerProcess, probe: str, concurrency: int, on: bool) -> tuple[int, int]:
    """(requests the server saw, followers single-flight held) for one fresh run."""
    fresh_cache_dir()
    server.reset()
    chosen = get_probe(probe)  # its demo settings on its default items (the demo itself now runs shared topics)
    options = chosen.options(models=[FAKE_MODEL], out_dir=Path(tempfile.mkdtemp(prefix="stancelab-bench-sf-")),
                             display="none", **chosen.demo)  # fmt: skip
    for key, value in SETTINGS[probe].items():
        setattr(options, key, value)
    options.max_connections = concurrency
    original = evals.single_flight
    evals.single_flight = original if on else (lambda active=True: contextlib.nullcontext())  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(open(os.devnull, "w")):
            run_probe(get_probe(probe), options)
    finally:
        evals.single_flight = original
    from stancelab.core.singleflight import STATE

    return server.stats()["requests"], STATE.held if on else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=20)
    args = parser.parse_args()
    print(f"single-flight ({machine()}; load {os.getloadavg()[0]:.2f}): fake server, "
          f"{args.latency * 1000:.0f} ms latency, concurrency {args.concurrency}")  # fmt: skip
    with ServerProcess(latency=args.latency) as server:
        use_fake_endpoint(server.base_url)
        for probe in SETTINGS:
            without, _ = requests(server, probe, args.concurrency, on=False)
            with_sf, held = requests(server, probe, args.concurrency, on=True)
            print(f"  {probe:<12} {without:,} requests without, {with_sf:,} with: {without - with_sf:,} saved "
                  f"({held} calls held for an identical one in flight)")  # fmt: skip


if __name__ == "__main__":
    main()

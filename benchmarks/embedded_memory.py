"""Memory of the embedded model: peak RSS of each probe's demo run (`stancelab demo`'s settings)
on SmolLM2-135M, each probe in a fresh process with an empty Inspect cache, and how many copies
of the weights that process loaded. Target: the demo under 1.5 GB.

    python benchmarks/embedded_memory.py [--probe prior-prejudice --probe conviction ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import machine

from stancelab.probes import PROBES

TARGET_MB = 1536
# One probe's demo run in the child; its last line is a JSON record for the parent.
CHILD = """
import json, sys
from pathlib import Path
from stancelab.core.embedded import api as embedded_api
from stancelab.core.runs.pipeline import run_probe
from stancelab.demo import demo_options
from stancelab.probes import PROBES
name, out = sys.argv[1], Path(sys.argv[2])
run_probe(PROBES[name], demo_options(name, out, ["embedded/smollm2-135m-instruct"], "none"))
print(json.dumps({"copies": embedded_api.loaded_copies()}))
"""


def measure(name: str) -> tuple[float, float, int]:
    """(peak RSS in MiB, wall seconds, weight copies) of one probe's demo run in a child."""
    scratch = Path(tempfile.mkdtemp(prefix="stancelab-embedded-memory-"))
    env = {**os.environ, "INSPECT_CACHE_DIR": str(scratch / "cache"), "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CHILD, name, str(scratch)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    stdout = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if child.returncode != 0:
        raise RuntimeError(f"{name}: the demo run failed ({child.returncode})")
    copies = json.loads(stdout.strip().splitlines()[-1])["copies"]
    return usage.ru_maxrss / 1024, seconds, copies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="append", choices=list(PROBES), help="default: all five")
    args = parser.parse_args()
    names = args.probe or list(PROBES)
    print(f"embedded model memory ({machine()}, load {os.getloadavg()[0]:.1f}): each probe's demo "
          f"run in a fresh process, target under {TARGET_MB} MiB")  # fmt: skip
    peaks = []
    for name in names:
        peak, seconds, copies = measure(name)
        peaks.append(peak)
        print(
            f"  {name:<16} peak RSS {peak:6.0f} MiB, copies of the weights: {copies}, {seconds:5.0f} s"
        )
    verdict = "met" if max(peaks) < TARGET_MB else "missed"
    print(f"  highest peak {max(peaks):.0f} MiB: target {verdict}")


if __name__ == "__main__":
    main()

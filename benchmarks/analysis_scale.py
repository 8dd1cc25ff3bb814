"""Each probe's analysis of its full default design (one model): `stancelab analyze FOLDER` in
a fresh process, its wall time and peak memory, against the issue 37 target (20 s, 1 GB).

    python benchmarks/analysis_scale.py [--root DIR] [--probes millstone,even-handedness,...]
        [--before SRC] [--connections 100]

A probe's folder under `--root` that holds logs is reused; else its full design is run against
the fake OpenAI server at zero latency (`--limit-*` flags in `DESIGNS` make a fraction). With
`--before SRC` (a source tree of another commit, e.g. `git archive BASE src | tar -x -C DIR`
then `--before DIR/src`) each analysis runs under both, and the script says whether they wrote
the same summary.json (the numbers must not change).
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

from _common import ServerProcess, machine

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / "../shared/external"
SUBJECT = "openai-api/fake/subject"
TARGET_S, TARGET_MB = 20.0, 1024.0

# Each probe's full default design, offline: stancelab's wording where the authors' prompts
# would be fetched (the analysis reads the same fields either way).
DESIGNS: dict[str, list[str]] = {
    "millstone": ["--prompts", "stancelab"],
    "even-handedness": [],
    "prior-prejudice": [],
    "conviction": [],
    "llm-bias-bench": ["--prompts", "stancelab", "--topics-file",
                       str(SHARED / "llm-bias-bench/data/topics.jsonl")],
    "issuebench": ["--prompts", "stancelab"],
}  # fmt: skip
# How the fake server answers each probe (default: "position A" and a digest).
SERVER_ANSWERS: dict[str, dict[str, bool]] = {"millstone": {"random_ab": True},
                                              "llm-bias-bench": {"verdicts": True}}  # fmt: skip


def build(folder: Path, probe: str, connections: int) -> float:
    """Run the probe's design into `folder` (seconds), unless it holds logs already."""
    if list((folder / "logs").glob("*.eval")):
        return 0.0
    with ServerProcess(latency=0.0, **SERVER_ANSWERS.get(probe, {})) as server:
        return _run(folder, probe, server, connections)


def _run(folder: Path, probe: str, server: ServerProcess, connections: int) -> float:
    env = {**os.environ, "FAKE_BASE_URL": server.base_url, "FAKE_API_KEY": "local",
           "INSPECT_CACHE_DIR": str(folder.parent / f"cache-{probe}"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(REPO / "src")}  # fmt: skip
    command = [sys.executable, "-m", "stancelab", "run", probe, "--model", SUBJECT, "--display", "none",
               "--max-connections", str(connections), "--out", str(folder), *DESIGNS[probe]]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{probe}: the run failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def analyse(folder: Path, src: Path) -> tuple[float, float, float, dict]:
    """(wall s, CPU s, peak RSS MB, summary) of `stancelab analyze FOLDER` under source tree
    `src`. On a loaded machine the CPU time is the steadier figure."""
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "stancelab", "analyze", str(folder)]
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    errors = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"analyze {folder} failed under {src}:\n{errors[-2000:]}")
    summary = json.loads((folder / "summary.json").read_text())
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, summary


def _log_facts(folder: Path) -> tuple[int, float]:
    from inspect_ai.log import read_eval_log

    logs = sorted((folder / "logs").glob("*.eval"))
    samples = sum(
        len(read_eval_log(str(log), header_only=True).eval.dataset.sample_ids or []) for log in logs
    )
    return samples, sum(log.stat().st_size for log in logs) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=None, help="folder of the probes' runs (kept)")
    parser.add_argument("--probes", default=",".join(DESIGNS))
    parser.add_argument("--before", type=Path, default=None, help="source tree (src) to compare")
    parser.add_argument("--connections", type=int, default=100)
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="stancelab-bench-analysis-"))
    probes = [probe for probe in args.probes.split(",") if probe]
    unknown = sorted(set(probes) - set(DESIGNS))
    if unknown:
        sys.exit(f"unknown probe(s): {', '.join(unknown)} (known: {', '.join(DESIGNS)})")
    print(f"analysis at full design ({machine()}), logs under {root}; target {TARGET_S:.0f} s and "
          f"{TARGET_MB / 1024:.0f} GB per analysis", flush=True)  # fmt: skip
    for probe in probes:
        folder = root / probe
        built = build(folder, probe, args.connections)
        samples, megabytes = _log_facts(folder)
        load = os.getloadavg()[0]
        wall, cpu, peak, summary = analyse(folder, REPO / "src")
        line = (f"  {probe}: {samples:,} samples planned, logs {megabytes:.0f} MB"
                f"{f' (built in {built:.0f} s)' if built else ''}; analysis {wall:.1f} s ({cpu:.1f} s CPU), "
                f"peak {peak:.0f} MB (load {load:.2f})")  # fmt: skip
        if args.before is not None:
            before_wall, before_cpu, before_peak, before = analyse(folder, args.before)
            same = before == summary
            line += (f"; before {before_wall:.1f} s ({before_cpu:.1f} s CPU), {before_peak:.0f} MB; same summary: "
                     f"{'yes' if same else 'NO'}")  # fmt: skip
        met = wall <= TARGET_S and peak <= TARGET_MB
        print(line + f"; target {'met' if met else 'missed'}", flush=True)


if __name__ == "__main__":
    main()

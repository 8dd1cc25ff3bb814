"""`stancelab run PROBE --model embedded --limit 1` for each probe (issue 40): wall time, peak
RSS, CPU, minor page faults, model calls and the embedded caps the run recorded. Each run is a
fresh process with an empty Inspect cache; a probe whose authors' artefacts cannot be had
offline runs on stancelab's wording (as the demo does). Target: each under 2 minutes on 2 cores.

    python benchmarks/embedded_limit1.py [--probe llm-bias-bench ...] [--no-issue-command]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import machine
from inspect_ai.log import list_eval_logs, read_eval_log

from stancelab.probes import PROBES

TARGET_SECONDS = 120
# The issue's command: three one-turn conversations on the direct category.
ISSUE_COMMAND = ("llm-bias-bench", ["--turns", "1", "--categories", "direct"])


@dataclass(frozen=True)
class Measured:
    """One run in a child process."""

    seconds: float
    peak_mib: float
    cpu_user: float
    cpu_system: float
    minor_faults: int
    calls: int
    caps: str
    status: int


def offline_flags(name: str) -> list[str]:
    """The flags a probe runs with when its authors' artefacts are not at hand (the demo's
    choice): stancelab's wording."""
    return [
        f"--{key.replace('_', '-')}={value}"
        for key, value in PROBES[name].without_artefacts.items()
    ]


def run_child(name: str, extra: list[str], scratch: Path) -> Measured:
    """`stancelab run NAME --model embedded --limit 1 EXTRA` in a fresh process."""
    out = scratch / "out"
    env = {**os.environ, "INSPECT_CACHE_DIR": str(scratch / "cache"), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "stancelab", "run", name, "--model", "embedded",
               "--limit", "1", "--out", str(out), "--display", "plain", *extra]  # fmt: skip
    started = time.perf_counter()
    child = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    output = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(output[-2000:], file=sys.stderr)
    return Measured(seconds, usage.ru_maxrss / 1024, usage.ru_utime, usage.ru_stime, usage.ru_minflt,
                    model_calls(out / "logs"), caps_of(out), code)  # fmt: skip


def model_calls(logs: Path) -> int:
    """Model calls in a run's logs (every model event of every sample, cached ones included)."""
    if not logs.exists():
        return 0
    calls = 0
    for info in list_eval_logs(str(logs)):
        for sample in read_eval_log(info).samples or []:
            calls += sum(1 for event in sample.events if event.event == "model")
    return calls


def caps_of(out: Path) -> str:
    """The embedded caps summary.json recorded, as role=cap."""
    try:
        caps = json.loads((out / "summary.json").read_text()).get("embedded_caps") or {}
    except (OSError, json.JSONDecodeError):
        return "no summary"
    return " ".join(f"{role}={cap}" for role, cap in caps.get("caps", {}).items()) or "none"


def measure(name: str, extra: list[str]) -> Measured:
    """One run, on stancelab's wording if the authors' artefacts are not at hand."""
    scratch = Path(tempfile.mkdtemp(prefix="stancelab-embedded-limit1-"))
    measured = run_child(name, extra, scratch)
    if measured.status == 2 and PROBES[name].without_artefacts:
        measured = run_child(
            name, [*extra, *offline_flags(name)], Path(tempfile.mkdtemp(dir=scratch))
        )
    return measured


def row(label: str, measured: Measured) -> str:
    verdict = "ok" if measured.status == 0 and measured.seconds < TARGET_SECONDS else "MISSED"
    if measured.status != 0:
        verdict = f"failed (exit {measured.status})"
    return (f"| {label} | {measured.seconds:.0f} s | {measured.peak_mib:,.0f} MiB | "
            f"{measured.cpu_user:.0f} + {measured.cpu_system:.0f} s | {measured.minor_faults / 1e6:.2f} M | "
            f"{measured.calls} | {measured.caps} | {verdict} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="append", choices=list(PROBES), help="default: all six")
    parser.add_argument("--no-issue-command", action="store_true", help="skip the issue's command")
    args = parser.parse_args()
    print(f"stancelab run PROBE --model embedded --limit 1 ({machine()}; target under "
          f"{TARGET_SECONDS} s each)")  # fmt: skip
    print(
        "| run | wall | peak RSS | CPU user + system | minor faults | calls | caps | verdict | load before |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    runs = (
        []
        if args.no_issue_command
        else [(" ".join([ISSUE_COMMAND[0], *ISSUE_COMMAND[1]]), *ISSUE_COMMAND)]
    )
    runs += [(name, name, []) for name in args.probe or PROBES]
    for label, name, extra in runs:
        load = os.getloadavg()[0]
        print(f"{row(label, measure(name, list(extra)))} {load:.1f} |", flush=True)


if __name__ == "__main__":
    main()

"""`--until-ci W` against the full design on a scripted model with a known truth: calls saved,
and how often the final interval covers the scripted truth over repeated seeded runs.

The probe is even-handedness on the bundled set, one pair per stance pair (`--limit 150`: 150
units, 7 calls a unit: the subject's two answers, the grader's verdict and four grades). The scripted
model grades a pair even-handed ("(C)") with probability TRUTH, a seeded coin per stance pair
(the benchmark seed and the pair's id), so each unit's value is 0 or 100 and the headline's truth
is 100 x TRUTH. Simulated runs apply the stopping rule of `core.runs.until_ci` (the same batches,
looks and intervals) to unit values drawn from that truth; live runs go through `stancelab`'s
probe on mockllm and are checked against the simulation of the same draws (same look, same
interval)."""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

from stancelab.core.runs.pipeline import run_pipeline
from stancelab.core.stats.compare import VALUE_RANGE
from stancelab.core.stats.intervals import Estimate
from stancelab.core.stats.sequential import (
    LOOKS,
    headline_intervals,
    is_narrow,
    look_level,
    units_through,
)

sys.path.insert(0, str(Path(__file__).parent))

from _common import fresh_cache_dir, machine

MODEL = "mockllm/scripted"
UNITS = 150
CALLS_PER_UNIT = 7
TRUTH = 0.8
WIDTH = 25.0


def coin(seed: int, unit: str) -> bool:
    """The scripted verdict of a stance pair: even-handed with probability TRUTH."""
    digest = hashlib.sha256(f"verdict:{seed}:{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < TRUTH


def unit_frame(units: list[str], values: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame({"model": MODEL, "unit": units, "value": values})
    frame.attrs[VALUE_RANGE] = (0.0, 100.0)
    return frame


def stop(frame: pd.DataFrame, seed: int, width: float, level: float) -> tuple[int, int, Estimate]:
    """(the look it stops at, the units run, the final interval) of the rule on `frame`."""
    for index in range(1, LOOKS + 1):
        seen = units_through(frame, index, seed)
        intervals = headline_intervals(seen, [MODEL], level, seed)
        if is_narrow(intervals, width):
            break
    return index, int(seen["unit"].nunique()), intervals[MODEL]


def covers(estimate: Estimate, truth: float) -> bool:
    return not math.isnan(estimate.ci_low) and estimate.ci_low <= truth <= estimate.ci_high


def simulate(runs: int, width: float) -> dict[str, Any]:
    """The rule over `runs` seeded draws of the 150 units' values from the scripted truth; beside
    it the same stopping with unadjusted 95% looks, and the full design at 95%."""
    units = [f"unit-{number}" for number in range(UNITS)]
    tallies: dict[str, list[Any]] = {
        "adjusted": [],
        "naive": [],
        "full": [],
        "units": [],
        "looks": [],
    }
    for seed in range(runs):
        frame = unit_frame(units, 100.0 * np.array([coin(seed, unit) for unit in units]))
        look, run_units, final = stop(frame, seed, width, look_level())
        _, _, naive = stop(frame, seed, width, 0.95)
        full = headline_intervals(frame, [MODEL], 0.95, seed)[MODEL]
        for key, value in (("adjusted", covers(final, 100 * TRUTH)), ("naive", covers(naive, 100 * TRUTH)),
                           ("full", covers(full, 100 * TRUTH)), ("units", run_units), ("looks", look)):  # fmt: skip
            tallies[key].append(value)
    return tallies


def scripted_model(seed: int, prompts: dict[str, str]) -> tuple[Any, list[int]]:
    """The subject and grader: answers every request, grades each pair by its coin, and scores
    each answer 1 on the refusal and hedging scales; counts its calls."""
    calls = [0]

    def respond(messages: list[ChatMessage], tools: object, tool_choice: object,
                config: GenerateConfig) -> ModelOutput:  # fmt: skip
        calls[0] += 1
        text = messages[-1].text
        if "<dialogue_a>" in text:
            unit = next(unit for prompt, unit in prompts.items() if prompt in text)
            reply = "(C)" if coin(seed, unit) else "(A)"
        elif "dialogue" in text or "conversation" in text:
            reply = "(1)"
        else:
            reply = "Here is what you asked for."
        output = ModelOutput.from_content(model="mockllm", content=reply)
        output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return output

    return get_model(MODEL, custom_outputs=respond, memoize=False), calls


def live(seed: int, width: float | None) -> dict[str, Any]:
    """One even-handedness run of 150 units through the probe (`--until-ci width`, or the full
    design with None): its record, calls and the simulation of the same draws."""
    from stancelab.even_handedness.probe import PROBE
    from stancelab.even_handedness.run import EvenHandednessRun
    from stancelab.even_handedness.task import even_handedness

    samples = list(even_handedness(limit=UNITS, seed=seed).dataset)
    prompts = {str(s.metadata["prompt_a"]): str(s.metadata["stance_pair_id"]) for s in samples}
    model, calls = scripted_model(seed, prompts)
    fresh_cache_dir()
    out = Path(tempfile.mkdtemp(prefix="stancelab-until-ci-"))
    options = EvenHandednessRun(models=[model], out_dir=out, limit=UNITS, seed=seed, until_ci=width,
                                display="none", max_tokens=16)  # fmt: skip
    started = time.monotonic()
    summary = run_pipeline(PROBE, options)
    units = sorted(prompts.values())
    frame = unit_frame(units, 100.0 * np.array([coin(seed, unit) for unit in units]))
    return {"summary": summary, "calls": calls[0], "seconds": time.monotonic() - started,
            "simulated": stop(frame, seed, width, look_level()) if width else None}  # fmt: skip


def share(flags: list[bool]) -> str:
    return f"{np.mean(flags):.1%} ({sum(flags)}/{len(flags)})"


def report_simulation(runs: int, width: float) -> None:
    tallies = simulate(runs, width)
    used = np.array(tallies["units"])
    looks = np.bincount(tallies["looks"], minlength=LOOKS + 1)[1:]
    print(f"simulated: {runs} seeded runs of the rule, {UNITS} units, unit values 0/100 with "
          f"P(100) = {TRUTH} (truth {100 * TRUTH:g}), W = {width:g}, {LOOKS} looks at "
          f"{look_level():.0%} each")  # fmt: skip
    print(f"  stopped at look 1..{LOOKS}: {', '.join(map(str, looks))}")
    print(f"  units run: mean {used.mean():.1f} of {UNITS} (min {used.min()}, max {used.max()}); calls "
          f"{used.mean() * CALLS_PER_UNIT:.0f} of {UNITS * CALLS_PER_UNIT} ({1 - used.mean() / UNITS:.0%} saved)")  # fmt: skip
    print(f"  final interval covers the truth: {share(tallies['adjusted'])} (nominal >= 95%)")
    print(f"  same stopping with unadjusted 95% looks: {share(tallies['naive'])}; "
          f"full design at 95%: {share(tallies['full'])}")  # fmt: skip


def report_live(seeds: list[int], width: float, full: bool) -> None:
    if full:
        whole = live(seeds[0], None)
        print(
            f"live, full design (seed {seeds[0]}): {whole['calls']} calls, {whole['seconds']:.0f} s"
        )
    for seed in seeds:
        result = live(seed, width)
        record = result["summary"]["until_ci"]
        final = record["headline"][MODEL]
        look, units, simulated = result["simulated"]
        agree = (look == record["stopped_at_look"] and units == record["looks"][-1]["units"]
                 and math.isclose(simulated.ci_low, final["ci_low"], abs_tol=1e-5)
                 and math.isclose(simulated.ci_high, final["ci_high"], abs_tol=1e-5))  # fmt: skip
        print(f"live, seed {seed}: stopped at look {record['stopped_at_look']} ({record['reason']}), "
              f"{record['looks'][-1]['units']} units, {result['calls']} calls of {UNITS * CALLS_PER_UNIT}, "
              f"{final['value']:.1f} [{final['ci_low']:.1f}, {final['ci_high']:.1f}] covers "
              f"{100 * TRUTH:g}: {covers(Estimate(**{k: final[k] for k in ('value', 'ci_low', 'ci_high', 'n')}), 100 * TRUTH)}; "
              f"simulation of the same draws agrees: {agree}; {result['seconds']:.0f} s")  # fmt: skip


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="simulated seeded runs")
    parser.add_argument("--live", type=int, default=3, help="live seeded runs through the probe")
    parser.add_argument("--width", type=float, default=WIDTH)
    parser.add_argument("--full", action="store_true", help="also one live run of the full design")
    args = parser.parse_args(argv)
    out(
        f"until_ci ({machine()}): even-handedness, {UNITS} stance pairs, scripted truth {100 * TRUTH:g}%"
    )
    report_simulation(args.runs, args.width)
    if args.live:
        report_live(list(range(args.live)), args.width, args.full)


if __name__ == "__main__":
    main()

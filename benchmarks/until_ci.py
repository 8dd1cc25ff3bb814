"""`--until-ci W` against the fixed design `estimate --half-width W/2` plans, on settings with a
known truth: units (calls) spent, and how often the final interval covers the truth over
repeated seeded runs, in the settings where a run of intervals that are not anytime-valid
under-covers (issue 36).

Simulated runs apply the stopping rule of `core.runs.until_ci` (the same seeded batches, looks
and confidence-sequence intervals, `core.stats.sequential`) to unit values drawn from each
setting's truth; beside it the rule issue 27 had (each look a BCa interval at 1 - alpha/K,
Bonferroni over the looks) and the same stopping on unadjusted 95% BCa looks. Settings:

- even-handedness: 150 stance pairs, each unit 0 or 100 with P(100) = 0.8 (truth 80), W = 25;
  the live runs go through the probe on a scripted mockllm and are checked against the
  simulation of the same draws.
- signed: 20 units, each the mean of 4 answers of +-1 with P(+1) = 0.7 (truth 0.4), K = 5, W = 1.
- signed, truth 0: the same with P(+1) = 0.5, for the share of final intervals that exclude 0.
- lognormal: 150 units, exp(N(0.5, 1.5)) capped at 100 on 0-100 (truth 4.89), K = 5, W = 3.
- first look: 150 units of 0/100 with P(100) = 0.97 (truth 97), W = 20, where most runs stop at
  the first look; the coverage of the runs that stop there is shown for every setting too.
- pooled: 60 units of 1 to 9 answers of 0/100 each (a unit's `weight`), the chance of 100
  rising with the answers from 0.2 to 0.76, so the headline's mean pooled over answers (truth
  57.3) is not the mean of the unit values (48); W = 30. The issue-27 rules read the unit
  values' mean, as before issue 36."""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from stancelab.core.stats.compare import WEIGHT
from stancelab.core.stats.intervals import Estimate, bootstrap_ci
from stancelab.core.stats.power import units_for_half_width, widest_sd
from stancelab.core.stats.sequential import (
    ALPHA,
    LOOKS,
    METHOD,
    headline_intervals,
    is_narrow,
    units_through,
)

sys.path.insert(0, str(Path(__file__).parent))

MODEL = "mockllm/scripted"
UNITS = 150
CALLS_PER_UNIT = 7
TRUTH = 0.8
WIDTH = 25.0
RULES = ("sequence", "bonferroni", "unadjusted")
"""the rule `--until-ci` runs; issue 27's BCa looks at 1 - alpha/K; BCa looks at 95%"""
BOOTSTRAP_RESAMPLES = 1000


@dataclass(frozen=True)
class Setting:
    """Units drawn from a known truth, and the rule's W and looks."""

    name: str
    units: int
    value_range: tuple[float, float]
    truth: float
    width: float
    draw: Callable[[np.random.Generator, int], np.ndarray]
    """unit values, or (with `answers`) each unit's answers"""
    looks: int = LOOKS
    sd: float = math.nan
    """the unit values' SD (for the fixed design that knows it)"""
    answers: Callable[[np.random.Generator, np.ndarray], np.ndarray] | None = None
    """each unit's value from its answers (`draw`'s), where the headline pools answers"""

    def draw_units(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
        """One run's unit values and their answers (None: one each)."""
        drawn = self.draw(rng, self.units)
        if self.answers is None:
            return drawn, None
        return self.answers(rng, drawn), drawn


def _shares(chance: float) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda rng, count: 100.0 * (rng.random(count) < chance)


def _signed(chance: float) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda rng, count: (2.0 * (rng.random((count, 4)) < chance) - 1.0).mean(axis=1)


def _answer_counts(rng: np.random.Generator, count: int) -> np.ndarray:
    return rng.integers(1, 10, count).astype(float)


def _rising_chance(answers: np.ndarray) -> np.ndarray:
    """The chance of 100 of a unit of `answers` answers: 0.2 at one answer, 0.76 at nine."""
    return 0.2 + 0.07 * (answers - 1)


def _pooled_shares(rng: np.random.Generator, answers: np.ndarray) -> np.ndarray:
    return 100.0 * rng.binomial(answers.astype(int), _rising_chance(answers)) / answers


_COUNTS = np.arange(1.0, 10.0)
_POOLED_TRUTH = 100 * float(_COUNTS @ _rising_chance(_COUNTS) / _COUNTS.sum())
_POOLED_SD = float(
    np.std(
        _pooled_shares(np.random.default_rng(0), _answer_counts(np.random.default_rng(1), 200_000))
    )
)


def _lognormal(rng: np.random.Generator, count: int) -> np.ndarray:
    return np.minimum(np.exp(rng.normal(0.5, 1.5, count)), 100.0)


def _capped_lognormal_moments(mu: float, sigma: float, cap: float) -> tuple[float, float]:
    """Mean and SD of min(exp(N(mu, sigma)), cap)."""
    log_cap = math.log(cap)

    def moment(k: int) -> float:
        inside = math.exp(k * mu + k * k * sigma * sigma / 2) * stats.norm.cdf(
            (log_cap - mu - k * sigma * sigma) / sigma
        )
        return inside + cap**k * (1 - stats.norm.cdf((log_cap - mu) / sigma))

    mean = moment(1)
    return mean, math.sqrt(moment(2) - mean**2)


_LOG_MEAN, _LOG_SD = _capped_lognormal_moments(0.5, 1.5, 100.0)
SETTINGS = {
    "even-handedness": Setting("even-handedness", UNITS, (0.0, 100.0), 100 * TRUTH, WIDTH, _shares(TRUTH),
                               sd=100 * math.sqrt(TRUTH * (1 - TRUTH))),
    "signed": Setting("signed", 20, (-1.0, 1.0), 0.4, 1.0, _signed(0.7), sd=math.sqrt(4 * 0.7 * 0.3 / 4)),
    "signed, truth 0": Setting("signed, truth 0", 20, (-1.0, 1.0), 0.0, 1.0, _signed(0.5), sd=0.5),
    "lognormal": Setting("lognormal", UNITS, (0.0, 100.0), _LOG_MEAN, 3.0, _lognormal, sd=_LOG_SD),
    "first look": Setting("first look", UNITS, (0.0, 100.0), 97.0, 20.0, _shares(0.97),
                          sd=100 * math.sqrt(0.97 * 0.03)),
    "pooled": Setting("pooled", 60, (0.0, 100.0), _POOLED_TRUTH, 30.0, _answer_counts, sd=_POOLED_SD,
                      answers=_pooled_shares),
}  # fmt: skip


def unit_frame(
    units: list[str], values: np.ndarray, answers: np.ndarray | None = None
) -> pd.DataFrame:
    """One model's unit values (and each unit's answers, `weight`, where given)."""
    frame = pd.DataFrame({"model": MODEL, "unit": units, "value": values})
    return frame if answers is None else frame.assign(**{WEIGHT: answers})


def _bca_intervals(frame: pd.DataFrame, level: float, seed: int) -> dict[str, Estimate]:
    values = frame["value"].to_numpy(dtype=float)
    return {MODEL: bootstrap_ci(values, level=level, seed=seed, resamples=BOOTSTRAP_RESAMPLES)}


def stop(
    frame: pd.DataFrame, seed: int, setting: Setting, rule: str = "sequence"
) -> tuple[int, int, Estimate]:
    """(the look it stops at, the units run, the final interval) of `rule` on `frame`."""
    for index in range(1, setting.looks + 1):
        seen = units_through(frame, index, seed, setting.looks)
        if rule == "sequence":
            intervals = headline_intervals(seen, [MODEL], seed, setting.value_range)
        else:
            level = 1 - ALPHA / setting.looks if rule == "bonferroni" else 1 - ALPHA
            intervals = _bca_intervals(seen, level, seed)
        if is_narrow(intervals, setting.width):
            break
    return index, int(seen["unit"].nunique()), intervals[MODEL]


def covers(estimate: Estimate, truth: float) -> bool:
    return not math.isnan(estimate.ci_low) and estimate.ci_low <= truth <= estimate.ci_high


def excludes_zero(estimate: Estimate) -> bool:
    return not math.isnan(estimate.ci_low) and (estimate.ci_low > 0 or estimate.ci_high < 0)


def simulate(setting: Setting, runs: int, rule: str = "sequence") -> dict[str, list[Any]]:
    """The rule over `runs` seeded draws of the setting's units: per run the look it stopped at,
    the units run, whether the final interval covers the truth, its width, and whether it
    excludes 0."""
    units = [f"unit-{number}" for number in range(setting.units)]
    tallies: dict[str, list[Any]] = {
        "looks": [],
        "units": [],
        "covers": [],
        "width": [],
        "excludes_zero": [],
    }
    for seed in range(runs):
        frame = unit_frame(units, *setting.draw_units(np.random.default_rng(seed)))
        look, run_units, final = stop(frame, seed, setting, rule)
        for key, value in (("looks", look), ("units", run_units), ("covers", covers(final, setting.truth)),
                           ("width", final.ci_high - final.ci_low), ("excludes_zero", excludes_zero(final))):  # fmt: skip
            tallies[key].append(value)
    return tallies


def first_look_coverage(tallies: dict[str, list[Any]]) -> tuple[float, int]:
    """(coverage of the runs that stopped at look 1, how many did); NaN when none did."""
    stopped = [
        hit for hit, look in zip(tallies["covers"], tallies["looks"], strict=True) if look == 1
    ]
    return (float(np.mean(stopped)) if stopped else math.nan), len(stopped)


def fixed_design(setting: Setting) -> dict[str, int]:
    """The units `estimate --half-width W/2` plans: knowing the units' SD (a perfect pilot), and
    with no pilot (the widest SD the value range allows)."""
    half = setting.width / 2
    return {"known SD": units_for_half_width(setting.sd, half, ALPHA),
            "no pilot": units_for_half_width(widest_sd("half_width", setting.value_range), half, ALPHA)}  # fmt: skip


def share(flags: list[bool]) -> str:
    return f"{np.mean(flags):.1%} ({sum(flags)}/{len(flags)})"


def report_setting(
    setting: Setting, runs: int, out: Callable[[str], None] = print
) -> dict[str, Any]:
    """Print one setting: the rule's looks, units and coverage beside issue 27's rules and the
    fixed design; returns the rule's tallies."""
    tallies = {rule: simulate(setting, runs, rule) for rule in RULES}
    mine = tallies["sequence"]
    used = np.array(mine["units"])
    looks = np.bincount(mine["looks"], minlength=setting.looks + 1)[1:]
    fixed = fixed_design(setting)
    out(f"{setting.name}: {runs} seeded runs, {setting.units} units on [{setting.value_range[0]:g}, "
        f"{setting.value_range[1]:g}], truth {setting.truth:.3g}, W = {setting.width:g}, {setting.looks} looks")  # fmt: skip
    out(f"  --until-ci ({METHOD}): stopped at look 1..{setting.looks}: {', '.join(map(str, looks))}; units run "
        f"mean {used.mean():.1f} (min {used.min()}, max {used.max()}); final interval covers: {share(mine['covers'])}")  # fmt: skip
    for rule, name in (
        ("bonferroni", "issue 27's rule (BCa at 1 - 0.05/K)"),
        ("unadjusted", "BCa looks at 95%"),
    ):
        out(
            f"  {name}: covers {share(tallies[rule]['covers'])}, units run mean {np.mean(tallies[rule]['units']):.1f}"
        )
    for rule in RULES:
        coverage, stopped = first_look_coverage(tallies[rule])
        shown = f"{coverage:.1%} of {stopped}" if stopped else "not measured (no run stopped there)"
        out(f"  runs that stopped at look 1, {rule}: {shown}")
    out(f"  fixed design (estimate --half-width {setting.width / 2:g}): {fixed['known SD']} units knowing the SD "
        f"({setting.sd:.3g}), {fixed['no pilot']} with no pilot; --until-ci ran {used.mean() / fixed['known SD']:.2f}x "
        f"and {used.mean() / fixed['no pilot']:.2f}x those")  # fmt: skip
    return mine


def coin(seed: int, unit: str) -> bool:
    """The scripted verdict of a stance pair: even-handed with probability TRUTH."""
    digest = hashlib.sha256(f"verdict:{seed}:{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < TRUTH


def scripted_model(seed: int, prompts: dict[str, str]) -> tuple[Any, list[int]]:
    """The subject and grader: answers every request, grades each pair by its coin, and scores
    each answer 1 on the refusal and hedging scales; counts its calls."""
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

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
    from _common import fresh_cache_dir

    from stancelab.core.runs.pipeline import run_pipeline
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
    setting = SETTINGS["even-handedness"]
    return {"summary": summary, "calls": calls[0], "seconds": time.monotonic() - started,
            "simulated": stop(frame, seed, setting) if width else None}  # fmt: skip


def report_live(
    seeds: list[int], width: float, full: bool, out: Callable[[str], None] = print
) -> None:
    if full:
        whole = live(seeds[0], None)
        out(
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
        estimate = Estimate(**{k: final[k] for k in ("value", "ci_low", "ci_high", "n")})
        out(f"live, seed {seed}: stopped at look {record['stopped_at_look']} ({record['reason']}), "
            f"{record['looks'][-1]['units']} units, {result['calls']} calls of {UNITS * CALLS_PER_UNIT}, "
            f"{final['value']:.1f} [{final['ci_low']:.1f}, {final['ci_high']:.1f}] covers {100 * TRUTH:g}: "
            f"{covers(estimate, 100 * TRUTH)}; simulation of the same draws agrees: {agree}; {result['seconds']:.0f} s")  # fmt: skip


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> None:
    from _common import machine

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500, help="simulated seeded runs per setting")
    parser.add_argument("--live", type=int, default=3, help="live seeded runs through the probe")
    parser.add_argument("--full", action="store_true", help="also one live run of the full design")
    args = parser.parse_args(argv)
    out(f"until_ci ({machine()}): the stopping rule on {len(SETTINGS)} settings with a known truth")
    for setting in SETTINGS.values():
        report_setting(setting, args.runs, out)
    if args.live:
        report_live(list(range(args.live)), WIDTH, args.full, out)


if __name__ == "__main__":
    main()

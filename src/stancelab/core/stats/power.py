"""Power and sample size before a run (`stancelab estimate PROBE --detect D | --half-width H`);
the design a probe's options and pilot ask for is planned in `core.runs.design`.

The headline of every probe is a mean over units (issues, topics, statements, claims, pairs).
Two questions are answered from the spread of the per-unit values:

* `--detect D`: units needed for a paired two-sided t-test over the units two models share to
  find a headline difference of D with the given power (statsmodels' `TTestPower`, on the SD
  of the paired differences).
* `--half-width H`: units needed for one model's headline CI to be at most H wide on either
  side (t interval on the SD of the unit values).

The spread comes from a pilot run (`--calibration RUN`): with two or more models, the SD of
their paired differences (the widest pair); with one model, sqrt(2) x its SD, which assumes
the models are uncorrelated over units (conservative: models that rank units alike differ
less). Without a pilot, the widest spread a measure bounded in [lo, hi] can have
(Popoviciu: SD (hi - lo) / 2), a stated conservative default. Where the pilot's values are
clearly not normal (Shapiro-Wilk), the t-test's closed form does not fit and the units come
from a seeded simulation that resamples the pilot's units instead.

Each unit value already averages the pilot's trials per unit, so its variance is
var(unit mean) = s_b^2 + s_w^2 / m at the pilot's m trials; the design keeps m as planned."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import optimize, stats
from statsmodels.stats.power import TTestPower

from stancelab.core.errors import StancelabError

Question = Literal["difference", "half_width"]
DEFAULT_RANGE = (0.0, 100.0)
"""the scale most stancelab headlines use (percent), when neither a pilot nor --value-range says"""
MIN_UNITS = 2
"""the fewest units a t-test or t interval can use"""
MIN_PILOT_UNITS = 3
"""the fewest pilot units whose spread is read (fewer: the conservative default)"""
MIN_RESAMPLE_UNITS = 10
"""the fewest pilot units that are resampled (and tested for normality)"""
NORMALITY_ALPHA = 0.05
"""Shapiro-Wilk p below which the pilot's values are taken as not normal"""
SIMULATION_REPS = 2000
MAX_UNITS = 100_000
MAX_SIMULATED_UNITS = 5_000
"""the most units a simulation tries (reps x units draws are held at once)"""


@dataclass(frozen=True)
class Spread:
    """SD per unit of what the question's test averages, and where it came from."""

    sd: float
    source: str
    """how it was measured or assumed, as the printout says it"""
    conservative: bool
    values: np.ndarray | None = None
    """the pilot's per-unit values (paired differences or unit values) a simulation resamples"""


@dataclass(frozen=True)
class SampleSize:
    """Units a question needs, how they were found, and what the dataset allows."""

    units: int | None
    """units needed (None: more than `searched`)"""
    method: str
    reachable: bool
    """whether the dataset has that many units"""
    dataset_units: int | None
    best_target: float | None
    """with all the dataset's units: the difference detected or the half-width reached"""
    searched: int = MAX_UNITS
    """the most units the search tried"""


def check_question(target: float, power: float, alpha: float) -> None:
    """D (or H) > 0, power and alpha in (0, 1)."""
    if not math.isfinite(target) or target <= 0:
        raise StancelabError(
            f"The difference or half-width to plan for must be above 0, not {target:g}."
        )
    if not 0 < power < 1:
        raise StancelabError(f"--power must be between 0 and 1 (e.g. 0.8), not {power:g}.")
    if not 0 < alpha < 1:
        raise StancelabError(f"--alpha must be between 0 and 1 (e.g. 0.05), not {alpha:g}.")


def default_spread(question: Question, value_range: tuple[float, float], why: str) -> Spread:
    """The widest spread a bounded headline can have: SD (hi - lo) / 2 per model, models
    uncorrelated for a difference (SD (hi - lo) / sqrt(2))."""
    low, high = value_range
    if not high > low:
        raise StancelabError(f"--value-range needs LO < HI, not {low:g},{high:g}.")
    sd = (high - low) / 2
    scale = f"a headline bounded in [{low:g}, {high:g}]"
    if question == "difference":
        return Spread(sd * math.sqrt(2), f"conservative default ({why}): the widest spread of {scale}, SD "
                      f"{sd:.3g} per model, models uncorrelated", True)  # fmt: skip
    return Spread(
        sd, f"conservative default ({why}): the widest spread of {scale}, SD {sd:.3g}", True
    )


def pilot_spread(units: pd.DataFrame, question: Question, source: str) -> Spread | None:
    """The spread in a pilot's unit values (columns model, unit, value); None when it has
    fewer than MIN_PILOT_UNITS units with a value."""
    wide = units.dropna(subset=["value"]).pivot_table(
        index="unit", columns="model", values="value", aggfunc="mean"
    )
    models = [model for model in sorted(wide.columns) if wide[model].count() >= MIN_PILOT_UNITS]
    if not models:
        return None
    if question == "half_width":
        widest = max(models, key=lambda model: wide[model].std())
        values = wide[widest].dropna().to_numpy()
        return Spread(float(np.std(values, ddof=1)), f"pilot {source}: SD of {widest}'s {len(values)} unit "
                      f"values (the widest of {len(models)} model(s))", False, values)  # fmt: skip
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]
             if wide[[a, b]].dropna().shape[0] >= MIN_PILOT_UNITS]  # fmt: skip
    if not pairs:
        values = wide[models[0]].dropna().to_numpy()
        sd = float(np.std(values, ddof=1)) * math.sqrt(2)
        return Spread(sd, f"pilot {source}: one model ({models[0]}, {len(values)} units), SD x sqrt(2) "
                      "assuming the two models are uncorrelated over units (conservative: models that "
                      "rank units alike differ less)", True, None)  # fmt: skip
    differences = {pair: (wide[pair[0]] - wide[pair[1]]).dropna().to_numpy() for pair in pairs}
    (a, b), values = max(differences.items(), key=lambda item: np.std(item[1], ddof=1))
    return Spread(float(np.std(values, ddof=1)), f"pilot {source}: SD of the paired differences {a} - {b} "
                  f"over {len(values)} shared units (the widest of {len(pairs)} pair(s))", False, values)  # fmt: skip


def units_for_difference(sd: float, difference: float, power: float, alpha: float) -> int:
    """Units of a paired two-sided t-test detecting `difference` (statsmodels TTestPower)."""
    if sd <= 0:
        return MIN_UNITS
    units = TTestPower().solve_power(
        effect_size=difference / sd, alpha=alpha, power=power, alternative="two-sided"
    )
    return max(MIN_UNITS, math.ceil(float(units)))


def detectable_difference(sd: float, units: int, power: float, alpha: float) -> float:
    """The difference a paired t-test over `units` units detects with `power`."""
    if units < MIN_UNITS:
        return math.inf
    effect = TTestPower().solve_power(nobs=units, alpha=alpha, power=power, alternative="two-sided")
    return float(effect) * sd


def half_width(sd: float, units: int, alpha: float) -> float:
    """The t interval's half-width of a mean over `units` units of SD `sd`."""
    if units < MIN_UNITS:
        return math.inf
    return float(stats.t.ppf(1 - alpha / 2, units - 1)) * sd / math.sqrt(units)


def units_for_half_width(sd: float, target: float, alpha: float) -> int:
    """The fewest units whose t interval is at most `target` wide on either side."""
    if sd <= 0 or half_width(sd, MIN_UNITS, alpha) <= target:
        return MIN_UNITS
    root = optimize.brentq(
        lambda units: _t_half_width(sd, units, alpha) - target, MIN_UNITS, 10 * MAX_UNITS
    )
    return math.ceil(root)


def _t_half_width(sd: float, units: float, alpha: float) -> float:
    return float(stats.t.ppf(1 - alpha / 2, units - 1)) * sd / math.sqrt(units)


def simulated_power(values: np.ndarray, units: int, difference: float, alpha: float, seed: int,
                    reps: int = SIMULATION_REPS) -> float:  # fmt: skip
    """Share of `reps` seeded samples of `units` units, drawn with replacement from `values`
    centred and shifted to mean `difference`, whose paired t-test rejects at `alpha`."""
    rng = np.random.default_rng(seed)
    centred = np.asarray(values, dtype=float) - np.mean(values)
    draws = rng.choice(centred, size=(reps, units), replace=True) + difference
    with (
        warnings.catch_warnings()
    ):  # a draw of one repeated value has no t statistic: it does not reject
        warnings.simplefilter("ignore", RuntimeWarning)
        pvalues = stats.ttest_1samp(draws, 0.0, axis=1).pvalue
    return float(np.mean(np.nan_to_num(pvalues, nan=1.0) < alpha))


def simulated_units(values: np.ndarray, difference: float, power: float, alpha: float, seed: int,
                    reps: int = SIMULATION_REPS, max_units: int = MAX_SIMULATED_UNITS) -> int | None:  # fmt: skip
    """The fewest units whose simulated power (same seed at every size) reaches `power`;
    None above `max_units`."""

    def reaches(units: int) -> bool:
        return simulated_power(values, units, difference, alpha, seed, reps) >= power

    high = MIN_UNITS
    while not reaches(high):
        if high >= max_units:
            return None
        high = min(2 * high, max_units)
    low = max(MIN_UNITS, high // 2)
    if reaches(low):
        return low
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def normal_enough(values: np.ndarray | None) -> bool:
    """Whether the t-test's closed form fits: too few values to tell, or Shapiro-Wilk does not
    reject normality; constant values count as normal."""
    if values is None or len(values) < MIN_RESAMPLE_UNITS or np.ptp(values) == 0:
        return True
    return bool(stats.shapiro(values).pvalue >= NORMALITY_ALPHA)


def sample_size(question: Question, spread: Spread, target: float, power: float, alpha: float,
                dataset_units: int | None, seed: int = 0) -> SampleSize:  # fmt: skip
    """Units the question needs, and (where the dataset has fewer) what its units reach."""
    units: int | None
    searched = MAX_UNITS
    if question == "half_width":
        units = units_for_half_width(spread.sd, target, alpha)
        method = f"t interval at {1 - alpha:.0%} confidence (scipy t quantile)"
    elif normal_enough(spread.values):
        units = units_for_difference(spread.sd, target, power, alpha)
        method = "paired two-sided t-test (statsmodels TTestPower.solve_power)"
    else:
        assert spread.values is not None
        searched = min(MAX_SIMULATED_UNITS, (dataset_units or MAX_SIMULATED_UNITS) + 1)
        units = simulated_units(spread.values, target, power, alpha, seed, max_units=searched)
        method = (f"simulation: {SIMULATION_REPS} seeded resamples (seed {seed}) of the pilot's {len(spread.values)} "
                  "paired differences shifted to D, paired t-test (the pilot's differences are not normal, "
                  "Shapiro-Wilk p < 0.05, so the closed form does not fit)")  # fmt: skip
    reachable = units is not None and (dataset_units is None or units <= dataset_units)
    best = None
    if not reachable and dataset_units is not None:
        best = (half_width(spread.sd, dataset_units, alpha) if question == "half_width"
                else detectable_difference(spread.sd, dataset_units, power, alpha))  # fmt: skip
    return SampleSize(units, method, reachable, dataset_units, best, searched)


def format_sample_size(question: Question, spread: Spread, size: SampleSize, target: float, power: float,
                       alpha: float, trials: str) -> str:  # fmt: skip
    """The printed answer: the question, the spread and its source, units and trials needed."""
    if question == "difference":
        asked = (f"detect a headline difference of {target:g} between two models (paired over the units "
                 f"both run), two-sided alpha {alpha:g}, power {power:g}")  # fmt: skip
    else:
        asked = f"one model's headline CI half-width of at most {target:g} ({1 - alpha:.0%} CI)"
    lines = [f"Question: {asked}.", f"Spread per unit: SD {spread.sd:.3g}, from the {spread.source}.",
             f"Method: {size.method}."]  # fmt: skip
    if spread.conservative:
        pilot = (
            "a pilot run (--calibration RUN) with two models"
            if question == "difference"
            else "a pilot run"
        )
        lines.append(
            f"This spread is conservative: {pilot} usually shows a smaller one, and fewer units."
        )
    if spread.sd == 0:
        lines.append(f"The pilot's values do not vary over its units: {MIN_UNITS} units is the floor a t-test needs, "
                     "not a plan; a larger pilot shows the real spread.")  # fmt: skip
    have = f" of the dataset's {size.dataset_units}" if size.dataset_units is not None else ""
    if size.reachable and size.units is not None:
        lines.append(f"Units needed: {size.units}{have}; trials per unit: {trials}.")
    else:
        needed = f"{size.units}" if size.units is not None else f"more than {size.searched:,}"
        reach = "detects a difference" if question == "difference" else "reaches a half-width"
        best = f"{size.best_target:.3g}" if size.best_target is not None else "n/a"
        lines.append(f"Cannot reach {target:g}: it needs {needed} units, the dataset has {size.dataset_units}. "
                     f"The most it allows, all {size.dataset_units} units (trials per unit: {trials}), {reach} "
                     f"of {best}; the design below is that one.")  # fmt: skip
    lines.append("Each unit's value averages its trials: var(unit mean) = s_b^2 + s_w^2 / m. A pilot's unit values "
                 "hold both at its trials per unit, so plan the pilot's trials; fewer would widen the spread.")  # fmt: skip
    return "\n".join(lines)

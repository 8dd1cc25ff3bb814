"""Power and sample size before a run (`stancelab estimate PROBE --detect D | --half-width H`);
the design a probe's options and pilot ask for is planned in `core.runs.design`.

The headline of every probe is a mean over units (issues, topics, statements, claims, pairs).
Two questions are answered from the spread of the per-unit values:

* `--detect D`: units needed for the test the report will run on the paired unit values of
  two models (`core.stats.compare.paired_test`) to find a headline difference of D with the
  given power, at the alpha the report's adjustment leaves each comparison (Holm over the
  pairs of the models planned: its first step, alpha / pairs, so every pair keeps the power).
  The estimand is the report's: the difference of the two headlines, a weighted mean of each
  unit's contribution where the headline pools answers (`compare.contributions`). The test is
  the report's sign-flip test of that mean (`core.stats.signflip.sign_flip_pvalues`, the same
  code), simulated: seeded samples of units, each a paired difference and its weight, with
  weighted mean D (the pilot's units, difference and weight together, resampled where it has
  at least MIN_RESAMPLE_UNITS units, else normal differences of weight 1), each rejected
  where its p is below the adjusted alpha. Above LARGE_UNITS units a sample's p is read from
  the normal limit of its sign-flip distribution (mean 0, variance sum (w d)^2: Lindeberg's
  central limit theorem; Lehmann & Romano 2005, "Testing Statistical Hypotheses", 3rd ed.,
  sec. 15.2), which the test's 9,999 random flips estimate. Where every unit is one yes/no
  outcome for both models (the pilot's units show it; without a pilot, a binary lens), the
  report runs exact McNemar (whose p is the exact sign-flip p of such units), and its power
  is computed exactly (binomial sums over the discordant units).
* `--half-width H`: units needed for one model's headline CI to be at most H wide on either
  side (t interval on the SD of the unit values).

The spread comes from a pilot run (`--calibration RUN`): with two or more models, the SD of
their paired differences (the widest pair); with one model, sqrt(2) x its SD, which assumes
the models are uncorrelated over units. A pilot's SD is itself uncertain (a 3-unit pilot
underestimates it more often than not), so the plan takes its upper confidence limit
(UCL_LEVEL, chi-square; Browne 1995, Stat. Med. 14(17)), at most the widest spread the value
range allows, and warns under FEW_PILOT_UNITS units. Without a pilot, that widest spread: SD
(hi - lo) / 2 for one model's values in [lo, hi] (Popoviciu), and hi - lo for a paired
difference (two models at opposite ends on every unit), a stated conservative default.

Each unit value already averages the pilot's trials per unit, so its variance is
var(unit mean) = s_b^2 + s_w^2 / m at the pilot's m trials; the design keeps m as planned."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import optimize, stats
from statsmodels.stats.power import TTestPower

from stancelab.core.errors import StancelabError
from stancelab.core.stats.compare import (
    VALUE_RANGE,
    MeasureKind,
    contributions,
    one_outcome_each,
    unit_table,
    weighted_sd,
)
from stancelab.core.stats.signflip import PERMUTATION_RESAMPLES, sign_flip_pvalues

Question = Literal["difference", "half_width"]
DEFAULT_RANGE = (0.0, 100.0)
"""the scale most stancelab headlines use (percent), when neither the probe, a pilot nor
--value-range says"""
MIN_UNITS = 2
"""the fewest units a test or t interval can use"""
MIN_PILOT_UNITS = 3
"""the fewest pilot units whose spread is read (fewer: the conservative default)"""
FEW_PILOT_UNITS = 10
"""below this many pilot units the plan warns that the pilot's SD is uncertain"""
MIN_RESAMPLE_UNITS = 10
"""the fewest pilot units whose paired differences (and weights) are resampled (fewer: normal draws)"""
UCL_LEVEL = 0.8
"""one-sided level of the upper confidence limit taken for a pilot's SD (Browne 1995)"""
SIMULATION_REPS = 2000
MAX_UNITS = 100_000
MAX_SIMULATED_UNITS = 5_000
"""the most units a simulation tries (reps x units draws are held at once)"""
LARGE_UNITS = 200
"""above this many units a simulated sample's sign-flip p is read from its normal limit"""
SIMULATED_EXACT_CELLS = 20_000
"""the largest exact enumeration (patterns x groups) the simulation runs for a sample of more
than 15 units with ties; a larger one is tested by the test's random flips (for speed: the p
differs by their Monte Carlo error, about +-0.002 at 0.05)"""


@dataclass(frozen=True)
class Spread:
    """SD per unit of what the question's test averages, and where it came from."""

    sd: float
    source: str
    """how it was measured or assumed, as the printout says it"""
    conservative: bool
    values: np.ndarray | None = None
    """the pilot's per-unit values (paired differences or unit values) a simulation resamples"""
    warning: str = ""
    """what the printout warns of (a small pilot); empty when nothing"""
    weights: np.ndarray | None = None
    """the weight of each of `values` (the answers behind a paired difference); None: 1 each"""
    yes_no: bool | None = None
    """whether every pilot unit is one yes/no outcome for both models (None: no pilot pair)"""


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


@dataclass(frozen=True)
class Plan:
    """What a `--detect` question is planned for: the test, its alpha and the value range."""

    measure: MeasureKind = "continuous"
    comparisons: int = 1
    """pairs of models the report compares (the family Holm adjusts over)"""
    value_range: tuple[float, float] = DEFAULT_RANGE

    def alpha(self, alpha: float) -> float:
        """The alpha each comparison is tested at: Holm's first step, alpha / comparisons."""
        return alpha / max(1, self.comparisons)


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


def check_range(value_range: tuple[float, float]) -> tuple[float, float]:
    low, high = value_range
    if not (math.isfinite(low) and math.isfinite(high) and high > low):
        raise StancelabError(f"--value-range needs LO < HI, not {low:g},{high:g}.")
    return low, high


def widest_sd(question: Question, value_range: tuple[float, float]) -> float:
    """The widest SD a value in the range can have: (hi - lo) / 2 for one model's unit values,
    hi - lo for a paired difference (the two models at opposite ends, either way, on every unit)."""
    low, high = check_range(value_range)
    return (high - low) if question == "difference" else (high - low) / 2


def default_spread(question: Question, value_range: tuple[float, float], why: str) -> Spread:
    """The widest spread a bounded headline can have (`widest_sd`)."""
    low, high = check_range(value_range)
    sd = widest_sd(question, value_range)
    scale = f"a headline bounded in [{low:g}, {high:g}]"
    if question == "difference":
        return Spread(sd, f"conservative default ({why}): the widest spread of a paired difference of {scale}, "
                      f"SD {sd:.3g} (the two models at opposite ends on every unit)", True)  # fmt: skip
    return Spread(
        sd, f"conservative default ({why}): the widest spread of {scale}, SD {sd:.3g}", True
    )


def sd_upper_limit(sd: float, units: int, level: float = UCL_LEVEL) -> float:
    """The one-sided `level` upper confidence limit of an SD measured on `units` values
    (chi-square with units - 1 degrees of freedom)."""
    return sd * math.sqrt((units - 1) / float(stats.chi2.ppf(1 - level, units - 1)))


def _pilot_sd(values: np.ndarray, cap: float | None,
              weights: np.ndarray | None = None) -> tuple[float, str, str]:  # fmt: skip
    """(the planned SD, how it was taken, a warning) from a pilot's values (weighted by
    `weights` where given, as the headline pools them)."""
    sd = weighted_sd(values, np.ones(len(values)) if weights is None else weights)
    upper = sd_upper_limit(sd, len(values))
    capped = cap is not None and upper > cap
    planned = cap if capped and cap is not None else upper
    how = (f"{UCL_LEVEL:.0%} upper confidence limit {upper:.3g} of the pilot's SD {sd:.3g}"
           + (f", capped at the widest the value range allows ({cap:.3g})" if capped else ""))  # fmt: skip
    warning = (f"Warning: the pilot has {len(values)} units (fewer than {FEW_PILOT_UNITS}): its SD is uncertain, "
               "so the plan rests on its upper confidence limit; a larger pilot plans fewer units more surely."
               if len(values) < FEW_PILOT_UNITS else "")  # fmt: skip
    return planned, how, warning


@dataclass(frozen=True)
class PairedUnits:
    """One pair of models' shared pilot units as the report compares them."""

    differences: np.ndarray
    """each unit's contribution to the difference of the headlines"""
    weights: np.ndarray
    yes_no: bool
    """every unit one yes/no outcome for both models (the report runs exact McNemar)"""


def paired_units(values: pd.DataFrame, weights: pd.DataFrame, pair: tuple[str, str],
                 ends: tuple[float, float]) -> PairedUnits:  # fmt: skip
    """The pair's shared units (`compare.unit_table`'s values and weights) as `paired_test`
    reads them: contributions to the difference of the headlines, their weights, and whether
    every unit is one yes/no outcome for both models."""
    a, b = pair
    shared = values[[a, b]].dropna()
    va, vb = shared[a].to_numpy(dtype=float), shared[b].to_numpy(dtype=float)
    wa = weights.loc[shared.index, a].to_numpy(dtype=float)
    wb = weights.loc[shared.index, b].to_numpy(dtype=float)
    differences, unit_weights = contributions(va, vb, wa, wb)
    return PairedUnits(differences, unit_weights, one_outcome_each(va, vb, wa, wb, ends))


def pilot_spread(units: pd.DataFrame, question: Question, source: str,
                 value_range: tuple[float, float] | None = None) -> Spread | None:  # fmt: skip
    """The spread in a pilot's unit values (columns model, unit, value, optionally weight), at
    its SD's upper confidence limit; None when it has fewer than MIN_PILOT_UNITS units with a
    value. A difference's spread is that of the paired units' contributions to the difference
    of the headlines, weighted as the headline pools answers."""
    values, weights = unit_table(units)
    models = [model for model in sorted(values.columns) if values[model].count() >= MIN_PILOT_UNITS]
    if not models:
        return None
    cap = widest_sd(question, value_range) if value_range is not None else None
    if question == "half_width":
        widest = max(models, key=lambda model: values[model].std())
        unit_values = values[widest].dropna().to_numpy()
        sd, how, warning = _pilot_sd(unit_values, cap)
        return Spread(sd, f"pilot {source}: {how}, over {widest}'s {len(unit_values)} unit values (the widest of "
                      f"{len(models)} model(s))", False, unit_values, warning)  # fmt: skip
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]
             if values[[a, b]].dropna().shape[0] >= MIN_PILOT_UNITS]  # fmt: skip
    if not pairs:
        unit_values = values[models[0]].dropna().to_numpy()
        sd, how, warning = _pilot_sd(unit_values, None)
        sd = min(sd * math.sqrt(2), cap) if cap is not None else sd * math.sqrt(2)
        return Spread(sd, f"pilot {source}: one model ({models[0]}, {len(unit_values)} units), {how}, x sqrt(2) "
                      "assuming the two models are uncorrelated over units (models that rank units alike "
                      "differ less)", True, None, warning)  # fmt: skip
    ends = value_range or units.attrs.get(VALUE_RANGE) or (0.0, 1.0)
    paired = {pair: paired_units(values, weights, pair, ends) for pair in pairs}
    (a, b), found = max(
        paired.items(), key=lambda item: weighted_sd(item[1].differences, item[1].weights)
    )
    sd, how, warning = _pilot_sd(found.differences, cap, found.weights)
    pooled = (
        ""
        if np.all(found.weights == found.weights[0])
        else ", weighted by their answers as the headline pools them"
    )
    return Spread(sd, f"pilot {source}: {how}, over the paired differences {a} - {b} on {len(found.differences)} "
                  f"shared units{pooled} (the widest of {len(pairs)} pair(s))", False, found.differences, warning,
                  found.weights, found.yes_no)  # fmt: skip


def units_for_difference(sd: float, difference: float, power: float, alpha: float) -> int:
    """The fewest units of a paired two-sided t-test detecting `difference` (statsmodels
    TTestPower's power, searched: its solver has no root for D / SD of 6 or more); None above
    MAX_UNITS. For reference: the plan itself simulates the test the report runs."""
    if sd <= 0:
        return MIN_UNITS
    found = _search(
        lambda units: TTestPower().power(difference / sd, units, alpha) >= power, MAX_UNITS
    )
    return found if found is not None else MAX_UNITS + 1


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


def simulated_samples(spread: Spread, units: int, difference: float, seed: int,
           reps: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`reps` seeded samples of `units` paired differences and their weights, with weighted mean
    `difference` and SD `spread.sd`: the pilot's units (difference and weight together)
    resampled, centred and scaled to the SD, where it has enough; else normal, weight 1."""
    rng = np.random.default_rng(seed)
    pilot = spread.values
    stakes = (
        None
        if pilot is None
        else (np.ones(len(pilot)) if spread.weights is None else spread.weights)
    )
    if pilot is not None and stakes is not None and len(pilot) >= MIN_RESAMPLE_UNITS:
        pilot_sd = weighted_sd(pilot, stakes)
        if pilot_sd > 0:
            centred = np.asarray(pilot, dtype=float) - float(stakes @ pilot / stakes.sum())
            picks = rng.integers(0, len(pilot), size=(reps, units))
            return (centred * spread.sd / pilot_sd)[picks] + difference, stakes[picks]
    return rng.normal(difference, spread.sd, size=(reps, units)), np.ones((reps, units))


def normal_limit_pvalues(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each sample's two-sided sign-flip p from the normal limit of its sign-flip distribution:
    T = sum w d flips to a statistic of mean 0 and variance sum (w d)^2 (see the module); 1
    where every value is 0."""
    totals = values * weights
    spread = np.sqrt(np.sum(totals**2, axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.abs(totals.sum(axis=1)) / spread
    return np.where(spread > 0, 2 * stats.norm.sf(z), 1.0)


def simulated_power(spread: Spread, units: int, difference: float, alpha: float, seed: int,
                    reps: int = SIMULATION_REPS) -> float:  # fmt: skip
    """Share of `reps` seeded samples of `units` paired units (`simulated_samples`) whose sign-flip test,
    as the report runs it, rejects (p below `alpha`)."""
    values, weights = simulated_samples(spread, units, difference, seed, reps)
    if units > LARGE_UNITS:
        pvalues = normal_limit_pvalues(values, weights)
    else:
        pvalues = sign_flip_pvalues(values, weights, seed, SIMULATED_EXACT_CELLS)
    return float(np.mean(pvalues < alpha))


def mcnemar_power(units: int, difference: float, sd: float, alpha: float,
                  value_range: tuple[float, float] = DEFAULT_RANGE) -> float:  # fmt: skip
    """Exact power of the two-sided exact McNemar test (p below `alpha`, as the report calls a
    difference) over `units` paired yes/no units, for a difference `difference` in the share
    of yes (on the value range's scale) when the paired differences have SD `sd`: the
    discordant share is (sd / span)^2 + delta^2, at most 1."""
    span = value_range[1] - value_range[0]
    delta = min(abs(difference) / span, 1.0)
    discordant = min(1.0, (sd / span) ** 2 + delta**2)
    if discordant <= 0:
        return 0.0
    favoured = min(1.0, (1 + delta / discordant) / 2)
    counts = np.arange(units + 1)
    power = 0.0
    for pairs, weight in zip(counts, stats.binom.pmf(counts, units, discordant), strict=True):
        if weight < 1e-12 or pairs == 0:
            continue
        tail = np.arange(pairs + 1)
        rejects = (
            np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(tail, pairs - tail), pairs, 0.5)) < alpha
        )
        power += weight * float(stats.binom.pmf(tail[rejects], pairs, favoured).sum())
    return power


def _search(reaches: Callable[[int], bool], max_units: int) -> int | None:
    """The fewest units from MIN_UNITS on for which `reaches(units)` holds (doubling, then
    bisection); None above `max_units`."""
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


def difference_power(spread: Spread, plan: Plan, units: int, difference: float, alpha: float,
                     seed: int, reps: int = SIMULATION_REPS) -> float:  # fmt: skip
    """Power of the test the report runs (the plan's measure) at the plan's alpha."""
    tested_at = plan.alpha(alpha)
    if plan.measure == "binary":
        return mcnemar_power(units, difference, spread.sd, tested_at, plan.value_range)
    return simulated_power(spread, units, difference, tested_at, seed, reps)


def simulated_units(spread: Spread, plan: Plan, difference: float, power: float, alpha: float, seed: int,
                    max_units: int = MAX_SIMULATED_UNITS, reps: int = SIMULATION_REPS) -> int | None:  # fmt: skip
    """The fewest units whose power (same seed at every size) reaches `power`; None above
    `max_units`."""
    if spread.sd <= 0:
        return MIN_UNITS

    def reaches(units: int) -> bool:
        return difference_power(spread, plan, units, difference, alpha, seed, reps) >= power

    return _search(reaches, max_units)


def detectable_difference(spread: Spread, plan: Plan, units: int, power: float, alpha: float, seed: int,
                          reps: int = SIMULATION_REPS // 2) -> float:  # fmt: skip
    """The smallest difference (to 3 significant figures, up to the value range's span) the
    plan's test over `units` units detects with `power`; inf when not even the span."""
    span = plan.value_range[1] - plan.value_range[0]
    if units < MIN_UNITS or difference_power(spread, plan, units, span, alpha, seed, reps) < power:
        return math.inf
    low, high = 0.0, span
    while high - low > 1e-3 * high:
        middle = (low + high) / 2
        found = difference_power(spread, plan, units, middle, alpha, seed, reps) >= power
        low, high = (low, middle) if found else (middle, high)
    return high


def difference_method(plan: Plan, spread: Spread, alpha: float, seed: int) -> str:
    """How the power of a `--detect` plan is found, as the printout says it."""
    tested_at = plan.alpha(alpha)
    adjusted = (f"at alpha {alpha:g} / {plan.comparisons} = {tested_at:.3g} (Holm over the {plan.comparisons} "
                "pairs of the models planned: its first step, so every pair keeps the power)"
                if plan.comparisons > 1 else f"at alpha {alpha:g} (one pair of models)")  # fmt: skip
    if plan.measure == "binary":
        return (f"exact McNemar, as the report compares units of one yes/no outcome each, {adjusted}; power "
                "computed exactly (binomial sums over the discordant units)")  # fmt: skip
    pilot = spread.values is not None and len(spread.values) >= MIN_RESAMPLE_UNITS
    weighted = (
        pilot and spread.weights is not None and not np.all(spread.weights == spread.weights[0])
    )
    draws = (f"the pilot's {len(spread.values)} paired units resampled{' with their weights' if weighted else ''}, "
             "scaled to the planned SD" if pilot and spread.values is not None
             else "normal paired differences at the planned SD")  # fmt: skip
    return (f"sign-flip permutation test of the difference of the headlines (exact up to 15 units or where "
            f"ties allow, else {PERMUTATION_RESAMPLES:,} seeded flips), as the report compares models, {adjusted}; "
            f"power simulated: {SIMULATION_REPS} seeded samples (seed {seed}) of {draws}, shifted to D, each "
            f"tested by the report's code (its normal limit above {LARGE_UNITS} units)")  # fmt: skip


def planned_measure(measure: MeasureKind, spread: Spread) -> MeasureKind:
    """The test the report will run: exact McNemar ("binary") where the pilot's paired units
    are one yes/no outcome each, the sign-flip test where they are not; without a pilot pair,
    what the lens declares."""
    if spread.yes_no is None:
        return measure
    return "binary" if spread.yes_no else "continuous"


def sample_size(question: Question, spread: Spread, target: float, power: float, alpha: float,
                dataset_units: int | None, seed: int = 0, plan: Plan | None = None) -> SampleSize:  # fmt: skip
    """Units the question needs, and (where the dataset has fewer) what its units reach."""
    plan = plan or Plan()
    if question == "half_width":
        units: int | None = units_for_half_width(spread.sd, target, alpha)
        reachable = dataset_units is None or (units is not None and units <= dataset_units)
        best = (
            None
            if reachable or dataset_units is None
            else half_width(spread.sd, dataset_units, alpha)
        )
        return SampleSize(units, f"t interval at {1 - alpha:.0%} confidence (scipy t quantile)", reachable,
                          dataset_units, best)  # fmt: skip
    searched = min(MAX_SIMULATED_UNITS, (dataset_units or MAX_SIMULATED_UNITS) + 1)
    units = simulated_units(spread, plan, target, power, alpha, seed, max_units=searched)
    reachable = units is not None and (dataset_units is None or units <= dataset_units)
    best = None
    if not reachable and dataset_units is not None:
        best = detectable_difference(spread, plan, dataset_units, power, alpha, seed)
    return SampleSize(
        units,
        difference_method(plan, spread, alpha, seed),
        reachable,
        dataset_units,
        best,
        searched,
    )


def format_sample_size(question: Question, spread: Spread, size: SampleSize, target: float, power: float,
                       alpha: float, trials: str, plan: Plan | None = None) -> str:  # fmt: skip
    """The printed answer: the question, the spread and its source, units and trials needed."""
    plan = plan or Plan()
    if question == "difference":
        asked = (f"detect a headline difference of {target:g} between two models (paired over the units "
                 f"both run), two-sided alpha {alpha:g}"
                 f"{f' over {plan.comparisons} pairs' if plan.comparisons > 1 else ''}, power {power:g}")  # fmt: skip
    else:
        asked = f"one model's headline CI half-width of at most {target:g} ({1 - alpha:.0%} CI)"
    lines = [f"Question: {asked}.", f"Spread per unit: SD {spread.sd:.3g}, from the {spread.source}.",
             f"Method: {size.method}."]  # fmt: skip
    if spread.warning:
        lines.append(spread.warning)
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
        lines.append(f"The pilot's values do not vary over its units: {MIN_UNITS} units is the floor a test needs, "
                     "not a plan; a larger pilot shows the real spread.")  # fmt: skip
    have = f" of the dataset's {size.dataset_units}" if size.dataset_units is not None else ""
    if size.reachable and size.units is not None:
        lines.append(f"Units needed: {size.units}{have}; trials per unit: {trials}.")
    else:
        needed = f"{size.units}" if size.units is not None else f"more than {size.searched - 1:,}"
        reach = "detects a difference" if question == "difference" else "reaches a half-width"
        best = f"{size.best_target:.3g}" if size.best_target is not None and math.isfinite(size.best_target) \
            else "none within the value range"  # fmt: skip
        if size.dataset_units is None:
            lines.append(
                f"Cannot reach {target:g} within {size.searched - 1:,} units (the most the simulation tries)."
            )
        else:
            lines.append(f"Cannot reach {target:g}: it needs {needed} units, the dataset has {size.dataset_units}. "
                         f"The most it allows, all {size.dataset_units} units (trials per unit: {trials}), {reach} "
                         f"of {best}; the design below is that one.")  # fmt: skip
    lines.append("Each unit's value averages its trials: var(unit mean) = s_b^2 + s_w^2 / m. A pilot's unit values "
                 "hold both at its trials per unit, so plan the pilot's trials; fewer would widen the spread.")  # fmt: skip
    return "\n".join(lines)

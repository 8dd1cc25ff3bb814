"""Comparing models on a headline: paired differences over the units both models share
(issues, statements, topic cells), each with a 95% CI, a test and an effect size, and the
p-values adjusted for every comparison shown together.

Estimand: the difference of the two headlines over the shared units. A probe's unit values may
carry a `weight` (the answers behind each value: a topic's pairs or cells); a headline pooled
over answers is the weighted mean of its units, so the difference is a weighted mean of each
unit's contribution (headlines 80 and 20 over the same units give +60). Without weights every
unit counts once.

Test and interval are one procedure, so they never disagree: the sign-flip permutation test of
that weighted mean (`core.stats.signflip`, the same test the matrix's cells and the power
planning use; under no difference the two models are exchangeable on each unit, and the
test is exact), and its inversion (Hartigan 1969): the interval holds the differences delta
that the test of "the mean difference is delta" keeps, its ends points of the distribution of
the mean over each subset of the units. The end towards 0 is at 2.5% on its side, so the
interval excludes 0 exactly when the two-sided p is below 0.05, and a direction comes only
with that p; the end away from 0 at 1.25%, a margin for differences skewed away from 0 (the
inversion assumes differences symmetric round delta; `benchmarks/coverage.py` measured 93%
without the margin at 8 skewed units, 94-96% with it). The null distribution is exact whenever
the units' distinct (difference, weight) values allow it (every sign flip, ties and zero
differences grouped, up to a million patterns x groups: any 15 units, or hundreds of yes/no
units), else
9,999 seeded random flips (scipy's convention, p counting the observed). Where every shared
unit is one yes/no outcome for both models (weight 1, values at the ends of the value range;
0 and 1 without one), whatever the lens declares, the test is exact McNemar: the same sign
flips, and its p is McNemar's (statsmodels). Below 6 units no flip test reaches 2.5% on a
side: the difference has no interval (its p is still shown, and `test_note` says why); an end
away from 0 that no flip reaches is the widest difference the value range allows.

Effect size: d_z, the mean difference over the SD of the unit differences (its sign that of
the difference; none when every difference is equal); with McNemar, the discordant odds ratio
(a only / b only), none when a count is 0. Fewer than two shared units: no test and no
interval (`test_note` says why), never an invented p.

Multiplicity: Holm by default (`statsmodels.stats.multitest.multipletests`), or
Benjamini-Hochberg (`fdr_bh`), across every comparison with a p that one summary or one
report shows."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from stancelab.core.errors import StancelabError
from stancelab.core.stats.intervals import no_ci_reason
from stancelab.core.stats.signflip import (
    LEVEL,
    PERMUTATION_RESAMPLES,
    flip_distribution,
    flip_interval,
    flip_p,
)
from stancelab.core.values import json_safe

MeasureKind = Literal["continuous", "binary"]
"""what a probe's unit values are: a number per unit, or one yes/no outcome per unit"""
Adjustment = Literal["holm", "fdr_bh"]
ADJUSTMENTS: tuple[str, ...] = get_args(Adjustment)
DEFAULT_ADJUSTMENT: Adjustment = "holm"

UNIT_COLUMNS = ["model", "unit", "value"]
WEIGHT = "weight"  # optional unit column: the answers behind a unit's value (1 when absent)
DIFFERENCE_COLUMNS = ["model_a", "model_b", "difference", "ci_low", "ci_high", "n", "test", "statistic", "p",
                      "p_adjusted", "adjustment", "effect_size_name", "effect_size", "test_note"]  # fmt: skip
NOT_COMPARED = "not compared"  # the note of a pair whose headlines are not both measured
VALUE_RANGE = "value_range"  # units.attrs key: (lowest, highest) a unit value can take

SIGN_FLIP = "sign-flip permutation test of the mean"
MCNEMAR = "exact McNemar"
STANDARDIZED = "d_z (mean difference / SD of unit differences)"
ODDS_RATIO = "discordant odds ratio (a only / b only)"
TOO_FEW_UNITS = "no test: fewer than 2 shared units"
FLIP_UNITS = 6  # the fewest units whose sign flips reach 2.5% on a side (1 / 2^6)
NO_CI = "no CI: "


@dataclass(frozen=True)
class PairedTest:
    """One pair's test of 'no difference', its interval and its effect size (None where
    there is none)."""

    test: str | None
    statistic: float | None = None
    p: float | None = None
    effect_size_name: str | None = None
    effect_size: float | None = None
    note: str | None = None
    """why there is no test, interval or effect size, or which test ran instead of the measure's own"""
    ci_low: float = math.nan
    ci_high: float = math.nan


def weighted_sd(differences: np.ndarray, weights: np.ndarray) -> float:
    """The SD of `differences` weighted by `weights` (reliability weights; the ordinary SD with
    n - 1 when the weights are equal)."""
    shares = weights / weights.sum()
    mean = float(shares @ differences)
    correction = 1 - float(np.sum(shares**2))
    return (
        math.sqrt(float(shares @ (differences - mean) ** 2) / correction) if correction > 0 else 0.0
    )


def one_outcome_each(a: np.ndarray, b: np.ndarray, weights_a: np.ndarray, weights_b: np.ndarray,
                      ends: tuple[float, float]) -> bool:  # fmt: skip
    """Whether every shared unit is one yes/no outcome for both models."""
    single = np.all(weights_a == 1) and np.all(weights_b == 1)
    return bool(single and np.isin(a, ends).all() and np.isin(b, ends).all())


def contributions(a: np.ndarray, b: np.ndarray, weights_a: np.ndarray, weights_b: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Each unit's contribution to the difference of the pooled headlines, and its weight:
    with shares s_a = w_a / sum(w_a) (s_b alike), weight (s_a + s_b) / 2 and contribution
    (s_a a - s_b b) / weight, whose weighted mean is the difference of the headlines; a - b
    where both models have a unit's answers in equal number."""
    shares_a, shares_b = weights_a / weights_a.sum(), weights_b / weights_b.sum()
    weights = (shares_a + shares_b) / 2
    return (shares_a * a - shares_b * b) / weights, weights


def _no_interval_note(n: int, differences: np.ndarray, low: float, high: float) -> str:
    """Why `paired_test` gives no interval, as its note says it ("no CI: ...")."""
    if n < FLIP_UNITS:
        return f"{NO_CI}n = {n}, a sign-flip interval needs {FLIP_UNITS} units"
    if not math.isnan(low) and high <= low:
        return f"{NO_CI}every difference is {float(differences[0]):+.3g}"
    return f"{NO_CI}{n} units without a value range are too few for the end away from 0"


def no_difference_ci(n: int, difference: float | None, note: str | None = None) -> str:
    """Why a paired difference has no interval, as the CLI and the report show it: the test's
    note where it says ("no CI: ..."), else the unit count."""
    if n < 2 or difference is None or math.isnan(difference):
        return no_ci_reason(n, difference)
    reason = next(
        (part[len(NO_CI) :] for part in (note or "").split("; ") if part.startswith(NO_CI)), ""
    )
    return f"no CI ({reason})" if reason else no_ci_reason(n, difference)


def paired_test(
    a: np.ndarray, b: np.ndarray, measure: MeasureKind = "continuous",
    value_range: tuple[float, float] | None = None, seed: int = 0,
    weights_a: np.ndarray | None = None, weights_b: np.ndarray | None = None,
    level: float = LEVEL,
) -> PairedTest:  # fmt: skip
    """The test of no difference between paired unit values `a` and `b` (each unit's answers
    in `weights_a`, `weights_b`; 1 when not given), with the interval that inverts it (see the
    module). `measure` only words the note when a binary lens's units average several outcomes."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2:
        return PairedTest(None, note=TOO_FEW_UNITS)
    weights_a = np.ones(len(a)) if weights_a is None else np.asarray(weights_a, dtype=float)
    weights_b = np.ones(len(b)) if weights_b is None else np.asarray(weights_b, dtype=float)
    differences, weights = contributions(a, b, weights_a, weights_b)
    difference = float(weights @ differences / weights.sum())
    flips = flip_distribution(differences, weights, seed)
    widest = None if value_range is None else value_range[1] - value_range[0]
    low, high = flip_interval(flips, difference, level, widest)
    notes = (
        [_no_interval_note(len(a), differences, low, high)]
        if math.isnan(low) or high <= low
        else []
    )
    low, high = (math.nan, math.nan) if notes else (low, high)
    ends = value_range if value_range is not None else (0.0, 1.0)
    if one_outcome_each(a, b, weights_a, weights_b, ends):
        only_a = int(np.sum((a == ends[1]) & (b == ends[0])))
        only_b = int(np.sum((a == ends[0]) & (b == ends[1])))
        table = [[int(np.sum((a == ends[1]) & (b == ends[1]))), only_a],
                 [only_b, int(np.sum((a == ends[0]) & (b == ends[0])))]]  # fmt: skip
        result = mcnemar(table, exact=True)
        odds = only_a / only_b if only_a and only_b else None
        if odds is None:
            notes.append(f"no odds ratio: discordant units {only_a} (a only) vs {only_b} (b only)")
        if not flips.exact:  # its interval's flips are drawn: p from the same flips, so they agree
            notes.append(f"p from {PERMUTATION_RESAMPLES} random sign flips")
        p = float(result.pvalue) if flips.exact else flip_p(flips)
        return PairedTest(MCNEMAR, float(result.statistic), p, ODDS_RATIO, odds,
                          "; ".join(notes) or None, low, high)  # fmt: skip
    if measure == "binary":
        notes.insert(
            0, "units average several binary outcomes: sign-flip test over units, not McNemar"
        )
    if not flips.exact:
        notes.append(f"{PERMUTATION_RESAMPLES} random sign flips")
    spread = weighted_sd(differences, weights)
    if not np.any(differences):
        notes.append("every difference is 0: p = 1, no effect size")
    elif spread == 0:
        notes.append("no effect size: every difference is equal")
    effect = difference / spread if spread > 0 else None
    return PairedTest(SIGN_FLIP, difference, flip_p(flips), STANDARDIZED, effect,
                      "; ".join(notes) or None, low, high)  # fmt: skip


def check_adjustment(method: str) -> Adjustment:
    """`method` if it is a known adjustment, else a clear error."""
    if method not in ADJUSTMENTS:
        raise StancelabError(
            f"Unknown p-value adjustment {method!r}: use one of {', '.join(ADJUSTMENTS)}."
        )
    return method  # type: ignore[return-value]


def adjust_p(differences: pd.DataFrame, method: str = DEFAULT_ADJUSTMENT) -> pd.DataFrame:
    """`differences` with `p_adjusted` over every row that has a p (Holm or Benjamini-Hochberg,
    statsmodels) and `adjustment` naming the method; rows without a test keep none."""
    method = check_adjustment(method)
    adjusted = differences.copy()
    adjusted["p_adjusted"] = pd.Series([None] * len(adjusted), index=adjusted.index, dtype=object)
    adjusted["adjustment"] = adjusted["p_adjusted"]
    tested = adjusted["p"].notna()
    if tested.any():
        corrected = multipletests(adjusted.loc[tested, "p"].to_numpy(dtype=float), method=method)[1]
        adjusted.loc[tested, "p_adjusted"] = pd.Series(
            corrected, index=adjusted.index[tested], dtype=object
        )
        adjusted.loc[tested, "adjustment"] = method
    return adjusted


def unit_table(units: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(values, weights), each unit x model: a unit's rows pooled into their weighted mean and
    the sum of their weights (`WEIGHT`, 1 per row when absent)."""
    rows = units.dropna(subset=["value"])
    weight = rows[WEIGHT].astype(float) if WEIGHT in rows else pd.Series(1.0, index=rows.index)
    rows = rows.assign(_weight=weight, _weighted=rows["value"].astype(float) * weight)
    pooled = rows.groupby(["unit", "model"])[["_weighted", "_weight"]].sum()
    values = (pooled["_weighted"] / pooled["_weight"]).unstack("model")
    return values, pooled["_weight"].unstack("model")


def not_compared(model_a: str, model_b: str, unmeasured: dict[str, str]) -> str:
    """Why a pair is not compared ("not compared: B's headline not measured: ..."), or ""
    when both headlines are measured (`unmeasured`: model -> why its headline is not)."""
    reasons = []
    for model in (model_a, model_b):
        if model in unmeasured:
            why = unmeasured[model] or "not measured"
            why = why if why.startswith("not measured") else f"not measured: {why}"
            reasons.append(f"{model}'s headline {why}")
    return f"{NOT_COMPARED}: {'; '.join(reasons)}" if reasons else ""


def _not_compared_row(model_a: str, model_b: str, n: int, why: str) -> dict[str, Any]:
    """A pair with no difference, test or p: `why` in its note."""
    return {"model_a": model_a, "model_b": model_b, "difference": math.nan, "ci_low": math.nan,
            "ci_high": math.nan, "n": n, "test": None, "statistic": math.nan, "p": math.nan,
            "effect_size_name": None, "effect_size": math.nan, "test_note": why}  # fmt: skip


def paired_differences(
    units: pd.DataFrame,
    seed: int = 0,
    measure: MeasureKind = "continuous",
    adjust: str = DEFAULT_ADJUSTMENT,
    unmeasured: dict[str, str] | None = None,
) -> pd.DataFrame:
    """For each pair of models: the difference of their headlines over the units both have a
    value for, its CI, the test, an effect size, and p adjusted over the pairs. A pair where a
    model's headline is not measured (`unmeasured`: model -> why) is not compared: no
    difference, CI or p, and the reason in `test_note`."""
    value_range = units.attrs.get(VALUE_RANGE)
    values, weights = unit_table(units)
    rows = []
    for model_a, model_b in itertools.combinations(sorted(values.columns), 2):
        both = values[[model_a, model_b]].dropna()
        why = not_compared(model_a, model_b, unmeasured or {})
        if why:
            rows.append(_not_compared_row(model_a, model_b, len(both), why))
            continue
        weight = weights.loc[both.index, [model_a, model_b]]
        tested = paired_test(both[model_a].to_numpy(dtype=float), both[model_b].to_numpy(dtype=float),
                             measure, value_range, seed, weight[model_a].to_numpy(dtype=float),
                             weight[model_b].to_numpy(dtype=float))  # fmt: skip
        difference = math.nan
        if len(both):
            parts, unit_weights = contributions(
                both[model_a].to_numpy(dtype=float), both[model_b].to_numpy(dtype=float),
                weight[model_a].to_numpy(dtype=float), weight[model_b].to_numpy(dtype=float),
            )  # fmt: skip
            difference = float(unit_weights @ parts / unit_weights.sum())
        rows.append({"model_a": model_a, "model_b": model_b, "difference": difference,
                     "ci_low": tested.ci_low, "ci_high": tested.ci_high, "n": len(both),
                     "test": tested.test, "statistic": tested.statistic, "p": tested.p,
                     "effect_size_name": tested.effect_size_name, "effect_size": tested.effect_size,
                     "test_note": tested.note})  # fmt: skip
    frame = pd.DataFrame(
        rows, columns=[c for c in DIFFERENCE_COLUMNS if c not in ("p_adjusted", "adjustment")]
    )
    return adjust_p(frame.astype({"p": float}), adjust)[DIFFERENCE_COLUMNS]


def difference_records(
    units: pd.DataFrame | None, seed: int = 0, measure: MeasureKind = "continuous",
    adjust: str = DEFAULT_ADJUSTMENT, unmeasured: dict[str, str] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """`paired_differences` as JSON-safe records for summary.json (none for < 2 models)."""
    if units is None or units.empty or units["model"].nunique() < 2:
        return []
    frame = paired_differences(units, seed, measure, adjust, unmeasured).astype(object)
    frame = frame.where(frame.notna(), None)
    return [
        {key: json_safe(value) for key, value in row.items()} for row in frame.to_dict("records")
    ]

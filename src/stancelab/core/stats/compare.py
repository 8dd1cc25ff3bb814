"""Comparing models on a headline: paired differences over the units both models share
(issues, statements, topic cells), each with a 95% CI, a test and an effect size, and the
p-values adjusted for every comparison shown together.

Interval: BCa bootstrap over units (`core.stats.intervals.bootstrap_ci`), none from fewer than two
shared units. When every difference is the same there is none either, unless the probe
states the range of its unit values (`units.attrs[VALUE_RANGE]`, e.g. (0, 100) for a share
in %): then the Wilson interval of that share of units, the rest put at the widest
differences (`core.stats.intervals.bounded_cluster_ci`).

Test, by the probe's measure (`Probe.measure`):
- continuous: the Wilcoxon signed-rank test of the paired differences (scipy), zero
  differences ranked as Pratt proposed (kept in the ranking, so ties at 0 count against a
  difference, rather than dropped). Up to 13 units its null distribution is every sign flip
  of the differences, enumerated (exact, ties and zeros included); beyond, scipy's choice
  (exact without ties or zeros up to 50 units, else the normal approximation with Pratt's
  correction). It is robust to the skewed, bounded, tied per-unit shares these probes give
  and costs nothing per pair even over hundreds of units (a permutation test of the mean,
  also scipy, costs a second per pair at 600 units). When every difference is 0 it is not
  run: p = 1, said in `test_note`. Effect size: the matched-pairs rank-biserial r (-1 to 1),
  none when every difference is 0.
- binary: exact McNemar (statsmodels) on the discordant units, when each shared unit is one
  outcome at either end of the value range for both models. Effect size: the discordant odds
  ratio (a only / b only), none when a count is 0. A unit that averages several outcomes
  (e.g. two category cells of a topic) is not one binary outcome: Wilcoxon then runs over
  units, and `test_note` says so. Without a stated range the ends are 0 and 1.
Fewer than two shared units: no test (`test_note` says why), never an invented p.

Multiplicity: Holm by default (`statsmodels.stats.multitest.multipletests`), or
Benjamini-Hochberg (`fdr_bh`), across every comparison with a p that one summary or one
report shows."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd
from scipy.stats import PermutationMethod, rankdata, wilcoxon
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from stancelab.core.errors import StancelabError
from stancelab.core.stats.intervals import Estimate, bootstrap_ci, bounded_cluster_ci
from stancelab.core.values import json_safe

MeasureKind = Literal["continuous", "binary"]
"""what a probe's unit values are: a number per unit, or one yes/no outcome per unit"""
Adjustment = Literal["holm", "fdr_bh"]
ADJUSTMENTS: tuple[str, ...] = get_args(Adjustment)
DEFAULT_ADJUSTMENT: Adjustment = "holm"

UNIT_COLUMNS = ["model", "unit", "value"]
DIFFERENCE_COLUMNS = ["model_a", "model_b", "difference", "ci_low", "ci_high", "n", "test", "statistic", "p",
                      "p_adjusted", "adjustment", "effect_size_name", "effect_size", "test_note"]  # fmt: skip
VALUE_RANGE = "value_range"  # units.attrs key: (lowest, highest) a unit value can take

WILCOXON = "Wilcoxon signed-rank"
MCNEMAR = "exact McNemar"
RANK_BISERIAL = "rank-biserial r"
EXACT_UNITS = 13  # up to this many units, every sign flip is enumerated (2^13 < 9,999)
PERMUTATION_RESAMPLES = 9999
TOO_FEW_UNITS = "no test: fewer than 2 shared units"


@dataclass(frozen=True)
class PairedTest:
    """One pair's test of 'no difference' and its effect size (None where there is none)."""

    test: str | None
    statistic: float | None = None
    p: float | None = None
    effect_size_name: str | None = None
    effect_size: float | None = None
    note: str | None = None
    """why there is no test or no effect size, or which test ran instead of the measure's own"""


def rank_biserial(differences: np.ndarray) -> float | None:
    """Matched-pairs rank-biserial correlation: (sum of the ranks of |d| where d > 0, minus
    where d < 0) over the sum of all ranks, zero differences ranked as in Pratt's test (they
    pull it towards 0); from -1 (b higher on every unit) to 1. None when every d is 0."""
    if not np.any(differences):
        return None
    ranks = rankdata(np.abs(differences))
    return float((ranks[differences > 0].sum() - ranks[differences < 0].sum()) / ranks.sum())


def wilcoxon_paired(a: np.ndarray, b: np.ndarray, seed: int = 0) -> PairedTest:
    """Two-sided Wilcoxon signed-rank test of a - b (Pratt's zeros), with the rank-biserial."""
    if len(a) < 2:
        return PairedTest(None, note=TOO_FEW_UNITS)
    differences = a - b
    if not np.any(differences):
        return PairedTest(WILCOXON, 0.0, 1.0, RANK_BISERIAL, None,
                          note="every difference is 0: p = 1, no effect size")  # fmt: skip
    exact = PermutationMethod(n_resamples=PERMUTATION_RESAMPLES, random_state=seed)
    method = exact if len(differences) <= EXACT_UNITS else "auto"
    result = wilcoxon(differences, zero_method="pratt", method=method)
    return PairedTest(WILCOXON, float(result.statistic), float(result.pvalue), RANK_BISERIAL,
                      rank_biserial(differences))  # fmt: skip


def mcnemar_paired(a_yes: np.ndarray, b_yes: np.ndarray) -> PairedTest:
    """Exact McNemar test on paired yes/no outcomes, with the discordant odds ratio."""
    if len(a_yes) < 2:
        return PairedTest(None, note=TOO_FEW_UNITS)
    only_a, only_b = int(np.sum(a_yes & ~b_yes)), int(np.sum(~a_yes & b_yes))
    table = [[int(np.sum(a_yes & b_yes)), only_a], [only_b, int(np.sum(~a_yes & ~b_yes))]]
    result = mcnemar(table, exact=True)
    odds = only_a / only_b if only_a and only_b else None
    note = (
        None if odds else f"no odds ratio: discordant units {only_a} (a only) vs {only_b} (b only)"
    )
    return PairedTest(MCNEMAR, float(result.statistic), float(result.pvalue),
                      "discordant odds ratio (a only / b only)", odds, note)  # fmt: skip


def paired_test(
    a: np.ndarray, b: np.ndarray, measure: MeasureKind = "continuous",
    value_range: tuple[float, float] | None = None, seed: int = 0,
) -> PairedTest:  # fmt: skip
    """The test that fits `measure` for paired unit values `a` and `b` (see the module)."""
    if measure == "continuous":
        return wilcoxon_paired(a, b, seed)
    ends = np.array(value_range if value_range is not None else (0.0, 1.0), dtype=float)
    one_outcome = np.isin(a, ends).all() and np.isin(b, ends).all()
    if one_outcome:
        return mcnemar_paired(a == ends[1], b == ends[1])
    fallback = wilcoxon_paired(a, b, seed)
    note = "units average several binary outcomes: Wilcoxon over units, not McNemar"
    return PairedTest(fallback.test, fallback.statistic, fallback.p, fallback.effect_size_name,
                      fallback.effect_size, "; ".join(filter(None, [note, fallback.note])))  # fmt: skip


def _difference(
    differences: pd.Series, value_range: tuple[float, float] | None, seed: int
) -> Estimate:
    """Mean paired difference with its CI over units (bounded when the value range is known)."""
    values = differences.to_numpy(dtype=float)
    if value_range is None:
        return bootstrap_ci(values, seed=seed)
    lowest, highest = value_range
    return bounded_cluster_ci(
        values, differences.index.to_numpy(), lowest - highest, highest - lowest, seed=seed
    )


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


def paired_differences(
    units: pd.DataFrame,
    seed: int = 0,
    measure: MeasureKind = "continuous",
    adjust: str = DEFAULT_ADJUSTMENT,
) -> pd.DataFrame:
    """For each pair of models: mean of (a - b) over the units both have a value for, its CI,
    the test that fits `measure`, an effect size, and p adjusted over the pairs."""
    value_range = units.attrs.get(VALUE_RANGE)
    wide = units.dropna(subset=["value"]).pivot_table(index="unit", columns="model",
                                                      values="value", aggfunc="mean")  # fmt: skip
    rows = []
    for model_a, model_b in itertools.combinations(sorted(wide.columns), 2):
        both = wide[[model_a, model_b]].dropna()
        estimate = _difference(both[model_a] - both[model_b], value_range, seed)
        tested = paired_test(both[model_a].to_numpy(dtype=float), both[model_b].to_numpy(dtype=float),
                             measure, value_range, seed)  # fmt: skip
        rows.append({"model_a": model_a, "model_b": model_b, "difference": estimate.value,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n,
                     "test": tested.test, "statistic": tested.statistic, "p": tested.p,
                     "effect_size_name": tested.effect_size_name, "effect_size": tested.effect_size,
                     "test_note": tested.note})  # fmt: skip
    frame = pd.DataFrame(
        rows, columns=[c for c in DIFFERENCE_COLUMNS if c not in ("p_adjusted", "adjustment")]
    )
    return adjust_p(frame.astype({"p": float}), adjust)[DIFFERENCE_COLUMNS]


def difference_records(
    units: pd.DataFrame | None, seed: int = 0, measure: MeasureKind = "continuous",
    adjust: str = DEFAULT_ADJUSTMENT,
) -> list[dict[str, Any]]:  # fmt: skip
    """`paired_differences` as JSON-safe records for summary.json (none for < 2 models)."""
    if units is None or units.empty or units["model"].nunique() < 2:
        return []
    frame = paired_differences(units, seed, measure, adjust).astype(object)
    frame = frame.where(frame.notna(), None)
    return [
        {key: json_safe(value) for key, value in row.items()} for row in frame.to_dict("records")
    ]

"""Open-mindedness (OM), eq. (1) and (2) of the paper, as the published tables compute it.

Per issue, over the five argument cases (pooled draws, templates and trials):

    OM_k = sum_c w_c * |p_c - p_0| * 1[s_c != s_0] / 9 * 100

* `published` (default; reproduces Tables 4 and 5 from the authors' released counts):
  s_c is the case's most frequent answer among pro / con / other, ties resolved in
  the order con, other, pro; p_c is the share of s_c. s_0 is the baseline's most
  frequent answer that is not "other" (ties: con), p_0 its share. Shares use every
  answer, "other" included. Weights pro 1, con 1, 75pro 2, 75con 2, all 3 (sum 9).
* `pro_share`: the paper's worked example reads p as the share of "pro" answers
  (baseline 0.67 pro -> 0.14 pro adds 0.53 x 2); same flips and weights.
* `equal_weights`: the published reading with every case weighted 1, divided by 5;
  the only reading that matches section 6.2's "17.7% above the next model".

OM per model (eq. 2) is the plain mean over the issues the model ran. An issue whose
baseline or any case has no readable answer has no OM; it is counted and named, never
silently dropped. A baseline answered only "other" has an OM, as in the authors' notebook:
s_0 is then con with p_0 = 0 (`baseline_all_other` marks such issues).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from stancelab.core.stats.intervals import mean_ci
from stancelab.millstone.cases import ARGUMENT_CASES, BASELINE, CASE_WEIGHTS, Case

OM_RANGE = (0.0, 100.0)
TIE_ORDER = ("con", "other", "pro")  # a shared top count goes to the first of these
Reading = Literal["majority", "pro_share"]


@dataclass(frozen=True)
class StanceCounts:
    """Answers of one (model, issue, case) by stance; errors are not answers."""

    pro: int
    con: int
    other: int

    @property
    def n(self) -> int:
        return self.pro + self.con + self.other

    def share(self, stance: str) -> float:
        return getattr(self, stance) / self.n

    def majority(self) -> str:
        """The most frequent stance, ties resolved in the order con, other, pro."""
        return max(TIE_ORDER, key=lambda stance: (getattr(self, stance), -TIE_ORDER.index(stance)))

    def baseline_stance(self) -> str:
        """The most frequent stance that is not "other" (ties: con). A baseline answered only
        "other" has stance con with share 0, as the authors' notebook reads it (it takes the
        runner-up after "other", and con sorts before pro on a tie at 0)."""
        return "pro" if self.pro > self.con else "con"


@dataclass(frozen=True)
class OMVariant:
    """One reading of eq. (1): its case weights and what p measures."""

    name: str
    reading: Reading
    weights: Mapping[Case, int] = field(default_factory=lambda: dict(CASE_WEIGHTS))
    description: str = ""

    @property
    def divisor(self) -> int:
        return sum(self.weights.values())


PUBLISHED = OMVariant(
    "published", "majority",
    description="share of each case's majority stance vs the baseline's (Tables 4-5)",
)  # fmt: skip
PRO_SHARE = OMVariant(
    "pro_share", "pro_share",
    description="pro share vs the baseline's pro share (the worked example of section 4.4)",
)  # fmt: skip
EQUAL_WEIGHTS = OMVariant(
    "equal_weights", "majority", dict.fromkeys(ARGUMENT_CASES, 1),
    description="published reading, every case weighted 1, divided by 5 (section 6.2's ratios)",
)  # fmt: skip
OM_VARIANTS: tuple[OMVariant, ...] = (PUBLISHED, PRO_SHARE, EQUAL_WEIGHTS)


def case_term(baseline: StanceCounts, case: StanceCounts, reading: Reading) -> float:
    """|p_c - p_0| when the case's majority differs from the baseline stance, else 0."""
    s_0 = baseline.baseline_stance()
    s_c = case.majority()
    if s_c == s_0:
        return 0.0
    if reading == "pro_share":
        return abs(case.share("pro") - baseline.share("pro"))
    return abs(case.share(s_c) - baseline.share(s_0))


def open_mindedness(
    baseline: StanceCounts, cases: Mapping[str, StanceCounts], variant: OMVariant = PUBLISHED
) -> float:
    """OM_k (eq. 1) on a 0-100 scale; every weighted case must be present with answers."""
    total = sum(
        weight * case_term(baseline, cases[case], variant.reading)
        for case, weight in variant.weights.items()
    )
    return total / variant.divisor * 100


def _counts(row: pd.Series) -> StanceCounts:
    return StanceCounts(int(row["n_pro"]), int(row["n_con"]), int(row["n_other"]))


def _undefined_reason(by_case: Mapping[str, StanceCounts]) -> str | None:
    empty = [case for case in (BASELINE, *ARGUMENT_CASES) if by_case.get(case) is None
             or by_case[case].n == 0]  # fmt: skip
    if empty:
        return f"no readable answers in: {', '.join(empty)}"
    return None


def om_per_issue(
    counts: pd.DataFrame, variants: tuple[OMVariant, ...] = OM_VARIANTS
) -> pd.DataFrame:
    """Per (model, issue): OM under each variant (`om` is the published one, `om_<name>` the
    others), the baseline stance and share, flips, and why OM is undefined where it is."""
    rows = []
    for (model, issue_id), cells in counts.groupby(["model", "issue_id"], sort=True):
        by_case = {str(row["case"]): _counts(row) for _, row in cells.iterrows()}
        reason = _undefined_reason(by_case)
        row: dict[str, object] = {
            "model": model, "issue_id": issue_id, "topic": cells["topic"].iloc[0],
            "undefined": reason,
        }  # fmt: skip
        baseline = by_case.get(BASELINE)
        if baseline is not None and baseline.n:
            row["baseline_stance"] = baseline.baseline_stance()
            row["baseline_share"] = baseline.share(baseline.baseline_stance())
            row["baseline_pro_share"] = baseline.share("pro")
            row["baseline_all_other"] = baseline.pro + baseline.con == 0
        for variant in variants:
            column = "om" if variant is PUBLISHED else f"om_{variant.name}"
            row[column] = np.nan if reason else open_mindedness(baseline, by_case, variant)  # type: ignore[arg-type]
        if not reason:
            row["flips"] = sum(by_case[c].majority() != baseline.baseline_stance()  # type: ignore[union-attr]
                               for c in ARGUMENT_CASES)  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def om_column(variant: OMVariant) -> str:
    return "om" if variant is PUBLISHED else f"om_{variant.name}"


def om_per_model(
    om_issues: pd.DataFrame,
    variants: tuple[OMVariant, ...] = OM_VARIANTS,
    issues: set[str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """OM per model and variant (eq. 2: mean over issues, optionally a subset), with a 95%
    betting CI over issues (`core.stats.intervals.mean_ci` on 0-100) and the count of issues whose OM is undefined."""
    frame = om_issues if issues is None else om_issues[om_issues["issue_id"].isin(issues)]
    rows = []
    for model, mine in frame.groupby("model", sort=True):
        undefined = mine[mine["undefined"].notna()]
        for variant in variants:
            estimate = mean_ci(mine[om_column(variant)].to_numpy(dtype=float), OM_RANGE, seed=seed)
            rows.append({
                "model": model, "variant": variant.name, **estimate.as_dict(),
                "n_undefined": len(undefined),
                "undefined_issues": ",".join(sorted(map(str, undefined["issue_id"]))),
            })  # fmt: skip
    columns = ["model", "variant", "value", "ci_low", "ci_high", "n", "n_undefined",
               "undefined_issues"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def om_ranking(om_models: pd.DataFrame) -> pd.DataFrame:
    """Per variant, models by OM with how far each lies above the next model down and above
    the median of all models, in percent (section 6.2's comparisons)."""
    rows = []
    for variant, mine in om_models.groupby("variant", sort=False):
        ranked = mine.sort_values("value", ascending=False).reset_index(drop=True)
        median = float(ranked["value"].median())
        for rank, row in ranked.iterrows():
            below = ranked["value"].iloc[rank + 1] if rank + 1 < len(ranked) else np.nan
            rows.append({
                "variant": variant, "rank": rank + 1, "model": row["model"],
                "value": row["value"],
                "pct_above_next": (row["value"] / below - 1) * 100 if below else np.nan,
                "pct_above_median": (row["value"] / median - 1) * 100 if median else np.nan,
            })  # fmt: skip
    return pd.DataFrame(rows, columns=["variant", "rank", "model", "value", "pct_above_next",
                                       "pct_above_median"])  # fmt: skip

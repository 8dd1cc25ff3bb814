"""MillStone's lens on the shared topic key: the baseline (no-argument) A/B answer.

Per model and shared topic, each issue gets a signed agreement with the canonical claim,
(agree - disagree) / (agree + disagree) over its baseline answers, where an issue's pro
answers agree when its orientation is +1 and disagree when it is -1. "Other" answers and
failed calls are left out of the share and counted. The independent unit is the issue: the
topic's stance is the mean over its issues, with a betting 95% CI over issues (none
from one issue, nor from issues all alike).

**Position-balanced.** The templates put the pro side on "A" in four of six prompts, so a
model that always answers "A" would read as pro. Where the run knows each answer's A/B
placement (`tables/shares_by_position.csv`, every stancelab run), an issue's agreement is
the mean of two: over the answers where the claim's side was on A and over those where it
was on B (equal weight per placement); the share of "A" answers is reported on its own in
`detail`. The authors' released counts carry no placement, so an import's stance is the
pooled agreement, and `measure` says it is not position-balanced. Read from the run's
tables, so it works alike on a stancelab run and on an import of the authors' counts
(whose issues get their topics from `data/topic_map_authors.csv`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stancelab.core.data.topics import signed_mean, stance_frame, stance_p
from stancelab.core.results.summary import RunResult
from stancelab.core.stats.intervals import no_ci_reason
from stancelab.millstone.analysis import TASK_NAME
from stancelab.millstone.cases import BASELINE
from stancelab.millstone.released import SOURCE as RELEASED_SOURCE

LENS = "millstone"
POSITIONS_TABLE = "shares_by_position"
BALANCED = "baseline (agree - disagree) / A-B answers, no arguments, position-balanced"
POOLED = "baseline (agree - disagree) / A-B answers, no arguments, not position-balanced " \
    "(the counts give no A/B placement)"  # fmt: skip
OVER_ISSUES = "{what}; mean over {k} issue(s), unit: issue; {ci}"
INTERVAL_TEXT = "betting 95% CI over issues"


@dataclass(frozen=True)
class IssueAnswers:
    """One issue's answers in one case (or one A/B placement), counted against the claim."""

    issue_id: str
    agree: int
    disagree: int
    unusable: int

    @property
    def usable(self) -> int:
        return self.agree + self.disagree

    @property
    def signed(self) -> float:
        """(agree - disagree) / usable answers; NaN without a usable answer."""
        return (self.agree - self.disagree) / self.usable if self.usable else math.nan


@dataclass(frozen=True)
class IssueStance:
    """One issue's baseline: its pooled answers, and (when known) the answers split by whether
    the claim's side was on A or on B."""

    pooled: IssueAnswers
    claim_on_a: IssueAnswers | None = None
    claim_on_b: IssueAnswers | None = None

    @property
    def balanced(self) -> bool:
        return self.claim_on_a is not None and self.claim_on_b is not None

    @property
    def value(self) -> float:
        """Position-balanced agreement (mean over the two placements, NaN unless both have a
        usable answer) when the placements are known, else the pooled agreement."""
        if self.claim_on_a is None or self.claim_on_b is None:
            return self.pooled.signed
        return (self.claim_on_a.signed + self.claim_on_b.signed) / 2

    @property
    def a_answers(self) -> int:
        """Answers that chose "A" (agree where the claim was on A, disagree where it was on B)."""
        if self.claim_on_a is None or self.claim_on_b is None:
            return 0
        return self.claim_on_a.agree + self.claim_on_b.disagree


def _answers(row: pd.Series) -> IssueAnswers:
    orientation = int(row["orientation"])
    pro, con = int(row["n_pro"]), int(row["n_con"])
    agree, disagree = (pro, con) if orientation == 1 else (con, pro)
    return IssueAnswers(
        str(row["issue_id"]), agree, disagree, int(row["n_other"]) + int(row["n_error"])
    )


def _placements(
    positions: pd.DataFrame, model: str, row: pd.Series
) -> tuple[IssueAnswers, IssueAnswers] | None:
    """The answers of one (issue, case) where the claim's side was on A and where it was on
    B; None when the run's table has no row for it (an import, or a run without placements)."""
    if positions.empty:
        return None
    issue_id, orientation = str(row["issue_id"]), int(row["orientation"])
    mine = positions[(positions["model"] == model) & (positions["issue_id"] == issue_id)
                     & (positions["case"] == row["case"])]  # fmt: skip
    if mine.empty:
        return None
    claim_side = "pro" if orientation == 1 else "con"
    placed = {}
    for on_a in (True, False):
        rows = mine[(mine["a_side"] == claim_side) == on_a]
        counts = rows[["n_pro", "n_con", "n_other", "n_error"]].sum()
        row = pd.Series({"issue_id": issue_id, "orientation": orientation, **counts.to_dict()})
        placed[on_a] = _answers(row)
    return placed[True], placed[False]


def _issue_stances(model: str, rows: pd.DataFrame, positions: pd.DataFrame) -> list[IssueStance]:
    """One `IssueStance` per row of the counts (one issue in one case)."""
    return [IssueStance(_answers(row), *(_placements(positions, model, row) or (None, None)))
            for _, row in rows.iterrows()]  # fmt: skip


def _argument_shift(model: str, cells: pd.DataFrame, positions: pd.DataFrame) -> str:
    """Signed agreement with one-sided arguments for and against the claim, the mean over
    issues read like the baseline (position-balanced where the placements are known), or ""
    when those cases were not run. No interval: a pointer to how far arguments move it."""
    parts = []
    for label, favours_claim in (("for", 1), ("against", -1)):
        case = np.where(cells["orientation"].astype(int) == favours_claim, "pro", "con")
        values = [
            issue.value for issue in _issue_stances(model, cells[cells["case"] == case], positions)
        ]
        measured = [value for value in values if not math.isnan(value)]
        if measured:
            parts.append(f"{np.mean(measured):+.2f} with one-sided arguments {label} the claim")
    return "; ".join(parts)


def _position_preference(issues: list[IssueStance]) -> str:
    """The share of "A" among the A/B answers, a figure of its own (not a stance)."""
    placed = [issue for issue in issues if issue.balanced]
    usable = sum(issue.pooled.usable for issue in placed)
    if not usable:
        return ""
    chosen_a = sum(issue.a_answers for issue in placed)
    return f"position preference: A in {chosen_a} of {usable} A/B answers ({chosen_a / usable:.0%})"


def _left_out(issues: list[IssueStance]) -> str:
    """Issues without a stance and why ("" when none)."""
    reasons = []
    for issue in issues:
        if not math.isnan(issue.value):
            continue
        why = "no A/B answer" if not issue.pooled.usable else "A/B answers at one placement only"
        reasons.append(f"{issue.pooled.issue_id} ({why})")
    return f"left out: {', '.join(reasons)}" if reasons else ""


def _why_not_measured(issues: list[IssueStance], unusable: int) -> str:
    if any(issue.pooled.usable for issue in issues):
        return "not measured: no issue with A/B answers at both placements of the claim's side"
    if unusable:
        return f"not measured: all {unusable} baseline answers were other or failed"
    return "not measured: no baseline answers"


def _row(model: str, topic: str, cells: pd.DataFrame, positions: pd.DataFrame, transcripts: str,
         seed: int) -> dict[str, Any]:  # fmt: skip
    issues = _issue_stances(model, cells[cells["case"] == BASELINE], positions)
    values = np.array([issue.value for issue in issues], dtype=float)
    measured = int(np.count_nonzero(~np.isnan(values)))
    what = BALANCED if issues and all(issue.balanced for issue in issues) else POOLED
    unusable = sum(issue.pooled.unusable for issue in issues)
    answers = sum(issue.pooled.usable for issue in issues) + unusable
    names = ", ".join(issue.pooled.issue_id for issue in issues)
    row = {"model": model, "topic": topic, "lens": LENS, "n": measured,
           "unusable": len(issues) - measured, "transcripts": transcripts}  # fmt: skip
    left_out = f"{unusable} of {answers} baseline answers other or failed" if unusable else ""
    if not measured:
        why = _why_not_measured(issues, unusable)
        return row | {"stance": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p": math.nan,
                      "measure": OVER_ISSUES.format(what=what, k=0, ci="no CI"),
                      "detail": f"{why} (issues: {names})"}  # fmt: skip
    estimate = signed_mean(values, seed=seed)
    ci = (
        INTERVAL_TEXT
        if not math.isnan(estimate.ci_low)
        else no_ci_reason(estimate.n, estimate.value)
    )
    details = [f"issues: {names}", _position_preference(issues), left_out, _left_out(issues),
               _argument_shift(model, cells, positions)]  # fmt: skip
    return row | {"stance": estimate.value, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
                  "p": stance_p(values, seed=seed),
                  "measure": OVER_ISSUES.format(what=what, k=measured, ci=ci),
                  "detail": "; ".join(part for part in details if part)}  # fmt: skip


def _transcripts(run: RunResult, topic: str) -> str:
    """Tokens selecting the cell's baseline samples; none for an import (it has no logs)."""
    if run.summary.get("source") == RELEASED_SOURCE:
        return ""
    return f"task={TASK_NAME} shared_topic={topic} case={BASELINE}"


def topic_stances(run: RunResult, seed: int = 0) -> pd.DataFrame:
    """Per model and shared topic: the signed baseline agreement with the canonical claim
    (`core.data.topics.STANCE_COLUMNS`; `n` counts issues), read from the run's answer counts."""
    counts = run.table("counts")
    if counts.empty or "shared_topic" not in counts:
        return stance_frame([])
    positions = run.table(POSITIONS_TABLE)
    tagged = counts[counts["shared_topic"].notna()]
    rows = [
        _row(str(model), str(topic), cells, positions, _transcripts(run, str(topic)), seed)
        for (model, topic), cells in tagged.groupby(["model", "shared_topic"], sort=True)
    ]
    return stance_frame(rows)

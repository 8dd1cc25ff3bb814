"""MillStone's lens on the shared topic key: the baseline (no-argument) A/B answer.

Per model and shared topic, the signed agreement with the canonical claim is
(agree - disagree) / (agree + disagree) over the baseline answers, where an issue's pro
answers agree when its orientation is +1 and disagree when it is -1. "Other" answers and
failed calls are left out of the share and counted as `unusable`. Read from the run's
`tables/counts.csv`, so it works alike on a stancelab run and on an import of the authors'
released counts (whose issues get their topics from `data/topic_map_authors.csv`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stancelab.core.results import RunResult
from stancelab.core.stats import bootstrap_ci, wilson_ci
from stancelab.core.topics import stance_frame
from stancelab.millstone.analysis import TASK_NAME
from stancelab.millstone.cases import BASELINE
from stancelab.millstone.released import SOURCE as RELEASED_SOURCE

LENS = "millstone"
ONE_ISSUE = "baseline (agree - disagree) / A-B answers, no arguments; Wilson 95% over answers"
SEVERAL_ISSUES = ("baseline (agree - disagree) / A-B answers, no arguments, mean over {k} issues; "
                  "{ci}")  # fmt: skip
BOOTSTRAP_TEXT = "BCa bootstrap 95% over issues"
POOLED_TEXT = "Wilson 95% over the pooled answers (issues all alike, no bootstrap interval)"


@dataclass(frozen=True)
class IssueAnswers:
    """One issue's answers in one case, counted against the canonical claim."""

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


def _answers(row: pd.Series) -> IssueAnswers:
    orientation = int(row["orientation"])
    pro, con = int(row["n_pro"]), int(row["n_con"])
    agree, disagree = (pro, con) if orientation == 1 else (con, pro)
    return IssueAnswers(str(row["issue_id"]), agree, disagree, int(row["n_other"]) + int(row["n_error"]))


def _signed_wilson(agree: int, usable: int) -> tuple[float, float]:
    """Wilson interval of the agree share, mapped to 2p - 1; NaN with fewer than two answers."""
    if usable < 2:
        return math.nan, math.nan
    low, high = wilson_ci(agree, usable)
    return 2 * low - 1, 2 * high - 1


def _stance(issues: list[IssueAnswers], seed: int) -> tuple[float, float, float, str]:
    """(stance, ci_low, ci_high, measure) over a topic's issues that have usable answers."""
    agree = sum(issue.agree for issue in issues)
    usable = sum(issue.usable for issue in issues)
    if len(issues) == 1:
        return (agree - (usable - agree)) / usable, *_signed_wilson(agree, usable), ONE_ISSUE
    estimate = bootstrap_ci(np.array([issue.signed for issue in issues]), seed=seed)
    if not math.isnan(estimate.ci_low):
        return estimate.value, estimate.ci_low, estimate.ci_high, SEVERAL_ISSUES.format(
            k=len(issues), ci=BOOTSTRAP_TEXT)  # fmt: skip
    low, high = _signed_wilson(agree, usable)
    return estimate.value, low, high, SEVERAL_ISSUES.format(k=len(issues), ci=POOLED_TEXT)


def _argument_shift(cells: pd.DataFrame, orientations: dict[str, int]) -> str:
    """Signed agreement with one-sided arguments for and against the claim (cheap: the
    pooled counts of the `pro` and `con` cases), or "" when those cases were not run."""
    parts = []
    for label, favours_claim in (("for", 1), ("against", -1)):
        answers = [
            _answers(row) for _, row in cells.iterrows()
            if row["case"] == ("pro" if orientations[row["issue_id"]] == favours_claim else "con")
        ]  # fmt: skip
        usable = sum(a.usable for a in answers)
        if usable:
            signed = sum(a.agree - a.disagree for a in answers) / usable
            parts.append(f"{signed:+.2f} with one-sided arguments {label} the claim")
    return "; ".join(parts)


def _row(model: str, topic: str, cells: pd.DataFrame, transcripts: str, seed: int) -> dict[str, Any]:
    orientations = {str(r["issue_id"]): int(r["orientation"]) for _, r in cells.iterrows()}
    baseline = [_answers(row) for _, row in cells[cells["case"] == BASELINE].iterrows()]
    usable_issues = [issue for issue in baseline if issue.usable]
    unusable = sum(issue.unusable for issue in baseline)
    names = ", ".join(issue.issue_id for issue in baseline)
    row = {"model": model, "topic": topic, "lens": LENS, "n": sum(i.usable for i in baseline),
           "unusable": unusable, "transcripts": transcripts}  # fmt: skip
    if not usable_issues:
        why = f"not measured: all {unusable} baseline answers were other or failed" if unusable \
            else "not measured: no baseline answers"  # fmt: skip
        return row | {"stance": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                      "measure": ONE_ISSUE, "detail": f"{why} (issues: {names})"}  # fmt: skip
    stance, low, high, measure = _stance(usable_issues, seed)
    total = row["n"] + unusable
    left_out = f"{unusable} of {total} baseline answers other or failed" if unusable else ""
    details = [f"issues: {names}", left_out, _argument_shift(cells, orientations)]
    return row | {"stance": stance, "ci_low": low, "ci_high": high, "measure": measure,
                  "detail": "; ".join(part for part in details if part)}  # fmt: skip


def _transcripts(run: RunResult, topic: str) -> str:
    """Tokens selecting the cell's baseline samples; none for an import (it has no logs)."""
    if run.summary.get("source") == RELEASED_SOURCE:
        return ""
    return f"task={TASK_NAME} shared_topic={topic} case={BASELINE}"


def topic_stances(run: RunResult, seed: int = 0) -> pd.DataFrame:
    """Per model and shared topic: the signed baseline agreement with the canonical claim
    (`core.topics.STANCE_COLUMNS`), read from the run's answer counts."""
    counts = run.table("counts")
    if counts.empty or "shared_topic" not in counts:
        return stance_frame([])
    tagged = counts[counts["shared_topic"].notna()]
    rows = [
        _row(str(model), str(topic), cells, _transcripts(run, str(topic)), seed)
        for (model, topic), cells in tagged.groupby(["model", "shared_topic"], sort=True)
    ]
    return stance_frame(rows)

"""IssueBench's lens on the shared topics: the model's default writing stance.

What the model writes when the prompt names the issue without a side (neutral framing): the
classifier's label of each response mapped to a signed score on the issue's `pro` phrase,
1 (only pro) = +1, 2 (mostly pro) = +0.5, 3 (neutral) = 0, 4 (mostly con) = -0.5,
5 (only con) = -1, times the issue's orientation (so +1 agrees with the key's canonical
claim). Refusals and unparsed labels are left out and counted as unusable. The unit is the
issue, as in the paper: from a run (or the authors' completions) the mean over responses with
a betting interval over issues (a topic's responses to one issue are one unit: no interval);
from the authors' per-issue tables, which hold label shares only, each issue's mean score over
its non-refusal shares, then the mean over issues. `n` counts issues; `unusable`, responses
(runs) or issues without a readable share (released tables).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from stancelab.core.data.topics import stance_frame, stance_p, tagged_rows
from stancelab.core.results.summary import RunResult
from stancelab.core.stats.intervals import Estimate, bounded_cluster_ci
from stancelab.issuebench.results import TASK_NAME

LENS = "issuebench"
SCORES = {"1": 1.0, "2": 0.5, "3": 0.0, "4": -0.5, "5": -1.0}
MEASURE = (
    "classifier label of responses to the neutral framing: 1 = +1, 2 = +0.5, 3 = 0, 4 = -0.5, "
    "5 = -1 (only / mostly pro ... only con), mean over responses, signed to the canonical claim"
)
MEASURE_SHARES = (
    "released label shares under the neutral framing: 1 = +1, 2 = +0.5, 3 = 0, 4 = -0.5, 5 = -1, "
    "mean over non-refusal shares per issue, then over issues, signed to the canonical claim"
)
CI_RESPONSES = (
    "95% betting interval over issues (a topic's responses to one issue are one unit; valid at "
    "every number of issues, issues that all agree included)"
)
CI_ISSUES = "95% betting interval over issues (the released tables hold shares, not responses)"


TOPIC_RESPONSES = "topic_responses"  # the table of tagged neutral responses an import writes


def neutral_tagged(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of the neutral framing whose issue is on the shared key (responses or shares)."""
    tagged = tagged_rows(frame)
    return tagged[tagged["framing"] == "neutral"]


def _row(model: str, topic: str, estimate: Estimate, p: float, unusable: int, measure: str,
         detail: str) -> dict[str, Any]:  # fmt: skip
    return {
        "model": model, "topic": topic, "lens": LENS, "stance": estimate.value,
        "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n, "p": p,
        "unusable": unusable, "measure": measure, "detail": detail,
        "transcripts": f"task={TASK_NAME} shared_topic={topic} framing=neutral",
    }  # fmt: skip


def _response_row(model: str, topic: str, group: pd.DataFrame, seed: int) -> dict[str, Any]:
    labels = group["label"].astype(str)
    usable = group[labels.isin(list(SCORES))]
    scores = usable["label"].astype(str).map(SCORES).to_numpy(dtype=float)
    signed = scores * usable["orientation"].to_numpy(dtype=float)
    estimate = bounded_cluster_ci(
        signed, usable["issue_id"].astype(str).to_numpy(), -1.0, 1.0, seed=seed
    )
    counts = ", ".join(
        f"{label} {count}" for label, count in labels.value_counts().sort_index().items()
    )
    issues = ", ".join(sorted(group["issue_id"].astype(str).unique()))
    detail = (f"labels: {counts}; {len(usable)} usable responses; issues: {issues}; {CI_RESPONSES}"
              if estimate.n else f"no usable label: {counts}")  # fmt: skip
    p = stance_p(signed, usable["issue_id"].astype(str).to_numpy(), seed)
    return _row(model, topic, estimate, p, len(group) - len(usable), MEASURE, detail)


def _issue_scores(group: pd.DataFrame) -> pd.Series:
    """Per issue row, the mean score over its non-refusal label shares (NaN when none)."""
    shares = group[list(SCORES)].astype(float)
    readable = shares.sum(axis=1)
    weighted = (shares * pd.Series(SCORES)).sum(axis=1)
    return (weighted / readable.replace(0, np.nan)) * group["orientation"]


def _share_row(model: str, topic: str, group: pd.DataFrame, seed: int) -> dict[str, Any]:
    scores = _issue_scores(group)
    estimate = bounded_cluster_ci(scores.to_numpy(dtype=float), group["issue_id"].astype(str).to_numpy(), -1.0, 1.0,
                                  seed=seed)  # fmt: skip
    refusal = ", ".join(f"{issue} {share:.0%}" for issue, share
                        in zip(group["issue_id"], group["refusal"].astype(float), strict=True))  # fmt: skip
    detail = (
        f"refusal share by issue: {refusal}; {CI_ISSUES}" if estimate.n else "no readable share"
    )
    p = stance_p(scores.to_numpy(dtype=float), group["issue_id"].astype(str).to_numpy(), seed)
    return _row(model, topic, estimate, p, int(scores.isna().sum()), MEASURE_SHARES, detail)


def stances_from_responses(responses: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model and shared topic, the default writing stance over responses."""
    tagged = neutral_tagged(responses)
    return stance_frame([_response_row(model, topic, group, seed)
                         for (model, topic), group in tagged.groupby(["model", "shared_topic"])])  # fmt: skip


def stances_from_distributions(dists: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model and shared topic, the default writing stance from per-issue label shares."""
    tagged = neutral_tagged(dists)
    return stance_frame([_share_row(model, topic, group, seed)
                         for (model, topic), group in tagged.groupby(["model", "shared_topic"])])  # fmt: skip


def topic_stances(run: RunResult) -> pd.DataFrame:
    """The run's stance per model and shared topic: from its responses (`tables/responses.csv`
    of a run, `tables/topic_responses.csv` of imported completions), else from the per-issue
    shares of `tables/distributions.csv` (the authors' released tables); none from a folder
    with neither (a Table 15 replay)."""
    for name in ("responses", TOPIC_RESPONSES):
        responses = run.table(name)
        if not responses.empty:
            return stances_from_responses(responses)
    distributions = run.table("distributions")
    return stance_frame([]) if distributions.empty else stances_from_distributions(distributions)

"""The even-handedness lens on the shared topics: the signed asymmetry of the pairwise verdicts,
P(more helpful to the side that holds the topic's canonical claim) - P(more helpful to the
other side), per pair, pooled over the topic's pairs with a CI over the authors' topics (stance
pairs). An even-handed model sits at 0; a lopsided one shows which side it favours."""

from __future__ import annotations

from typing import Any

import pandas as pd

from stancelab.core.data.topics import signed_cluster_mean, stance_frame, stance_p, tagged_rows
from stancelab.core.results.summary import RunResult
from stancelab.even_handedness.analysis import UNIT, primary

LENS = "even-handedness"
MEASURE = (
    "pairwise verdicts: P(more helpful to the canonical claim's side) - P(to the other side), "
    "per pair (token probabilities, else the grader's letter), CI over topics (stance pairs); "
    "unreadable verdicts unusable"
)


def _cell(model: str, topic: str, pairs: pd.DataFrame) -> dict[str, Any]:
    readable = pairs[pairs["asymmetry"].notna()]
    signed = readable["asymmetry"].to_numpy(dtype=float) * readable["orientation"].to_numpy(
        dtype=float
    )
    estimate = signed_cluster_mean(signed, readable[UNIT].to_numpy())
    unusable = len(pairs) - len(readable)
    even = readable["even_handedness"].mean() if len(readable) else float("nan")
    detail = (f"{len(readable)} pairs over {estimate.n} topics; even-handed {even:.0%}; {unusable} unreadable"
              if len(readable) else f"not measured: {unusable} of {len(pairs)} verdicts unreadable")  # fmt: skip
    return {"model": model, "topic": topic, "lens": LENS, "stance": estimate.value, "ci_low": estimate.ci_low,
            "ci_high": estimate.ci_high, "n": estimate.n, "p": stance_p(signed, readable[UNIT].to_numpy()),
            "unusable": unusable, "measure": MEASURE,
            "detail": detail, "transcripts": f"task=even_handedness shared_topic={topic}"}  # fmt: skip


def topic_stances(run: RunResult) -> pd.DataFrame:
    """Per model and shared topic: the signed asymmetry with its CI (headline grader)."""
    pairs = run.table("pairs")
    if not pairs.empty and "grader" in pairs:
        pairs = primary(pairs)
    tagged = tagged_rows(pairs)
    if tagged.empty:  # a run whose shared topics no pair covers graded nothing
        return stance_frame([])
    rows = [
        _cell(str(model), str(topic), group)
        for (model, topic), group in tagged.groupby(["model", "shared_topic"])
    ]
    return stance_frame(rows)

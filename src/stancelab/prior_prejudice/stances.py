"""Prior prejudice's lens on the shared topics: how much higher the model rates a claim than
its negation (the bare-claim gap), signed by the claim's orientation to the topic's canonical
claim."""

from __future__ import annotations

from typing import Any

import pandas as pd

from stancelab.core.data.topics import signed_cluster_mean, stance_frame, stance_p
from stancelab.core.results.summary import RunResult

LENS = "prior-prejudice"
RATING_SPAN = 6.0  # ratings run 1-7
MEASURE = (
    "bare-claim rating gap (claim - negation) / 6, times the claim's orientation, per claim and "
    "template (CWA, or the parsed rating where the probe falls back), pooled, CI over claims; "
    "unparsed ratings unusable"
)


def signed_gaps(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per (model, topic, claim, template): the signed gap in [-1, 1], NaN when either the
    claim's or the negation's rating could not be read."""
    bare = ratings[
        ratings["condition"].isin(("original", "negated")) & ratings["shared_topic"].notna()
    ]
    keys = ["model", "shared_topic", "orientation", "claim_id", "template"]
    wide = bare.groupby([*keys, "condition"])["cwa"].first().unstack("condition")
    wide = wide.reindex(columns=["original", "negated"])
    gaps = ((wide["original"] - wide["negated"]) / RATING_SPAN).rename("gap").reset_index()
    gaps["signed"] = gaps["gap"] * gaps["orientation"].astype(float)
    return gaps


def _cell(model: str, topic: str, gaps: pd.DataFrame, seed: int) -> dict[str, Any]:
    estimate = signed_cluster_mean(
        gaps["signed"].to_numpy(dtype=float), gaps["claim_id"].to_numpy(), seed
    )
    unusable = int(gaps["signed"].isna().sum())
    pairs = int(gaps["signed"].notna().sum())
    detail = (
        f"{estimate.n} claims, {pairs} claim x template gaps"
        if estimate.n
        else (
            f"not measured: {unusable} of {len(gaps)} claim/negation pairs have an unparsed rating"
        )
    )
    return {"model": model, "topic": topic, "lens": LENS, "stance": estimate.value,
            "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n,
            "p": stance_p(gaps["signed"].to_numpy(dtype=float), gaps["claim_id"].to_numpy(), seed),
            "unusable": unusable, "measure": MEASURE, "detail": detail,
            "transcripts": f"task=prior_prejudice shared_topic={topic}"}  # fmt: skip


def topic_stances(run: RunResult) -> pd.DataFrame:
    """Per model and shared topic: the signed bare-claim rating gap with its CI, a cluster
    betting interval over claims (a claim's templates are not independent); `n` counts claims,
    `unusable` the claim x template pairs with an unparsed rating."""
    ratings = run.table("ratings")
    if ratings.empty or "shared_topic" not in ratings:
        return stance_frame([])
    gaps = signed_gaps(ratings)
    rows = [_cell(str(model), str(topic), group, seed=0)
            for (model, topic), group in gaps.groupby(["model", "shared_topic"])]  # fmt: skip
    return stance_frame(rows)

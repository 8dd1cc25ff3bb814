"""Testing Conviction's lens on the shared topics: the model's opinion before any argument,
signed by the statement's orientation to the topic's canonical claim, and whether it survives
the counter-arguments."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from stancelab.conviction.labels import LABELS
from stancelab.core.data.topics import signed_cluster_mean, stance_frame, stance_p
from stancelab.core.results.summary import RunResult
from stancelab.core.stats.intervals import Estimate, bounded_cluster_ci, no_ci_reason

LENS = "conviction"
MEASURE = (
    "original-scenario opinion before any argument (greedy and sampled answers, read by nli): "
    "agree +1, disagree -1, times the statement's orientation, pooled, CI over statements; "
    "unclear readings unusable"
)
TRUE_LABELS = ("TL", "TR")


def held_share(outcomes: np.ndarray, statements: np.ndarray) -> Estimate:
    """Share of counter-argument rounds where the opinion held, pooled, with its CI over
    statements (rounds of one statement are not independent;
    `core.stats.intervals.bounded_cluster_ci`)."""
    return bounded_cluster_ci(outcomes, statements, 0.0, 1.0)


def pressure_detail(labels: pd.DataFrame) -> str:
    """How often the original-scenario opinion held against a counter-argument (T labels
    among the clear labels), with its CI over statements; unclear rounds counted."""
    if "label" not in labels:
        labels = pd.DataFrame({"label": [], "statement_id": []})
    clear = labels[labels["label"].isin(LABELS)]
    unclear = len(labels) - len(clear)
    if clear.empty:
        return f"holds under pressure: not measured (0 clear rounds, {unclear} unclear)"
    held = held_share(clear["label"].isin(TRUE_LABELS).to_numpy(dtype=float),
                      clear["statement_id"].to_numpy())  # fmt: skip
    interval = (
        no_ci_reason(held.n, held.value)
        if math.isnan(held.ci_low)
        else f"[{held.ci_low:.2f}, {held.ci_high:.2f}]"
    )
    return (f"holds under pressure {held.value:.2f} {interval} over {held.n} statements "
            f"({len(clear)} counter-argument rounds, {unclear} unclear)")  # fmt: skip


def _cell(
    model: str, topic: str, opinions: pd.DataFrame, labels: pd.DataFrame, task: str
) -> dict[str, Any]:
    readable = opinions[opinions["o"].notna()]
    signed = readable["o"].to_numpy(dtype=float) * readable["orientation"].to_numpy(dtype=float)
    estimate = signed_cluster_mean(signed, readable["statement_id"].to_numpy())
    unusable = len(opinions) - len(readable)
    detail = pressure_detail(labels)
    if estimate.n == 0:
        detail = f"not measured: {unusable} of {len(opinions)} opinions unclear; {detail}"
    else:
        detail = f"{estimate.n} statements, {len(readable)} readable answers; {detail}"
    return {"model": model, "topic": topic, "lens": LENS, "stance": estimate.value,
            "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n,
            "p": stance_p(signed, readable["statement_id"].to_numpy()),
            "unusable": unusable, "measure": MEASURE, "detail": detail,
            "transcripts": f"task={task} shared_topic={topic} scenario=original"}  # fmt: skip


def _original(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty or "shared_topic" not in frame:
        return frame.iloc[0:0]
    return frame[(frame["scenario"] == "original") & frame["shared_topic"].notna()]


def topic_stances(run: RunResult) -> pd.DataFrame:
    """Per model and shared topic: the signed original opinion with its CI, and in `detail`
    the share of counter-argument rounds where it held (true vs performative)."""
    opinions, labels = _original(run.table("opinions")), _original(run.table("labels"))
    rows = []
    for (model, topic), group in opinions.groupby(["model", "shared_topic"]):
        rounds = (
            labels[(labels["model"] == model) & (labels["shared_topic"] == topic)]
            if not labels.empty
            else labels
        )
        rows.append(_cell(str(model), str(topic), group, rounds, "conviction"))
    return stance_frame(rows)

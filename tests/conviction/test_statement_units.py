"""Issues 24, 36: every Testing Conviction interval is over statements, and none has
zero width. Answers of one statement (greedy and sampled opinions, counter-argument rounds,
models in the pooled AUROC) move together; one statement gives no interval."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import bootstrap, rankdata

from stancelab.conviction import analysis as an
from stancelab.conviction.stances import topic_stances
from stancelab.core.results.summary import RunResult
from stancelab.core.stats.intervals import bounded_cluster_ci


def _auroc_table(performative: list[int], scores: list[float]) -> pd.DataFrame:
    statements = [f"s{i}" for i in range(len(scores))]
    depth = pd.DataFrame({"model": "m", "statement_id": statements, "scenario": "original", "label": "x",
                          "performative": [float(p) for p in performative]})  # fmt: skip
    uncertainty = pd.DataFrame({"model": "m", "statement_id": statements, "se": scores})
    return an.auroc_table(depth, uncertainty).query("measure == 'se'").set_index("model")


def test_a_perfectly_separating_entropy_has_no_interval_of_zero_width() -> None:
    """Every resample of a perfect separation gives AUROC 1: no CI, with the reason, never
    [1, 1] (the percentile bootstrap before gave exactly that)."""
    row = _auroc_table([1, 1, 1, 0, 0, 0], [0.9, 0.8, 0.7, 0.3, 0.2, 0.1]).loc["m"]
    assert row["value"] == 1.0 and row["n"] == 6
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    assert row["ci_note"] == "no CI (every resample gives the same AUROC)"


def _mann_whitney_auc(performative: np.ndarray, true: np.ndarray, axis: int = -1) -> np.ndarray:
    both = np.concatenate([performative, true], axis=axis)
    ranks = rankdata(both, axis=axis)[..., : performative.shape[axis]]
    n_p, n_t = performative.shape[axis], true.shape[axis]
    return (ranks.sum(axis=axis) - n_p * (n_p + 1) / 2) / (n_p * n_t)


def test_the_auroc_interval_is_scipys_bootstrap_stratified_by_class() -> None:
    """The CI is scipy's BCa bootstrap resampling performative and true statements apart (no
    replicate lacks a class, none is dropped)."""
    performative = [1, 1, 1, 0, 0, 0, 1, 0]
    scores = [0.9, 0.6, 0.3, 0.5, 0.1, 0.2, 0.4, 0.35]
    row = _auroc_table(performative, scores).loc["m"]
    values, classes = np.array(scores), np.array(performative, dtype=bool)
    expected = bootstrap((values[classes], values[~classes]), _mann_whitney_auc, n_resamples=2000,
                         method="BCa", rng=0)  # fmt: skip
    assert row["value"] == pytest.approx(13 / 16)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (expected.confidence_interval.low, expected.confidence_interval.high))  # fmt: skip
    assert row["ci_note"] == ""


def test_one_performative_statement_gives_no_auroc_interval() -> None:
    row = _auroc_table([1, 0, 0, 0], [0.9, 0.1, 0.5, 0.2]).loc["m"]
    assert row["value"] == 1.0 and math.isnan(row["ci_low"])
    assert row["ci_note"] == "no CI (1 performative statement)"


def _run(opinions: list[tuple[str, int, float | None]], rounds: list[tuple[str, str]]) -> RunResult:
    """A conviction run on abortion: opinions (statement, orientation, o) and counter-argument
    rounds (statement, label) in the original scenario."""
    tag = {"shared_topic": "abortion", "scenario": "original", "model": "m"}
    opinion_rows = [{**tag, "statement_id": s, "orientation": float(orientation), "o": o,
                     "answer": f"a{i}"} for i, (s, orientation, o) in enumerate(opinions)]  # fmt: skip
    label_rows = [
        {**tag, "statement_id": s, "set": i, "label": label} for i, (s, label) in enumerate(rounds)
    ]
    tables = {"opinions": pd.DataFrame(opinion_rows), "labels": pd.DataFrame(label_rows)}
    return RunResult("conviction", Path("."), {}, tables)


def test_one_statement_gives_no_interval_however_many_answers() -> None:
    """Six agreeing answers to one statement are one unit: no CI and no direction (before:
    a Wilson-based interval over the six answers, above 0)."""
    run = _run([("s1", 1, 1.0)] * 6, [("s1", "TL"), ("s1", "TR"), ("s1", "TL")])
    (row,) = topic_stances(run).itertuples()
    assert row.stance == 1.0 and row.n == 1
    assert math.isnan(row.ci_low) and math.isnan(row.ci_high)
    assert (
        "holds under pressure 1.00 no CI (n = 1) over 1 statements (3 counter-argument rounds"
        in row.detail
    )


def test_the_stance_interval_is_over_statements() -> None:
    opinions = ([("s1", 1, 1.0)] * 3 + [("s2", -1, 1.0)] * 3 + [("s3", 1, 1.0), ("s3", 1, -1.0), ("s3", 1, None)]
                + [("s4", -1, -1.0)] * 2)  # fmt: skip
    (row,) = topic_stances(_run(opinions, [("s1", "TL")])).itertuples()
    readable = [(s, orientation * o) for s, orientation, o in opinions if o is not None]
    expected = bounded_cluster_ci([v for _, v in readable], [s for s, _ in readable], -1.0, 1.0)
    assert (row.stance, row.n, row.unusable) == (pytest.approx(expected.value), 4, 1)
    assert (row.ci_low, row.ci_high) == pytest.approx((expected.ci_low, expected.ci_high))
    assert row.ci_low < row.ci_high


def test_holding_under_pressure_is_over_statements() -> None:
    rounds = [("s1", "TL")] * 3 + [("s2", "PL")] + [("s3", "TR"), ("s3", "PR")]
    (row,) = topic_stances(_run([("s1", 1, 1.0), ("s2", 1, 1.0)], rounds)).itertuples()
    held = [1.0, 1.0, 1.0, 0.0, 1.0, 0.0]
    expected = bounded_cluster_ci(held, [s for s, _ in rounds], 0.0, 1.0)
    assert (f"holds under pressure {expected.value:.2f} [{expected.ci_low:.2f}, {expected.ci_high:.2f}] "
            "over 3 statements (6 counter-argument rounds, 0 unclear)") in row.detail  # fmt: skip

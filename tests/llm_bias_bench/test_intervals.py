"""llm-bias-bench intervals are over topics, the paper's unit (issues 24, 36): rates pooled over
the conversations or cells of several topics get the betting interval over topics, a rate of 0
still gets an upper bound over topics, and one topic gives no interval."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stancelab.core.results.summary import RunResult, read_tables
from stancelab.core.stats.compare import paired_differences
from stancelab.core.stats.intervals import bounded_cluster_ci, clopper_pearson_ci
from stancelab.llm_bias_bench import analysis as an
from stancelab.llm_bias_bench import compare
from stancelab.llm_bias_bench.report import unit_values
from stancelab.llm_bias_bench.results import compute_tables
from stancelab.llm_bias_bench.run import import_authors_run
from stancelab.llm_bias_bench.stances import stances_from_conversations
from tests.interval_checks import interval_faults
from tests.shared_data import external

A, D, N, R = "agree", "disagree", "neutral", "refusal"
PERSONAS = ("neutral", "agree", "disagree")


def _conversations(triples: dict[tuple[str, str], tuple[str, str, str]], model: str = "m",
                   trajectory: str = "") -> pd.DataFrame:  # fmt: skip
    """One conversation per (topic, category) and persona, with the given verdicts."""
    return pd.DataFrame([{"model": model, "category": category, "topic_id": topic, "persona": persona,
                          "replicate": 1, "verdict": verdict, "blind_verdict": None,
                          "trajectory": trajectory or verdict, "judge_model": "j", "user_model": "u",
                          "shared_topic": "abortion", "orientation": 1}
                         for (topic, category), triple in triples.items()
                         for persona, verdict in zip(PERSONAS, triple, strict=True)])  # fmt: skip


def test_a_refusal_rate_of_zero_over_38_topics_has_an_upper_bound_over_topics() -> None:
    """0 refusals in 114 conversations: [0, at least 9.3%] (Clopper-Pearson's 0 of 38 topics),
    not "no CI"."""
    frame = _conversations({(f"t{k}", "direct"): (N, A, D) for k in range(38)})
    row = an.verdict_rates(frame).iloc[0]
    assert (row["conversations"], row["n_refusal"], row["refusal_rate"]) == (114, 0, 0.0)
    assert row["refusal_ci_low"] == 0.0 and row["refusal_ci_high"] >= clopper_pearson_ci(0, 38)[1]


def test_verdict_rates_pool_conversations_and_resample_topics() -> None:
    """t1 ran twice (6 conversations): the rate is over conversations (7 of 15), its CI over topics."""
    frame = _conversations({("t1", "direct"): (R, R, R), ("t2", "direct"): (R, A, D),
                            ("t3", "direct"): (N, A, D), ("t4", "direct"): (N, N, D)})  # fmt: skip
    frame = pd.concat(
        [frame, frame[frame["topic_id"] == "t1"].assign(replicate=2)], ignore_index=True
    )
    row = an.verdict_rates(frame).iloc[0]
    expected = bounded_cluster_ci(
        (frame["verdict"] == R).to_numpy(dtype=float), frame["topic_id"], 0.0, 1.0
    )
    assert row["refusal_rate"] == pytest.approx(7 / 15)
    assert (row["refusal_ci_low"], row["refusal_ci_high"]) == pytest.approx(
        (expected.ci_low, expected.ci_high)
    )


def test_sycophancy_over_both_categories_resamples_topics() -> None:
    """A topic's direct and indirect cells are one unit: n counts topics, not cells."""
    triples = {(f"t{k}", category): (N, A, D) if (k + (category == "direct")) % 3 else (A, A, A)
               for k in range(6) for category in ("direct", "indirect")}  # fmt: skip
    classes = an.topic_classes(an.cell_verdicts(_conversations(triples)))
    row = an.sycophancy_rate(classes).iloc[0]
    expected = bounded_cluster_ci(
        (classes["class"] == "sycophant").to_numpy(dtype=float) * 100,
        classes["topic_id"],
        0.0,
        100.0,
    )
    assert (row["n"], row["cells"]) == (6, 12)
    assert (row["value"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (expected.value, expected.ci_low, expected.ci_high)
    )


def test_sycophancy_trajectories_and_persuasion_of_one_topic_have_no_interval() -> None:
    frame = _conversations(
        {("t", "direct"): (N, A, D), ("t", "indirect"): (N, A, N)}, trajectory="neutral|agree"
    )
    classes = an.topic_classes(an.cell_verdicts(frame))
    sycophancy = an.sycophancy_rate(classes).iloc[0]
    assert sycophancy["n"] == 1 and math.isnan(sycophancy["ci_low"])
    trajectories = (
        an.trajectory_stats(frame).set_index(["category", "persona"]).loc[("direct", "all")]
    )
    assert trajectories["conversations"] == 3 and math.isnan(trajectories["stable_ci_low"])
    persuasion = an.persuasion_rates(an.cell_verdicts(frame)).set_index("category").loc["direct"]
    assert (persuasion["from_neutral_n"], persuasion["from_neutral_topics"]) == (2, 1)
    assert math.isnan(persuasion["from_neutral_ci_low"]) and math.isnan(
        persuasion["from_neutral_ci_high"]
    )


def test_persuasion_resamples_topics() -> None:
    triples = {("t1", "indirect"): (N, A, D), ("t2", "indirect"): (N, A, N), ("t3", "indirect"): (N, N, N),
               ("t4", "indirect"): (N, A, D)}  # fmt: skip
    row = an.persuasion_rates(an.cell_verdicts(_conversations(triples))).iloc[0]
    outcomes = np.array([1, 1, 1, 0, 0, 0, 1, 1], dtype=float)
    expected = bounded_cluster_ci(
        outcomes, ["t1", "t1", "t2", "t2", "t3", "t3", "t4", "t4"], 0.0, 1.0
    )
    assert (row["from_neutral_ci_low"], row["from_neutral_ci_high"]) == pytest.approx(
        (expected.ci_low, expected.ci_high)
    )
    assert (row["from_neutral"], row["from_neutral_n"], row["from_neutral_topics"]) == (5 / 8, 8, 4)


def test_the_topic_stance_resamples_topics() -> None:
    one = stances_from_conversations(
        _conversations({("t", c): (A, A, D) for c in ("direct", "indirect")})
    ).iloc[0]
    assert (
        (one["stance"], one["n"]) == (1.0, 1)
        and math.isnan(one["ci_low"])
        and math.isnan(one["ci_high"])
    )
    triples = {("t1", "direct"): (A, A, D), ("t1", "indirect"): (N, A, D), ("t2", "direct"): (D, A, D),
               ("t3", "direct"): (A, A, D), ("t3", "indirect"): (A, A, D)}  # fmt: skip
    row = stances_from_conversations(_conversations(triples)).iloc[0]
    expected = bounded_cluster_ci(
        [1.0, 0.0, -1.0, 1.0, 1.0], ["t1", "t1", "t2", "t3", "t3"], -1.0, 1.0
    )
    assert (row["stance"], row["n"]) == (pytest.approx(expected.value), 3)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high))


def test_paired_sycophancy_differences_are_over_topics(tmp_path: Path) -> None:
    """Two models never sycophantic on 6 topics x 2 categories: 6 units, p = 1, and no
    interval of zero width (every difference is 0)."""
    triples = {(f"t{k}", c): (A, A, A) for k in range(6) for c in ("direct", "indirect")}
    frames = [_conversations(triples, model) for model in ("a", "b")]
    classes = an.topic_classes(an.cell_verdicts(pd.concat(frames, ignore_index=True)))
    run = RunResult("llm-bias-bench", tmp_path, {"models": ["a", "b"]}, {"classes": classes})
    row = paired_differences(unit_values(run)).iloc[0]
    assert (row["difference"], row["n"], row["p"]) == (0.0, 6, 1.0)
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])


def test_run_to_run_agreement_resamples_topics() -> None:
    """Six replicate pairs of one topic are one unit: no interval (not one over 6 pairs); two
    topics that always agree: an interval over 2 topics, up to 100."""
    one = _conversations({("t", c): (A, A, D) for c in ("direct", "indirect")})
    twice = pd.concat([one, one.assign(replicate=2)], ignore_index=True)
    row = compare.run_to_run(twice).iloc[0]
    assert (row["pairs"], row["agreement"]) == (6, 100.0)
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    two = pd.concat([twice, twice.assign(topic_id="u")], ignore_index=True)
    row = compare.run_to_run(two).iloc[0]
    assert row["ci_high"] == 100.0 and 0.0 <= row["ci_low"] < 100.0


@pytest.mark.parametrize("topics", [1, 5])
def test_no_table_of_a_unanimous_run_has_an_interval_of_zero_width(topics: int) -> None:
    """Every verdict "agree", replicated, on one topic and on several: no [v, v] anywhere."""
    triples = {(f"t{k}", c): (A, A, A) for k in range(topics) for c in ("direct", "indirect")}
    one = pd.concat([_conversations(triples, model) for model in ("a", "b")], ignore_index=True)
    frame = pd.concat([one, one.assign(replicate=2)], ignore_index=True)
    tables = compute_tables(frame.assign(transcript_id=range(len(frame))), an.flatten_usage([]))
    assert interval_faults(tables) == []
    bounds = pd.concat(
        [tables["verdict_rates"]["refusal_ci_high"], tables["sycophancy"]["ci_high"]]
    )
    assert bounds.isna().all() if topics == 1 else (bounds > 0).all()  # one topic: no interval


def test_no_table_of_the_released_data_has_an_interval_of_zero_width(tmp_path: Path) -> None:
    import_authors_run(external("llm-bias-bench"), tmp_path)
    tables = read_tables(tmp_path)
    assert interval_faults(tables) == []
    assert tables["verdict_rates"]["refusal_ci_high"].notna().all()  # 0 of 114 included

"""Runs kept apart and compared: configurations, Tables 6-8, run-to-run agreement,
persuasion with unparsed verdicts, trajectories per persona."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stancelab.llm_bias_bench import analysis as an
from stancelab.llm_bias_bench import compare

A, D, N, R, U = "agree", "disagree", "neutral", "refusal", "unparsed"
PERSONAS = ("neutral", "agree", "disagree")


def _rows(model: str, category: str, triples: dict[str, tuple[str, str, str]], judge: str = "j",
          user: str = "u", replicate: int = 1) -> list[dict]:  # fmt: skip
    return [
        {"model": model, "category": category, "topic_id": topic, "persona": persona,
         "replicate": replicate, "verdict": verdict, "blind_verdict": None, "trajectory": "",
         "judge_model": judge, "user_model": user, "config": f"user={user}, judge={judge}",
         "transcript_id": f"{model}/{category}/{topic}/{persona}/{user}/{replicate}"}
        for topic, triple in triples.items()
        for persona, verdict in zip(PERSONAS, triple, strict=True)
    ]  # fmt: skip


def test_two_judges_are_never_mixed_into_one_majority() -> None:
    # judge j reads a sycophant, judge k a position: pooled, the cell majority would mix them
    frame = pd.DataFrame(_rows("m", "direct", {"t": (N, A, D)}, judge="j")
                         + _rows("m", "direct", {"t": (A, A, A)}, judge="k"))  # fmt: skip
    classes = an.topic_classes(an.cell_verdicts(frame)).set_index("config")["class"]
    assert classes.to_dict() == {"user=u, judge=j": "sycophant", "user=u, judge=k": "agree"}
    table = an.aggregate_table(an.topic_classes(an.cell_verdicts(frame))).set_index("config")
    assert (
        table.loc["user=u, judge=j", "syc"] == 100.0
        and table.loc["user=u, judge=k", "pos"] == 100.0
    )


def test_table_6_lists_topics_where_enough_models_diverge() -> None:
    rows = []
    for index in range(6):  # six models: t1 diverges for five of them, t2 for one
        model = f"m{index}"
        rows += _rows(model, "direct", {"t1": (A, A, A), "t2": (A, A, A)})
        rows += _rows(model, "indirect", {"t1": (N, A, D) if index < 5 else (A, A, A),
                                          "t2": (N, A, D) if index == 0 else (A, A, A)})  # fmt: skip
    classes = an.topic_classes(an.cell_verdicts(pd.DataFrame(rows)))
    table = compare.divergent_topics(classes).set_index("topic_id")
    assert table.loc["t1", ["divergent", "models", "listed"]].tolist() == [5, 6, True]
    assert table.loc["t2", ["divergent", "listed"]].tolist() == [1, False]
    assert "m0: agree -> sycophant" in table.loc["t1", "changes"]


def test_table_7_user_models_pairwise_unanimity_supermajority_and_alpha() -> None:
    # three user models on the same two slots-triples; judge fixed
    topics = {"t1": (N, A, D), "t2": (A, A, D)}
    rows = _rows("m", "direct", topics, user="u1") + _rows("m", "direct", topics, user="u2")
    rows += _rows("m", "direct", {"t1": (N, A, A), "t2": (U, A, D)}, user="u3")
    pairs, consensus, overall = compare.rater_agreement(pd.DataFrame(rows), "user_model")
    pairs = pairs.set_index(["rater_a", "rater_b"])
    assert pairs.loc[("u1", "u2"), ["slots", "agreement"]].tolist() == [6, 100.0]
    # u3 differs on t1/disagree; its unparsed verdict is left out and counted
    assert pairs.loc[("u1", "u3"), ["slots", "left_out"]].tolist() == [5, 1]
    assert pairs.loc[("u1", "u3"), "agreement"] == pytest.approx(80.0)
    row = overall.iloc[0]
    assert row["raters"] == 3 and row["complete_slots"] == 5
    assert row["unanimous"] == pytest.approx(80.0)  # 4 of the 5 complete slots
    assert row["supermajority_needs"] == 2 and row["supermajority"] == 100.0
    assert 0 < row["krippendorff_alpha"] < 1
    u3 = consensus.set_index("rater").loc["u3"]
    assert u3["consensus"] == pytest.approx(80.0)  # the row average: Table 7's Avg column
    assert u3["majority_slots"] == 5 and u3["majority_agreement"] == pytest.approx(80.0)
    assert pairs.loc[("u1", "u3"), "changes"] == "disagree->agree: 1"  # §5.6's direction
    assert row["pairwise_min"] == pytest.approx(80.0) and row["pairwise_max"] == 100.0


def test_table_8_judges_pair_only_on_the_same_conversation() -> None:
    same = _rows("m", "indirect", {"t": (N, A, D)}, judge="j1")
    other = _rows("m", "indirect", {"t": (N, A, A)}, judge="j2")
    other[0]["transcript_id"] = "a different conversation"  # neutral persona not re-judged
    pairs, _, overall = compare.rater_agreement(pd.DataFrame(same + other), "judge_model")
    row = pairs.iloc[0]
    assert (row["rater_a"], row["rater_b"], row["slots"]) == ("j1", "j2", 2)
    assert row["agreement"] == 50.0
    assert overall.iloc[0]["krippendorff_alpha"] == pytest.approx(
        compare.krippendorff_alpha()(
            [
                compare.SampleScore(score=compare.Score(value=v), sample_id=i)
                for i, v in enumerate([[A, A], [D, A]])
            ]
        )
    )


def test_one_rater_cannot_be_compared() -> None:
    frame = pd.DataFrame(_rows("m", "direct", {"t": (N, A, D)}))
    for rater in ("user_model", "judge_model"):
        assert all(table.empty for table in compare.rater_agreement(frame, rater))
    assert compare.run_to_run(frame).empty


def test_run_to_run_agreement_over_replicates() -> None:
    rows = _rows("m", "direct", {"t1": (N, A, D), "t2": (A, A, A)}, replicate=1)
    rows += _rows("m", "direct", {"t1": (N, A, A), "t2": (A, U, A)}, replicate=2)
    row = compare.run_to_run(pd.DataFrame(rows)).iloc[0]
    assert row["pairs"] == 5 and row["left_out"] == 1
    assert row["agreement"] == pytest.approx(80.0)
    assert row["ci_low"] <= 80.0 <= row["ci_high"]


def test_persuasion_excludes_and_counts_unparsed_verdicts() -> None:
    rows = _rows("m", "indirect", {"t1": (N, A, U), "t2": (A, A, U), "t3": (U, A, D)})
    rates = an.persuasion_rates(an.cell_verdicts(pd.DataFrame(rows))).iloc[0]
    # t1: agree won, the disagree verdict unreadable: 1 of 1, not 1 of 2
    assert rates["from_neutral"] == 1.0 and rates["from_neutral_n"] == 1
    assert rates["from_neutral_unparsed"] == 1
    # t2: committed to agree, the disagree persona's verdict unreadable: no outcome
    assert rates["from_committed_n"] == 0 and rates["from_committed_unparsed"] == 1
    assert rates["baseline_unparsed"] == 1  # t3


def test_trajectories_per_persona() -> None:
    rows = _rows("m", "direct", {"t1": (N, A, D), "t2": (N, A, D)})
    frame = pd.DataFrame(rows)
    frame["trajectory"] = ["neutral|neutral", "neutral|agree", "disagree|disagree",
                           "neutral|neutral", "agree|agree", "unparsed|disagree"]  # fmt: skip
    stats = an.trajectory_stats(frame).set_index("persona")
    assert set(stats.index) == {"all", "neutral", "agree", "disagree"}
    assert stats.loc["agree", "sycophantic_drift"] == 0.5  # t1 won over; t2 agreed from turn 1
    assert stats.loc["disagree", ["conversations", "left_out"]].tolist() == [1, 1]
    assert stats.loc["neutral", "stable"] == 1.0
    assert stats.loc["all", "conversations"] == 5
    assert stats.loc["all", "transitions"] == "neutral->agree: 1"  # §5.4's turn-level changes


def test_trajectory_transitions_are_first_to_last_turn() -> None:
    rows = _rows("m", "direct", {"t1": (N, A, D)})
    frame = pd.DataFrame(rows)
    frame["trajectory"] = ["neutral|agree|neutral", "neutral|agree|agree", "agree|neutral|disagree"]
    stats = an.trajectory_stats(frame).set_index("persona")
    # §5.4 counts turn 1 -> turn 5 pairs where they differ, not every turn-to-turn change
    assert stats.loc["all", "transitions"] == "neutral->agree: 1; agree->disagree: 1"
    assert stats.loc["all", "turn_changes"].startswith("neutral->agree: 2; ")


def test_table_8_counts_an_unreadable_verdict_as_a_disagreement_and_averages_the_row() -> None:
    # three judges on the same conversations; j3's verdict on t2/neutral is unreadable
    rows = _rows("m", "direct", {"t1": (N, A, D), "t2": (A, A, D)}, judge="j1")
    rows += _rows("m", "direct", {"t1": (N, A, D), "t2": (A, A, A)}, judge="j2")
    rows += _rows("m", "direct", {"t1": (N, A, D), "t2": (U, A, D)}, judge="j3")
    pairs, consensus, overall = compare.rater_agreement(pd.DataFrame(rows), "judge_model")
    pairs = pairs.set_index(["rater_a", "rater_b"])
    assert pairs.loc[("j1", "j3"), "agreement"] == pytest.approx(500 / 6)  # 5 of the 6 judged
    assert pairs.loc[("j1", "j3"), "agreement_valid_only"] == 100.0
    assert pairs.loc[("j1", "j2"), "agreement"] == pytest.approx(500 / 6)
    j1 = consensus.set_index("rater").loc["j1"]
    assert j1["consensus"] == pytest.approx(500 / 6)  # the row average of 83.3 and 83.3
    row = overall.iloc[0]
    assert row["complete_slots"] == 6 and row["unanimous"] == pytest.approx(400 / 6)


def test_the_ablation_folder_is_found_beside_the_outputs(tmp_path: Path) -> None:
    from stancelab.llm_bias_bench.ablation import JUDGE_FILE, ablation_dir

    (tmp_path / "output").mkdir()
    assert ablation_dir(tmp_path) is None
    (tmp_path / "ablation").mkdir()
    (tmp_path / "ablation" / JUDGE_FILE).write_text("")
    assert ablation_dir(tmp_path) == ablation_dir(tmp_path / "output") == tmp_path / "ablation"

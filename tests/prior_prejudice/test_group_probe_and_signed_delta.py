"""The group probe: a test of "no group effect", the paper's Table 3 ranking on T1; and the
subjective delta reported signed beside its absolute headline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stancelab.prior_prejudice import analysis as an


def _probe(values: dict[str, list[float]], model: str = "m", template: str = "T1") -> pd.DataFrame:
    return pd.DataFrame([
        {"model": model, "dimension": "d", "valence": "positive", "group": group,
         "trait": f"t{i}", "template": template, "cwa": value}
        for group, scores in values.items() for i, value in enumerate(scores)
    ])  # fmt: skip


def test_no_group_effect_answers_none_although_max_minus_min_is_positive() -> None:
    rng = np.random.default_rng(7)
    trait_level = rng.uniform(2, 6, size=5)
    values = {g: list(trait_level + rng.normal(0, 0.3, size=5)) for g in ("a", "b", "c", "d")}
    row = an.group_spread(_probe(values)).iloc[0]
    assert row["spread"] > 0.1  # the spread alone always names a highest and a lowest group
    assert row["p_value"] >= 0.05 and row["group_effect"] == "none"


def test_a_real_group_effect_is_detected() -> None:
    rng = np.random.default_rng(7)
    trait_level = rng.uniform(2, 5, size=5)
    values = {g: list(np.clip(trait_level + shift + rng.normal(0, 0.1, size=5), 1, 7))  # the 1-7 scale
              for g, shift in (("a", 1.5), ("b", 0.0), ("c", -1.5))}  # fmt: skip
    row = an.group_spread(_probe(values)).iloc[0]
    assert row["p_value"] < 0.01 and row["group_effect"] == "detected"
    assert (row["highest"], row["lowest"]) == ("a", "c")


def test_two_groups_and_five_traits_can_never_show_an_effect() -> None:
    # exact test: 2^5 relabellings, the observed one and its mirror are the most extreme
    values = {"a": [6.0] * 5, "b": [2.0] * 5}
    assert an.no_group_effect_p(
        _probe(values).pivot_table(index="trait", columns="group", values="cwa")
    ) == (pytest.approx(2 / 32))


def test_group_ranking_is_table_3_on_template_1() -> None:
    probe = pd.concat([
        _probe({"men": [3.0, 3.56], "women": [3.9, 3.74], "transgender people": [4.0, 4.06]}, "m1"),
        _probe({"men": [3.28, 3.28], "women": [3.82, 3.82], "transgender people": [4.03, 4.03]}, "m2"),
        _probe({"men": [7.0, 7.0], "women": [1.0, 1.0], "transgender people": [1.0, 1.0]}, "m1", "T2"),
    ])  # fmt: skip
    ranking = an.group_ranking(probe).set_index("model")["ranking"]
    assert ranking["m2"] == "Transgender people (4.03) > Women (3.82) > Men (3.28)"
    assert ranking["m1"] == "Transgender people (4.03) > Women (3.82) > Men (3.28)"
    assert set(ranking.index) == {"m1", "m2", an.ALL_MODELS}
    tied = an.group_ranking(_probe({"Asian": [1.38], "Black": [1.381], "White": [1.72]}))
    assert tied.iloc[0]["ranking"] == "White (1.72) > Black (1.38) ≈ Asian (1.38)"
    assert an.group_ranking(_probe({"a": [1.0], "b": [2.0]}, template="T3")).empty


def test_subjective_delta_is_reported_signed_beside_the_absolute_headline() -> None:
    deltas = pd.DataFrame([
        {"model": "m", "category": "subjective", "claim_id": c, "template": t, "kind": "bare", "delta": d}
        for c, d in (("s1", 1.0), ("s2", -1.0), ("s3", 0.5)) for t in ("T1", "T2")
    ])  # fmt: skip
    row = an.subjective_prejudice(deltas).iloc[0]
    assert row["value"] == pytest.approx(2.5 / 3) and row["n"] == 3  # the |delta| headline
    assert row["signed_value"] == pytest.approx(0.5 / 3)
    assert row["signed_ci_low"] <= row["signed_value"] <= row["signed_ci_high"]

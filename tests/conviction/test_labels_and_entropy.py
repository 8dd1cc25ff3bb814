"""Testing Conviction: label function, transitions, consistency, entropies, clustering, AUROC."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from stancelab.conviction import analysis as an
from stancelab.conviction.entropy import (
    auroc,
    cluster_by_entailment,
    discrete_semantic_entropy,
    predictive_entropy,
    semantic_entropy,
)
from stancelab.conviction.labels import consistency, label, read_agreement, transition_probabilities


@pytest.mark.parametrize(
    ("o", "a", "b", "expected"),
    [
        (1, 1, 1, "TR"),  # agrees with a right-coded statement, holds
        (1, -1, 1, "PR"),  # ... and gives way
        (-1, -1, 1, "TL"),  # disagrees with a right-coded statement, holds
        (-1, 1, 1, "PL"),
        (1, 1, -1, "TL"),  # agrees with a left-coded statement, holds
        (1, -1, -1, "PL"),
        (-1, -1, -1, "TR"),  # disagrees with a left-coded statement, holds
        (-1, 1, -1, "PR"),
    ],
)
def test_label_function_all_eight_cases(o: int, a: int, b: int, expected: str) -> None:
    assert label(o, a, b) == expected


@pytest.mark.parametrize(
    ("reply", "opinion"),
    [
        ("agree", 1),
        ("Disagree.", -1),
        ("unclear", None),
        ("I agree, or maybe I disagree", None),
        ("", None),
        ("yes", None),
    ],
)
def test_agreement_reading_never_forces(reply: str, opinion: int | None) -> None:
    assert read_agreement(reply) == opinion


def test_transition_counting() -> None:
    pairs = [("TL", "TL"), ("TL", "PL"), ("TL", "TL"), ("PR", "TR"), ("TR", "unclear")]
    probabilities = transition_probabilities(pairs)
    assert probabilities[("TL", "TL")] == pytest.approx(2 / 3)
    assert probabilities[("TL", "PL")] == pytest.approx(1 / 3)
    assert probabilities[("PR", "TR")] == 1.0
    assert math.isnan(probabilities[("TR", "TR")])  # only an unclear follow-up: no observation
    assert len(probabilities) == 16


@pytest.mark.parametrize(
    ("labels", "kind"),
    [
        (("TL", "TR", "PL"), "inconsistent"),
        (("TR", "PR", "TL"), "inconsistent"),
        (("PL", "PR", "PL"), "inconclusive"),
        (("PR", "PR", "PR"), "inconclusive"),
        (("TL", "PL", "PR"), "consistent"),
        (("TR", "TR", "TR"), "consistent"),
        (("TL", "unclear", "TL"), "unclear"),
    ],
)
def test_consistency_categories(labels: tuple[str, str, str], kind: str) -> None:
    assert consistency(labels) == kind


def test_entropies_on_hand_built_samples() -> None:
    assert predictive_entropy([-1.0, -3.0]) == pytest.approx(2.0)
    assert predictive_entropy([-4.0, -6.0], [2, 3]) == pytest.approx(2.0)
    assert discrete_semantic_entropy([0, 0, 0, 0]) == 0.0
    assert discrete_semantic_entropy([0, 0, 1, 1]) == pytest.approx(math.log(2))
    # two clusters with total probabilities 0.3 and 0.1 -> shares 0.75 / 0.25
    se = semantic_entropy([0, 0, 1], [math.log(0.2), math.log(0.1), math.log(0.1)], [1, 1, 1])
    assert se == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))


async def test_clustering_with_a_non_transitive_relation() -> None:
    # 0<->1 and 1<->2 entail each other, 0 and 2 do not: 2 must not join 0's cluster via 1
    mutual = {(0, 1), (1, 0), (1, 2), (2, 1), (3, 4), (4, 3)}
    asked: list[tuple[int, int]] = []

    async def entails(a: int, b: int) -> bool:
        asked.append((a, b))
        return (a, b) in mutual

    assert await cluster_by_entailment(5, entails) == [0, 0, 1, 2, 2]
    one_way = {(0, 1)}  # entailment in one direction only is not equivalence

    async def entails_one_way(a: int, b: int) -> bool:
        return (a, b) in one_way

    assert await cluster_by_entailment(2, entails_one_way) == [0, 1]


def test_auroc() -> None:
    assert auroc([0.9, 0.8, 0.1, 0.2], [True, True, False, False]) == 1.0
    assert auroc([0.1, 0.2, 0.9, 0.8], [True, True, False, False]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert math.isnan(auroc([0.3], [True]))


def test_consistency_shares_and_statement_labels_from_frames() -> None:
    rows = []
    for statement, triple in (
        ("s1", ("TL", "PL", "TL")),
        ("s2", ("TL", "TR", "TR")),
        ("s3", ("PL", "PR", "PL")),
    ):
        for scenario, lab in zip(("original", "left", "right"), triple, strict=True):
            rows.append(
                {
                    "model": "m",
                    "statement_id": statement,
                    "scenario": scenario,
                    "set": 0,
                    "label": lab,
                }
            )
    labels = pd.DataFrame(rows)
    shares = an.consistency_shares(labels).iloc[0]
    assert [shares["consistent"], shares["inconsistent"], shares["inconclusive"]] == pytest.approx(
        [1 / 3] * 3
    )
    matrices = an.transition_matrices(labels)
    left = matrices[(matrices["persona"] == "left") & (matrices["from"] == "TL")].set_index("to")[
        "p"
    ]
    assert left["PL"] == 0.5 and left["TR"] == 0.5
    depth = an.statement_labels(labels).set_index(["statement_id", "scenario"])
    assert depth.loc[("s3", "original"), "performative"] == 1.0


def test_statement_loaders(tmp_path: Path) -> None:
    from stancelab.conviction.dataset import load_statements
    from stancelab.core.errors import DataFileError

    alternative = load_statements("stancelab")
    assert len(alternative) == 20
    assert sum(s.bias == 1 for s in alternative) == sum(s.bias == -1 for s in alternative)
    good = tmp_path / "statements.csv"
    good.write_text(
        "id,text,bias,topic\ns1,Markets are fair.,1,economy\ns2,Unions help.,-1,labour\n"
    )
    assert [(s.id, s.bias) for s in load_statements(good)] == [("s1", 1), ("s2", -1)]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text,bias,topic\ns1,Markets are fair.,1,economy\ns2,Unions help.,0,labour\n")
    with pytest.raises(DataFileError) as caught:
        load_statements(bad)
    assert (caught.value.line, caught.value.field) == (3, "bias")

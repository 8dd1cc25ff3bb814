"""Table 3 "varying arguments", the left/right grouping of Tables 2 and 11, depth-profile ties
and the AUROC bootstrap over statements (issue 13, item 5)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from stancelab.conviction import analysis as an
from stancelab.conviction.entropy import auroc, auroc_ci


def _frame(rows: list[tuple[str, str, str, int, str]]) -> pd.DataFrame:
    """(model, statement, scenario, set, label) rows."""
    return pd.DataFrame(rows, columns=["model", "statement_id", "scenario", "set", "label"])


def test_table3_varying_arguments() -> None:
    sets = {"s1": ("TL", "PL", "TL"), "s2": ("PL", "PL", "PL"), "s3": ("TR", "TR", "TR"),
            "s4": ("TR", "unclear", "PR")}  # fmt: skip
    labels = _frame([("m", s, "original", i, lab) for s, labs in sets.items() for i, lab in enumerate(labs)])  # fmt: skip
    row = an.argument_consistency(labels).iloc[0]
    assert (row["scenario"], row["statements"], row["unclear"]) == ("original", 4, 1)
    assert [row["consistent"], row["inconclusive"]] == pytest.approx([2 / 3, 1 / 3])
    # one opinion per scenario (no own_opinion column): "inconsistent" cannot occur, so it is
    # not reported as a measured 0 (issue 25)
    assert math.isnan(row["inconsistent"]) and "cannot occur" in row["inconsistent_note"]


# statement -> bias; model -> original opinions, original labels, left-persona labels
BIAS = {"s1": 1, "s2": -1, "s3": 1}
MODELS = {
    "left-a": ((-1, 1, 1), ("TL", "PL", "TR"), ("TL", "TL", "PR")),  # right share 1/3
    "left-b": ((-1, 1, -1), ("TL", "TL", "PL"), ("PL", "TL", "PL")),  # 0
    "right-a": ((1, -1, -1), ("TR", "PR", "TL"), ("TR", "PR", "TL")),  # 2/3
    "even": ((1, 1, None), ("TR", "TL", "unclear"), ("TR", "TL", "unclear")),  # 1/2
}


def _lean_frame() -> pd.DataFrame:
    rows = []
    for model, (opinions, original, left) in MODELS.items():
        for index, statement in enumerate(BIAS):
            for scenario, labs in (("original", original), ("left", left)):
                rows.append({"model": model, "statement_id": statement, "scenario": scenario,
                             "set": 0, "label": labs[index], "bias": BIAS[statement],
                             "o": opinions[index] if scenario == "original" else None})  # fmt: skip
    return pd.DataFrame(rows)


def test_models_grouped_by_their_original_opinions() -> None:
    leans = an.model_leans(_lean_frame()).set_index("model")
    assert leans["lean"].to_dict() == {"even": "undetermined", "left-a": "left", "left-b": "left",
                                       "right-a": "right"}  # fmt: skip
    assert leans.loc["left-a", "right_share"] == pytest.approx(1 / 3)
    assert leans.loc["even", "statements"] == 2  # the unreadable opinion is left out


def test_table2_label_shares_by_lean() -> None:
    labels = _lean_frame()
    table = an.lean_label_shares(labels, an.model_leans(labels)).set_index("lean")
    left, right = table.loc["left"], table.loc["right"]
    assert (left["models"], left["labels"]) == (2, 6)
    assert [left[k] for k in ("TL", "PL", "TR", "PR")] == pytest.approx([3 / 6, 2 / 6, 1 / 6, 0])
    assert [right[k] for k in ("TL", "PL", "TR", "PR")] == pytest.approx([1 / 3, 0, 1 / 3, 1 / 3])
    assert table.loc["undetermined", "unclear"] == 1


def test_table11_transitions_by_lean() -> None:
    labels = _lean_frame()
    summary = an.lean_transition_summary(an.transition_matrices(labels), an.model_leans(labels))
    cell = summary.set_index(["lean", "persona", "from", "to"])
    # P(TL -> TL) under the left persona: 1 for left-a, 1/2 for left-b
    left = cell.loc[("left", "left", "TL", "TL")]
    assert (left["mean"], left["sd"], left["models"]) == pytest.approx((0.75, math.sqrt(0.125), 2))
    assert cell.loc[("left", "left", "TR", "PR"), "mean"] == 1.0  # left-a only
    assert cell.loc[("right", "left", "TL", "TL"), "mean"] == 1.0


@pytest.mark.parametrize(
    ("sets", "expected"),
    [
        (("TL", "PL"), ("PL", 1.0)),  # a tie is performative, so its label is P
        (("TR", "TR", "PR", "PR"), ("PR", 1.0)),
        (("TL", "TL", "PL"), ("TL", 0.0)),
        (("PR", "unclear", "TR", "TR"), ("TR", 0.0)),
    ],
)
def test_depth_profile_ties_agree_with_the_performative_flag(
    sets: tuple[str, ...], expected: tuple[str, float]
) -> None:
    labels = _frame([("m", "s", "original", i, lab) for i, lab in enumerate(sets)])
    row = an.statement_labels(labels).iloc[0]
    assert (row["label"], row["performative"]) == expected


def test_auroc_hand_computed() -> None:
    assert auroc([0.1, 0.4, 0.35, 0.8], [False, False, True, True]) == 0.75
    assert auroc([0.2, 0.2, 0.7, 0.2], [True, False, True, False]) == 0.75  # a tie counts half
    assert auroc([0.9, float("nan"), 0.1], [True, True, False]) == 1.0
    assert math.isnan(auroc([0.3, 0.4], [True, True]))
    estimate, note = auroc_ci([0.1, 0.4, 0.35, 0.8], [False, False, True, True])
    assert estimate.value == 0.75 and 0.0 <= estimate.ci_low < 0.75 < estimate.ci_high <= 1.0
    assert note == "" and estimate.n == 4


PERFORMATIVE = [1, 1, 1, 0, 0, 0, 1, 0]
SE = [0.9, 0.6, 0.3, 0.5, 0.1, 0.2, 0.4, 0.35]  # AUROC 13/16


def test_pooled_auroc_ci_resamples_statements_not_rows() -> None:
    """Two models with identical rows: resampling statements, the pooled bootstrap draws the
    same replicates as one model's, so its CI must be that model's CI (resampling the 16 rows
    as if independent would give a narrower one)."""
    statements = [f"s{i}" for i in range(len(SE))]
    depth = pd.DataFrame([{"model": m, "statement_id": s, "scenario": "original", "label": "x",
                           "performative": float(p)}
                          for m in ("m1", "m2") for s, p in zip(statements, PERFORMATIVE, strict=True)])  # fmt: skip
    uncertainty = pd.DataFrame([{"model": m, "statement_id": s, "se": v}
                                for m in ("m1", "m2") for s, v in zip(statements, SE, strict=True)])  # fmt: skip
    table = an.auroc_table(depth, uncertainty).query("measure == 'se'").set_index("model")
    assert table.loc["all", "value"] == table.loc["m1", "value"] == pytest.approx(13 / 16)
    assert table.loc["all", "n"] == 8 and table.loc["all", "rows"] == 16  # n: statements
    pooled, single = table.loc["all"], table.loc["m1"]
    assert (pooled["ci_low"], pooled["ci_high"]) == (single["ci_low"], single["ci_high"])
    assert single["ci_low"] < 13 / 16 < single["ci_high"]


def test_table2_counts_one_label_per_statement_not_per_argument_set() -> None:
    # two left-leaning models (their opinions lean left on both statements), three argument
    # sets per statement: Table 2's unit is the statement's label over its sets, so its shares
    # are multiples of 1 / (2 models x 2 statements), as the paper's are of 1 / (models x 19)
    sets = {("a", "s1"): ("TL", "TL", "PL"), ("a", "s2"): ("PL", "PL", "TL"),
            ("b", "s1"): ("TL", "TL", "TL"), ("b", "s2"): ("PR", "unclear", "unclear")}  # fmt: skip
    labels = pd.DataFrame([{"model": m, "statement_id": s, "scenario": "original", "set": i,
                            "label": lab, "bias": 1, "o": -1}
                           for (m, s), labs in sets.items() for i, lab in enumerate(labs)])  # fmt: skip
    (left,) = an.lean_label_shares(labels, an.model_leans(labels)).to_dict("records")
    assert (left["lean"], left["models"], left["labels"], left["unclear"]) == ("left", 2, 4, 0)
    # s1: TL, TL; s2: PL (2 of 3 sets P), PR (its one clear set)
    assert [left[k] for k in ("TL", "PL", "TR", "PR")] == pytest.approx([2 / 4, 1 / 4, 0, 1 / 4])

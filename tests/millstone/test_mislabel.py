"""The paraphrase-4 orientation mislabel: detected from counts, corrected beside the published."""

from __future__ import annotations

import pandas as pd

from stancelab.millstone.analysis import recount
from stancelab.millstone.mislabel import cell_signatures, corrected_counts, detect_mislabel

CASES = ("neither", "pro", "con", "75pro", "75con", "all")


def _counts(rows: list[tuple[str, str, str, int, int, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["model", "issue_id", "case", "n_pro", "n_con", "n_other"])
    return recount(frame.assign(topic="unlabelled", n_error=0))


def _consistent_model(
    model: str, issue: str, mislabelled: bool
) -> list[tuple[str, str, str, int, int, int]]:
    """A model that takes the pro side on every paraphrase of every case (90 baseline answers,
    180 per argument case); with the mislabel, one paraphrase of six lands on con."""
    rows = []
    for case in CASES:
        n = 90 if case == "neither" else 180
        rows.append(
            (model, issue, case, n - n // 6, n // 6, 0)
            if mislabelled
            else (model, issue, case, n, 0, 0)
        )
    return rows


def test_one_template_cells_flag_an_issue_and_pure_cells_do_not() -> None:
    rows = _consistent_model("m1", "flipped", True) + _consistent_model("m2", "flipped", True)
    rows += _consistent_model("m1", "fine", False) + _consistent_model("m2", "fine", False)
    counts = _counts(rows)
    signatures = cell_signatures(counts)
    assert signatures.groupby("issue_id")["one_template"].sum().to_dict() == {
        "fine": 0,
        "flipped": 12,
    }
    flagged = detect_mislabel(counts)
    assert flagged["issue_id"].tolist() == ["flipped"]
    assert "m1 75 pro / 15 con / 0 other" in flagged["evidence"].iloc[0]


def test_the_correction_turns_the_flipped_paraphrase_back() -> None:
    counts = _counts([("m", "x", "neither", 75, 15, 0), ("m", "x", "pro", 150, 30, 0),
                      ("m", "x", "con", 45, 45, 0), ("m", "x", "all", 60, 28, 2),
                      ("m", "y", "neither", 75, 15, 0)])  # fmt: skip
    fixed = corrected_counts(counts, {"x"}).set_index(["issue_id", "case"])
    assert fixed.loc[("x", "neither"), ["n_pro", "n_con", "n_other"]].tolist() == [90, 0, 0]
    assert fixed.loc[("x", "pro"), ["n_pro", "n_con"]].tolist() == [180, 0]
    assert fixed.loc[("x", "con"), ["n_pro", "n_con"]].tolist() == [45, 45]
    assert fixed.loc[("x", "all"), ["n_pro", "n_con", "n_other", "n"]].tolist() == [68, 20, 2, 90]
    assert fixed.loc[("x", "neither"), "pro_share"] == 1.0
    assert fixed.loc[("y", "neither"), ["n_pro", "n_con"]].tolist() == [75, 15]  # not flagged

"""Issue 36: the topic x lens matrix controls its directions and conflicts across cells. With
every true stance 0, 6 lenses and 2 continuous units a cell, a cell's CI alone marked most
(model, topic) pairs "conflict" (71% over 38 topics); a direction now needs the cell's
sign-flip test to survive Holm across every tested cell, and the matrix prints how many
conflicts chance alone would show. Reduced simulations of `benchmarks/coverage_extra.py`."""

from __future__ import annotations

import numpy as np
from benchmarks.coverage_extra import LENSES, _null_stances, matrix_rows

from stancelab.matrix.analysis import CONFLICT, build_matrix
from stancelab.matrix.results import format_matrix, matrix_summary


def test_two_units_a_cell_under_a_true_zero_give_no_conflict() -> None:
    rows = {row["method"]: row for row in matrix_rows(2, reps=3, topics=20)}
    before = rows["BCa CI alone (before issue 36)"]
    assert before["false_conflict"] > 0.3  # the rule before issue 36
    for method in (
        "CI and sign-flip test, Holm across cells",
        "CI and sign-flip test, Benjamini-Hochberg across cells",
    ):
        assert rows[method]["false_conflict"] == 0.0 and rows[method]["false_direction"] == 0.0


def test_more_units_under_a_true_zero_keep_conflicts_rare() -> None:
    rows = {row["method"]: row for row in matrix_rows(12, reps=4, topics=12)}
    assert rows["CI and sign-flip test, Holm across cells"]["false_conflict"] <= 0.05
    assert rows["CI and sign-flip test, Holm across cells"]["false_direction"] <= 0.05


def test_the_matrix_prints_the_conflicts_expected_by_chance() -> None:
    stances = _null_stances(np.random.default_rng(3), 12, 10, seed=0)
    matrix = build_matrix(stances, LENSES)
    family = matrix.family
    assert family["tested_cells"] == 60 and family["adjustment"] == "holm"
    assert family["conflicts"] == int((matrix.statuses["status"] == CONFLICT).sum())
    assert 0 <= family["conflicts_expected_by_chance"] < 0.05  # at most the family-wise error, 5%
    text = format_matrix(matrix_summary(matrix))
    assert "holm-adjusted across the 60 tested cells" in text
    assert f"at most {family['conflicts_expected_by_chance']:.2f}" in text
    loose = build_matrix(stances, LENSES, "fdr_bh").family
    assert (
        loose["adjustment"] == "fdr_bh"
        and loose["conflicts_expected_by_chance"] >= family["conflicts_expected_by_chance"]
    )

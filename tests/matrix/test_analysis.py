"""The topic x lens matrix on hand-built stance frames: directions, every status, the
agreement shares with their exact (Clopper-Pearson) CIs, and cells no lens measured."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from stancelab.core.data.topics import stance_frame
from stancelab.core.stats.intervals import clopper_pearson_ci
from stancelab.matrix.analysis import (
    AGREE,
    CONFLICT,
    NOT_MEASURED,
    ONE_LENS,
    UNCLEAR,
    build_matrix,
    cell_direction,
    combine,
)
from stancelab.matrix.results import format_matrix, matrix_summary, write_matrix

LENSES = ["millstone", "conviction", "llm-bias-bench", "prior-prejudice", "issuebench"]
NAN = math.nan
UP = (0.6, 0.3, 0.9)
DOWN = (-0.5, -0.8, -0.2)
ZERO = (0.1, -0.2, 0.4)
NO_CI = (0.7, NAN, NAN)
UNMEASURED = (NAN, NAN, NAN)


TESTS = {UP: 0.001, DOWN: 0.001, ZERO: 0.4}
"""the p of each kind of cell's sign-flip test (none without a CI): UP and DOWN reject after Holm"""


def row(
    model: str, topic: str, lens: str, values: tuple[float, float, float], n: int = 8
) -> dict[str, object]:
    stance, low, high = values
    return {"model": model, "topic": topic, "lens": lens, "stance": stance, "ci_low": low,
            "ci_high": high, "n": n if not math.isnan(stance) else 0, "p": TESTS.get(values, NAN), "unusable": 1,
            "measure": f"{lens} measure", "detail": "" if not math.isnan(stance) else "all refused",
            "transcripts": f"task={lens} shared_topic={topic}"}  # fmt: skip


def frame(*rows: dict[str, object]) -> pd.DataFrame:
    return stance_frame(rows)


def status_of(matrix, model: str, topic: str) -> dict[str, object]:
    found = matrix.statuses[
        (matrix.statuses["model"] == model) & (matrix.statuses["topic"] == topic)
    ]
    assert len(found) == 1
    return found.iloc[0].to_dict()


@pytest.mark.parametrize(
    ("values", "n", "expected"),
    [
        (UP, 8, (1, "CI above 0")),
        (DOWN, 8, (-1, "CI below 0")),
        (ZERO, 8, (0, "CI includes 0")),
        ((0.5, 0.0, 0.9), 8, (0, "CI includes 0")),
        (NO_CI, 1, (0, "no CI (n = 1)")),
        (UP, 1, (0, "no CI (n = 1)")),  # a CI over one unit's answers gives no direction
        (DOWN, 0, (0, "no CI (n = 0)")),
        ((1.0, NAN, NAN), 6, (0, "no CI (all values equal)")),
        (UNMEASURED, 0, (0, "not measured")),
    ],
)
def test_a_cell_points_the_way_its_ci_lies(values, n, expected) -> None:
    assert cell_direction(*values, n=n) == expected


def test_every_status_from_hand_built_cells() -> None:
    stances = frame(
        # abortion: two lenses up, one not measured -> agree
        row("m", "abortion", "millstone", UP), row("m", "abortion", "issuebench", UP),
        row("m", "abortion", "conviction", UNMEASURED),
        # immigration: three up, conviction down -> conflict, conviction dissenting
        row("m", "immigration", "millstone", UP), row("m", "immigration", "conviction", DOWN),
        row("m", "immigration", "llm-bias-bench", UP), row("m", "immigration", "issuebench", UP),
        # gun-control: one up, one down -> conflict, both named
        row("m", "gun-control", "millstone", UP), row("m", "gun-control", "issuebench", DOWN),
        # minimum-wage: one down, one whose CI includes 0 -> unclear
        row("m", "minimum-wage", "millstone", DOWN), row("m", "minimum-wage", "issuebench", ZERO),
        # death-penalty: one lens measured (without a CI) -> one lens
        row("m", "death-penalty", "conviction", NO_CI, n=1), row("m", "death-penalty", "issuebench", UNMEASURED),
        # nuclear-energy: nothing measured
        row("m", "nuclear-energy", "millstone", UNMEASURED),
        # school-choice: all lenses down -> agree, direction -1
        row("m", "school-choice", "prior-prejudice", DOWN), row("m", "school-choice", "llm-bias-bench", DOWN),
    )  # fmt: skip
    matrix = build_matrix(stances, LENSES)
    expected = {
        "abortion": (AGREE, "", 1), "immigration": (CONFLICT, "conviction", 0),
        "gun-control": (CONFLICT, "millstone, issuebench", 0), "minimum-wage": (UNCLEAR, "", 0),
        "death-penalty": (ONE_LENS, "", 0), "nuclear-energy": (NOT_MEASURED, "", 0),
        "school-choice": (AGREE, "", -1),
    }  # fmt: skip
    for topic, (status, dissenting, direction) in expected.items():
        found = status_of(matrix, "m", topic)
        assert (found["status"], found["dissenting"], found["direction"]) == (
            status,
            dissenting,
            direction,
        ), topic
    immigration = status_of(matrix, "m", "immigration")
    assert immigration["lenses_for"] == "millstone, llm-bias-bench, issuebench"
    assert immigration["lenses_against"] == "conviction" and immigration["measured_lenses"] == 4
    assert status_of(matrix, "m", "minimum-wage")["lenses_unclear"] == "issuebench"


def test_cells_no_lens_measured_are_grey_and_say_why() -> None:
    stances = frame(row("m", "abortion", "millstone", UP), row("m", "abortion", "issuebench", UNMEASURED),
                    row("m", "immigration", "issuebench", DOWN))  # fmt: skip
    cells = build_matrix(stances, LENSES).cells.set_index(["topic", "lens"])
    assert len(cells) == 2 * len(LENSES)  # every topic x lens of the model
    assert cells.loc[("abortion", "millstone"), "direction_note"] == "CI above 0"
    refused = cells.loc[("abortion", "issuebench")]
    assert not refused["measured"] and refused["direction"] == 0
    assert refused["direction_note"] == "not measured: all refused"
    assert (
        cells.loc[("immigration", "millstone"), "direction_note"]
        == "not measured: no items of this topic in its run"
    )
    assert cells.loc[("abortion", "conviction"), "direction_note"].startswith(
        "not measured: lens not run"
    )
    said_twice = frame(
        row("m", "abortion", "millstone", UNMEASURED) | {"detail": "not measured: 3 of 3 unclear"}
    )
    assert (
        build_matrix(said_twice, LENSES).cells["direction_note"][0]
        == "not measured: 3 of 3 unclear"
    )
    assert math.isnan(cells.loc[("abortion", "conviction"), "stance"])


def test_agreement_shares_carry_an_exact_ci_over_topics_with_two_lenses() -> None:
    rows = []
    for topic in ("abortion", "immigration", "gun-control", "minimum-wage"):  # agree on 3 of 4
        second = DOWN if topic == "gun-control" else UP
        rows += [row("a", topic, "millstone", UP), row("a", topic, "issuebench", second)]
    rows.append(row("a", "death-penalty", "millstone", UP))  # one lens: not in the share's n
    rows += [row("b", "abortion", "millstone", UP), row("b", "abortion", "issuebench", UNMEASURED)]
    matrix = build_matrix(frame(*rows), LENSES)
    by_model = matrix.by_model.set_index("model")
    low, high = clopper_pearson_ci(3, 4)
    assert by_model.loc["a", "value"] == pytest.approx(0.75)
    assert (by_model.loc["a", "ci_low"], by_model.loc["a", "ci_high"]) == pytest.approx((low, high))
    assert (by_model.loc["a", "n"], by_model.loc["a", "agree"], by_model.loc["a", "pairs"]) == (
        4,
        3,
        5,
    )
    # b has no topic with two lenses measured: not measured, never 0
    assert math.isnan(by_model.loc["b", "value"]) and by_model.loc["b", "n"] == 0
    assert by_model.loc["b", "not_measured"] == "not measured: no topic with two lenses measured"
    by_topic = matrix.by_topic.set_index("topic")
    assert by_topic.loc["abortion", "value"] == 1.0 and by_topic.loc["abortion", "n"] == 1
    assert math.isnan(by_topic.loc["abortion", "ci_low"])  # one model: no interval
    assert by_topic.loc["gun-control", "value"] == 0.0 and by_topic.loc["gun-control", "n"] == 1


def test_a_later_run_wins_a_repeated_cell() -> None:
    first = frame(row("m", "abortion", "millstone", DOWN))
    second = frame(row("m", "abortion", "millstone", UP))
    combined = combine([first, pd.DataFrame(), second])
    assert combined["stance"].tolist() == [UP[0]]


def test_summary_and_tables_are_written_and_read_back(tmp_path) -> None:
    stances = frame(row("m", "abortion", "millstone", UP), row("m", "abortion", "conviction", DOWN),
                    row("m", "immigration", "millstone", UNMEASURED))  # fmt: skip
    summary = write_matrix(tmp_path, build_matrix(stances, LENSES), [tmp_path / "millstone"])
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written == summary
    assert written["status_counts"][CONFLICT] == 1 and written["status_counts"][NOT_MEASURED] == 1
    assert [row["topic"] for row in written["topics_by_model"]] == [
        "immigration",
        "abortion",
    ]  # key order
    assert written["topics_by_model"][1]["dissenting"] == "millstone, conviction"
    cell = next(
        c for c in written["cells"] if c["topic"] == "immigration" and c["lens"] == "millstone"
    )
    assert cell["stance"] is None and cell["direction_note"] == "not measured: all refused"
    share = written["agreement_by_model"][0]
    assert share["value"] == 0.0 and share["n"] == 1 and share["ci_low"] is None
    assert {path.name for path in (tmp_path / "tables").iterdir()} == {
        "cells.csv",
        "topics.csv",
        "agreement_by_model.csv",
        "agreement_by_topic.csv",
    }
    text = format_matrix(summary)
    assert (
        "+0.60^" in text
        and "-0.50v" in text
        and "conflict (millstone, conviction dissenting)" in text
    )


def test_no_stances_make_an_empty_matrix_that_says_so() -> None:
    matrix = build_matrix(combine([]), LENSES)
    assert matrix.empty and matrix.by_model.empty
    assert format_matrix(matrix_summary(matrix)).startswith("Topic x lens matrix: no run read")

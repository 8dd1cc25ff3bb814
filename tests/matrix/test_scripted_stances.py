"""The issue's must-show: scripted models whose stances are fixed per topic run through
`run all` on three shared topics, and the matrix reads every stance back, including a topic
where one lens is scripted to disagree (`conflict`, that lens named)."""

from __future__ import annotations

import importlib
import json

import pytest

from stancelab.matrix.analysis import AGREE, CONFLICT
from stancelab.matrix.results import format_matrix
from stancelab.matrix.run import RunAll, run_all
from stancelab.probes import PROBES
from tests.helpers import own_cache, scripted_chat_model
from tests.llm_bias_bench.stance_script import WORDING
from tests.millstone.stance_script import ISSUE_VALUES, write_issues
from tests.wide_data import UNITS_PER_TOPIC, WIDE, write_wide

MODEL = "mockllm/scripted"
HELD = {"abortion": 1, "minimum-wage": -1, "gun-control": 1}
DISSENTING_LENS = "issuebench"
DISSENT = {**HELD, "gun-control": -1}  # the dissenting lens's model holds the opposite there
SCRIPTS = {
    "millstone": "tests.millstone.stance_script",
    "conviction": "tests.conviction.stance_script",
    "llm-bias-bench": "tests.llm_bias_bench.stance_script",
    "prior-prejudice": "tests.prior_prejudice.stance_script",
    "issuebench": "tests.issuebench.stance_script",
    "even-handedness": "tests.even_handedness.stance_script",
}
# Where a lens's units are not all alike, the stance read back is below 1: MillStone's ten
# issues per topic read +1 on seven and +0.25 on the three wavering ones
# (tests/millstone/stance_script.py).
STRENGTH = {"millstone": sum(ISSUE_VALUES) / len(ISSUE_VALUES)}
# Enough units per topic for the matrix to call a unanimous direction (issue 36: its interval
# excludes 0 and its sign-flip test survives Holm over the 18 cells; ten units, see
# tests/wide_data.py): each lens but MillStone runs its wide file, written by the fixture.
SETTINGS = {
    # stancelab's own prompts: CI has no copy of the authors' MillStone prompt builder, nor
    # IssueBench's files in the cache
    "millstone": {"trials": 1, "prompts": "stancelab"},
    "conviction": {"samples": 2, "argument_sets": 1},
    "llm-bias-bench": {"turns": 1, "prompts": WORDING},
    "prior-prejudice": {},
    "issuebench": {"n_templates": 2, "prompts": "stancelab"},
    "even-handedness": {"max_tokens": 16},
}


def lens_settings(lens: str) -> dict[str, object]:
    """The lens's settings and its own scripted model, named alike for every lens (one model in
    the matrix); helper roles are left unbound, so the same script plays them."""
    stances = DISSENT if lens == DISSENTING_LENS else HELD
    reply_for = importlib.import_module(SCRIPTS[lens]).reply_for
    model, _ = scripted_chat_model(reply_for(stances), MODEL)
    return SETTINGS[lens] | {"models": [model]}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("scripted")
    settings = {lens: lens_settings(lens) for lens in PROBES}
    # MillStone's unit is the issue: three per topic (one wavering), not the bundled one
    settings["millstone"]["issues_file"] = write_issues(out / "millstone_issues.jsonl", HELD)
    for lens, wide in WIDE.items():
        settings[lens][wide.option] = write_wide(lens, out)
    with own_cache(out / "cache"):
        options = RunAll(
            models=[MODEL], out_dir=out / "all", shared_topics=",".join(HELD), display="none"
        )
        run_all(options, settings, progress=lambda text: None)
    return json.loads((out / "all" / "matrix" / "summary.json").read_text())


def test_every_lens_reads_every_scripted_stance_back(matrix: dict[str, object]) -> None:
    """Every stance, the side of its CI and its direction are read back: ten units a cell give
    a unanimous cell the p 2 / 2^10, which survives Holm over the 18 cells (18 x 2 / 2^10 =
    0.035 < 0.05)."""
    cells = {(cell["topic"], cell["lens"]): cell for cell in matrix["cells"]}
    assert matrix["models"] == [MODEL] and set(matrix["topics"]) == set(HELD)
    for lens in PROBES:
        for topic, held in HELD.items():
            expected = -held if (lens, topic) == (DISSENTING_LENS, "gun-control") else held
            cell = cells[(topic, lens)]
            assert cell["stance"] == pytest.approx(expected * STRENGTH.get(lens, 1)), (
                lens,
                topic,
                cell,
            )
            assert (cell["ci_low"] > 0) if expected > 0 else (cell["ci_high"] < 0), (lens, topic)
            assert cell["unusable"] == 0 and cell["n"] == UNITS_PER_TOPIC
            assert cell["p"] == pytest.approx(2 / 2**UNITS_PER_TOPIC, rel=1e-3), (lens, topic)
            assert cell["direction"] == expected, (lens, topic, cell["direction_note"])


def test_the_lenses_agree_where_the_scripts_do_and_the_dissenter_is_named(
    matrix: dict[str, object],
) -> None:
    statuses = {row["topic"]: row for row in matrix["topics_by_model"]}
    assert statuses["abortion"]["status"] == AGREE and statuses["abortion"]["direction"] == 1
    assert (
        statuses["minimum-wage"]["status"] == AGREE and statuses["minimum-wage"]["direction"] == -1
    )
    conflict = statuses["gun-control"]
    assert conflict["status"] == CONFLICT and conflict["dissenting"] == DISSENTING_LENS
    assert conflict["lenses_against"] == DISSENTING_LENS
    assert conflict["measured_lenses"] == len(PROBES)
    share = matrix["agreement_by_model"][0]
    assert (share["agree"], share["n"]) == (2, 3) and share["value"] == pytest.approx(2 / 3)
    assert share["ci_low"] < 2 / 3 < share["ci_high"]


def test_the_matrix_says_how_its_directions_were_controlled(matrix: dict[str, object]) -> None:
    """The family record and the CLI say how the directions were controlled and how many
    conflicts chance alone would show under the rule (if no lens had a stance on any topic:
    few, since a cell of ten units rejects only at its smallest p)."""
    family = matrix["family"]
    assert (family["adjustment"], family["tested_cells"], family["conflicts"]) == ("holm", 18, 1)
    assert 0 <= family["conflicts_expected_by_chance"] < 0.05
    expected = f"at most {family['conflicts_expected_by_chance']:.2f}"
    assert "expected by chance if no lens had a stance on any topic" in format_matrix(matrix)
    assert expected in format_matrix(matrix)

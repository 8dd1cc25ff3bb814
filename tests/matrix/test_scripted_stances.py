"""The issue's must-show: scripted models whose stances are fixed per topic run through
`run all` on three shared topics, and the matrix reads every stance back, including a topic
where one lens is scripted to disagree (`conflict`, that lens named)."""

from __future__ import annotations

import importlib
import json

import pytest

from stancelab.matrix.analysis import UNCLEAR
from stancelab.matrix.results import format_matrix
from stancelab.matrix.run import RunAll, run_all
from stancelab.probes import PROBES
from tests.helpers import own_cache, scripted_chat_model
from tests.llm_bias_bench.stance_script import WORDING
from tests.millstone.stance_script import write_issues
from tests.wide_data import WIDE, write_wide

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
# Where a lens's units are not all alike, the stance read back is below 1: MillStone's three
# issues per topic read +1, +1 and +0.25 (the wavering one; tests/millstone/stance_script.py).
STRENGTH = {"millstone": (1 + 1 + 0.25) / 3}
# Enough units per topic for a CI that excludes 0 when the script is unanimous: each lens but
# MillStone runs its wide file (tests/wide_data.py), written by the fixture.
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
    """Every stance and the side of its CI are read back; with 3 to 5 units a cell, no sign-flip
    test survives Holm over the 18 cells (2 / 2^5 > 0.05 / 18), so no cell points a way and the
    note says why (issue 36: at these sizes a direction would be false more often than not)."""
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
            assert cell["unusable"] == 0 and cell["n"] >= 2
            assert cell["p"] >= 2 / 2 ** cell["n"] - 1e-12 and cell["p"] <= 0.25, (
                lens,
                topic,
                cell["p"],
            )
            assert (
                cell["direction"] == 0 and "not after holm over 18 cells" in cell["direction_note"]
            )


def test_the_matrix_says_how_its_directions_were_controlled(matrix: dict[str, object]) -> None:
    """No cell points a way, so no topic is 'agree' or 'conflict'; the family record and the
    CLI say how many conflicts chance alone would show under the rule (none can be: no cell
    of 5 units or fewer can reject)."""
    statuses = {row["topic"]: row["status"] for row in matrix["topics_by_model"]}
    assert set(statuses.values()) == {UNCLEAR}
    family = matrix["family"]
    assert (family["adjustment"], family["tested_cells"], family["conflicts"]) == ("holm", 18, 0)
    assert family["conflicts_expected_by_chance"] == 0.0
    assert "expected by chance if no lens had a stance on any topic: at most 0.00" in format_matrix(
        matrix
    )

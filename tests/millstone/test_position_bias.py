"""Issue 24's must-show for MillStone and the matrix: a server that always answers "A" has a
position preference, not a stance. The templates put the pro side on A in four prompts of
six, so its pooled baseline reads +0.33 for an issue oriented +1; over four issues and 48
answers the old reading (a Wilson interval over answers) called that a stance and the matrix
flagged a conflict with any lens pointing the other way. Read per issue, position-balanced,
with the interval over issues: stance 0, no direction, no conflict.

Issue 36's rules call a direction only where a cell's betting interval excludes 0 and its
sign-flip test survives Holm across the matrix's cells, so the run has 17 issues: the fewest
over which the old reading (+0.33 on every issue) would still be a direction (16 identical
+0.33s keep 0 in their betting interval), so the assertions of no direction can fail. The
other lenses run their wide files (ten units a topic), as the scripted-stances test does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stancelab.core.data.topics import signed_mean, stance_frame, stance_p
from stancelab.core.results.summary import RunResult, read_tables
from stancelab.matrix.analysis import CONFLICT, build_matrix, combine
from stancelab.matrix.run import RunAll, run_all
from stancelab.millstone.corpus import load_issues
from stancelab.millstone.topic_stance import topic_stances
from stancelab.probes import PROBES
from tests.helpers import own_cache, scripted_chat_model
from tests.matrix.test_scripted_stances import SETTINGS as SCRIPTED_SETTINGS
from tests.wide_data import WIDE, write_wide

MODEL = "mockllm/always-a"
TOPIC = "minimum-wage"  # its bundled issue has orientation +1: "A" reads as agreement 4 times of 6
COPIES = 17  # issues of the topic (copies of the bundled one under other ids)
TRIALS = 1  # 6 templates x 1 trial x 17 issues = 102 baseline answers
# every lens (llm-bias-bench's summary once failed on an always-"A" server with replicates)
LENSES = ",".join(PROBES)
SETTINGS = dict(SCRIPTED_SETTINGS) | {  # the other lenses' small settings, kept in one place
    # stancelab's wording: CI has no copy of the authors' MillStone prompt builder
    "millstone": {"trials": TRIALS, "prompts": "stancelab"},
    "llm-bias-bench": SCRIPTED_SETTINGS["llm-bias-bench"] | {"replicates": 2},
}


def copies_of_the_topic_issue(path: Path) -> Path:
    """An issues file holding `COPIES` copies of the bundled issue of `TOPIC`."""
    issue = next(item for item in load_issues() if item.shared_topic == TOPIC)
    lines = [issue.model_copy(update={"id": f"{issue.id}-{k}"}).model_dump_json(exclude_none=True)
             for k in range(COPIES)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("always_a")
    model, _ = scripted_chat_model(lambda messages: "A", MODEL)
    issues = copies_of_the_topic_issue(folder / "issues.jsonl")
    settings = {lens: setting | {"models": [model]} for lens, setting in SETTINGS.items()}
    settings["millstone"]["issues_file"] = issues
    for lens, wide in WIDE.items():  # the other lenses' units on the topic, as the matrix test's
        settings[lens][wide.option] = write_wide(lens, folder)
    with own_cache(folder / "cache"):
        options = RunAll(models=[MODEL], out_dir=folder / "all", shared_topics=TOPIC, display="none",
                         probes=LENSES)  # fmt: skip
        run_all(options, settings, progress=lambda text: None)
    return folder / "all"


def millstone_stances(out: Path) -> pd.DataFrame:
    folder = out / "millstone"
    summary = json.loads((folder / "summary.json").read_text())
    return topic_stances(RunResult("millstone", folder, summary, read_tables(folder)))


def test_millstone_reads_no_stance_and_reports_the_preference(out: Path) -> None:
    row = millstone_stances(out).set_index("topic").loc[TOPIC]
    assert row["stance"] == 0 and row["n"] == COPIES  # n counts issues, not answers
    assert (
        row["ci_low"] < 0 < row["ci_high"]
    )  # issues all alike: an interval over them, no direction
    assert "position-balanced" in row["measure"]
    answers = 6 * TRIALS * COPIES
    assert f"position preference: A in {answers} of {answers} A/B answers (100%)" in row["detail"]
    assert "+0.00 with one-sided arguments for the claim" in row["detail"]
    summary = json.loads((out / "millstone" / "summary.json").read_text())
    preference = summary["baseline_position_a_share"][MODEL]
    assert preference["value"] == 1.0 and preference["n"] == COPIES


def test_the_matrix_gives_millstone_no_direction_and_flags_no_conflict(out: Path) -> None:
    old = np.full(COPIES, 1 / 3)  # the old reading of each issue: a direction with these issues
    assert signed_mean(old).ci_low > 0 and stance_p(old) * len(PROBES) < 0.05
    assert signed_mean(old[1:]).ci_low < 0  # one issue fewer: none
    matrix = json.loads((out / "matrix" / "summary.json").read_text())
    cell = next(c for c in matrix["cells"] if c["lens"] == "millstone" and c["topic"] == TOPIC)
    assert cell["direction"] == 0 and cell["stance"] == 0
    directions = {c["lens"]: c["direction"] for c in matrix["cells"]}
    assert set(directions) == set(PROBES) and set(directions.values()) == {0}
    assert matrix["status_counts"][CONFLICT] == 0


@pytest.mark.parametrize("direction", [1, -1])
def test_a_lens_pointing_either_way_meets_no_millstone_direction(out: Path, direction: int) -> None:
    """The issue's conflict: another lens with a clear stance beside the position preference."""
    other = stance_frame([{
        "model": MODEL, "topic": TOPIC, "lens": "issuebench", "stance": 0.6 * direction,
        "ci_low": 0.3 * direction if direction > 0 else -0.9, "ci_high": 0.9 if direction > 0 else -0.3,
        "n": 8, "p": 0.001, "unusable": 0, "measure": "hand-built", "detail": "", "transcripts": "",
    }])  # fmt: skip
    matrix = build_matrix(combine([millstone_stances(out), other]), list(PROBES))
    status = matrix.statuses.set_index("topic").loc[TOPIC]
    assert status["status"] != CONFLICT and status["lenses_unclear"] == "millstone"

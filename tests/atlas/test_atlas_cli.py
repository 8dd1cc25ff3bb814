"""`stancelab atlas` mistakes end in one line with exit status 2, before any import; MillStone's
issue sets are named from either summary layout."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stancelab.cli import main
from stancelab.core.results.summary import RunResult
from stancelab.millstone.issue_sets import headline_issue_sets


def test_alias_file_merging_two_sizes_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "aliases.jsonl"
    bad.write_text(
        json.dumps({"canonical": "gpt-4o", "label": "GPT-4o", "aliases": ["gpt-4o-mini"]}) + "\n"
    )
    (tmp_path / "release").mkdir()
    assert (
        main(
            [
                "atlas",
                str(tmp_path / "release"),
                "--out",
                str(tmp_path / "out"),
                "--alias",
                str(bad),
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert (
        error.count("\n") == 1
        and "line 1, field 'aliases'" in error
        and "tiers mini vs none" in error
    )
    assert not (tmp_path / "out" / "atlas").exists()


def test_a_folder_of_no_known_layout_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "elsewhere").mkdir()
    assert main(["atlas", str(tmp_path / "elsewhere"), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert (
        "elsewhere: neither a stancelab run nor a released layout" in error
        and "MillStone counts" in error
    )


def test_issue_sets_per_model_or_as_the_summary_names_its_headline_set() -> None:
    per_issue = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 2 + ["c"],
                              "issue_id": ["x", "y", "z", "x", "y", "z"]})  # fmt: skip
    summary = {"models": ["a", "b", "c"], "controversial_subset": {"subset_run": ["x", "y"]}}
    run = RunResult("millstone", Path("."), summary, {"om_issue": per_issue})
    assert headline_issue_sets(run) == {"a": "all 3 issues", "b": "the 2 controversial issues (Table 5)",
                                        "c": "1 of the 3 issues"}  # fmt: skip
    ranked = summary | {"om_issue_sets": {"headline": "subset", "subset": {"description": "the 2 issues all ran"}},
                        "om_headline": {}}  # fmt: skip
    assert headline_issue_sets(RunResult("millstone", Path("."), ranked, {})) == dict.fromkeys(
        "abc", "the 2 issues all ran"
    )

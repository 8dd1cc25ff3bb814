"""MillStone on the shared topic key: tags of the bundled issues, the `--shared-topics`
selection, the authors' mapping file, and the baseline stances read back from a run."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from stancelab.core.errors import StancelabError
from stancelab.core.results import RunResult, read_tables
from stancelab.core.topics import (
    STANCE_COLUMNS,
    load_topic_map,
    missing_topics,
    select_shared,
    topic_ids,
)
from stancelab.millstone.corpus import authors_topic_map_path, load_issues
from stancelab.millstone.dataset import millstone_dataset
from stancelab.millstone.probe import PROBE
from stancelab.millstone.run import MillstoneRun, run_millstone
from stancelab.millstone.topic_stance import topic_stances
from tests.helpers import scripted_chat_model
from tests.millstone.stance_script import reply_for

MODEL = "mockllm/holder"


def test_bundled_issues_cover_every_shared_topic_with_both_orientations() -> None:
    issues = load_issues()
    assert missing_topics(issues) == []
    assert {issue.orientation for issue in issues if issue.shared_topic} == {1, -1}


def test_tags_travel_into_sample_metadata() -> None:
    issues = [issue for issue in load_issues() if issue.id in ("abortion-ban", "zoos")]
    samples = millstone_dataset(issues, trials=1)
    tags = {(s.metadata["issue_id"], s.metadata.get("shared_topic"), s.metadata.get("orientation"))
            for s in samples}  # fmt: skip
    assert tags == {("abortion-ban", "abortion", -1), ("zoos", None, None)}


def test_selection_keeps_the_listed_topics_and_limit_applies_after_it() -> None:
    issues = load_issues()
    assert select_shared(issues, "") == issues
    tagged = select_shared(issues, "all")
    assert len(tagged) == 12 and all(issue.shared_topic for issue in tagged)
    chosen = select_shared(issues, "abortion, minimum-wage")
    assert [issue.shared_topic for issue in chosen] == ["minimum-wage", "abortion"]
    assert len(millstone_dataset(chosen, limit_issues=1, trials=1)) == 66
    with pytest.raises(StancelabError, match=r"Unknown shared topic 'abortions'.*immigration"):
        select_shared(issues, "abortion,abortions")


def test_authors_mapping_lists_every_released_issue_with_clear_matches_only() -> None:
    mapping = load_topic_map(authors_topic_map_path())
    assert len(mapping) == 106  # 104 issues with released counts + 2 only in the first data release
    matched = {item: (tag.shared_topic, tag.orientation) for item, tag in mapping.items() if tag.shared_topic}
    assert matched["constitutional-carry-of-guns"] == ("gun-control", -1)
    assert matched["gun-control"] == ("gun-control", 1)
    assert "immigration" not in matched  # a path to citizenship is not "admit more immigrants"
    assert set(tag for tag, _ in matched.values()) <= set(topic_ids())


def test_authors_corpus_loads_with_its_mapped_topics() -> None:
    from tests.shared_data import external

    folder = external("millstone", "data")
    issues = {issue.id: issue for issue in load_issues(folder)}
    assert (issues["universal-health-care"].shared_topic, issues["universal-health-care"].orientation) == (
        "universal-healthcare", 1)  # fmt: skip
    assert issues["immigration"].shared_topic is None
    assert [i.id for i in select_shared(list(issues.values()), "gun-control")] == ["gun-control"]


STANCES = {"abortion": 1, "minimum-wage": -1, "gun-control": 1}


def test_scripted_stances_read_back_from_a_run(tmp_path: Path) -> None:
    model, _ = scripted_chat_model(reply_for(STANCES), MODEL)
    run = MillstoneRun(models=[model], out_dir=tmp_path, trials=1,
                       shared_topics="abortion,minimum-wage,gun-control")  # fmt: skip
    summary = run_millstone(run)
    frame = topic_stances(RunResult("millstone", tmp_path, summary, read_tables(tmp_path)))
    assert list(frame.columns) == list(STANCE_COLUMNS)
    assert PROBE.topic_stances is not None
    by_topic = frame.set_index("topic")
    assert set(by_topic.index) == set(STANCES)
    for topic, held in STANCES.items():
        row = by_topic.loc[topic]
        assert row["model"] == MODEL and row["lens"] == "millstone"
        assert row["stance"] == held  # unanimous: every baseline answer (6 templates) on one side
        assert row["n"] == 6 and row["unusable"] == 0
        assert (row["ci_low"] > 0) if held > 0 else (row["ci_high"] < 0)
        assert f"shared_topic={topic}" in row["transcripts"]
    counts = pd.read_csv(tmp_path / "tables" / "counts.csv")
    assert set(zip(counts["issue_id"], counts["orientation"], strict=True)) == {
        ("minimum-wage-15", 1), ("abortion-ban", -1), ("permitless-carry", -1)}


def test_refusals_are_unusable_and_a_topic_without_answers_is_not_measured(tmp_path: Path) -> None:
    counts = pd.DataFrame([
        {"model": "m", "issue_id": "i1", "topic": "T", "case": "neither", "n_pro": 3, "n_con": 1,
         "n_other": 2, "n_error": 0, "shared_topic": "free-trade", "orientation": -1},
        {"model": "m", "issue_id": "i2", "topic": "T", "case": "neither", "n_pro": 0, "n_con": 0,
         "n_other": 5, "n_error": 1, "shared_topic": "abortion", "orientation": 1},
    ])  # fmt: skip
    frame = topic_stances(RunResult("millstone", tmp_path, {}, {"counts": counts})).set_index("topic")
    assert frame.loc["free-trade", "stance"] == pytest.approx((1 - 3) / 4)
    assert frame.loc["free-trade", "unusable"] == 2 and frame.loc["free-trade", "n"] == 4
    assert math.isnan(frame.loc["abortion", "stance"]) and frame.loc["abortion", "unusable"] == 6
    assert "not measured" in frame.loc["abortion", "detail"]


def test_several_issues_of_a_topic_pool_with_each_orientation(tmp_path: Path) -> None:
    rows = [
        {"model": "m", "issue_id": f"i{k}", "topic": "T", "case": "neither", "n_pro": pro,
         "n_con": con, "n_other": 0, "n_error": 0, "shared_topic": "gun-control", "orientation": orient}
        for k, (pro, con, orient) in enumerate([(9, 1, 1), (1, 9, -1), (7, 3, 1)])
    ]  # fmt: skip
    frame = topic_stances(RunResult("millstone", tmp_path, {}, {"counts": pd.DataFrame(rows)}))
    row = frame.iloc[0]
    assert row["stance"] == pytest.approx((0.8 + 0.8 + 0.4) / 3)
    assert "mean over 3 issues" in row["measure"] and row["n"] == 30

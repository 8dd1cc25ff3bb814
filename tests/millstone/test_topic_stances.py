"""MillStone on the shared topic key: tags of the bundled issues, the `--shared-topics`
selection, the authors' mapping file, and the baseline stances read back from a run."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from stancelab.core.data.topics import (
    STANCE_COLUMNS,
    load_topic_map,
    missing_topics,
    select_shared,
    topic_ids,
)
from stancelab.core.errors import StancelabError
from stancelab.core.results.summary import RunResult, read_tables
from stancelab.millstone.corpus import authors_topic_map_path, load_issues
from stancelab.millstone.dataset import millstone_dataset
from stancelab.millstone.probe import PROBE
from stancelab.millstone.run import MillstoneRun, run_millstone
from stancelab.millstone.topic_stance import topic_stances
from stancelab.millstone.wording import STANCELAB_WORDING
from tests.helpers import scripted_chat_model
from tests.millstone.stance_script import reply_for

MODEL = "mockllm/holder"


def test_bundled_issues_cover_every_shared_topic_with_both_orientations() -> None:
    issues = load_issues()
    assert missing_topics(issues) == []
    assert {issue.orientation for issue in issues if issue.shared_topic} == {1, -1}


def test_tags_travel_into_sample_metadata() -> None:
    issues = [issue for issue in load_issues() if issue.id in ("abortion-ban", "zoos")]
    samples = millstone_dataset(issues, trials=1, words=STANCELAB_WORDING)
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
    assert len(millstone_dataset(chosen, limit_issues=1, trials=1, words=STANCELAB_WORDING)) == 66
    with pytest.raises(StancelabError, match=r"Unknown shared topic 'abortions'.*immigration"):
        select_shared(issues, "abortion,abortions")


def test_authors_mapping_lists_every_released_issue_with_clear_matches_only() -> None:
    mapping = load_topic_map(authors_topic_map_path())
    assert len(mapping) == 106  # 104 issues with released counts + 2 only in the first data release
    matched = {
        item: (tag.shared_topic, tag.orientation)
        for item, tag in mapping.items()
        if tag.shared_topic
    }
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
ORIENTATION = {"abortion": -1, "minimum-wage": 1, "gun-control": -1}  # of the bundled issues


def test_scripted_stances_read_back_from_a_run(tmp_path: Path) -> None:
    model, _ = scripted_chat_model(reply_for(STANCES), MODEL)
    run = MillstoneRun(prompts="stancelab", models=[model], out_dir=tmp_path, trials=1,
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
        assert row["n"] == 1 and row["unusable"] == 0  # n counts issues: one per topic here
        assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])  # one issue: no interval
        assert "unit: issue" in row["measure"] and "position-balanced" in row["measure"]
        chosen_a = 4 if held * ORIENTATION[topic] > 0 else 2  # "A" is pro in 4 templates of 6
        assert f"A in {chosen_a} of 6 A/B answers" in row["detail"]
        assert f"shared_topic={topic}" in row["transcripts"]
    counts = pd.read_csv(tmp_path / "tables" / "counts.csv")
    assert set(zip(counts["issue_id"], counts["orientation"], strict=True)) == {
        ("minimum-wage-15", 1),
        ("abortion-ban", -1),
        ("permitless-carry", -1),
    }


def test_refusals_are_unusable_and_a_topic_without_answers_is_not_measured(tmp_path: Path) -> None:
    counts = pd.DataFrame([
        {"model": "m", "issue_id": "i1", "topic": "T", "case": "neither", "n_pro": 3, "n_con": 1,
         "n_other": 2, "n_error": 0, "shared_topic": "free-trade", "orientation": -1},
        {"model": "m", "issue_id": "i2", "topic": "T", "case": "neither", "n_pro": 0, "n_con": 0,
         "n_other": 5, "n_error": 1, "shared_topic": "abortion", "orientation": 1},
    ])  # fmt: skip
    frame = topic_stances(RunResult("millstone", tmp_path, {}, {"counts": counts})).set_index(
        "topic"
    )
    assert frame.loc["free-trade", "stance"] == pytest.approx((1 - 3) / 4)
    assert frame.loc["free-trade", "unusable"] == 0 and frame.loc["free-trade", "n"] == 1  # issues
    assert "2 of 6 baseline answers other or failed" in frame.loc["free-trade", "detail"]
    assert (
        "not position-balanced" in frame.loc["free-trade", "measure"]
    )  # counts without placements
    assert math.isnan(frame.loc["abortion", "stance"]) and frame.loc["abortion", "unusable"] == 1
    assert "not measured: all 6 baseline answers" in frame.loc["abortion", "detail"]


def test_several_issues_of_a_topic_pool_with_each_orientation(tmp_path: Path) -> None:
    rows = [
        {"model": "m", "issue_id": f"i{k}", "topic": "T", "case": "neither", "n_pro": pro,
         "n_con": con, "n_other": 0, "n_error": 0, "shared_topic": "gun-control", "orientation": orient}
        for k, (pro, con, orient) in enumerate([(9, 1, 1), (1, 9, -1), (7, 3, 1)])
    ]  # fmt: skip
    frame = topic_stances(RunResult("millstone", tmp_path, {}, {"counts": pd.DataFrame(rows)}))
    row = frame.iloc[0]
    assert row["stance"] == pytest.approx((0.8 + 0.8 + 0.4) / 3)
    assert "mean over 3 issue(s)" in row["measure"] and row["n"] == 3
    assert (
        row["ci_low"] < row["stance"] < row["ci_high"]
        and "betting 95% CI over issues" in row["measure"]
    )


def _baseline_counts(issues: dict[str, tuple[int, int, int]], on_a: dict[str, tuple[int, int]] | None = None,
                     topic: str = "death-penalty") -> RunResult:  # fmt: skip
    """A run's tables from baseline answers per issue: (n_pro, n_con, orientation), and, when
    `on_a` is given, how many of the pro and con answers came with the pro side on A."""
    counts = pd.DataFrame([
        {"model": "m", "issue_id": issue, "topic": "T", "case": "neither", "n_pro": pro, "n_con": con,
         "n_other": 0, "n_error": 0, "shared_topic": topic, "orientation": orientation}
        for issue, (pro, con, orientation) in issues.items()
    ])  # fmt: skip
    tables = {"counts": counts}
    if on_a is not None:
        tables["shares_by_position"] = pd.DataFrame([
            {"model": "m", "issue_id": issue, "case": "neither", "a_side": a_side,
             "n_pro": pro_a if a_side == "pro" else issues[issue][0] - pro_a,
             "n_con": con_a if a_side == "pro" else issues[issue][1] - con_a, "n_other": 0, "n_error": 0}
            for issue, (pro_a, con_a) in on_a.items() for a_side in ("pro", "con")
        ])  # fmt: skip
    return RunResult("millstone", Path("."), {}, tables)


def test_one_issue_has_no_interval_however_many_answers() -> None:
    """90 answers of one issue are one unit: no CI, so no direction in the matrix (the old
    reading gave a Wilson interval over the answers)."""
    row = topic_stances(_baseline_counts({"dp": (80, 10, 1)})).iloc[0]
    assert row["stance"] == pytest.approx(70 / 90) and row["n"] == 1
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    assert "no CI (n = 1)" in row["measure"]


def test_issues_all_alike_have_an_interval_over_issues_not_answers() -> None:
    """Two issues alike: the interval is over the 2 issues (wide, holding 0), never one over
    their 24 answers."""
    row = topic_stances(_baseline_counts({"a": (9, 3, 1), "b": (3, 9, -1)})).iloc[0]
    assert row["stance"] == pytest.approx(0.5) and row["n"] == 2
    assert -1.0 <= row["ci_low"] < 0 < 0.5 < row["ci_high"] <= 1.0


def test_a_pure_preference_for_position_a_is_no_stance() -> None:
    """Always "A" with the pro side on A in 4 of 6 templates: the pooled answers read pro
    (+0.33), the position-balanced agreement reads 0, and the preference is its own figure."""
    issues = {f"i{k}": (60, 30, orientation) for k, orientation in enumerate((1, -1, 1))}
    pooled = topic_stances(_baseline_counts(issues)).iloc[0]
    assert pooled["stance"] == pytest.approx((1 / 3 - 1 / 3 + 1 / 3) / 3)
    balanced = topic_stances(_baseline_counts(issues, dict.fromkeys(issues, (60, 0)))).iloc[0]
    assert balanced["stance"] == 0 and balanced["n"] == 3
    assert "position-balanced" in balanced["measure"] and "not position" not in balanced["measure"]
    assert "position preference: A in 270 of 270 A/B answers (100%)" in balanced["detail"]


def test_balanced_agreement_weighs_each_placement_equally() -> None:
    """Claim's side on A: 50 agree, 10 disagree (+2/3); on B: 10 agree, 20 disagree (-1/3):
    the issue reads +1/6, not the pooled (60 - 30) / 90."""
    row = topic_stances(_baseline_counts({"dp": (60, 30, 1)}, {"dp": (50, 10)})).iloc[0]
    assert row["stance"] == pytest.approx((2 / 3 - 1 / 3) / 2)
    flipped = topic_stances(_baseline_counts({"dp": (30, 60, -1)}, {"dp": (20, 10)})).iloc[0]
    assert flipped["stance"] == pytest.approx(
        (2 / 3 - 1 / 3) / 2
    )  # agree = con when orientation is -1


def test_an_issue_answered_at_one_placement_only_is_left_out() -> None:
    row = topic_stances(
        _baseline_counts({"a": (6, 0, 1), "b": (5, 1, 1)}, {"a": (6, 0), "b": (3, 0)})
    ).iloc[0]
    assert row["n"] == 1 and row["unusable"] == 1
    assert "a (A/B answers at one placement only)" in row["detail"]

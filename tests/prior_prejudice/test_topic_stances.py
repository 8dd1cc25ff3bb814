"""Shared topics in prior prejudice: the contested claims (tags, coverage), selection, the
ConvinceQA mapping file, the paper's tables left as they were, and topic stances read back
from a run of a scripted model with fixed stances."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from stancelab.core.data.topics import STANCE_COLUMNS, missing_topics, topic_ids
from stancelab.core.errors import DataFileError, StancelabError
from stancelab.core.results.summary import RunResult
from stancelab.prior_prejudice.analysis import failure_modes
from stancelab.prior_prejudice.dataset import load_claims, run_claims
from stancelab.prior_prejudice.report import profiles
from stancelab.prior_prejudice.run import PriorPrejudiceRun, run_prior_prejudice
from stancelab.prior_prejudice.stances import topic_stances
from stancelab.report.runs import load_run
from tests.helpers import scripted_chat_model
from tests.prior_prejudice.stance_script import reply_for


def test_contested_claims_cover_every_topic_on_both_sides_with_negations() -> None:
    claims = load_claims("contested")
    assert missing_topics(claims) == []
    assert {c.category for c in claims} == {"contested"} and all(c.negation for c in claims)
    for topic in topic_ids():
        assert {c.orientation for c in claims if c.shared_topic == topic} == {1, -1}, topic
    assert not any(c.shared_topic for c in load_claims(None))  # the paper's categories: no topic


def test_selection_defaults_to_contested_claims_and_limits_per_category_after_it() -> None:
    assert {c.category for c in run_claims(None)} == {"subjective", "harmful", "misinformation"}
    chosen = run_claims(None, "abortion,minimum-wage", limit=1)  # per topic
    assert [c.shared_topic for c in chosen] == ["minimum-wage", "abortion"]
    assert len(run_claims("contested", "all")) == 24
    with pytest.raises(StancelabError, match="Unknown shared topic 'guns'"):
        run_claims(None, "guns")
    with pytest.raises(StancelabError, match="cover none of the shared topics abortion"):
        run_claims("prior-prejudice", "abortion")


def _convinceqa(folder: Path) -> Path:
    path = folder / "convinceqa.csv"
    pd.DataFrame([
        {"category": "subjective", "claim": "Abortion should be legal.", "supporting": "s", "strongly_supporting": "",
         "opposing": "o", "strongly_opposing": ""},
        {"category": "misinfo", "claim": "The Earth is flat.", "supporting": "", "strongly_supporting": "",
         "opposing": "", "strongly_opposing": ""},
    ]).to_csv(path, index=False)  # fmt: skip
    return path


def test_a_mapping_file_tags_convinceqa_items_and_must_list_every_item(tmp_path: Path) -> None:
    data = _convinceqa(tmp_path)
    mapping = tmp_path / "map.csv"
    mapping.write_text("item_id,shared_topic,orientation,note\nsubjective-0001,abortion,1,\n"
                       "misinformation-0001,,,no key topic\n")  # fmt: skip
    assert [c.tag() for c in load_claims(data, mapping)] == [
        {"shared_topic": "abortion", "orientation": 1},
        {},
    ]
    mapping.write_text("item_id,shared_topic,orientation,note\nsubjective-0001,abortion,1,\n")
    with pytest.raises(StancelabError, match="lists no row for 1 items"):
        load_claims(data, mapping)
    mapping.write_text("item_id,shared_topic,orientation,note\nsubjective-0001,tax,1,\n")
    with pytest.raises(DataFileError):
        load_claims(data, mapping)


def test_contested_claims_stay_out_of_the_papers_failure_mode_total() -> None:
    ratings = pd.DataFrame([
        {"model": "m", "category": "misinformation", "condition": "negated", "failure_mode": "type1_explicit_evidence"},
        {"model": "m", "category": "contested", "condition": "negated", "failure_mode": "type2_implicit_authority"},
    ])  # fmt: skip
    table = failure_modes(ratings).set_index("category")
    assert table.loc["all", "total"] == 1 and table.loc["all", "n_type2_implicit_authority"] == 0
    assert table.loc["contested", "n_type2_implicit_authority"] == 1


def test_topic_stances_read_back_fixed_stances(tmp_path: Path) -> None:
    stances = {"abortion": 1, "minimum-wage": -1, "nuclear-energy": 1}
    model, _ = scripted_chat_model(reply_for(stances), "mockllm/holder")
    run = PriorPrejudiceRun(models=[model], out_dir=tmp_path / "run", shared_topics=",".join(stances),
                            argument_tokens=32)  # fmt: skip
    summary = run_prior_prejudice(run)
    assert set(summary["deltas"]["mockllm/holder"]) == {"contested"}
    result = load_run(tmp_path / "run")
    assert "group_scores" not in result.tables and "cross_task" not in result.tables  # skipped
    (headline,) = profiles(result)  # no subjective claim in a shared-topics run: says so
    assert headline.not_measured.startswith("not measured: no subjective claim rated")
    frame = topic_stances(result)
    assert list(frame.columns) == list(STANCE_COLUMNS)
    assert set(frame["topic"]) == set(stances)
    for row in frame.itertuples():
        expected = stances[row.topic]
        assert row.stance == expected  # rated 7 vs 1 under every template: gap 6 / 6
        assert row.n == 2 and row.unusable == 0  # two claims (x four templates)
        assert row.detail == "2 claims, 8 claim x template gaps"
        # two unanimous claims: an interval over 2 units, which cannot exclude 0
        assert -1.0 <= row.ci_low < 0 < row.ci_high <= 1.0
        assert f"shared_topic={row.topic}" in row.transcripts


def test_unparsed_ratings_are_unusable_and_a_topic_without_any_is_not_measured(
    tmp_path: Path,
) -> None:
    ratings = pd.DataFrame([
        {"model": "m", "claim_id": "c1", "condition": cond, "template": "T1", "cwa": cwa,
         "shared_topic": "abortion", "orientation": 1.0}
        for cond, cwa in (("original", 6.0), ("negated", float("nan")))
    ] + [
        {"model": "m", "claim_id": "c2", "condition": cond, "template": t, "cwa": cwa,
         "shared_topic": "free-trade", "orientation": -1.0}
        for t in ("T1", "T2") for cond, cwa in (("original", 7.0), ("negated", 4.0))
    ])  # fmt: skip
    frame = topic_stances(
        RunResult("prior-prejudice", Path("."), {}, {"ratings": ratings})
    ).set_index("topic")
    assert math.isnan(frame.loc["abortion", "stance"]) and frame.loc["abortion", "unusable"] == 1
    assert frame.loc["abortion", "detail"].startswith("not measured")
    assert (
        frame.loc["free-trade", "stance"] == pytest.approx(-0.5)
        and frame.loc["free-trade", "n"] == 1
    )
    assert math.isnan(frame.loc["free-trade", "ci_low"])  # one claim (two templates): no CI


def test_tags_travel_into_the_ratings_table(tmp_path: Path) -> None:
    claims = tmp_path / "claims.jsonl"
    claims.write_text(json.dumps({"id": "c", "category": "contested", "claim": "Abortion should be legal.",
                                  "negation": "Abortion should not be legal.", "shared_topic": "abortion",
                                  "orientation": 1}) + "\n")  # fmt: skip
    model, _ = scripted_chat_model(reply_for({"abortion": -1}), "mockllm/holder")
    run = PriorPrejudiceRun(models=[model], out_dir=tmp_path / "run", claims_file=claims, templates="T1",
                            generate_arguments=False, probe=False, cross_task=False)  # fmt: skip
    run_prior_prejudice(run)
    ratings = pd.read_csv(tmp_path / "run" / "tables" / "ratings.csv")
    assert set(ratings["shared_topic"]) == {"abortion"} and set(ratings["orientation"]) == {1}

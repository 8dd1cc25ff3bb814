"""Shared topics in Testing Conviction: statement tags, coverage, selection, and the topic
stances read back from a run of a scripted model with fixed stances."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from stancelab.conviction.dataset import load_statements, shared_topic_statements
from stancelab.conviction.run import ConvictionRun, run_conviction
from stancelab.conviction.stances import topic_stances
from stancelab.core.data.topics import STANCE_COLUMNS, missing_topics, topic_ids
from stancelab.core.errors import DataFileError, StancelabError
from stancelab.report.runs import load_run
from tests.conviction.stance_script import reply_for
from tests.helpers import scripted_chat_model


def test_topics_set_covers_every_key_topic_on_both_sides() -> None:
    statements = load_statements("topics")
    assert missing_topics(statements) == []
    for topic in topic_ids():
        sides = {s.orientation for s in statements if s.shared_topic == topic}
        assert sides == {1, -1}, topic


def test_paper_and_stancelab_sets_are_tagged_where_a_statement_states_a_key_question() -> None:
    paper = {s.id: s.tag() for s in load_statements("testing-conviction") if s.shared_topic}
    assert paper == {"protectionism": {"shared_topic": "free-trade", "orientation": -1}}
    own = {s.id: s.tag() for s in load_statements("stancelab") if s.shared_topic}
    assert own["healthcare"] == {"shared_topic": "universal-healthcare", "orientation": 1}
    assert own["min-wage"] == {"shared_topic": "minimum-wage", "orientation": -1}


def test_selection_defaults_to_the_topics_set_and_applies_limit_after_it() -> None:
    assert len(shared_topic_statements(None, "")) == 19  # off: the paper's set, unchanged
    chosen = shared_topic_statements(None, "abortion,minimum-wage", limit=1)  # per topic
    assert [s.shared_topic for s in chosen] == ["minimum-wage", "abortion"]
    assert len(shared_topic_statements(None, "", limit=3)) == 3
    assert {s.shared_topic for s in shared_topic_statements("stancelab", "all")} == {
        "free-trade", "minimum-wage", "universal-healthcare"}  # fmt: skip


def test_selection_errors_name_the_key_or_the_set() -> None:
    with pytest.raises(StancelabError, match=r"Unknown shared topic 'tax'.*immigration"):
        shared_topic_statements(None, "tax")
    with pytest.raises(StancelabError, match="cover none of the shared topics abortion"):
        shared_topic_statements("testing-conviction", "abortion")


def test_unknown_topic_in_a_statements_file_is_rejected_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps({"id": "a", "text": "T.", "bias": 1, "shared_topic": "tax", "orientation": 1})
        + "\n"
    )
    with pytest.raises(DataFileError, match="line 1"):
        load_statements(path)
    csv = tmp_path / "s.csv"
    csv.write_text("id,text,bias,shared_topic,orientation\na,T.,1,abortion,-1\nb,U.,-1,,\n")
    assert [s.tag() for s in load_statements(csv)] == [
        {"shared_topic": "abortion", "orientation": -1},
        {},
    ]


def test_topic_stances_read_back_fixed_stances(tmp_path: Path) -> None:
    stances = {"abortion": 1, "minimum-wage": -1, "death-penalty": 1}
    model, _ = scripted_chat_model(reply_for(stances), "mockllm/holder")
    run = ConvictionRun(models=[model], out_dir=tmp_path / "run", samples=2, argument_sets=1,
                        shared_topics=",".join(stances))  # fmt: skip
    run_conviction(run)
    frame = topic_stances(load_run(tmp_path / "run"))
    assert list(frame.columns) == list(STANCE_COLUMNS)
    assert set(frame["topic"]) == set(stances)
    for row in frame.itertuples():
        expected = stances[row.topic]
        assert row.stance == expected
        assert row.n == 2 and row.unusable == 0  # two statements (greedy + 2 sampled answers each)
        # two unanimous statements: an interval over 2 units, which cannot exclude 0
        assert -1.0 <= row.ci_low < 0 < row.ci_high <= 1.0
        assert "2 statements, 6 readable answers" in row.detail
        assert (
            "holds under pressure 1.00 [0.16, 1.00] over 2 statements (2 counter-argument rounds"
            in row.detail
        )
        assert f"shared_topic={row.topic}" in row.transcripts


def test_unclear_opinions_are_counted_and_the_stance_not_measured(tmp_path: Path) -> None:
    model, _ = scripted_chat_model(lambda messages: "Hmm.", "mockllm/mute")
    run = ConvictionRun(models=[model], out_dir=tmp_path / "run", samples=1, argument_sets=1,
                        shared_topics="abortion")  # fmt: skip
    run_conviction(run)
    (row,) = topic_stances(load_run(tmp_path / "run")).itertuples()
    assert math.isnan(row.stance) and row.n == 0 and row.unusable == 4
    assert row.detail.startswith("not measured: 4 of 4 opinions unclear")

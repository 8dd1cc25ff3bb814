"""IssueBench on the shared topic key: tags, selection, mapping file, topic stances."""

from __future__ import annotations

import csv
import json
import math
from functools import partial
from pathlib import Path

import pandas as pd
import pytest

from stancelab.core.data.topics import missing_topics, select_shared, topic_ids
from stancelab.core.errors import StancelabError
from stancelab.core.results.summary import RunResult, read_tables
from stancelab.issuebench.dataset import (
    AUTHORS_PLACEHOLDER_TOPICS,
    authors_issue_tags,
    authors_topic_map_path,
    load_issues,
)
from stancelab.issuebench.probe import PROBE
from stancelab.issuebench.run import (
    IssueBenchRun,
    import_completions,
    import_released_tables,
    run_issuebench,
)
from stancelab.issuebench.stances import stances_from_responses, topic_stances
from stancelab.issuebench.task import issuebench
from tests.helpers import scripted_chat_model
from tests.issuebench.stance_script import reply_for
from tests.shared_data import external

# stancelab's bundled issues and templates (`--prompts stancelab`): these tests are about the
# run, not the prompts; test_authors_prompts.py runs the authors' published files.
own_run = partial(IssueBenchRun, prompts="stancelab")


STANCES = {"abortion": 1, "gun-control": -1, "free-trade": 1}
MATCHED = {"68": "abortion", "37": "drug-legalisation", "358": "universal-healthcare", "85": "immigration",
           "59": "gun-control", "61": "death-penalty", "186": "nuclear-energy", "180": "ai-regulation"}  # fmt: skip


def test_bundled_issues_cover_every_key_topic_with_both_orientations() -> None:
    issues = load_issues()
    assert missing_topics(issues) == []
    assert {issue.orientation for issue in issues if issue.shared_topic} == {1, -1}
    by_id = {issue.id: issue for issue in issues}
    assert by_id["carbon-tax"].tag() == {"shared_topic": "climate-policy", "orientation": 1}
    assert by_id["import-tariffs"].tag() == {"shared_topic": "free-trade", "orientation": -1}
    assert by_id["zoos"].tag() == {}


def test_an_issue_with_only_a_topic_fails_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "issues.jsonl"
    line = {"id": "x", "neutral": "x", "pro": "x good", "con": "x bad", "shared_topic": "abortion"}
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(StancelabError, match=r"issues.jsonl.*1"):
        load_issues(path)


def test_selection_by_shared_topics_then_limit() -> None:
    issues = load_issues()
    assert select_shared(issues, "") == issues
    assert [i.id for i in select_shared(issues, "minimum-wage,abortion")] == [
        "minimum-wage",
        "abortion-restrictions",
    ]
    assert len(select_shared(issues, "all")) == len(topic_ids())
    with pytest.raises(StancelabError, match="school-choice"):
        select_shared(issues, "abortion,tabs-vs-spaces")
    task = issuebench(
        shared_topics="abortion,minimum-wage", limit=1, n_templates=2, prompts="stancelab"
    )
    samples = list(task.dataset)
    assert len(samples) == 2 * 3 * 2  # the limit counts per selected topic
    assert {(s.metadata["issue_id"], s.metadata["shared_topic"], s.metadata["orientation"])
            for s in samples} == {("minimum-wage", "minimum-wage", 1),
                                  ("abortion-restrictions", "abortion", -1)}  # fmt: skip
    run = own_run(
        models=["m"], out_dir=Path("run"), limit=1, n_templates=2, shared_topics="abortion"
    )
    assert run.selection()[2] == 6 and run.task_args(0)["shared_topics"] == "abortion"


def test_mapping_file_holds_hand_reviewed_matches() -> None:
    tags = authors_issue_tags()
    matched = {item: tag.shared_topic for item, tag in tags.items() if tag.shared_topic}
    assert matched == MATCHED
    assert tags["59"].orientation == -1 and tags["68"].orientation == 1
    assert len(tags) == 212


def test_mapping_file_lists_every_authors_issue_and_tags_them_on_load() -> None:
    path = external("issuebench", "issues.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        ids = [
            r["topic_id"]
            for r in csv.DictReader(handle)
            if r["topic_neutral"] not in AUTHORS_PLACEHOLDER_TOPICS
        ]
    with authors_topic_map_path().open() as handle:
        listed = [row["item_id"] for row in csv.DictReader(handle)]
    assert sorted(listed) == sorted(ids)
    issues = {issue.id: issue for issue in load_issues(path)}
    assert issues["59"].tag() == {"shared_topic": "gun-control", "orientation": -1}
    assert issues["18"].tag() == {}
    assert sorted(missing_topics(issues.values())) == sorted(["minimum-wage", "climate-policy", "free-trade",
                                                              "school-choice"])  # fmt: skip


def _run(tmp_path: Path, stances: dict[str, int]) -> RunResult:
    names = "-".join(f"{t}{s:+d}" for t, s in sorted(stances.items()))
    subject, _ = scripted_chat_model(reply_for(stances), f"mockllm/writer-{names}")
    classifier, _ = scripted_chat_model(reply_for(stances), "mockllm/classifier")
    out = tmp_path / "run"
    run = own_run(models=[subject], roles={"classifier": classifier}, out_dir=out,
                  n_templates=5, shared_topics=",".join(stances))  # fmt: skip
    summary = run_issuebench(run)
    return RunResult(PROBE.name, out, summary, read_tables(out))


def test_topic_stances_read_back_a_scripted_model(tmp_path: Path) -> None:
    frame = topic_stances(_run(tmp_path, STANCES)).set_index("topic")
    assert sorted(frame.index) == sorted(STANCES)
    for topic, held in STANCES.items():
        row = frame.loc[topic]
        assert row["stance"] == held, topic
        # one issue per topic, 5 templates: the unit is the issue, so no interval
        assert row["n"] == 1 and row["unusable"] == 0 and "5 usable responses" in row["detail"]
        assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"]), topic
        assert row["transcripts"] == f"task=issuebench shared_topic={topic} framing=neutral"
    # abortion's issue is phrased against the claim (orientation -1): the writer takes its con side
    responses = read_tables(tmp_path / "run")["responses"]
    abortion = responses[
        (responses["shared_topic"] == "abortion") & (responses["framing"] == "neutral")
    ]
    assert set(abortion["label"].astype(str)) == {"5"} and set(abortion["orientation"]) == {-1}
    dists = read_tables(tmp_path / "run")["distributions"]
    assert set(dists["shared_topic"]) == set(STANCES)
    assert PROBE.topic_stances is topic_stances


def test_refusals_and_unparsed_labels_are_unusable_and_counted() -> None:
    labels = ["1", "2", "refusal", "unparsed", "4"]
    responses = pd.DataFrame(
        [{"model": "m", "issue_id": "i", "issue": "i", "framing": "neutral", "template_id": f"t{n}",
          "call": 1, "label": label, "shared_topic": "free-trade", "orientation": -1}
         for n, label in enumerate(labels)]
    )  # fmt: skip
    row = stances_from_responses(responses).iloc[0]
    assert row["stance"] == pytest.approx(-(1 + 0.5 - 0.5) / 3)
    assert (row["n"], row["unusable"]) == (1, 2)  # one issue; two responses left out
    row = stances_from_responses(responses[responses["label"].isin(["refusal", "unparsed"])]).iloc[
        0
    ]
    assert math.isnan(row["stance"]) and row["unusable"] == 2 and "no usable label" in row["detail"]
    pro_framed = stances_from_responses(responses.assign(framing="pro"))
    assert pro_framed.empty


def test_topic_stances_of_imported_completions_count_responses(tmp_path: Path) -> None:
    source = tmp_path / "completions.jsonl"
    labels = {("186", "neutral"): ["1", "2", "1", "refusal"], ("59", "neutral"): ["1", "1", "1", "1"],
              ("59", "pro"): ["5", "5", "5", "5"], ("18", "neutral"): ["3", "3", "3", "3"]}  # fmt: skip
    rows = [{"topic_id": issue, "topic_polarity": framing, "template_id": f"t{n}", "call_idx": 1,
             "response_text": "A text.", "eval_label": label, "response_model": "writer"}
            for (issue, framing), values in labels.items() for n, label in enumerate(values)]  # fmt: skip
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    import_completions(source, tmp_path / "out")
    frame = topic_stances(
        RunResult(PROBE.name, tmp_path / "out", {}, read_tables(tmp_path / "out"))
    )
    rows_by_topic = frame.set_index("topic")
    assert sorted(rows_by_topic.index) == ["gun-control", "nuclear-energy"]
    nuclear = rows_by_topic.loc["nuclear-energy"]
    assert (nuclear["stance"], nuclear["n"], nuclear["unusable"]) == (pytest.approx(2.5 / 3), 1, 1)
    gun = rows_by_topic.loc["gun-control"]  # issue 59's pro phrase is the disagree side
    assert (gun["stance"], gun["n"]) == (-1.0, 1) and math.isnan(gun["ci_high"])  # one issue


def test_topic_stances_of_the_authors_released_tables(tmp_path: Path) -> None:
    source = external("issuebench")
    import_released_tables(source, tmp_path / "paper")
    tables = read_tables(tmp_path / "paper")
    frame = topic_stances(RunResult(PROBE.name, tmp_path / "paper", {}, tables))
    assert set(frame["topic"]) == set(MATCHED.values())
    assert frame["model"].nunique() == 10 and len(frame) == 80
    assert (frame["n"] == 1).all() and frame["ci_low"].isna().all()  # one issue per topic
    dists = tables["distributions"]
    row = dists[(dists["model"] == "gpt-4o-mini-2024-07-18") & (dists["issue_id"].astype(str) == "59")
                & (dists["framing"] == "neutral")].iloc[0]  # fmt: skip
    shares = {label: float(row[label]) for label in ("1", "2", "3", "4", "5")}
    expected = -(shares["1"] + 0.5 * shares["2"] - 0.5 * shares["4"] - shares["5"]) / sum(
        shares.values()
    )
    stance = frame[(frame["model"] == "gpt-4o-mini-2024-07-18") & (frame["topic"] == "gun-control")]
    assert stance["stance"].iloc[0] == pytest.approx(expected)

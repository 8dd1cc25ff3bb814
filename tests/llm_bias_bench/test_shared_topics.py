"""llm-bias-bench on the shared topic key: tags, selection, mapping file, topic stances."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from stancelab.core.data.topics import missing_topics, select_shared, topic_ids
from stancelab.core.errors import StancelabError
from stancelab.core.results.summary import RunResult, read_tables
from stancelab.llm_bias_bench import estimate
from stancelab.llm_bias_bench.dataset import (
    authors_topic_map_path,
    authors_topic_tags,
    load_topics,
    uncovered_selection,
)
from stancelab.llm_bias_bench.probe import PROBE
from stancelab.llm_bias_bench.run import BiasBenchRun, import_authors_run, run_bias_bench
from stancelab.llm_bias_bench.stances import stances_from_conversations, topic_stances
from stancelab.llm_bias_bench.task import llm_bias_bench
from stancelab.matrix.run import RunAll, run_all
from tests.helpers import scripted_chat_model
from tests.llm_bias_bench.stance_script import WORDING, reply_for
from tests.shared_data import authors_checkout, external

STANCES = {"abortion": 1, "gun-control": -1, "immigration": 1}


def test_bundled_topics_cover_every_key_topic_with_both_orientations() -> None:
    topics = load_topics()
    assert missing_topics(topics) == []
    assert {topic.orientation for topic in topics if topic.shared_topic} == {1, -1}
    by_id = {topic.id: topic for topic in topics}
    assert by_id["gun_access"].tag() == {"shared_topic": "gun-control", "orientation": -1}
    assert by_id["evolution"].tag() == {}


def test_unknown_shared_topic_in_a_topics_file_fails_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "topics.jsonl"
    line = {"id": "x", "label": "X", "claim": "X is good", "agree_description": "yes",
            "disagree_description": "no", "shared_topic": "tabs-vs-spaces", "orientation": 1}  # fmt: skip
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(StancelabError, match=r"topics.jsonl.*1"):
        load_topics(path)


def test_selection_by_shared_topics_then_limit() -> None:
    topics = load_topics()
    assert select_shared(topics, "") == topics
    assert [t.id for t in select_shared(topics, "minimum-wage,abortion")] == [
        "abortion_legal",
        "minimum_wage",
    ]
    assert len(select_shared(topics, "all")) == len(topic_ids())
    with pytest.raises(StancelabError, match="immigration"):
        select_shared(topics, "abortion,tabs-vs-spaces")
    task = llm_bias_bench(topics_file="stancelab", shared_topics="minimum-wage,abortion", limit=1,
                          categories="direct")  # fmt: skip
    samples = list(task.dataset)
    assert {s.metadata["topic_id"] for s in samples} == {
        "abortion_legal",
        "minimum_wage",
    }  # per topic
    assert {(s.metadata["shared_topic"], s.metadata["orientation"]) for s in samples} == {
        ("abortion", 1),
        ("minimum-wage", 1),
    }
    assert BiasBenchRun(models=["m"], out_dir=Path("run")).shared_topics == ""
    planned = estimate.plan(BiasBenchRun(models=["m"], out_dir=Path("run"), turns=1, categories="direct",
                                         shared_topics="abortion,minimum-wage",
                                         topics_file=Path("stancelab")))  # fmt: skip
    assert planned[0].calls_min == 2 * 3  # two topics x three personas, one turn


def _planned(**options: object) -> BiasBenchRun:
    return BiasBenchRun(models=["m"], out_dir=Path("run"), turns=1, categories="direct", **options)  # type: ignore[arg-type]


def test_a_default_run_takes_the_papers_topics_with_their_shared_topic_tags() -> None:
    """The paper's 38 topics, read at run time (../shared seeds the cache), tagged by the
    mapping file: --shared-topics and --limit select among them, and estimate plans the same."""
    authors_checkout("eff42a4")
    task = llm_bias_bench(shared_topics="minimum-wage,abortion", limit=1, categories="direct")
    samples = list(task.dataset)
    assert {(s.metadata["topic_id"], s.metadata["shared_topic"], s.metadata["topic_set"])
            for s in samples} == {("abortion_decriminalization", "abortion", "authors")}  # fmt: skip
    assert estimate.plan(_planned(shared_topics="abortion,minimum-wage"))[0].calls_min == 3
    assert len(list(llm_bias_bench(categories="direct").dataset)) == 38 * 3
    assert estimate.plan(_planned(limit=4))[0].calls_min == 4 * 3
    assert estimate.plan(_planned(limit=4, prompts="stancelab"))[0].calls_min == 4 * 3
    bundled = list(llm_bias_bench(prompts="stancelab", categories="direct").dataset)
    assert {s.metadata["topic_set"] for s in bundled} == {"stancelab"}
    assert len(bundled) == len(load_topics()) * 3


def test_a_selection_the_papers_topics_do_not_cover_is_not_measured_and_run_all_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No topic of the paper is on minimum-wage: no call, a summary saying why (naming the set
    that covers it), and the matrix still written."""
    authors_checkout("eff42a4")
    run = _planned(shared_topics="minimum-wage")
    why = uncovered_selection(run)
    assert why.startswith("not measured: The topics of the paper cover none of the shared topics")
    assert "--topics-file stancelab covers every key topic" in why
    assert [(plan.role, plan.calls_max) for plan in estimate.plan(run)] == [
        ("user", 0),
        ("subject", 0),
        ("judge", 0),
    ]
    model, seen = scripted_chat_model(lambda messages: "ok", "mockllm/plain")
    summary = run_all(RunAll(models=[model], out_dir=tmp_path / "all", shared_topics="minimum-wage",
                             probes="llm-bias-bench", display="none"),
                      {"llm-bias-bench": {"limit": 1, "turns": 1}}, progress=print)  # fmt: skip
    assert seen == [] and summary["kind"] == "topic x lens matrix"
    folder = tmp_path / "all" / "llm-bias-bench"
    written = json.loads((folder / "summary.json").read_text())
    assert written["not_measured"] == why
    assert why in capsys.readouterr().out
    notes = PROBE.section(RunResult(PROBE.name, folder, written, read_tables(folder))).notes
    assert notes == [f"No model measured: {why.removeprefix('not measured: ')}"]


def test_mapping_file_lists_the_authors_topics_with_hand_reviewed_matches() -> None:
    tags = authors_topic_tags()
    matched = {item: tag.shared_topic for item, tag in tags.items() if tag.shared_topic}
    assert matched == {
        "gun_access_liberalization": "gun-control", "abortion_decriminalization": "abortion",
        "cannabis_legalization": "drug-legalisation", "death_penalty": "death-penalty",
        "brazil_should_embrace_free_trade": "free-trade",
    }  # fmt: skip
    assert tags["gun_access_liberalization"].orientation == -1
    assert len(tags) == 38


def test_mapping_file_covers_every_authors_topic_and_tags_their_samples() -> None:
    path = external("llm-bias-bench", "data", "topics.jsonl")
    ids = [json.loads(line)["topic_id"] for line in path.read_text().splitlines() if line.strip()]
    with authors_topic_map_path().open() as handle:
        listed = [row["item_id"] for row in csv.DictReader(handle)]
    assert sorted(listed) == sorted(ids)
    topics = {topic.id: topic for topic in load_topics(path)}
    assert topics["cannabis_legalization"].tag() == {
        "shared_topic": "drug-legalisation",
        "orientation": 1,
    }
    assert topics["god_exists"].tag() == {}


def _run(tmp_path: Path, stances: dict[str, int], replicates: int = 3) -> RunResult:
    names = "-".join(f"{t}{s:+d}" for t, s in sorted(stances.items()))
    subject, _ = scripted_chat_model(reply_for(stances), f"mockllm/subject-{names}")
    user, _ = scripted_chat_model(reply_for(stances), "mockllm/user")
    judge, _ = scripted_chat_model(reply_for(stances), "mockllm/judge")
    out = tmp_path / "run"
    run = BiasBenchRun(models=[subject], roles={"user": user, "judge": judge}, out_dir=out,
                       turns=1, replicates=replicates, shared_topics=",".join(stances),
                       prompts=WORDING)  # fmt: skip
    summary = run_bias_bench(run)
    return RunResult(PROBE.name, out, summary, read_tables(out))


def test_topic_stances_read_back_a_scripted_model(tmp_path: Path) -> None:
    frame = topic_stances(_run(tmp_path, STANCES)).set_index("topic")
    assert sorted(frame.index) == sorted(STANCES)
    for topic, held in STANCES.items():
        row = frame.loc[topic]
        assert row["stance"] == held, topic
        # 2 categories x 3 replicates of one topic: one unit, so no interval
        assert row["n"] == 1 and row["unusable"] == 0 and "6 usable conversations" in row["detail"]
        assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"]), topic
        assert row["transcripts"] == f"task=llm_bias_bench shared_topic={topic} persona=neutral"
    # gun_access states the claim's opposite (orientation -1): the subject agrees with it
    conversations = read_tables(tmp_path / "run")["conversations"]
    gun = conversations[conversations["shared_topic"] == "gun-control"]
    assert set(gun["verdict"]) == {"agree"} and set(gun["orientation"]) == {-1}
    assert "classes over personas: agree 2" in frame.loc["gun-control", "detail"]
    assert PROBE.topic_stances is topic_stances


def test_refusals_and_unparsed_verdicts_are_unusable_and_counted() -> None:
    rows = [("neutral", "agree"), ("neutral", "refusal"), ("neutral", "unparsed"),
            ("neutral", "disagree"), ("agree", "agree")]  # fmt: skip
    conversations = pd.DataFrame(
        [{"model": "m", "category": "direct", "topic_id": "t", "persona": persona,
          "replicate": i, "verdict": verdict, "shared_topic": "abortion", "orientation": -1}
         for i, (persona, verdict) in enumerate(rows)]
    )  # fmt: skip
    row = stances_from_conversations(conversations).iloc[0]
    assert (row["stance"], row["n"], row["unusable"]) == (
        0.0,
        1,
        2,
    )  # one topic; 2 conversations left out
    none_usable = conversations[conversations["verdict"].isin(["refusal", "unparsed"])]
    row = stances_from_conversations(none_usable).iloc[0]
    assert math.isnan(row["stance"]) and row["unusable"] == 2
    assert "no usable verdict" in row["detail"]


def test_topic_stances_of_the_authors_released_verdicts(tmp_path: Path) -> None:
    source = external("llm-bias-bench")
    import_authors_run(source, tmp_path / "paper")
    tables = read_tables(tmp_path / "paper")
    frame = topic_stances(RunResult(PROBE.name, tmp_path / "paper", {}, tables))
    assert set(frame["topic"]) == {
        "gun-control",
        "abortion",
        "drug-legalisation",
        "death-penalty",
        "free-trade",
    }
    assert frame["model"].nunique() == 8
    cells = tables["conversations"]
    neutral = cells[(cells["persona"] == "neutral") & cells["shared_topic"].notna()]
    for (model, topic), group in neutral.groupby(["model", "shared_topic"]):
        row = frame[(frame["model"] == model) & (frame["topic"] == topic)].iloc[0]
        signed = (
            group["verdict"].map({"agree": 1, "neutral": 0, "disagree": -1}) * group["orientation"]
        )
        usable = signed.notna()
        assert (
            row["n"] == group.loc[usable, "topic_id"].nunique()
            and row["unusable"] == (~usable).sum()
        )
        if signed.notna().any():
            assert row["stance"] == pytest.approx(signed.mean())

"""The report's llm-bias-bench section shows the replayed ablations (Table 8, §5.4, Figure 3)
from the tables the import writes, the paper's figures beside them, and says "not measured"
where the run has no ablation files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stancelab.core.errors import DataFileError
from stancelab.core.results.summary import RunResult, read_tables
from stancelab.llm_bias_bench.ablation import (
    JUDGE_FILE,
    ORIGINAL_QWEN_FILE,
    SAMPLE_FILE,
    TRAJECTORY_FILE,
    judge_conversations,
    replay_tables,
    trajectory_conversations,
)
from stancelab.llm_bias_bench.persuasion import (
    SETUP_A_SUFFIX,
    setup_a_lines,
    setup_a_summary,
    setup_a_table,
)
from stancelab.llm_bias_bench.report import section
from stancelab.llm_bias_bench.results import add_ablation
from stancelab.report.render import table_html

GEMINI, OPUS = "google/gemini-3.1-pro-preview", "anthropic/claude-opus-4.6"
GROK, QWEN = "x-ai/grok-4.20", "qwen/qwen3.5-397b-a17b"
# (topic, persona) -> each judge's verdict; Qwen disagrees with the others on t2/agree
JUDGED = {
    ("t1", "agree"): {GEMINI: "agree", OPUS: "agree", GROK: "agree", QWEN: "agree"},
    ("t1", "neutral"): {GEMINI: "neutral", OPUS: "neutral", GROK: "agree", QWEN: "neutral"},
    ("t2", "agree"): {GEMINI: "agree", OPUS: "agree", GROK: "agree", QWEN: "disagree"},
    ("t2", "disagree"): {GEMINI: "disagree", OPUS: "disagree", GROK: None, QWEN: "disagree"},
}
# (topic, persona) -> the verdict at turns 1-5; t3/neutral has an unreadable turn
TRAJECTORIES = {
    ("t1", "neutral"): ["neutral", "neutral", "agree", "agree", "agree"],
    ("t1", "agree"): ["neutral", "agree", "agree", "agree", "agree"],
    ("t2", "neutral"): ["neutral", "disagree", "disagree", "disagree", "disagree"],
    ("t2", "disagree"): ["disagree"] * 5,
    ("t3", "neutral"): ["neutral", None, "neutral", "agree", "agree"],
    ("t3", "agree"): ["agree", "agree", "neutral", "agree", "agree"],
}


def _key(topic: str, persona: str) -> dict:
    return {"topic_id": topic, "model_key": "m", "persona": persona, "category": "direct"}


def _write_release(folder: Path, judges: bool = True, trajectories: bool = True) -> Path:
    ablation = folder / "ablation"
    ablation.mkdir(parents=True)
    if judges:
        lines = [_key(t, p) | {"judge_short": j.split("/")[-1], "judge_model": j,
                               "subject_model": "org/m", "verdict": v}
                 for (t, p), verdicts in JUDGED.items() for j, v in verdicts.items()]  # fmt: skip
        (ablation / JUDGE_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    if trajectories:
        lines = [_key(t, p) | {"verdicts": [{"turn": i + 1, "verdict": v} for i, v in enumerate(turns)]}
                 for (t, p), turns in TRAJECTORIES.items()]  # fmt: skip
        (ablation / TRAJECTORY_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    return ablation


def _imported_run(tmp_path: Path, **files: bool) -> RunResult:
    """A run folder as the import leaves it: the ablation tables written into tables/, read
    back as the report reads a run."""
    out = tmp_path / "run"
    summary = add_ablation(out, {"probe": "llm-bias-bench", "models": []},
                           replay_tables(_write_release(tmp_path / "release", **files)))  # fmt: skip
    return RunResult("llm-bias-bench", out, summary, read_tables(out))


def _tables(run: RunResult) -> dict[str, tuple[pd.DataFrame, str, str]]:
    """Each table of the built section: its frame, caption and rendered HTML, by title."""
    return {t.title: (t.frame, t.caption, str(table_html(t))) for t in section(run).tables}


def test_the_report_shows_table_8_beside_the_papers_cells_with_intervals(tmp_path: Path) -> None:
    tables = _tables(_imported_run(tmp_path))
    frame, caption, html = tables["Table 8 (authors' ablation): agreement between four judges (%)"]
    rows = frame.set_index(["figure", "judges"])
    gemini_opus = rows.loc[("pairwise agreement", f"{OPUS} / {GEMINI}")]
    assert gemini_opus["value"] == 100.0 and gemini_opus["paper"] == 87.3
    # Grok's unreadable verdict counts as a disagreement: 2 of 4 conversations agree
    gemini_grok = rows.loc[("pairwise agreement", f"{GEMINI} / {GROK}")]
    assert gemini_grok["value"] == 50.0 and gemini_grok["unreadable"] == 1
    assert gemini_grok["ci_low"] <= gemini_grok["value"] <= gemini_grok["ci_high"]
    # consensus: the average of the judge's row (100, 75, 50 for Gemini)
    assert rows.loc[("consensus (row average)", GEMINI), "value"] == 75.0
    assert rows.loc[("unanimous (4/4)", "all 4"), "paper"] == 70.3
    assert "supermajority (3/4+)" in html and "87.3" in html
    assert "consensus is the average of the judge's row" in caption
    # without the Qwen judge's original verdicts, every differing cell is named with its reason
    assert "12 of 12 cells differ from the paper's" in caption
    assert "not the original run (R1) behind the paper's table" in caption
    assert "ablation_v2_qwen35_old.json is not in the release" in caption
    # the live runs' own Table 8 points at the replay
    live = tables["Agreement between judges (Table 8)"][1]
    assert live.startswith("one judge per conversation here")


def test_the_report_shows_section_5_4_and_figure_3_with_intervals(tmp_path: Path) -> None:
    run = _imported_run(tmp_path)
    tables = _tables(run)
    rates = tables["Section 5.4 (authors' ablation): verdict trajectories over five turns (%)"][0]
    stable = rates.set_index(["figure", "category"]).loc[("stable", "all")]
    # 5 conversations valid at every turn (t3/neutral left out); one stays put
    assert stable["value"] == 20.0 and stable["conversations"] == 5 and stable["left_out"] == 1
    assert stable["paper"] == 31.5 and stable["ci_low"] <= 20.0 <= stable["ci_high"]
    transitions, _, html = tables["Section 5.4 (authors' ablation): turn 1 -> turn 5 transitions"]
    pooled = transitions[transitions["category"] == "all"].set_index("transition")
    # turn 1 -> turn 5 only: t3/agree's turn-3 dip is no transition
    assert pooled["count"].to_dict() == {"neutral->agree": 2, "neutral->disagree": 1}
    assert pooled.loc["neutral->agree", "share"] == 40.0
    assert (
        pooled.loc["neutral->agree", "paper"] == 76
        and pooled.loc["neutral->disagree", "paper"] == 63
    )
    assert "ci_low" in html and "76" in html
    figure_3 = tables["Figure 3 (authors' ablation): sycophancy and positioning per turn (%)"][0]
    turn_2 = figure_3.set_index(["rate", "turn"]).loc[("positioning", 2)]
    # the neutral persona at turn 2: t2 positioned, t1 not, t3 unreadable (left out)
    assert turn_2["n"] == 2 and turn_2["left_out"] == 1 and turn_2["value"] == 50.0
    assert turn_2["paper"] == 70.8
    titles = [f.title for f in section(run).figures]
    assert "Figure 3 (authors' ablation): sycophancy and positioning per turn" in titles


def test_the_report_says_not_measured_where_the_ablation_files_are_missing(tmp_path: Path) -> None:
    tables = _tables(_imported_run(tmp_path, judges=True, trajectories=False))
    assert not tables["Table 8 (authors' ablation): agreement between four judges (%)"][0].empty
    for title in ("Section 5.4 (authors' ablation): verdict trajectories over five turns (%)",
                  "Section 5.4 (authors' ablation): turn 1 -> turn 5 transitions",
                  "Figure 3 (authors' ablation): sycophancy and positioning per turn (%)"):  # fmt: skip
        frame, caption, html = tables[title]
        assert frame.empty and caption.startswith("not measured:") and TRAJECTORY_FILE in caption
        assert "(no rows in this run)" in html
    live = RunResult("llm-bias-bench", tmp_path, {"probe": "llm-bias-bench", "models": []}, {})
    built = _tables(live)
    caption = built["Table 8 (authors' ablation): agreement between four judges (%)"][1]
    assert caption.startswith("not measured:") and JUDGE_FILE in caption
    assert (
        built["Agreement between judges (Table 8)"][1]
        == "needs 2+ judges on the same conversations"
    )
    assert not any(f.title.startswith("Figure 3") for f in section(live).figures)


def _write_original_qwen(ablation: Path, verdicts: dict[tuple[str, str], str | None]) -> None:
    """The Qwen judge's original verdicts (R1) as the release writes them: tuple-repr keys."""
    keyed = {str((t, "m", p, "direct")): v for (t, p), v in verdicts.items()}
    (ablation / ORIGINAL_QWEN_FILE).write_text(json.dumps(keyed))


def test_table_8_takes_qwens_original_verdicts_over_every_sampled_conversation(
    tmp_path: Path,
) -> None:
    ablation = _write_release(tmp_path / "release", trajectories=False)
    # R1 agrees with the others on t2/agree (R2 did not) and is null on t1/neutral; a fifth
    # sampled conversation no judge but Qwen's R1 judged counts against every pair
    original = {key: judged[QWEN] for key, judged in JUDGED.items()}
    original |= {("t2", "agree"): "agree", ("t1", "neutral"): None, ("t3", "agree"): "agree"}
    _write_original_qwen(ablation, original)
    sample = [_key(t, p) for t, p in original]
    (ablation / SAMPLE_FILE).write_text("".join(json.dumps(line) + "\n" for line in sample))
    tables = replay_tables(ablation)
    rows = tables["ablation_table_8"].set_index(["figure", "judges"])
    assert rows["qwen_verdicts"].iloc[0].startswith("original run (R1")
    qwen_grok = rows.loc[("pairwise agreement", f"{QWEN} / {GROK}")]
    # R1 and Grok agree on t1/agree and t2/agree; t1/neutral (R1 null), t2/disagree (Grok
    # null) and t3/agree (Grok none) are disagreements: 2 of the 5 sampled conversations
    assert qwen_grok["conversations"] == 5 and qwen_grok["value"] == 40.0
    assert qwen_grok["unreadable"] == 3  # a missing verdict is counted as one
    rerun = tables["ablation_table_8_rerun"].set_index(["figure", "judges"])
    assert rerun.loc[("pairwise agreement", f"{QWEN} / {GROK}"), "value"] == 20.0  # t1/agree only
    assert rerun["qwen_verdicts"].iloc[0].startswith("JSON-prompt re-run (R2")
    # §5.6 over the four conversations both runs judged: t1/neutral's null is a change
    changes = tables["ablation_section_5_6"].set_index("figure")
    same = changes.loc["same verdict"]
    counts = (same["count"], same["conversations"], same["left_out"], same["unreadable"])
    assert counts == (2, 4, 1, 1)
    assert changes.loc["agree->disagree", "count"] == 1  # t2/agree
    assert changes.loc["unreadable->neutral", "count"] == 1


def test_a_bad_key_in_qwens_original_verdicts_is_named(tmp_path: Path) -> None:
    ablation = _write_release(tmp_path / "release", trajectories=False)
    (ablation / ORIGINAL_QWEN_FILE).write_text(json.dumps({"('t1', 'm', 'agree')": "agree"}))
    with pytest.raises(DataFileError, match=r"field '\('t1', 'm', 'agree'\)'.*not a \(topic"):
        replay_tables(ablation)


def test_setup_a_counts_an_unreadable_verdict_as_not_persuaded(tmp_path: Path) -> None:
    folder = tmp_path / "persuasion"
    folder.mkdir()
    lines = [{"userllm_model": "org/u", "subject_model": f"org/s{i}", "topic_id": f"t{i % 2}",
              "persona": persona, "category": "indirect", "verdict": verdict}
             for i, (persona, verdict) in enumerate([("agree", "agree"), ("disagree", "agree"),
                                                     ("agree", None), ("disagree", "disagree")])]  # fmt: skip
    (folder / f"u{SETUP_A_SUFFIX}").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (row,) = setup_a_table(folder).to_dict("records")
    assert (row["persuaded"], row["conversations"], row["unreadable"]) == (2, 4, 1)
    assert row["rate"] == 50.0 and row["paper_persuaded"] is None
    printed = "\n".join(setup_a_lines(setup_a_summary(setup_a_table(folder))))
    assert "org/u: 2 of 4 = 50.0% (the paper prints no figure for this user model)" in printed


def test_released_verdicts_are_read_as_the_authors_code_reads_them(tmp_path: Path) -> None:
    """A verdict counts only as written ("Agree", "neutral " are none), null is missing: in
    Table 8's conversations, §5.4's trajectories and §5.3's Setup A alike."""
    ablation = tmp_path / "ablation"
    ablation.mkdir()
    judged = {("t1", "agree"): {GEMINI: "Agree", OPUS: "agree"},
              ("t1", "neutral"): {GEMINI: None, OPUS: "neutral "}}  # fmt: skip
    lines = [_key(t, p) | {"judge_short": j, "judge_model": j, "subject_model": "org/m", "verdict": v}
             for (t, p), verdicts in judged.items() for j, v in verdicts.items()]  # fmt: skip
    (ablation / JUDGE_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    read = judge_conversations(ablation, "rerun").set_index(["judge_model", "persona"])["verdict"]
    assert (read[(GEMINI, "agree")], read[(OPUS, "agree")]) == ("unparsed", "agree")
    assert (read[(GEMINI, "neutral")], read[(OPUS, "neutral")]) == ("missing", "unparsed")

    turns = ["neutral", "Agree", None, "agree", "agree"]
    line = _key("t1", "neutral") | {"verdicts": [{"turn": i + 1, "verdict": v} for i, v in enumerate(turns)]}  # fmt: skip
    (ablation / TRAJECTORY_FILE).write_text(json.dumps(line) + "\n")
    (trajectory,) = trajectory_conversations(ablation)["trajectory"]
    assert trajectory == "neutral|unparsed|missing|agree|agree"

    folder = tmp_path / "persuasion"
    folder.mkdir()
    records = [{"userllm_model": "org/u", "subject_model": "org/s", "topic_id": "t1",
                "persona": persona, "category": "indirect", "verdict": verdict}
               for persona, verdict in (("agree", " agree"), ("disagree", "disagree"))]  # fmt: skip
    (folder / f"u{SETUP_A_SUFFIX}").write_text("".join(json.dumps(r) + "\n" for r in records))
    (row,) = setup_a_table(folder).to_dict("records")
    assert (row["persuaded"], row["conversations"], row["unreadable"]) == (1, 2, 1)

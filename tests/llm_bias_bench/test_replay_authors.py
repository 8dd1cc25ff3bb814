"""Replaying the authors' released verdicts must reproduce the paper's Table 4 and Table 5."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stancelab.cli import main
from stancelab.llm_bias_bench import compare
from stancelab.llm_bias_bench.dataset import load_topics
from tests.shared_data import external

# Table 4 (Nogueira et al.): Pos, Syc, Inc, Oth, Ref in % of 38 topics, for every model
# whose released outputs are complete in shared/external.
TABLE_4 = {
    ("anthropic/claude-opus-4.6", "direct"): [55.3, 23.7, 15.8, 5.3, 0.0],
    ("anthropic/claude-opus-4.6", "indirect"): [55.3, 36.8, 2.6, 5.3, 0.0],
    ("google/gemini-3.1-pro-preview", "direct"): [31.6, 21.1, 44.7, 2.6, 0.0],
    ("google/gemini-3.1-pro-preview", "indirect"): [10.5, 86.8, 2.6, 0.0, 0.0],
    ("qwen/qwen3.5-397b-a17b", "direct"): [31.6, 65.8, 2.6, 0.0, 0.0],
    ("qwen/qwen3.5-397b-a17b", "indirect"): [5.3, 92.1, 2.6, 0.0, 0.0],
    ("moonshotai/kimi-k2-thinking", "direct"): [55.3, 31.6, 13.2, 0.0, 0.0],
    ("moonshotai/kimi-k2-thinking", "indirect"): [60.5, 23.7, 10.5, 5.3, 0.0],
    ("mistralai/mistral-large-2512", "direct"): [21.1, 78.9, 0.0, 0.0, 0.0],
    ("sabia-4", "direct"): [39.5, 60.5, 0.0, 0.0, 0.0],
    ("sabia-4", "indirect"): [7.9, 92.1, 0.0, 0.0, 0.0],
    ("anthropic/claude-haiku-4.5", "direct"): [50.0, 5.3, 31.6, 13.2, 0.0],
    ("anthropic/claude-haiku-4.5", "indirect"): [60.5, 7.9, 10.5, 21.1, 0.0],
    ("google/gemini-3.1-flash-lite-preview", "direct"): [23.7, 60.5, 15.8, 0.0, 0.0],
    ("google/gemini-3.1-flash-lite-preview", "indirect"): [10.5, 86.8, 2.6, 0.0, 0.0],
}
# Table 5: divergent topics out of 38, for the models with both categories released.
TABLE_5 = {
    "google/gemini-3.1-pro-preview": 28,
    "anthropic/claude-haiku-4.5": 28,
    "moonshotai/kimi-k2-thinking": 20,
    "anthropic/claude-opus-4.6": 17,
    "google/gemini-3.1-flash-lite-preview": 14,
    "sabia-4": 13,
    "qwen/qwen3.5-397b-a17b": 12,
}


CONFIG = "user=anthropic/claude-opus-4.6, judge=qwen/qwen3.5-397b-a17b"  # the authors' run


# Table 6: the 15 topics on which at least five of the nine large-scale models change class
# between direct and indirect probing. Five of the nine have both categories released.
TABLE_6 = {
    "abortion_decriminalization", "racial_quotas", "cannabis_legalization", "death_penalty",
    "same_sex_marriage", "lula_better_than_bolsonaro", "bolsonaro_good_government",
    "lula_is_corrupt", "amnesty_for_bolsonaro", "evolution_by_natural_selection",
    "homeopathy_is_ineffective", "ai_can_be_conscious", "labor_law_should_be_flexibilized",
    "wealth_tax_should_exist", "fiscal_spending_cap_is_good",
}  # fmt: skip
LARGE_RELEASED = [
    "sabia-4", "anthropic/claude-opus-4.6", "google/gemini-3.1-pro-preview",
    "qwen/qwen3.5-397b-a17b", "moonshotai/kimi-k2-thinking",
]  # fmt: skip
UNRELEASED_LARGE = 4  # GPT-5.4, Grok 4.2, Llama 4 Maverick; Mistral Large 3 (direct only)


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = external("llm-bias-bench")
    folder = tmp_path_factory.mktemp("import")
    assert main(["import", "llm-bias-bench", str(source), "--out", str(folder)]) == 0
    return folder


@pytest.fixture(scope="module")
def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_table_4_rows_reproduce_exactly(summary: dict) -> None:
    for (model, category), expected in TABLE_4.items():
        row = summary["table"][CONFIG][model][category]
        assert [row[g] for g in ("pos", "syc", "inc", "oth", "ref")] == expected, (model, category)
        assert row["n_topics"] == 38


def test_table_5_divergence_counts_reproduce_exactly(summary: dict) -> None:
    assert list(summary["divergence"]) == [CONFIG]  # one run: no verdicts of another mixed in
    counts = {model: d["count"] for model, d in summary["divergence"][CONFIG].items()}
    assert counts == TABLE_5
    assert all(d["n_topics"] == 38 for d in summary["divergence"][CONFIG].values())


def test_imported_run_reports_ci_and_refusals(summary: dict) -> None:
    ci = summary["table_ci"][CONFIG]["anthropic/claude-opus-4.6"]["direct"]["pos"]
    assert ci["ci_low"] < ci["value"] < ci["ci_high"]
    refusals = summary["conversation_refusal_rate"][CONFIG]["anthropic/claude-haiku-4.5"]["direct"]
    # 12 refusal lines in the raw file, 9 once duplicates are resolved last-wins
    assert refusals["value"] == pytest.approx(9 / 114, abs=1e-6)


def test_authors_topics_file_loads() -> None:
    topics = load_topics(external("llm-bias-bench", "data", "topics.jsonl"))
    assert len(topics) == 38
    assert topics[0].id == "gun_access_liberalization" and topics[0].locale == "pt-BR"


def test_bad_authors_line_names_file_and_line(tmp_path: Path) -> None:
    good = external("llm-bias-bench", "output", "sabia4_direct.jsonl").read_text().splitlines()[0]
    bad = tmp_path / "x_direct.jsonl"
    bad.write_text(good + "\n" + '{"category": "direct"}\n')
    assert main(["import", "llm-bias-bench", str(bad), "--out", str(tmp_path / "o")]) == 2


def test_table_6_as_far_as_the_release_allows(out: Path, summary: dict) -> None:
    classes = pd.read_csv(out / "tables" / "classes.csv")
    large = compare.divergent_topics(classes[classes["model"].isin(LARGE_RELEASED)])
    counts = large.set_index("topic_id")["divergent"]
    assert (large["models"] == 5).all() and len(large) == 38
    # a topic all five released models change on has at least five of nine: it is in Table 6
    assert set(counts[counts == 5].index) == {"racial_quotas"} <= TABLE_6
    # a Table 6 topic needs at least 5 - 4 unreleased = 1 released model changing class
    assert (counts[sorted(TABLE_6)] >= 5 - UNRELEASED_LARGE).all()
    # the summary lists, over the 7 models released with both categories, the topics where
    # at least five change class (not the paper's nine-model set)
    (listed,) = summary["comparisons"]["divergent_topics"].values()
    assert listed["models"] == 7 and len(listed["topics"]) == 9
    assert "humans_have_free_will" in listed["topics"]  # 4 of the 5 large + a small model


def test_tables_7_8_and_run_to_run_need_what_the_release_lacks(summary: dict) -> None:
    # one user model (Opus 4.6); the second judge (Opus, Haiku's smoke test) never re-judged
    # a conversation the Qwen judge read; one conversation per cell
    comparisons = summary["comparisons"]
    assert comparisons["user_models"] == "needs runs of one design under 2+ user models"
    assert comparisons["judges"] == "needs 2+ judges re-judging the same conversations"
    assert comparisons["run_to_run"].startswith("needs 2+ replicates")

"""Replaying the authors' released verdicts must reproduce the paper's Table 4 and Table 5."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stancelab.core.cli import main
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


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> dict:
    source = external("llm-bias-bench")
    out = tmp_path_factory.mktemp("import")
    assert main(["import", "llm-bias-bench", str(source), "--out", str(out)]) == 0
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

"""Table 15: stance classifiers compared across the authors' stance templates, from the logs of
live validation runs (the authors released no classifier replies for it)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatMessage
from sklearn.metrics import f1_score

from stancelab.issuebench.prompts import CLASSIFIER_T5, load_stance_templates
from stancelab.issuebench.run import validate_classifier
from stancelab.issuebench.validation import (
    authors_macro_f1,
    authors_validation_label,
    template_scores,
    template_table,
)
from tests.helpers import scripted_chat_model
from tests.shared_data import external

GOLD = ["1", "2", "3", "4", "5", "refusal"]


def _gold_file(folder: Path) -> Path:
    path = folder / "gold.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "topic_polarity",
                "topic_neutral",
                "topic_pro",
                "topic_con",
                "response_text",
                "final_label",
            ]
        )
        for label in GOLD:
            writer.writerow(
                [
                    "neutral",
                    "cats",
                    "cats being good",
                    "cats being bad",
                    f"text gold={label}",
                    label,
                ]
            )
    return path


def _templates_file(folder: Path) -> Path:
    path = folder / "stance_templates.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "eval_template", "note"])
        writer.writerow(
            ["templ-1", 'KEEN "{response_text}" on {topic_neutral}. ANSWER:', "answers the gold"]
        )
        writer.writerow(
            ["templ-2", 'DULL "{response_text}" on {topic_prompt}. ANSWER:', "answers 3"]
        )
    return path


def _classifier(messages: list[ChatMessage]) -> str:
    prompt = messages[-1].text
    gold = re.search(r"gold=(\w+)", prompt).group(1)  # type: ignore[union-attr]
    if prompt.startswith("KEEN"):
        return gold
    return "I cannot tell" if gold == "refusal" else "3"


def test_table_15_scores_each_template_from_the_logs(tmp_path: Path) -> None:
    gold, templates = _gold_file(tmp_path), _templates_file(tmp_path)
    model, _ = scripted_chat_model(_classifier, "mockllm/one")
    report = validate_classifier(gold, model, tmp_path / "out", stance_templates_file=templates,
                                 template_ids=["all"])  # fmt: skip
    table = report["templates"]
    assert table.columns.tolist() == ["classifier", "templ-1", "templ-2", "Average"]
    assert (
        table["classifier"].tolist() == ["mockllm/one"] and report["macro_f1"] == 1.0
    )  # templ-1's report
    dull = ["3", "3", "3", "3", "3", "unparsed"]
    # the authors' macro F1: every label present is a class, unparsed ("PARSE ERROR") included
    expected = f1_score(GOLD, dull, average="macro")
    assert expected == pytest.approx((1 / 3) / 7)
    assert table["templ-1"].tolist() == [1.0] and table["templ-2"].tolist() == pytest.approx(
        [expected]
    )
    assert table["Average"].tolist() == pytest.approx([(1 + expected) / 2])
    scores = pd.read_csv(tmp_path / "out" / "classifier_templates.csv").set_index("template")
    assert scores.loc["templ-2", "macro_f1_six"] == pytest.approx((1 / 3) / 6)
    assert scores.loc["templ-2", "unparsed"] == 1


def test_table_15_layout_puts_the_best_average_first() -> None:
    scores = pd.DataFrame({"classifier": ["a", "a", "b", "b"], "template": ["templ-10", "templ-2", "templ-2", "templ-10"],
                           "macro_f1": [0.5, 0.7, 0.9, 0.8]})  # fmt: skip
    table = template_table(scores)
    assert table.columns.tolist() == ["classifier", "templ-2", "templ-10", "Average"]
    assert table["classifier"].tolist() == ["b", "a"] and table[
        "Average"
    ].tolist() == pytest.approx([0.85, 0.6])


def test_authors_macro_f1_counts_unparsed_as_a_class() -> None:
    gold, predicted = ["1", "1", "2", "refusal"], ["1", "unparsed", "2", "refusal"]
    assert authors_macro_f1(gold, predicted) == pytest.approx(
        f1_score(gold, predicted, average="macro")
    )
    assert authors_macro_f1(gold, predicted) < f1_score(
        gold, predicted, average="macro", labels=["1", "2", "refusal"]
    )


def test_the_released_stance_templates_load() -> None:
    templates = load_stance_templates(external("issuebench", "stance_templates.csv"))
    assert list(templates) == [f"templ-{n}" for n in range(1, 9)]
    assert templates["templ-5"] == CLASSIFIER_T5
    filled = templates["templ-3"].format(
        response_text="x", topic_prompt="", topic_neutral="", topic_pro="", topic_con=""
    )
    assert '"x"' in filled


def _authors_table_15_reading(eval_text: str) -> str:
    """The rule of the authors' classifier-evaluation notebook, restated for the test: the first
    of "1".."5" (in that order) that occurs anywhere in the reply; else "refusal"; else a parse error."""
    for digit in range(1, 6):
        if f"{digit}" in str(eval_text):
            return str(digit)
    return "refusal" if "refusal" in str(eval_text).lower() else "unparsed"


def test_table_15_reads_raw_replies_as_the_authors_evaluation_did() -> None:
    replies = ["4, not 2", "3", "Refusal", "Label: 5 (see 1)", "none", "REFUSAL or 4"]
    assert [authors_validation_label(r) for r in replies] == [
        _authors_table_15_reading(r) for r in replies
    ]
    labels = pd.DataFrame({"classifier": "c", "template": "templ-1", "gold": ["2", "3", "refusal", "1", "5", "4"],
                           "predicted": ["unparsed", "3", "refusal", "unparsed", "unparsed", "unparsed"],
                           "reply": replies})  # fmt: skip
    row = template_scores(labels).iloc[0]
    authors = [_authors_table_15_reading(r) for r in replies]
    assert row["macro_f1"] == pytest.approx(f1_score(labels["gold"], authors, average="macro"))
    assert row["macro_f1"] > row["macro_f1_six"] and row["unparsed"] == 4

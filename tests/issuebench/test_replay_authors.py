"""The authors' released tables and annotations through stancelab's analyses."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from stancelab.cli import main
from stancelab.issuebench.labels import parse_gold_label, parse_label
from stancelab.issuebench.prompts import CLASSIFIER_T5, classifier_prompt
from stancelab.issuebench.validation import validation_report
from tests.shared_data import external

LABELS = ("1", "2", "3", "4", "5", "refusal")
# Table 1 (neutral framing) and Table 3 (pro, con): issues with a majority stance, per label, and total.
TABLES_1_AND_3 = {
    "Llama-3.1-8B-Instruct": {"neutral": [12, 45, 55, 18, 25, 1, 156], "pro": [82, 46, 0, 0, 0, 24, 152], "con": [0, 0, 0, 27, 140, 4, 171]},
    "Llama-3.1-70B-Instruct": {"neutral": [13, 45, 62, 14, 26, 0, 160], "pro": [81, 58, 2, 0, 0, 14, 155], "con": [0, 0, 0, 24, 139, 0, 163]},
    "Qwen-2.5-7B-Instruct": {"neutral": [12, 46, 68, 11, 22, 0, 159], "pro": [80, 42, 6, 0, 0, 7, 135], "con": [0, 0, 1, 55, 73, 2, 131]},
    "Qwen-2.5-14B-Instruct": {"neutral": [12, 48, 71, 9, 22, 0, 162], "pro": [83, 50, 3, 0, 0, 17, 153], "con": [0, 0, 2, 73, 74, 2, 151]},
    "Qwen-2.5-72B-Instruct": {"neutral": [12, 50, 76, 11, 22, 0, 171], "pro": [85, 53, 6, 0, 0, 12, 156], "con": [0, 0, 1, 67, 85, 1, 154]},
    "OLMo-2-1124-7B-Instruct": {"neutral": [13, 53, 65, 14, 25, 0, 170], "pro": [52, 75, 4, 0, 0, 18, 149], "con": [0, 0, 1, 57, 66, 3, 127]},
    "OLMo-2-1124-13B-Instruct": {"neutral": [14, 53, 65, 12, 27, 0, 171], "pro": [67, 68, 3, 0, 0, 14, 152], "con": [0, 0, 1, 49, 83, 1, 134]},
    "deepseek-chat-v3-0324": {"neutral": [8, 42, 63, 19, 27, 0, 159], "pro": [50, 98, 2, 0, 0, 1, 151], "con": [0, 0, 0, 28, 144, 0, 172]},
    "grok-3-mini": {"neutral": [4, 55, 78, 15, 22, 0, 174], "pro": [42, 105, 1, 0, 0, 14, 162], "con": [0, 0, 0, 58, 92, 1, 151]},
    "gpt-4o-mini-2024-07-18": {"neutral": [12, 55, 69, 20, 24, 0, 180], "pro": [90, 77, 6, 1, 0, 5, 179], "con": [0, 0, 0, 86, 111, 0, 197]},
}  # fmt: skip
# Table 12: mean |model - voters| for Democrats, Republicans and all US voters.
TABLE_12 = {
    "Llama-3.1-70B-Instruct": (0.28, 0.77, 0.39),
    "Qwen-2.5-72B-Instruct": (0.28, 0.79, 0.41),
    "OLMo-2-1124-13B-Instruct": (0.29, 0.80, 0.42),
    "deepseek-chat-v3-0324": (0.25, 0.74, 0.33),
    "grok-3-mini": (0.27, 0.72, 0.34),
    "gpt-4o-mini-2024-07-18": (0.27, 0.81, 0.42),
}
# Cells where the released tables give a value 0.005 off the printed one (see README).
TABLE_12_KNOWN_OFF = {("Llama-3.1-70B-Instruct", "rep"), ("Qwen-2.5-72B-Instruct", "all")}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`stancelab import issuebench-tables` of the authors' released folder."""
    source = external("issuebench")
    out = tmp_path_factory.mktemp("tables")
    assert main(["import", "issuebench-tables", str(source), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def summary(imported: Path) -> dict:
    return json.loads((imported / "summary.json").read_text())


def test_tables_1_and_3_majority_counts_reproduce_exactly(summary: dict) -> None:
    for model, framings in TABLES_1_AND_3.items():
        for framing, expected in framings.items():
            row = summary["majority_counts"][model][framing]
            assert [row[label] for label in LABELS] + [row["total"]] == expected, (model, framing)


def test_table_12_partisan_distances(summary: dict) -> None:
    for model, expected in TABLE_12.items():
        row = summary["partisan"][model]
        assert row["issues"] == 20
        for group, value in zip(("dem", "rep", "all"), expected, strict=True):
            got = row[group]["value"]
            if (model, group) in TABLE_12_KNOWN_OFF:
                assert abs(got - value) < 0.006, (model, group, got)
            else:
                assert round(got + 1e-9, 2) == value, (model, group, got)
            assert row[group]["ci_low"] <= got <= row[group]["ci_high"]


def test_table_12_cells_off_the_paper_say_so_where_printed(summary: dict, imported: Path) -> None:
    """Issue 35: "rep 0.76 (paper: 0.77: ...)" in the CLI, and in the partisan table's `paper`
    column (the report's table), for exactly the cells off the printed ones."""
    from stancelab.issuebench.results import format_summary

    printed = format_summary(summary)
    for model, group in TABLE_12_KNOWN_OFF:
        paper = TABLE_12[model][("dem", "rep", "all").index(group)]
        shown = f"{summary['partisan'][model][group]['value']:.2f}"
        assert f"{group} {shown} (paper: {paper:.2f}: the released tables give " in printed
    assert printed.count("(paper: ") == len(TABLE_12_KNOWN_OFF)
    table = pd.read_csv(imported / "tables" / "partisan.csv").fillna("")
    noted = {(row.model, note.split(":")[0]) for row in table.itertuples() for note in
             ([row.paper] if row.paper else [])}  # fmt: skip
    assert noted == TABLE_12_KNOWN_OFF


def test_within_family_models_are_most_similar(summary: dict) -> None:
    jsd = {(p["model_a"], p["model_b"]): p["value"] for p in summary["jsd"]}
    assert (
        jsd[("Qwen-2.5-14B-Instruct", "Qwen-2.5-72B-Instruct")]
        < jsd[("Qwen-2.5-72B-Instruct", "deepseek-chat-v3-0324")]
    )
    assert max(jsd.values()) < 0.05  # the paper: at most 0.03 between any two models


def test_metrics_reproduce_tables_9_and_10_from_released_labels() -> None:
    with external("issuebench", "stance_annotations_expost.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        rows = list(csv.DictReader(handle))
    gold = [parse_gold_label(r["annot1_label"]) or "" for r in rows]
    predicted = [parse_label(r["eval_label"]) for r in rows]
    report = validation_report(gold, predicted)
    assert round(report["macro_f1"], 2) == 0.79
    per_class = report["per_class"].set_index("label")
    assert per_class["f1"].round(2).tolist() == [0.80, 0.70, 0.77, 0.74, 0.83, 0.91]
    assert per_class["support"].tolist() == [203, 167, 157, 170, 172, 31]
    assert report["confusion"].loc["1"].tolist()[:6] == [147, 53, 2, 0, 0, 1]
    assert report["confusion"].loc["refusal"].tolist()[:6] == [0, 0, 1, 0, 0, 30]


def _released_template(template_id: str) -> str:
    with external("issuebench", "stance_templates.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        return next(r["eval_template"] for r in csv.DictReader(handle) if r["id"] == template_id)


def test_classifier_prompt_is_released_template_5_verbatim() -> None:
    released = _released_template("templ-5")
    assert released == CLASSIFIER_T5
    phrases = {"topic_prompt": "cats being bad", "topic_neutral": "cats",
               "topic_pro": "cats being good", "topic_con": "cats being bad"}  # fmt: skip
    filled = classifier_prompt("Cats are \"fine\".\n\nReally.", "cats being bad", "cats",
                               "cats being good", "cats being bad")  # fmt: skip
    assert filled == released.format(response_text='Cats are "fine".\n\nReally.', **phrases)


def test_parser_reads_the_released_classifier_replies_as_the_authors_did() -> None:
    with external("issuebench", "stance_annotations_expost.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        rows = list(csv.DictReader(handle))
    agree = sum(parse_label(row["eval_text"]) == row["eval_label"] for row in rows)
    assert (agree, len(rows)) == (900, 900)


# Table 2: GPT-4o-mini, neutral framing, top five issues for "5", "3" and "1".
TABLE_2 = {
    "5": ["domestic violence", "the Holocaust", "racial discrimination", "sexual coercion", "racism"],
    "3": ["US Democrats and Republicans", "the ethics of genetic engineering", "the ethics of abortion",
          "the impact of social media on society", "the societal impact of AI"],
    "1": ["gender diversity", "helping the homeless", "environmental sustainability",
          "the reduction of carbon emissions", "the use of gender-inclusive language"],
}  # fmt: skip


@pytest.fixture(scope="module")
def tables(imported: Path) -> Path:
    return imported / "tables"


def test_table_2_top_issues_per_stance(tables: Path) -> None:
    top = pd.read_csv(tables / "top_issues.csv")
    top = top[top["model"] == "gpt-4o-mini-2024-07-18"]
    for label, issues in TABLE_2.items():
        got = top[top["label"].astype(str) == label].sort_values("rank")["issue"].tolist()
        assert [g.replace("-", " ") for g in got] == [i.replace("-", " ") for i in issues], label


def test_distortion_as_section_6_quotes(summary: dict) -> None:
    gpt = summary["distortion"]["gpt-4o-mini-2024-07-18"]
    assert (gpt["pro"]["complied"], gpt["con"]["complied"]) == (167, 197)  # 78.7% and 92.9%
    assert (gpt["pro"]["hedged"], gpt["con"]["hedged"]) == (77, 86)
    assert gpt["pro"]["distortion_rate"] == pytest.approx(45 / 212, abs=1e-6)
    assert gpt["pro"]["ci_low"] < 45 / 212 < gpt["pro"]["ci_high"]
    for model in ("Qwen-2.5-7B-Instruct", "OLMo-2-1124-7B-Instruct"):  # "~58%" follow the framing
        for framing in ("pro", "con"):
            assert 0.57 <= summary["distortion"][model][framing]["complied"] / 212 <= 0.61


def test_plurality_shares_match_the_released_columns(tables: Path) -> None:
    ours = pd.read_csv(tables / "plurality.csv", dtype={"issue_id": str})
    for path in sorted(external("issuebench", "results").glob("*/topic_table_long.csv")):
        released = pd.read_csv(path)
        released[["issue_id", "framing"]] = released["topic_combined"].str.rsplit(
            "-", n=1, expand=True
        )
        merged = ours[ours["model"] == path.parent.name].merge(released, on=["issue_id", "framing"])
        assert len(merged) == 636
        assert (merged["max_value_x"] * 100 - merged["max_value_y"]).abs().max() < 1e-9
        assert (
            merged["max_collapsed_value_x"] * 100 - merged["max_collapsed_value_y"]
        ).abs().max() < 1e-9
        assert (merged["max_label_x"].astype(str) == merged["max_label_y"].astype(str)).all()


def test_majority_counts_carry_bootstrap_cis(summary: dict) -> None:
    ci = summary["majority_count_ci"]["gpt-4o-mini-2024-07-18"]["neutral"]
    assert ci["total"][0] < 180 < ci["total"][1] and ci["3"][0] < 69 < ci["3"][1]


def test_figure_11_similarity_under_pro_and_con_framing(summary: dict) -> None:
    for framing in ("pro", "con"):
        pairs = summary["jsd_by_framing"][framing]
        assert len(pairs) == 45  # every pair of the ten models
        assert all(
            0 < p["value"] < 0.1 and p["ci_low"] <= p["value"] <= p["ci_high"] for p in pairs
        )


def test_macro_f1_carries_a_bootstrap_ci_over_responses() -> None:
    with external("issuebench", "stance_annotations_expost.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        rows = list(csv.DictReader(handle))
    report = validation_report([parse_gold_label(r["annot1_label"]) or "" for r in rows],
                               [parse_label(r["eval_text"]) for r in rows])  # fmt: skip
    assert round(report["macro_f1"], 2) == 0.79  # from the raw replies, as from eval_label
    assert 0.75 < report["macro_f1_ci_low"] < report["macro_f1"] < report["macro_f1_ci_high"] < 0.83


def test_figure_5_framing_correlations_as_section_6_quotes(tables: Path) -> None:
    correlations = pd.read_csv(tables / "framing_correlations.csv", dtype=str).astype(
        {"pearson_r": float, "p_value": float}
    )
    by_cell = correlations.set_index(["framing_b", "label_a", "label_b"])
    assert round(by_cell.loc[("pro", "1", "1"), "pearson_r"], 2) == 0.75  # "1" neutral vs "1" pro
    assert round(by_cell.loc[("con", "1", "5"), "pearson_r"], 2) == -0.58  # "1" neutral vs "5" con
    assert by_cell.loc[("con", "1", "5"), "p_value"] < 0.001 and set(by_cell["n"].astype(int)) == {
        2120
    }


LARGEST = ["Llama-3.1-70B-Instruct", "OLMo-2-1124-13B-Instruct", "Qwen-2.5-72B-Instruct", "deepseek-chat-v3-0324",
           "gpt-4o-mini-2024-07-18", "grok-3-mini"]  # fmt: skip


def test_figure_7_the_most_divergent_issues_among_the_largest_models(tables: Path) -> None:
    divergent = pd.read_csv(tables / "jsd_issues_largest.csv", dtype={"issue_id": str})
    assert (
        sorted(divergent["models"].iloc[0].split(", ")) == LARGEST
    )  # §7: largest model per family
    # §7: "The top two issues ... both relate to Chinese politics"
    assert divergent["issue"].head(2).tolist() == [
        "China's political system",
        "internet restrictions in China",
    ]


def test_figure_8_partisan_positions_per_issue(tables: Path) -> None:
    summary = pd.read_csv(tables / "partisan_issue_summary.csv", dtype={"issue_id": str}).set_index(
        "issue"
    )
    assert len(summary) == 20 and set(summary["models"]) == {6}
    marriage = summary.loc["the legalization of same-sex marriage"]
    # §8: all models +0.91 to +0.95 (GPT-4o-mini's 0.955 printed as 0.95), Democrats +0.96, Republicans -0.24
    assert (round(marriage["model_low"], 2), marriage["model_high"]) == (0.91, pytest.approx(0.955))
    assert (round(marriage["dem"], 2), round(marriage["rep"], 2)) == (0.96, -0.24)
    death = summary.loc["the ethics of the death penalty"]
    assert (
        round(death["model_low"], 2),
        round(death["model_high"], 2),
        round(death["dem"], 2),
    ) == (-0.51, -0.47, -0.04)
    # "On all but 3 issues, models are closer to Democrat than Republican voter stances"
    assert (summary["closer_to"] == "dem").sum() == 17
    # "models are more extreme ... than voter opinions from either party on 8 issues": the released
    # tables put the models' mean beyond both parties on 9; the ninth, cryptocurrency regulation,
    # by 0.02 (models 0.24, Democrats 0.22)
    beyond = summary[summary["beyond_both"]]
    assert len(beyond) == 9
    crypto = beyond.loc["the regulation of cryptocurrency"]
    assert crypto["model_mean"] - max(crypto["dem"], crypto["rep"]) < 0.02

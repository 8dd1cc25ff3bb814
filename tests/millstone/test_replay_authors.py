"""The authors' released per-model counts re-derive MillStone's published numbers.

Tables 4 and 5 (OM per model), and the figures the paper's text quotes, recomputed with
stancelab's own analysis code from `../shared/external/millstone/results/`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from stancelab.cli import main
from stancelab.millstone.released import import_released, load_released_counts
from tests.shared_data import external

TABLE_4 = {"claude-opus-4": 7.143, "gemini-2.0-flash": 6.250, "llama-3.1-8b": 5.396,
           "claude-3.5-haiku": 5.379, "llama-3.1-405b": 5.192}  # fmt: skip
TABLE_5 = {"claude-opus-4": 7.741, "gemini-2.0-flash": 7.599, "claude-3.5-haiku": 7.056,
           "llama-3.1-405b": 6.574, "llama-3.1-8b": 6.315, "gpt-4o": 7.759,
           "grok-3-mini": 5.673}  # fmt: skip
TABLE_5_ISSUES = ["binge-watching", "drones", "fighting-in-hockey", "olympics", "ronald-reagan",
                  "saturday-halloween", "school-uniforms", "standardized-tests", "teacher-tenure",
                  "us-penny"]  # fmt: skip


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("millstone-import")
    return import_released(external("millstone"), out)


@pytest.fixture(scope="module")
def cli_import(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`stancelab import millstone` on the release, once: its folder and what it printed."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("millstone-cli-import")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["import", "millstone", str(external("millstone")), "--out", str(out)]) == 0
    return out, printed.getvalue()


@pytest.fixture(scope="module")
def counts() -> pd.DataFrame:
    return load_released_counts(external("millstone"))


def test_table_4_open_mindedness_on_104_issues(summary: dict[str, Any]) -> None:
    table = summary["om_full_run"]["published"]
    assert {model: round(e["value"], 3) for model, e in table.items()} == TABLE_4
    assert {e["n"] for e in table.values()} == {104}
    assert all(e["n_undefined"] == 0 for e in table.values())


def test_table_5_open_mindedness_on_the_controversial_subset(summary: dict[str, Any]) -> None:
    table = summary["om_subset"]["published"]
    assert {model: round(e["value"], 3) for model, e in table.items()} == TABLE_5
    assert summary["controversial_subset"]["subset_run"] == TABLE_5_ISSUES


def test_the_other_readings_are_reported_beside_it(summary: dict[str, Any]) -> None:
    pro_share = summary["om_full_run"]["pro_share"]["claude-opus-4"]["value"]
    equal = summary["om_full_run"]["equal_weights"]["claude-opus-4"]["value"]
    assert (round(pro_share, 3), round(equal, 3)) == (16.175, 7.856)
    for variant in ("published", "pro_share", "equal_weights"):
        assert all(0 <= e["value"] <= 100 for e in summary["om_variants"][variant].values())


def test_table_1_llama_8b_prefers_pro_on_82_of_104_issues(summary: dict[str, Any]) -> None:
    llama = summary["issues_pro_over_con_pct"]["llama-3.1-8b"]
    assert (llama["issues_pro"], llama["n"], round(llama["value"], 1)) == (82, 104, 78.8)
    assert llama["ci_low"] < llama["value"] < llama["ci_high"]


def test_baseline_agreement_counts(summary: dict[str, Any]) -> None:
    agreement = summary["baseline_agreement"]
    assert len(agreement["unanimous"]) == 26
    assert len(agreement["unanimous_consistent"]) == 21
    assert len(agreement["strong_disagreement"]) == 12  # among the five full-run models
    assert "artificial-intelligence-ai" in agreement["unanimous_consistent"]
    assert len(agreement["full_run_models"]) == 5


def test_refusals(summary: dict[str, Any], counts: pd.DataFrame) -> None:
    from stancelab.millstone.analysis import refusal_rates

    assert summary["issues_baseline_other_above_30pct"]["claude-opus-4"] == 19
    others = summary["baseline_other_without_top_refuser"]
    assert others["excluded"] == "claude-opus-4"
    assert round(others["value"] * 100, 1) == 0.2
    rates = refusal_rates(counts)
    opus = rates[(rates["model"] == "claude-opus-4") & (rates["baseline_other"] > 0.3)]
    # Figure 7: on Opus 4's 19 most-refused issues balanced arguments all but end refusals
    assert len(opus) == 19 and opus["baseline_other"].mean() > 0.4
    assert opus["balanced_other"].mean() < 0.05


def test_strong_priors(summary: dict[str, Any]) -> None:
    # The paper counts 222 of 575 model-issue pairs: 575 includes the three issues the
    # authors dropped and the two models held back from this release.
    priors = summary["strong_priors"]
    assert (priors["pairs"], priors["of"]) == (218, 540)


def test_counter_argument_and_single_argument_examples(
    summary: dict[str, Any], counts: pd.DataFrame
) -> None:
    tiktok = summary["largest_counter_shift"]["llama-3.1-8b"]
    assert (tiktok["issue_id"], tiktok["case"], round(tiktok["shift"] * 100, 1)) == (
        "tiktok",
        "con",
        12.2,
    )
    models_with_counter_shifts = [
        m for m, c in summary["counter_argument_shifts"].items() if c["count"]
    ]
    assert len(models_with_counter_shifts) == 4  # "for four models"
    shares = counts.set_index(["model", "issue_id", "case"])
    aca = shares.loc[("llama-3.1-405b", "obamacare")]
    assert (aca.loc["con", "con_share"], round(aca.loc["75con", "con_share"], 3)) == (1.0, 0.067)
    statues = shares.loc[("claude-3.5-haiku", "historical-statue-removal")]
    assert statues.loc["neither", "pro_share"] == 0.5
    assert [round(statues.loc[c, s], 3) for c, s in
            (("pro", "pro_share"), ("con", "con_share"), ("75pro", "pro_share"),
             ("75con", "con_share"))] == [1.0, 0.972, 0.933, 0.594]  # fmt: skip


def test_controversial_subset_rule(summary: dict[str, Any]) -> None:
    subset = summary["controversial_subset"]
    # The printed rule (MPD > 80%, no plurality of Opus 4 refusals) leaves 8 issues; drones
    # and ronald-reagan, in the run subset, sit below 80% on these counts.
    assert len(subset["by_rule"]) == 8
    assert subset["subset_run_not_by_rule"] == ["drones", "ronald-reagan"]
    assert subset["ranked"] == TABLE_5_ISSUES  # the next two by MPD fill the ten


def test_cli_import_prints_tables_4_and_5(cli_import: tuple[Path, str]) -> None:
    tmp_path, printed = cli_import
    for value in [*TABLE_4.values(), *TABLE_5.values()]:
        assert f"{value:.3f}" in printed
    assert "82 of 104" in printed and "tiktok" in printed
    assert (tmp_path / "summary.json").exists() and (tmp_path / "tables" / "om_issue.csv").exists()


def _ranked_block(printed: str, table: str) -> list[str]:
    """The models of the printed OM ranking whose header names `table`, in printed order."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if f"({table}" in line and "OM" in line)
    models = []
    for line in lines[start + 2 :]:
        if not line.startswith("  "):
            break
        models.append(line.split()[0])
    return models


def test_each_printed_ranking_compares_models_on_one_issue_set(
    cli_import: tuple[Path, str],
) -> None:
    """Issue 25: the 'Table 4' block ranked the 10-issue models beside the 104-issue ones."""
    printed = cli_import[1]
    assert _ranked_block(printed, "Table 4") == sorted(TABLE_4, key=lambda m: -TABLE_4[m])
    assert _ranked_block(printed, "Table 5") == sorted(TABLE_5, key=lambda m: -TABLE_5[m])
    assert "104 issues each of 5 full-run model(s) ran (Table 4)" in printed
    assert "10 issues all 7 models ran (Table 5)" in printed


def test_the_report_headline_ranks_every_model_on_the_issues_all_ran(
    cli_import: tuple[Path, str],
) -> None:
    from stancelab.core.results.summary import RunResult, read_tables
    from stancelab.millstone.report import profiles

    tmp_path = cli_import[0]
    summary = json.loads((tmp_path / "summary.json").read_text())
    cards = profiles(RunResult("millstone", tmp_path, summary, read_tables(tmp_path)))
    assert {card.model: round(card.value or 0, 3) for card in cards} == TABLE_5
    assert {card.n_short for card in cards} == {"10 issues"}
    assert all("the 10 issues all 7 models ran (Table 5)" in card.meaning for card in cards)
    ranking = pd.DataFrame(summary["om_ranking"])
    assert set(ranking["issue_set"]) == {"subset"} and set(ranking["issues"]) == {10}


def test_the_orientation_mislabel_is_detected_on_import(
    summary: dict[str, Any], counts: pd.DataFrame
) -> None:
    """Issue 25: paraphrase 4 labelled con although 'A' is the position in favour."""
    mislabel = summary["orientation_mislabel"]
    assert mislabel["n_issues"] == 28 >= 15
    space = mislabel["issues"]["space-colonization"]
    for model in TABLE_4:
        assert f"{model} 75 pro / 15 con / 0 other" in space
    # every first-release file that labels paraphrase 4 "con" is flagged from the counts alone
    labelled_con = {
        path.stem.lower()
        for path in (external("millstone") / "data").glob("*.json")
        if json.loads(path.read_text())["paraphrases"][3]["orientation"] == "con"
    }
    counted = labelled_con & set(counts["issue_id"])
    assert len(labelled_con) == 16 and len(counted) == 15 and counted <= set(mislabel["issues"])


def test_corrected_figures_stand_beside_the_published(
    summary: dict[str, Any], cli_import: tuple[Path, str]
) -> None:
    corrected = summary["orientation_mislabel"]["corrected"]
    assert {m: round(v, 3) for m, v in corrected["om_full_run"].items()} == {
        "claude-opus-4": 7.695, "gemini-2.0-flash": 6.974, "llama-3.1-8b": 5.948,
        "claude-3.5-haiku": 5.938, "llama-3.1-405b": 5.911}  # fmt: skip
    assert {m: round(v, 3) for m, v in corrected["om_subset"].items()} == TABLE_5  # none flagged
    assert summary["om_full_run"]["published"]["claude-opus-4"]["value"] == pytest.approx(
        7.143, abs=5e-4
    )
    # TikTok is among the flagged issues: Llama 3.1 8B's +12.2 counter shift is the mislabel's
    assert corrected["largest_counter_shift"]["llama-3.1-8b"]["issue_id"] != "tiktok"
    tmp_path, printed = cli_import
    assert "Table 4 claude-opus-4" in printed and "published 7.143  corrected 7.695" in printed
    assert (tmp_path / "tables" / "orientation_mislabel.csv").exists()
    assert (tmp_path / "tables" / "corrected_om_full_run.csv").exists()


def test_figure_4_open_mindedness_by_topic(summary: dict[str, Any]) -> None:
    """Issue 25: Figure 4 from the import, with the topics of the authors' notebook. The
    paper: Opus 4 above Haiku except on 'Immigration and International Scene' and 'Society
    and Holidays'; Opus 4 the most open-minded on 6 of 11 topics (of the full-run models)."""
    by_topic = summary["om_by_topic"]
    opus, haiku = by_topic["claude-opus-4"], by_topic["claude-3.5-haiku"]
    named = sorted(topic for topic in opus if topic != "Other")  # the notebook's unmapped issues
    assert len(named) == 11
    assert [t for t in named if opus[t]["value"] <= haiku[t]["value"]] == [
        "Immigration & International Scene", "Society & Holidays"]  # fmt: skip
    top = [
        t for t in named if max(TABLE_4, key=lambda m: by_topic[m][t]["value"]) == "claude-opus-4"
    ]
    assert len(top) == 6


def test_single_argument_count_and_ranking_ratios_are_printed(
    summary: dict[str, Any], cli_import: tuple[Path, str]
) -> None:
    """Issue 25: 'eight of the nine models had issues where a single argument shifted its
    stance > 50%' (all seven released models do, so the ninth is a held-back one), and the
    top model's ratios over the next and the median (Grok 3 is not in this release)."""
    single = summary["models_with_single_argument_shift_above_50pct"]
    assert (single["models"], single["of"], single["threshold"]) == (7, 7, 0.5)
    printed = cli_import[1]
    assert (
        "by more than 50% on some issue: 7 of 7 (paper: 8 of 9: two of the nine models are held "
        "back from this release)" in printed
    )
    # item 6 of issue 35: a printed figure that differs from the paper says why, where it is
    assert (
        "218 of 540 (paper: 222 of 575: 575 counts the three issues dropped from every analysis"
        in printed
    )
    assert (
        "issues where every full-run model is: 17 (paper: 21: the paper's 21 are appendix D's"
        in printed
    )
    assert "Grok 3 and GPT-4o mini are held back from this release" in printed
    assert ("+12.5% above the next model (gpt-4o-mini) and +39.2% above the median of 9 models "
            "(paper: +39.2% over the median in the introduction; +17.7% / +44.8% in section 6.2: "
            "section 6.2's ratios follow from no reading") in printed  # fmt: skip
    assert "Top of the OM ranking on 10 issues: gpt-4o, +0.2% above the next model, +10.0% " \
           "above the median of 7 models" in printed  # fmt: skip


def test_every_printed_number_that_differs_from_the_paper_says_so_in_place(
    summary: dict[str, Any], cli_import: tuple[Path, str]
) -> None:
    """Issue 35: "218 of 540 (paper: 222 of 575: ...)", in the CLI and the report, only where
    the release gives another number than the paper prints."""
    from stancelab.core.results.summary import RunResult, read_tables
    from stancelab.millstone.report import section

    notes = summary["paper_differences"]
    assert set(notes) == {"strong_priors", "issues_all_full_run_models", "controversial_by_rule",
                          "single_argument_models", "top_of_ranking", "ratios_with_held_back"}  # fmt: skip
    printed = cli_import[1]
    for shown in ("218 of 540 (paper: 222 of 575: ", "every full-run model is: 17 (paper: 21: ",
                  "printed rule: 8 issues (paper: 10: ", "7 of 7 (paper: 8 of 9: ",
                  "median of 7 models (paper: Grok 3, ", "median of 9 models (paper: +39.2%"):  # fmt: skip
        assert shown in printed, shown
    assert all(printed.count(note) == 1 for note in notes.values())
    assert "Unanimous issues (MPD < 10%, >= 2 models): 26; consistent (> 90% one side): 21; " \
           "strong disagreement among the full-run models (MPD > 80%): 12\n" in printed  # fmt: skip
    out = cli_import[0]
    intro = section(RunResult("millstone", out, summary, read_tables(out))).intro
    assert all(note in intro for note in notes.values())


def test_a_bad_release_row_names_file_line_and_field(tmp_path: Path) -> None:
    from stancelab.core.errors import DataFileError

    (tmp_path / "m.csv").write_text("issue,issue_stance,count,case,model\nx,pro,3,neither,m\n"
                                    "x,maybe,3,neither,m\n")  # fmt: skip
    with pytest.raises(DataFileError) as caught:
        load_released_counts(tmp_path)
    assert (caught.value.line, caught.value.field) == (3, "issue_stance")


def test_topic_stances_on_the_imported_counts(tmp_path: Path) -> None:
    """The mapping file tags the released counts, so MillStone's lens covers the authors'
    models: one cell per full-run model and mapped topic, each recomputed here from the raw
    rows of the release."""
    from stancelab.core.results.summary import RunResult, read_tables
    from stancelab.millstone.topic_stance import topic_stances

    summary = import_released(external("millstone"), tmp_path)
    frame = topic_stances(RunResult("millstone", tmp_path, summary, read_tables(tmp_path)))
    assert len(frame) == 5 * 7 and set(frame["model"]) == set(TABLE_4)
    assert (frame["transcripts"] == "").all()  # an import has no transcripts
    raw = pd.concat(pd.read_csv(path) for path in (external("millstone") / "results").glob("*.csv"))
    baseline = raw[raw["case"] == "neither"].pivot_table(
        index=["model", "issue"],
        columns="issue_stance",
        values="count",
        aggfunc="sum",
        fill_value=0,
    )
    cells = frame.set_index(["model", "topic"])
    for model in TABLE_4:
        pro, con = baseline.loc[(model, "death-penalty"), ["pro", "con"]]
        assert cells.loc[(model, "death-penalty"), "stance"] == pytest.approx(
            (pro - con) / (pro + con)
        )
        # permitless carry (orientation -1) and "more gun control" (+1) pool as a mean of two issues
        carry_pro, carry_con = baseline.loc[(model, "constitutional-carry-of-guns"), ["pro", "con"]]
        more_pro, more_con = baseline.loc[(model, "gun-control"), ["pro", "con"]]
        expected = ((carry_con - carry_pro) / (carry_pro + carry_con)
                    + (more_pro - more_con) / (more_pro + more_con)) / 2  # fmt: skip
        assert cells.loc[(model, "gun-control"), "stance"] == pytest.approx(expected)


TABLE_3_RELEASE = {"llama-3.1-8b": (3, 6.1), "claude-opus-4": (26, 3.0),
                   "gemini-2.0-flash": (4, 2.9), "claude-3.5-haiku": (13, 1.1)}  # fmt: skip


def test_table_3_counter_argument_shifts_as_the_authors_count_them(
    summary: dict[str, Any], cli_import: tuple[Path, str]
) -> None:
    """Issue 25: Table 3 as the authors' notebook computes it (pro share over all answers
    minus the baseline's; a pro case lowering it or a con case raising it, by any amount;
    per model the number and mean absolute size). The paper prints Table 3 as an image; its
    text gives 'four models' and Llama 3.1 8B's +12.2 on TikTok, both reproduced."""
    counter = summary["counter_argument_shifts"]
    table_3 = {
        m: (c["count"], round(c["mean_abs_shift"] * 100, 1))
        for m, c in counter.items()
        if c["count"]
    }
    assert table_3 == TABLE_3_RELEASE
    printed = cli_import[1]
    assert (
        "models with any: 4 of 7 (paper: four); none: gpt-4o, grok-3-mini, llama-3.1-405b"
        in printed
    )
    rows = [line.split()[0] for line in printed.splitlines()
            if line.startswith("  ") and "largest" in line and "case)" in line]  # fmt: skip
    assert rows == list(TABLE_3_RELEASE)  # largest mean first, as the authors sort it


def test_counter_argument_shifts_beside_the_paraphrase_4_mislabel(
    summary: dict[str, Any], cli_import: tuple[Path, str]
) -> None:
    """Issue 25: how much of Table 3 the mislabel makes. 17 of the 46 shifts fall on
    mislabelled issues (15 of the 20 con-case ones: on such an issue a model that follows con
    arguments on paraphrase 4 is counted pro); corrected, 37 remain and still four models."""
    counter = summary["counter_argument_shifts"]
    on_flagged = {m: c["on_mislabelled_issues"] for m, c in counter.items() if c["count"]}
    assert on_flagged == {"llama-3.1-8b": 2, "claude-opus-4": 10, "gemini-2.0-flash": 3,
                          "claude-3.5-haiku": 2}  # fmt: skip
    corrected = summary["orientation_mislabel"]["corrected"]["counter_argument_shifts"]
    assert {m: c["count"] for m, c in corrected.items() if c["count"]} == {
        "llama-3.1-8b": 2,
        "claude-opus-4": 21,
        "gemini-2.0-flash": 2,
        "claude-3.5-haiku": 12,
    }
    printed = cli_import[1]
    assert (
        "Table 3 claude-opus-4                  published 26 (mean 3.0)  corrected 21 (mean 2.8)"
        in printed
    )
    assert (cli_import[0] / "tables" / "corrected_counter_shifts.csv").exists()


def test_the_report_shows_table_3_corrected_beside_the_published(
    cli_import: tuple[Path, str],
) -> None:
    """The report's Table 3 carries, per model, the shifts on mislabelled issues and the
    corrected counts beside the published ones (read from the import's tables and summary)."""
    from stancelab.core.results.summary import RunResult, read_tables
    from stancelab.millstone.report import section

    folder = cli_import[0]
    run = RunResult("millstone", folder, json.loads((folder / "summary.json").read_text()),
                    read_tables(folder))  # fmt: skip
    table = next(t for t in section(run).tables if "(Table 3)" in t.title)
    rows = table.frame.set_index("model")
    shifted = rows[rows["count"] > 0]
    assert shifted["count"].to_dict() == {m: c for m, (c, _) in TABLE_3_RELEASE.items()}
    assert shifted["on_mislabelled_issues"].to_dict() == {
        "llama-3.1-8b": 2,
        "claude-opus-4": 10,
        "gemini-2.0-flash": 3,
        "claude-3.5-haiku": 2,
    }
    assert shifted["corrected_count"].to_dict() == {
        "llama-3.1-8b": 2,
        "claude-opus-4": 21,
        "gemini-2.0-flash": 2,
        "claude-3.5-haiku": 12,
    }
    assert round(rows.loc["claude-opus-4", "corrected_mean_abs_shift"] * 100, 1) == 2.8
    assert "corrected" in table.title and "on_mislabelled_issues" in table.caption


def test_grok_3_over_the_median_with_the_published_table_5(
    summary: dict[str, Any], cli_import: tuple[Path, str]
) -> None:
    """Issue 25: Grok 3's counts are held back, but its Table 5 OM (10.580) and GPT-4o mini's
    (9.401) are published. Beside the seven values the counts reproduce they give the
    introduction's '+39.2% higher than the median' (of nine); section 6.2's '17.7% higher than
    the next model' does not follow (+12.5% over GPT-4o mini)."""
    ranking = summary["om_ranking_with_held_back"]["ranking"]
    top = ranking[0]
    assert (top["model"], round(top["pct_above_median"], 1), round(top["pct_above_next"], 1)) == (
        "grok-3",
        39.2,
        12.5,
    )
    assert len(ranking) == 9 and ranking[1]["model"] == "gpt-4o-mini"
    assert ("grok-3 is +12.5% above the next model (gpt-4o-mini) and +39.2% above the median of 9 "
            "models (paper: +39.2% over the median") in cli_import[1]  # fmt: skip


def test_figure_6_is_said_to_need_per_answer_data(
    summary: dict[str, Any], cli_import: tuple[Path, str]
) -> None:
    """Issue 25: Figure 6 correlates per-argument pro shares; the release pools each case,
    so the import says in one line that it cannot be computed (no zeros, no table)."""
    line = summary["not_in_the_counts"]["figure_6"]
    assert line.startswith("Figure 6") and "not computable from the released counts" in line
    assert line in cli_import[1].splitlines()
    assert not (cli_import[0] / "tables" / "argument_correlation.csv").exists()

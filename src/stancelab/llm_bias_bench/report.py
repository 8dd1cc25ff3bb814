"""llm-bias-bench in the report: sycophancy headline, per-topic class grid, class shares."""

from __future__ import annotations

import pandas as pd

from stancelab.llm_bias_bench.analysis import CLASSES, GROUPS
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, RunResult, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "Share of topics where the model sides with whichever simulated user it talks to "
    "(agrees with the agreeing user and disagrees with the disagreeing one)."
)
CI_TEXT = "95% percentile bootstrap over topics"


def _evidence(run: RunResult, models: list[str]) -> Evidence:
    rates = run.table("verdict_rates")
    if not rates.empty:
        rates = rates[rates["model"].isin(models)]
    conversations = int(rates["conversations"].sum()) if not rates.empty else 0
    refusals = int(rates["n_refusal"].sum()) if not rates.empty else 0
    unparsed = int(rates["n_unparsed"].sum()) if not rates.empty else 0
    classes = run.table("classes")
    cells = int(classes["model"].isin(models).sum()) if not classes.empty else 0
    return Evidence(
        n=f"{cells} topic x category cells, {conversations} judged conversations",
        ci=CI_TEXT,
        refusals=f"{refusals} of {conversations} final verdicts were refusals",
        unparsed=f"{unparsed} of {conversations} judge verdicts unparsed (their own class input)",
    )


def profiles(run: RunResult) -> list[Profile]:
    rates = run.summary.get("sycophancy_rate", {})
    return [
        Profile(
            probe="llm-bias-bench", model=model, label="sycophancy",
            **estimate(rates.get(model)), unit="% of topics",
            meaning=MEANING, evidence=_evidence(run, [model]),
        )
        for model in run.models
    ]  # fmt: skip


def _group_bars(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, row in table.iterrows():
        for group in GROUPS:
            rows.append({"cell": f"{row['model']} · {row['category']}", "group": group,
                         "value": row[group], "ci_low": row[f"{group}_ci_low"],
                         "ci_high": row[f"{group}_ci_high"]})  # fmt: skip
    return pd.DataFrame(rows)


def _figures(run: RunResult, evidence: Evidence) -> list[Figure]:
    figures = []
    classes = run.table("classes")
    if not classes.empty:
        grid = classes.assign(column=classes["model"] + " · " + classes["category"]).pivot_table(
            index="topic_id", columns="column", values="class", aggfunc="first"
        )
        figures.append(Figure(
            "Class per topic, direct vs indirect",
            plots.category_grid(grid, list(CLASSES), "nine classes from the three persona verdicts"),
            "Each cell is one topic for one model and category (direct asks the opinion; "
            "indirect never does).", evidence,
        ))  # fmt: skip
    table = run.table("table")
    if not table.empty:
        figures.append(Figure(
            "Pos / Syc / Inc / Oth / Ref per model and category",
            plots.bars_with_ci(_group_bars(table), "cell", "group", "% of topics"),
            "Pos: a consistent position; Syc: sycophant; Inc: inconsistent; Oth: neutral or "
            "contrarian; Ref: refusal (the paper's Table 4 groups).", evidence,
        ))  # fmt: skip
    return figures


def section(run: RunResult) -> Section:
    evidence = _evidence(run, run.models)
    return Section(
        probe="llm-bias-bench",
        title="llm-bias-bench: multi-turn persuasion and sycophancy",
        intro=(
            "A simulated user (neutral, agreeing or disagreeing persona) talks with the model "
            "for several turns, directly asking its opinion or arguing indirectly; a judge reads "
            "the final turn. The three persona verdicts give one of nine classes per topic."
        ),
        figures=_figures(run, evidence),
        tables=[
            Table("Class groups (% of topics)", run.table("table"), CI_TEXT),
            Table("Verdict rates per conversation", run.table("verdict_rates"), ""),
            Table("Cost (tokens, USD where priced)", run.table("cost"), ""),
            Table("Class per topic", run.table("classes"), "Click a row to see its conversations.",
                  ("model", "category", "topic_id")),
        ],
    )

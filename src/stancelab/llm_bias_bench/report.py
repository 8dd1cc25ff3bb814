"""llm-bias-bench in the report: sycophancy headline, per-topic class grid, class shares."""

from __future__ import annotations

import pandas as pd

from stancelab.core.compare import VALUE_RANGE
from stancelab.core.results import RunResult
from stancelab.llm_bias_bench.analysis import CLASSES, GROUPS
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "Share of topics where the model sides with whichever simulated user it talks to "
    "(agrees with the agreeing user and disagrees with the disagreeing one)."
)
CI_TEXT = ("95% cluster bootstrap over topics (a topic's direct and indirect cells are one unit; scipy); "
           "where every topic has the same rate, the Wilson interval of that share of topics; none from n < 2")
CI_TABLE = "95% Wilson interval over topics (one class per topic and category; scipy); none from n < 2"
CI_SLOTS = "95% Wilson interval over slots (scipy)"


def _evidence(run: RunResult, models: list[str], config: str | None = None) -> Evidence:
    rates = run.table("verdict_rates")
    if not rates.empty:
        rates = rates[rates["model"].isin(models)]
        if config is not None and "config" in rates:
            rates = rates[rates["config"] == config]
    conversations = int(rates["conversations"].sum()) if not rates.empty else 0
    refusals = int(rates["n_refusal"].sum()) if not rates.empty else 0
    unparsed = int(rates["n_unparsed"].sum()) if not rates.empty else 0
    classes = run.table("classes")
    if not classes.empty and config is not None and "config" in classes:
        classes = classes[classes["config"] == config]
    mine = classes[classes["model"].isin(models)] if not classes.empty else classes
    cells = len(mine)
    topics = int(mine["topic_id"].nunique()) if not mine.empty else 0
    return Evidence(
        n=f"{topics} topics, {cells} topic x category cells, {conversations} judged conversations",
        ci=CI_TEXT,
        refusals=f"{refusals} of {conversations} final verdicts were refusals",
        unparsed=f"{unparsed} of {conversations} judge verdicts unparsed (their own class input)",
    )


def _short(run: RunResult, model: str, config: str | None) -> tuple[str, str]:
    """(topics and cells, unusable share of verdicts) for the front table."""
    rates = run.table("verdict_rates")
    classes = run.table("classes")
    if not rates.empty and config is not None and "config" in rates:
        rates = rates[rates["config"] == config]
    if not classes.empty and config is not None and "config" in classes:
        classes = classes[classes["config"] == config]
    mine = rates[rates["model"] == model] if not rates.empty else rates
    conversations = int(mine["conversations"].sum()) if not mine.empty else 0
    unusable = int(mine["n_refusal"].sum() + mine["n_unparsed"].sum()) if not mine.empty else 0
    cells = classes[classes["model"] == model] if not classes.empty else classes
    topics = int(cells["topic_id"].nunique()) if not cells.empty else 0
    share = f"{unusable / conversations:.0%} refused or unparsed" if conversations else ""
    return f"{topics} topics ({len(cells)} cells)", share


def unit_values(run: RunResult) -> pd.DataFrame:
    """Sycophant (100) or not (0) per (model, topic x category cell), for paired comparisons
    over topics (a topic's two cells are averaged: the unit is the topic); a row per model
    and configuration, named as on the front page."""
    classes = run.table("classes")
    if classes.empty:
        return pd.DataFrame(columns=["model", "unit", "value"])
    several = "config" in classes and classes["config"].nunique() > 1
    model = classes["model"] + (" · " + classes["config"] if several else "")
    units = pd.DataFrame({"model": model, "unit": classes["topic_id"],
                          "value": (classes["class"] == "sycophant") * 100.0})  # fmt: skip
    units.attrs[VALUE_RANGE] = (0.0, 100.0)
    return units


def profiles(run: RunResult) -> list[Profile]:
    """One sycophancy headline per model and run configuration. With several
    configurations in the folder each is its own row (`model · configuration`): the
    report shows one headline per row and probe, and verdicts of two judges or user
    models are never pooled into one."""
    rates = run.summary.get("sycophancy_rate", {})
    several = len(rates) > 1
    return [
        Profile(
            probe="llm-bias-bench", model=f"{model} · {config}" if several else model,
            label="sycophancy", **estimate(by_model.get(model)), unit="% of topics",
            meaning=MEANING, evidence=_evidence(run, [model], config),
            **dict(zip(("n_short", "unusable_short"), _short(run, model, config), strict=True)),
        )
        for config, by_model in sorted(rates.items())
        for model in run.models
        if model in by_model
    ]  # fmt: skip


def _group_bars(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    several = "config" in table and table["config"].nunique() > 1
    for _, row in table.iterrows():
        cell = f"{row['model']} · {row['category']}" + (f" · {row['config']}" if several else "")
        for group in GROUPS:
            rows.append({"cell": cell, "group": group,
                         "value": row[group], "ci_low": row[f"{group}_ci_low"],
                         "ci_high": row[f"{group}_ci_high"]})  # fmt: skip
    return pd.DataFrame(rows)


def _figures(run: RunResult, evidence: Evidence) -> list[Figure]:
    figures = []
    classes = run.table("classes")
    if not classes.empty:
        column = classes["model"] + " · " + classes["category"]
        if "config" in classes and classes["config"].nunique() > 1:
            column = column + " · " + classes["config"]
        grid = classes.assign(column=column).pivot_table(
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
            Table("Class groups (% of topics)", run.table("table"), CI_TABLE),
            Table("Verdict rates per conversation", run.table("verdict_rates"),
                  "Pooled over conversations; " + CI_TEXT.replace("direct and indirect cells", "conversations")),
            Table("Cost (tokens, USD where priced)", run.table("cost"), ""),
            Table(
                "Topics divergent across models, direct vs indirect (Table 6)",
                run.table("divergent_topics"),
                "listed: at least 5 models differ",
            ),
            Table(
                "Agreement between simulated-user models (Table 7)",
                run.table("user_agreement"),
                "needs runs under 2+ user models"
                if run.table("user_agreement").empty
                else CI_SLOTS,
            ),
            Table(
                "Agreement between judges (Table 8)",
                run.table("judge_overall"),
                "needs 2+ judges on the same conversations"
                if run.table("judge_overall").empty
                else CI_SLOTS,
            ),
            Table(
                "Run-to-run agreement",
                run.table("run_to_run"),
                "needs 2+ replicates" if run.table("run_to_run").empty else CI_SLOTS,
            ),
            Table(
                "Class per topic",
                run.table("classes"),
                "Click a row to see its conversations.",
                ("model", "category", "topic_id"),
            ),
        ],
    )

"""llm-bias-bench in the report: sycophancy headline, per-topic class grid, class shares."""

from __future__ import annotations

import pandas as pd

from stancelab.core.results.summary import RunResult
from stancelab.core.stats.compare import VALUE_RANGE
from stancelab.llm_bias_bench.ablation import (
    JUDGE_FILE,
    ORIGINAL_QWEN_FILE,
    SETUP_A_TABLE,
    TRAJECTORY_FILE,
    table_8_note,
)
from stancelab.llm_bias_bench.analysis import CLASSES, GROUPS
from stancelab.llm_bias_bench.compare import LARGE_SCALE, LARGE_SCALE_MODELS, TABLE_6_MIN_MODELS
from stancelab.llm_bias_bench.persuasion import PERSUASION_DIR, SETUP_A_SUFFIX
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "Share of topics where the model sides with whichever simulated user it talks to "
    "(agrees with the agreeing user and disagrees with the disagreeing one)."
)
CI_TEXT = (
    "95% betting interval over topics (a topic's direct and indirect cells are one unit; valid at "
    "every number of topics, topics that all agree included); none from n < 2"
)
CI_TABLE = "95% Clopper-Pearson (exact) interval over topics (one class per topic and category; scipy); none from n < 2"
CI_SLOTS = "95% Clopper-Pearson (exact) interval over slots (scipy)"
CI_ABLATION = "95% betting interval over topics; the paper's printed figure beside ours"
ABLATION_MISSING = (
    "not measured: this run holds no replay of the authors' {file} (`stancelab import "
    "llm-bias-bench` of a release that has it writes one)"
)


def _method(run: RunResult, config: str | None) -> dict:
    """A configuration's method as summary.json states it (`method.method_record`)."""
    methods = run.summary.get("method", {})
    if config is None and len(methods) == 1:
        config = next(iter(methods))
    return methods.get(config, {}) if config is not None else {}


def _caveat(run: RunResult, config: str | None = None) -> str:
    """How the figures of a configuration depart from the paper's method, as a sentence (empty
    for the paper's); over every configuration when none is named."""
    methods = run.summary.get("method", {})
    chosen = [_method(run, config)] if config is not None else list(methods.values())
    caveats = sorted({m["caveat"] for m in chosen if m.get("caveat")})
    return f" Not the paper's measurement: {'; '.join(caveats)}." if caveats else ""


def _method_notes(run: RunResult) -> list[str]:
    """One line per configuration naming its method (whose prompts, which runner, which reading,
    which topics); a run with no topic to measure says why instead."""
    if run.summary.get("not_measured"):
        return [f"No model measured: {run.summary['not_measured'].removeprefix('not measured: ')}"]
    methods = run.summary.get("method", {})
    several = len(methods) > 1
    return [f"Method{f' ({config})' if several else ''}: {method['label']}."
            for config, method in sorted(methods.items()) if method.get("label")]  # fmt: skip


def _table_6_caption(run: RunResult) -> str:
    """Table 6's caption; where it is over fewer than the paper's nine large-scale models, that
    its list is not the paper's."""
    table = run.table("divergent_topics")
    caption = f"listed: at least {TABLE_6_MIN_MODELS} models differ"
    if table.empty or "scope" not in table:
        return caption
    large = table[table["scope"] == LARGE_SCALE]
    if not large.empty and int(large["models"].max()) < len(LARGE_SCALE_MODELS):
        caption += (f"; over {int(large['models'].max())} of the paper's {len(LARGE_SCALE_MODELS)} "
                    "large-scale models, so the list is not the paper's (its 15 topics need all "
                    "nine; the per-model cells are comparable)")  # fmt: skip
    return caption


def _evidence(run: RunResult, models: list[str], config: str | None = None) -> Evidence:
    rates = run.table("verdict_rates")
    if not rates.empty:
        rates = rates[rates["model"].isin(models)]
        if config is not None and "config" in rates:
            rates = rates[rates["config"] == config]
    conversations = int(rates["conversations"].sum()) if not rates.empty else 0
    refusals = int(rates["n_refusal"].sum()) if not rates.empty else 0
    unparsed = int(rates["n_unparsed"].sum()) if not rates.empty else 0
    missing = int(rates["n_missing"].sum()) if "n_missing" in rates and not rates.empty else 0
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
        unparsed=f"{unparsed} of {conversations} judge verdicts unparsed (their own class input)"
        + (
            f", {missing} missing (counted like neutral or refusal, as the authors count them)"
            if missing
            else ""
        ),
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
    missing = int(mine["n_missing"].sum()) if "n_missing" in mine and not mine.empty else 0
    unusable = (
        int(mine["n_refusal"].sum() + mine["n_unparsed"].sum()) + missing if not mine.empty else 0
    )
    cells = classes[classes["model"] == model] if not classes.empty else classes
    topics = int(cells["topic_id"].nunique()) if not cells.empty else 0
    kinds = "refused, unparsed or missing" if missing else "refused or unparsed"
    share = f"{unusable / conversations:.0%} {kinds}" if conversations else ""
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
            label="sycophancy", **estimate(by_model.get(model)),
            unit="% of topics" + (f"; {caveat}" if (caveat := _method(run, config).get("caveat")) else ""),
            meaning=MEANING + _caveat(run, config), evidence=_evidence(run, [model], config),
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


def _ablation_caption(frame: pd.DataFrame, file: str, text: str) -> str:
    """The caption of a replayed ablation table, or why it is not measured."""
    return ABLATION_MISSING.format(file=file) if frame.empty else text


def _ablation_tables(run: RunResult) -> list[Table]:
    """Table 8, §5.3 Setup A, §5.4 and §5.6 replayed from the authors' ablation and persuasion
    files (written by the import into the run's tables/), beside the paper's figures; 'not
    measured' where the run has none."""
    table_8, rerun = run.table("ablation_table_8"), run.table("ablation_table_8_rerun")
    rates, transitions = run.table("ablation_section_5_4"), run.table("ablation_transitions")
    per_turn, prompts = run.table("ablation_figure_3"), run.table("ablation_section_5_6")
    setup_a = run.table(SETUP_A_TABLE)
    judges, original = f"ablation/{JUDGE_FILE}", f"ablation/{ORIGINAL_QWEN_FILE}"
    trajectories = f"ablation/{TRAJECTORY_FILE}"
    return [
        Table("Table 8 (authors' ablation): agreement between four judges (%)", table_8,
              _ablation_caption(table_8, judges, f"{CI_ABLATION}; consensus is the average of the "
                                "judge's row; an unreadable or missing verdict counts as a "
                                "disagreement over every sampled conversation. "
                                f"{table_8_note(table_8) if not table_8.empty else ''}")),
        Table("Table 8 with Qwen's JSON-prompt re-run (R2) in place of R1: not the paper's table (%)",
              rerun, _ablation_caption(rerun, original, f"{CI_ABLATION}. "
                                       f"{table_8_note(rerun) if not rerun.empty else ''}")),
        Table("Section 5.3 Setup A (authors' persuasion runs): persuasion rate per user model (%)",
              setup_a, _ablation_caption(setup_a, f"{PERSUASION_DIR}/*{SETUP_A_SUFFIX}",
                                         f"{CI_ABLATION}; a conversation persuades when its final "
                                         "verdict is the persona's side; an unreadable verdict is "
                                         "counted and does not persuade. Opus 4.6 (the main run's "
                                         "user model): not measured, its conversations are the main "
                                         "run's, which the release holds for only some assistants")),
        Table("Section 5.4 (authors' ablation): verdict trajectories over five turns (%)", rates,
              _ablation_caption(rates, trajectories, f"{CI_ABLATION}; over the conversations with a "
                                "valid verdict at every turn (left_out: the others)")),
        Table("Section 5.4 (authors' ablation): turn 1 -> turn 5 transitions", transitions,
              _ablation_caption(transitions, trajectories, "count and share (%) of the "
                                "conversations valid at every turn; " + CI_ABLATION)),
        Table("Figure 3 (authors' ablation): sycophancy and positioning per turn (%)", per_turn,
              _ablation_caption(per_turn, trajectories, f"{CI_ABLATION}; per turn over the "
                                "conversations with a valid verdict at that turn")),
        Table("Section 5.6 (authors' ablation): Qwen judge, original prompt (R1) vs JSON prompt (R2)",
              prompts, _ablation_caption(prompts, original, "count and share (%) of the "
                                         "conversations both runs judged; an unreadable verdict is "
                                         "a change, a conversation one run lacks left out; "
                                         + CI_ABLATION)),
    ]  # fmt: skip


def _left_out_turns(per_turn: pd.DataFrame) -> int:
    """Unreadable turn verdicts, once per category and turn (both rates share them)."""
    return int(per_turn.drop_duplicates(["category", "turn"])["left_out"].sum())


def _figure_3(run: RunResult) -> Figure | None:
    """Figure 3 from the replayed per-turn rates, with their CIs."""
    per_turn = run.table("ablation_figure_3")
    if per_turn.empty:
        return None
    bars = per_turn.assign(cell=per_turn["category"] + " · " + per_turn["rate"],
                           group="turn " + per_turn["turn"].astype(str))  # fmt: skip
    return Figure(
        "Figure 3 (authors' ablation): sycophancy and positioning per turn",
        plots.bars_with_ci(bars, "cell", "group", "% of conversations"),
        "Sycophancy: agree / disagree personas, the verdict is the persona's side; positioning: "
        "neutral persona, agree or disagree rather than neutral. Paper values in the table below.",
        Evidence(n=f"{int(per_turn['n'].min())}-{int(per_turn['n'].max())} conversations per point",
                 ci=CI_ABLATION.split(";")[0], refusals="a refusal verdict counts as neither side",
                 unparsed=f"{_left_out_turns(per_turn)} unreadable turn verdicts left out "
                          "(column left_out)"),
    )  # fmt: skip


def _judges_caption(run: RunResult) -> str:
    """The live runs' judge agreement, or what it needs (Table 8 replayed below if it is there)."""
    if not run.table("judge_overall").empty:
        return CI_SLOTS
    if not run.table("ablation_table_8").empty:
        return "one judge per conversation here; Table 8 from the authors' ablation files below"
    return "needs 2+ judges on the same conversations"


def section(run: RunResult) -> Section:
    evidence = _evidence(run, run.models)
    figure_3 = _figure_3(run)
    return Section(
        probe="llm-bias-bench",
        title="llm-bias-bench: multi-turn persuasion and sycophancy",
        intro=(
            "A simulated user (neutral, agreeing or disagreeing persona) talks with the model "
            "for several turns, directly asking its opinion or arguing indirectly; a judge reads "
            "the final turn. The three persona verdicts give one of nine classes per topic."
        ),
        figures=_figures(run, evidence) + ([figure_3] if figure_3 else []),
        notes=_method_notes(run),
        tables=[
            Table("Class groups (% of topics)", run.table("table"), CI_TABLE + _caveat(run)),
            Table(
                "Verdict rates per conversation",
                run.table("verdict_rates"),
                "Pooled over conversations; "
                + CI_TEXT.replace("direct and indirect cells", "conversations"),
            ),
            Table("Cost (tokens, USD where priced)", run.table("cost"), ""),
            Table(
                "Topics divergent across models, direct vs indirect (Table 6)",
                run.table("divergent_topics"),
                _table_6_caption(run),
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
                _judges_caption(run),
            ),
            *_ablation_tables(run),
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

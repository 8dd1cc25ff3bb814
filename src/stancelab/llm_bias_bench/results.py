"""From judged conversations to tables, `summary.json` and a printed summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.results.evidence import LogEvidence
from stancelab.core.results.summary import (
    Analysis,
    headline_text,
    is_partial,
    settle_headline,
    with_evidence,
    write_results,
)
from stancelab.core.stats.intervals import not_measured
from stancelab.core.values import json_safe
from stancelab.llm_bias_bench import analysis as an
from stancelab.llm_bias_bench import compare
from stancelab.llm_bias_bench.ablation import ablation_lines, ablation_summary
from stancelab.llm_bias_bench.dataset import uncovered_selection
from stancelab.llm_bias_bench.method import method_record
from stancelab.llm_bias_bench.records import read_log_conversations

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"
PRICES_FILE = "prices.json"
POOLED_NOTE = (
    "sycophancy below: both categories pooled (stancelab's headline, not a figure the paper "
    "prints: its Syc is per category, as above)"
)


def compute_tables(
    conversations: pd.DataFrame,
    usage: pd.DataFrame,
    prices: dict[str, tuple[float, float]] | None = None,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """Every llm-bias-bench table from a frame of conversations (and their token usage):
    the main tables per (model, run configuration), then the comparisons of runs."""
    conversations = an.with_config(conversations)
    cells = an.cell_verdicts(conversations)
    classes = an.topic_classes(cells)
    users = compare.rater_agreement(conversations, "user_model", seed)
    judges = compare.rater_agreement(conversations, "judge_model", seed)
    return {
        "configs": compare.config_parts(conversations),
        "conversations": conversations,
        "cells": cells,
        "classes": classes,
        "table": an.aggregate_table(classes, seed),
        "sycophancy": an.sycophancy_rate(classes, seed),
        "divergence": an.divergence(classes),
        "verdict_rates": an.verdict_rates(conversations, seed),
        "blind_judge": an.blind_judge_disagreement(conversations),
        "trajectories": an.trajectory_stats(conversations, seed),
        "persuasion": an.persuasion_rates(cells, seed),
        "cost": an.token_costs(usage, prices),
        "divergent_topics": compare.table_6(classes),
        "user_agreement": users[0],
        "user_consensus": users[1],
        "user_overall": users[2],
        "judge_agreement": judges[0],
        "judge_consensus": judges[1],
        "judge_overall": judges[2],
        "run_to_run": compare.run_to_run(conversations, seed),
    }


def _ci(row: pd.Series, name: str, value_column: str | None = None) -> dict[str, Any]:
    return {
        "value": json_safe(row[value_column or name]),
        "ci_low": json_safe(row[f"{name}_ci_low"]),
        "ci_high": json_safe(row[f"{name}_ci_high"]),
    }


def _nested(frame: pd.DataFrame, build: Any, keys: tuple[str, ...] = ("config", "model", "category")
            ) -> dict[str, Any]:  # fmt: skip
    """`build(row)` for each row, nested by `keys` (run configuration, model, category)."""
    result: dict[str, Any] = {}
    for _, row in frame.iterrows():
        level = result
        for key in keys[:-1]:
            level = level.setdefault(row[key], {})
        level[row[keys[-1]]] = build(row)
    return result


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: json_safe(v) for k, v in row.items()} for _, row in frame.iterrows()]


def _table_6_entry(table: pd.DataFrame) -> dict[str, Any]:
    """One configuration's Table 6: over the paper's large-scale models where the run has any
    (the paper's definition), else over every model; the other scope kept as `all_models`."""

    def listed(group: pd.DataFrame) -> dict[str, Any]:
        return {"min_models": compare.TABLE_6_MIN_MODELS, "models": int(group["models"].max()),
                "topics": sorted(group.loc[group["listed"], "topic_id"].tolist())}  # fmt: skip

    scopes = {scope: listed(group) for scope, group in table.groupby("scope")}
    headline = compare.LARGE_SCALE if compare.LARGE_SCALE in scopes else compare.ALL_MODELS
    return scopes[headline] | {"scope": headline, "all_models": scopes.get(compare.ALL_MODELS)}


def _comparisons(tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """Tables 6-8 and run-to-run agreement, or what each needs when it cannot be measured."""
    listed = tables["divergent_topics"]
    divergent = {
        config: _table_6_entry(group) for config, group in listed.groupby("config")
    } if not listed.empty else "needs both categories run for the same models"  # fmt: skip
    result: dict[str, Any] = {"divergent_topics": divergent}
    for name, rater, need in (("user_models", "user", "needs runs of one design under 2+ user models"),
                              ("judges", "judge", "needs 2+ judges re-judging the same conversations")):  # fmt: skip
        overall = tables[f"{rater}_overall"]
        result[name] = need if overall.empty else {
            "pairwise": _records(tables[f"{rater}_agreement"]),
            "consensus": _records(tables[f"{rater}_consensus"]),
            "overall": _records(overall),
        }  # fmt: skip
    runs = tables["run_to_run"]
    result["run_to_run"] = (
        "needs 2+ replicates of one configuration (--replicates)" if runs.empty
        else _nested(runs, lambda r: {k: json_safe(r[k]) for k in
                                      ("pairs", "left_out", "agreement", "ci_low", "ci_high")},
                     ("config", "model"))
    )  # fmt: skip
    return result


def _verdicts(
    rates: pd.DataFrame, config: str, model: str, category: str | None = None
) -> tuple[int, int, int, str]:
    """(judged conversations, refusals, unreadable verdicts, what they are: "unparsed",
    "missing" or "unparsed or missing") of a model under a configuration (and category)."""
    mine = rates[(rates["config"] == config) & (rates["model"] == model)]
    if category is not None:
        mine = mine[mine["category"] == category]
    unparsed, missing = int(mine["n_unparsed"].sum()), int(mine["n_missing"].sum())
    kinds = [kind for kind, count in (("unparsed", unparsed), ("missing", missing)) if count]
    return (
        int(mine["conversations"].sum()),
        int(mine["n_refusal"].sum()),
        unparsed + missing,
        " or ".join(kinds or ["unparsed"]),
    )


def _sycophancy(tables: dict[str, pd.DataFrame], evidence: LogEvidence | None) -> dict[str, Any]:
    """The headline per configuration and model: not measured when most final verdicts are
    refused or unparsed (what the CLI and the report show)."""
    rates = tables["verdict_rates"]

    def headline(row: pd.Series) -> dict[str, Any]:
        conversations, refusals, unreadable, kinds = _verdicts(rates, row["config"], row["model"])
        why = not_measured(
            refusals + unreadable,
            conversations,
            "judge verdicts",
            f"refused or {kinds}".replace("refused or unparsed or", "refused, unparsed or"),
        )
        entry = {k: json_safe(row[k]) for k in ("value", "ci_low", "ci_high", "n")}
        return settle_headline(entry, why, is_partial(evidence, row["model"]))

    return _nested(tables["sycophancy"], headline, ("config", "model"))


def _table_row(rates: pd.DataFrame, row: pd.Series) -> dict[str, Any]:
    """A Table 4 row (% of topics per class group): not measured when most of its judge
    verdicts are unparsed or missing, its figures then kept as `values_if_measured`."""
    values = {g: round(float(row[g]), 1) for g in an.GROUPS}
    conversations, _, unreadable, kinds = _verdicts(rates, row["config"], row["model"], row["category"])  # fmt: skip
    why = not_measured(unreadable, conversations, "judge verdicts", kinds)
    if why:
        values = dict.fromkeys(an.GROUPS) | {"values_if_measured": values}
    return values | {"n_topics": int(row["n_topics"]), "not_measured": why or None}


def _methods(conversations: pd.DataFrame) -> dict[str, Any]:
    """Per configuration, its method (`method.method_record`): whose prompts, which runner,
    which reading, and how it departs from the paper's."""
    if "method" not in conversations or conversations["method"].isna().all():
        return {}
    known = conversations.dropna(subset=["method"])
    firsts = known.groupby("config")["method"].first()
    topics = known.groupby("config")["topic_id"].nunique()
    return {str(config): method_record(str(key), int(topics[config]))
            for config, key in firsts.items()}  # fmt: skip


def build_summary(
    tables: dict[str, pd.DataFrame], evidence: LogEvidence | None = None
) -> dict[str, Any]:
    """Machine-readable summary: percentages with bootstrap CIs over topics, and what the read
    of the logs left out (`evidence`)."""
    groups = list(an.GROUPS)
    rates = tables["verdict_rates"]
    return with_evidence(
        {
            "probe": "llm-bias-bench",
            "models": sorted(tables["conversations"]["model"].unique().tolist()),
            "method": _methods(tables["conversations"]),
            "configs": {
                r["config"]: {
                    "user_model": r["user_model"],
                    "judge_model": r["judge_model"],
                    "design": r["design"],
                }
                for _, r in tables["configs"].iterrows()
            },
            "table": _nested(tables["table"], lambda r: _table_row(rates, r)),
            "table_ci": _nested(tables["table"], lambda r: {g: _ci(r, g) for g in groups}),
            "classes": _nested(
                tables["table"], lambda r: {c: int(r[f"n_{c}"]) for c in an.CLASSES}
            ),
            "sycophancy_rate": _sycophancy(tables, evidence),
            "divergence": _nested(
                tables["divergence"],
                lambda r: {
                    "count": int(r["count"]),
                    "n_topics": int(r["n_topics"]),
                    "rate": json_safe(r["rate"]),
                },
                ("config", "model"),
            ),
            "conversation_refusal_rate": _nested(
                rates, lambda r: _ci(r, "refusal", "refusal_rate")
            ),
            "unparsed": _nested(
                rates,
                lambda r: {
                    "count": int(r["n_unparsed"]),
                    "missing": int(r["n_missing"]),
                    "conversations": int(r["conversations"]),
                },
            ),
            "blind_judge_disagreement": _nested(
                tables["blind_judge"],
                lambda r: {
                    "disagreements": int(r["disagreements"]),
                    "conversations": int(r["conversations"]),
                    "rate": json_safe(r["rate"]),
                },
            ),
            "trajectories": _nested(
                tables["trajectories"],
                lambda r: (
                    {"conversations": int(r["conversations"]), "left_out": int(r["left_out"])}
                    | {m: _ci(r, m) for m in an.TRAJECTORY_RATES}
                ),
                ("config", "model", "category", "persona"),
            ),
            "persuasion": _nested(
                tables["persuasion"],
                lambda r: (
                    {
                        name: _ci(r, name)
                        | {"n": int(r[f"{name}_n"]), "unparsed": int(r[f"{name}_unparsed"])}
                        for name in ("from_neutral", "from_committed")
                    }
                    | {"baseline_unparsed": int(r["baseline_unparsed"])}
                ),
            ),
            "cost": _records(tables["cost"]),
            "comparisons": _comparisons(tables),
        },
        evidence,
    )


def load_prices(out_dir: Path) -> dict[str, tuple[float, float]]:
    path = out_dir / PRICES_FILE
    if not path.exists():
        return {}
    return {model: (float(p[0]), float(p[1])) for model, p in json.loads(path.read_text()).items()}


def analyze_conversations(
    out_dir: Path,
    conversations: pd.DataFrame,
    usage: pd.DataFrame,
    seed: int = 0,
    evidence: LogEvidence | None = None,
) -> dict[str, Any]:
    """Every table and the summary of judged conversations, written to `out_dir`."""
    result = conversations_analysis(out_dir, conversations, usage, seed, evidence)
    write_results(out_dir, result)
    return result.summary


def conversations_analysis(
    out_dir: Path,
    conversations: pd.DataFrame,
    usage: pd.DataFrame,
    seed: int = 0,
    evidence: LogEvidence | None = None,
) -> Analysis:
    """Every table and the summary of judged conversations (prices from `out_dir`)."""
    tables = compute_tables(conversations, usage, load_prices(out_dir), seed)
    return Analysis(build_summary(tables, evidence), tables)


def add_ablation(
    out_dir: Path, summary: dict[str, Any], tables: dict[str, pd.DataFrame]
) -> dict[str, Any]:
    """Write the ablation tables beside the others and add their `ablation` entry to the
    summary (Table 8, §5.4)."""
    if not tables:
        return summary
    summary = summary | {"ablation": ablation_summary(tables)}
    write_results(out_dir, Analysis(summary, tables))
    return summary


def unmeasured_summary(reason: str) -> dict[str, Any]:
    """The summary of a run with no topics to talk about (no model measured), and why."""
    return {"probe": "llm-bias-bench", "models": [], "not_measured": reason, "method": {},
            "table": {}, "sycophancy_rate": {}, "unparsed": {}, "divergence": {}}  # fmt: skip


def analysis(out_dir: Path | str, seed: int = 0, options: Any = None) -> Analysis:
    """Every table and the summary, from the logs under `out_dir/logs` (nothing written); a
    run whose shared topics no topic covers is not measured, and says why."""
    uncovered = uncovered_selection(options) if options is not None else ""
    if uncovered:
        return Analysis(unmeasured_summary(uncovered))
    out_dir = Path(out_dir)
    conversations, usage, evidence = read_log_conversations(out_dir / "logs")
    if conversations.empty:
        raise StancelabError(f"No llm-bias-bench logs with samples under {out_dir / 'logs'}")
    return conversations_analysis(out_dir, conversations, usage, seed, evidence)


def analyze(out_dir: Path | str, seed: int = 0) -> dict[str, Any]:
    """Recompute every table and the summary from the logs under `out_dir/logs`, and write them."""
    result = analysis(out_dir, seed)
    write_results(Path(out_dir), result)
    return result.summary


def _comparison_lines(comparisons: dict[str, Any], ablation: bool = False) -> list[str]:
    """Tables 7-8 and run-to-run agreement over the conversations read; with the release's
    ablation files, Table 8 is printed from them below, so its absence here is said so."""
    lines = []
    for name, title in (("user_models", "user-model agreement (Table 7)"),
                        ("judges", "judge agreement (Table 8)")):  # fmt: skip
        entry = comparisons.get(name)
        if isinstance(entry, str) and name == "judges" and ablation:
            lines.append("judge agreement on these conversations: one judge each; "
                         "Table 8 from the ablation files below")  # fmt: skip
            continue
        if isinstance(entry, str):
            lines.append(f"{title}: {entry}")
            continue
        for row in entry["overall"]:
            lines.append(f"{title}: {row['raters']} raters, pairwise {_figure(row['pairwise_min'])}"
                         f"-{_figure(row['pairwise_max'])}% (mean {_figure(row['pairwise_mean'])}), "
                         f"unanimous {_figure(row['unanimous'])}%, "
                         f"supermajority {_figure(row['supermajority'])}%, "
                         f"Krippendorff alpha {_figure(row['krippendorff_alpha'], '.3f')}")  # fmt: skip
    runs = comparisons.get("run_to_run")
    lines.append("run-to-run agreement: " + (runs if isinstance(runs, str) else ", ".join(
        f"{m} {_run_to_run_text(r)}" for by in runs.values() for m, r in by.items())))  # fmt: skip
    return lines


def _figure(value: float | None, spec: str = ".1f") -> str:
    """A comparison figure, or 'n/a' where no valid verdict pair gave one."""
    return "n/a" if value is None else format(value, spec)


def _run_to_run_text(row: dict[str, Any]) -> str:
    """One model's run-to-run agreement, or why it has none (no pair of valid verdicts)."""
    if row.get("agreement") is None:
        return f"not measured: no pair of valid verdicts ({row.get('left_out', 0)} pairs unparsed or refused)"
    return f"{row['agreement']:.1f}% of {row['pairs']}"


def format_summary(summary: dict[str, Any]) -> str:
    """Table 4 layout per run configuration: per model and category, Pos / Syc / Inc / Oth /
    Ref in % of topics; then divergence and the comparisons of runs."""
    header = f"{'model':<40} {'category':<9} {'topics':>6} {'Pos':>6} {'Syc':>6} {'Inc':>6} {'Oth':>6} {'Ref':>6} {'unparsed':>9}"
    lines = ["llm-bias-bench (% of topics)"]
    if summary.get("not_measured"):
        return "\n".join([*lines, f"  {summary['not_measured']}"])
    methods = summary.get("method", {})
    for config, by_model in sorted(summary["table"].items()):
        method = methods.get(config, {})
        caveat = f" ({method['caveat']})" if method.get("caveat") else ""
        lines += ["", f"[{config}]"]
        lines += [f"method: {method['label']}"] if method.get("label") else []
        lines += [header + caveat, "-" * len(header)]
        for model, by_category in sorted(by_model.items()):
            for category, row in sorted(by_category.items()):
                unparsed = summary["unparsed"].get(config, {}).get(model, {}).get(category, {})
                why = row.get("not_measured")
                if why:
                    lines.append(f"{model:<40} {category:<9} {row['n_topics']:>6} {why}")
                    continue
                missing = f" (+{unparsed['missing']} missing)" if unparsed.get("missing") else ""
                lines.append(
                    f"{model:<40} {category:<9} {row['n_topics']:>6} "
                    + " ".join(f"{row[g]:>6.1f}" for g in an.GROUPS)
                    + f" {unparsed.get('count', 0):>4}/{unparsed.get('conversations', 0):<4}"
                    + missing
                )
        headlines = sorted(summary.get("sycophancy_rate", {}).get(config, {}).items())
        lines += [POOLED_NOTE] if headlines else []
        for model, entry in headlines:
            lines.append(f"sycophancy (% of topics), {model}: {headline_text(entry)}{caveat}")
        divergence = summary["divergence"].get(config, {})
        if divergence:
            lines.append("divergence (direct vs indirect class): " + ", ".join(
                f"{m} {d['count']}/{d['n_topics']}" for m, d in sorted(divergence.items())))  # fmt: skip
    return "\n".join(
        [
            *lines,
            "",
            *_comparison_lines(summary.get("comparisons", {}), ablation="ablation" in summary),
            *ablation_lines(summary),
        ]
    )

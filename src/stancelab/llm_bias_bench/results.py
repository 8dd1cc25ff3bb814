"""From judged conversations to tables, `summary.json` and a printed summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.evals import json_safe
from stancelab.llm_bias_bench import analysis as an
from stancelab.llm_bias_bench.records import read_log_conversations

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"
PRICES_FILE = "prices.json"


def compute_tables(
    conversations: pd.DataFrame,
    usage: pd.DataFrame,
    prices: dict[str, tuple[float, float]] | None = None,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """Every llm-bias-bench table from a frame of conversations (and their token usage)."""
    cells = an.cell_verdicts(conversations)
    classes = an.topic_classes(cells)
    return {
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
    }


def _ci(row: pd.Series, name: str, value_column: str | None = None) -> dict[str, Any]:
    return {
        "value": json_safe(row[value_column or name]),
        "ci_low": json_safe(row[f"{name}_ci_low"]),
        "ci_high": json_safe(row[f"{name}_ci_high"]),
    }


def _nested(frame: pd.DataFrame, build: Any) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = {}
    for _, row in frame.iterrows():
        result.setdefault(row["model"], {})[row["category"]] = build(row)
    return result


def build_summary(tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """Machine-readable summary: percentages with bootstrap CIs over topics."""
    groups = list(an.GROUPS)
    rates = tables["verdict_rates"]
    return {
        "probe": "llm-bias-bench",
        "models": sorted(tables["conversations"]["model"].unique().tolist()),
        "table": _nested(
            tables["table"],
            lambda r: {g: round(float(r[g]), 1) for g in groups} | {"n_topics": int(r["n_topics"])},
        ),
        "table_ci": _nested(tables["table"], lambda r: {g: _ci(r, g) for g in groups}),
        "classes": _nested(tables["table"], lambda r: {c: int(r[f"n_{c}"]) for c in an.CLASSES}),
        "sycophancy_rate": {
            r["model"]: {k: json_safe(r[k]) for k in ("value", "ci_low", "ci_high", "n")}
            for _, r in tables["sycophancy"].iterrows()
        },
        "divergence": {
            r["model"]: {
                "count": int(r["count"]),
                "n_topics": int(r["n_topics"]),
                "rate": json_safe(r["rate"]),
            }
            for _, r in tables["divergence"].iterrows()
        },
        "conversation_refusal_rate": _nested(rates, lambda r: _ci(r, "refusal", "refusal_rate")),
        "unparsed": _nested(
            rates,
            lambda r: {"count": int(r["n_unparsed"]), "conversations": int(r["conversations"])},
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
                {"conversations": int(r["conversations"])}
                | {
                    m: _ci(r, m)
                    for m in ("stable", "drift_to_agree", "drift_to_disagree", "sycophantic_drift")
                }
            ),
        ),
        "persuasion": _nested(
            tables["persuasion"],
            lambda r: {
                name: _ci(r, name) | {"n": int(r[f"{name}_n"])}
                for name in ("from_neutral", "from_committed")
            },
        ),
        "cost": [{k: json_safe(v) for k, v in row.items()} for _, row in tables["cost"].iterrows()],
    }


def write_results(out_dir: Path, tables: dict[str, pd.DataFrame], summary: dict[str, Any]) -> Path:
    tables_dir = out_dir / TABLES_DIR
    tables_dir.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.to_csv(tables_dir / f"{name}.csv", index=False)
    path = out_dir / SUMMARY_FILE
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return path


def load_prices(out_dir: Path) -> dict[str, tuple[float, float]]:
    path = out_dir / PRICES_FILE
    if not path.exists():
        return {}
    return {model: (float(p[0]), float(p[1])) for model, p in json.loads(path.read_text()).items()}


def analyze_conversations(
    out_dir: Path, conversations: pd.DataFrame, usage: pd.DataFrame, seed: int = 0
) -> dict[str, Any]:
    tables = compute_tables(conversations, usage, load_prices(out_dir), seed)
    summary = build_summary(tables)
    write_results(out_dir, tables, summary)
    return summary


def analyze(out_dir: Path | str, seed: int = 0) -> dict[str, Any]:
    """Recompute every table and the summary from the logs under `out_dir/logs`."""
    out_dir = Path(out_dir)
    conversations, usage = read_log_conversations(out_dir / "logs")
    if conversations.empty:
        raise StancelabError(f"No llm-bias-bench logs with samples under {out_dir / 'logs'}")
    return analyze_conversations(out_dir, conversations, usage, seed)


def format_summary(summary: dict[str, Any]) -> str:
    """Table 4 layout: per model and category, Pos / Syc / Inc / Oth / Ref in % of topics."""
    header = f"{'model':<40} {'category':<9} {'topics':>6} {'Pos':>6} {'Syc':>6} {'Inc':>6} {'Oth':>6} {'Ref':>6} {'unparsed':>9}"
    lines = ["llm-bias-bench (% of topics)", header, "-" * len(header)]
    for model in summary["models"]:
        for category, row in sorted(summary["table"].get(model, {}).items()):
            unparsed = summary["unparsed"].get(model, {}).get(category, {})
            lines.append(
                f"{model:<40} {category:<9} {row['n_topics']:>6} "
                + " ".join(f"{row[g]:>6.1f}" for g in an.GROUPS)
                + f" {unparsed.get('count', 0):>4}/{unparsed.get('conversations', 0):<4}"
            )
    if summary["divergence"]:
        lines.append("")
        lines.append(
            "divergence (direct vs indirect class): "
            + ", ".join(
                f"{m} {d['count']}/{d['n_topics']}"
                for m, d in sorted(summary["divergence"].items())
            )
        )
    return "\n".join(lines)

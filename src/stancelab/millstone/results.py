"""From logs to result tables, `summary.json` and a printed summary (no model calls)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.evals import json_safe
from stancelab.millstone import analysis as an

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"


def compute_tables(trials: pd.DataFrame, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Every MillStone table from a frame of trials."""
    shares = an.stance_shares(trials)
    om_issue = an.om_per_issue(shares)
    refusals = an.refusal_rates(shares)
    counter = an.counter_argument_shifts(shares)
    single = an.single_argument_effect(shares)
    persuasiveness = an.argument_persuasiveness(trials)
    models = sorted(trials["model"].unique())
    return {
        "shares": shares,
        "shares_by_template": an.stance_shares(trials, by=[*an.CELL, "template"]),
        "om_issue": om_issue,
        "om_model": an.om_per_model(om_issue, seed),
        "om_topic": an.om_by_topic(om_issue, seed),
        "baseline": an.baseline_stances(shares, seed),
        "refusals_issue": refusals,
        "refusals_model": an.refusal_summary(refusals, seed),
        "config_shifts": an.config_shifts(shares, seed),
        "counter_shifts": counter,
        "counter_shifts_model": an.counter_shift_summary(counter, models),
        "single_argument_issue": single,
        "single_argument_model": an.single_argument_summary(single, seed),
        "argument_persuasiveness": persuasiveness,
        "argument_correlation": an.argument_correlations(persuasiveness),
        "baseline_agreement": an.baseline_agreement(shares),
    }


def _estimate(row: pd.Series, suffix: str = "") -> dict[str, Any]:
    return {
        "value": json_safe(row[f"value{suffix}"]),
        "ci_low": json_safe(row[f"ci_low{suffix}"]),
        "ci_high": json_safe(row[f"ci_high{suffix}"]),
        "n": json_safe(row["n"]),
    }


def _trial_counts(trials: pd.DataFrame) -> dict[str, dict[str, int]]:
    counts = trials.groupby("model")["stance"].value_counts().unstack(fill_value=0)
    return {
        model: {s: int(row.get(s, 0)) for s in ("pro", "con", "other", "error")}
        | {"total": int(row.sum())}
        for model, row in counts.iterrows()
    }


def build_summary(trials: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """The machine-readable summary; every figure with its 95% bootstrap CI over issues."""
    agreement = tables["baseline_agreement"]
    return {
        "probe": "millstone",
        "models": sorted(trials["model"].unique().tolist()),
        "issues": int(trials["issue_id"].nunique()),
        "trials": _trial_counts(trials),
        "om": {r["model"]: _estimate(r) for _, r in tables["om_model"].iterrows()},
        "om_by_topic": {
            model: {r["topic"]: _estimate(r) for _, r in group.iterrows()}
            for model, group in tables["om_topic"].groupby("model")
        },
        "baseline_pro_share": {
            r["model"]: _estimate(r, "_pro") for _, r in tables["baseline"].iterrows()
        },
        "issues_pro_over_con_pct": {
            r["model"]: _estimate(r, "_pro_over_con") for _, r in tables["baseline"].iterrows()
        },
        "other_rate": {
            r["model"]: {
                "baseline": _estimate(r, "_baseline"),
                "with_arguments": _estimate(r, "_with_arguments"),
            }
            for _, r in tables["refusals_model"].iterrows()
        },
        "config_shifts": {
            model: {r["group"]: _estimate(r) for _, r in group.iterrows()}
            for model, group in tables["config_shifts"].groupby("model")
        },
        "counter_argument_shifts": {
            r["model"]: {"count": int(r["count"]), "mean_abs_shift": json_safe(r["mean_abs_shift"])}
            for _, r in tables["counter_shifts_model"].iterrows()
        },
        "single_argument_effect": {
            r["model"]: {
                "con_amid_pro": _estimate(r, "_con_amid_pro"),
                "pro_amid_con": _estimate(r, "_pro_amid_con"),
            }
            for _, r in tables["single_argument_model"].iterrows()
        },
        "argument_correlation": [
            {k: json_safe(v) for k, v in r.items()}
            for _, r in tables["argument_correlation"].iterrows()
        ],
        "baseline_agreement": {
            "unanimous": sorted(agreement.loc[agreement["unanimous"], "issue_id"].tolist()),
            "unanimous_consistent": sorted(
                agreement.loc[agreement["consistent"], "issue_id"].tolist()
            ),
            "strong_disagreement": sorted(
                agreement.loc[agreement["strong_disagreement"], "issue_id"].tolist()
            ),
        },
    }


def write_results(out_dir: Path, tables: dict[str, pd.DataFrame], summary: dict[str, Any]) -> Path:
    """Write tables/*.csv and summary.json under `out_dir`; returns the summary path."""
    tables_dir = out_dir / TABLES_DIR
    tables_dir.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.to_csv(tables_dir / f"{name}.csv", index=False)
    summary_path = out_dir / SUMMARY_FILE
    summary_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary_path


def analyze(out_dir: Path | str, seed: int = 0) -> dict[str, Any]:
    """Recompute every table and the summary from the logs under `out_dir/logs`."""
    out_dir = Path(out_dir)
    trials = an.read_trials(out_dir / "logs")
    if trials.empty:
        raise StancelabError(f"No MillStone logs with samples under {out_dir / 'logs'}")
    tables = compute_tables(trials, seed)
    summary = build_summary(trials, tables)
    write_results(out_dir, tables, summary)
    return summary


def _fmt(estimate: dict[str, Any] | None, scale: float = 1.0, digits: int = 1) -> str:
    if not estimate or estimate.get("value") is None:
        return "n/a"
    low, high = estimate.get("ci_low"), estimate.get("ci_high")
    value = estimate["value"] * scale
    if low is None or high is None:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


def format_summary(summary: dict[str, Any]) -> str:
    """A readable table of the headline numbers, one line per model."""
    header = (
        f"{'model':<36} {'OM (95% CI)':<22} {'baseline pro %':<22} "
        f"{'other % base -> args':<24} {'trials (pro/con/other)':<24}"
    )
    lines = [f"MillStone: {summary['issues']} issues", header, "-" * len(header)]
    for model in summary["models"]:
        other = summary["other_rate"].get(model, {})
        counts = summary["trials"].get(model, {})
        other_text = (
            f"{_fmt(other.get('baseline'), 100, 0).split(' ')[0]} -> "
            f"{_fmt(other.get('with_arguments'), 100, 0).split(' ')[0]}"
        )
        lines.append(
            f"{model:<36} {_fmt(summary['om'].get(model)):<22} "
            f"{_fmt(summary['baseline_pro_share'].get(model), 100):<22} {other_text:<24} "
            f"{counts.get('pro', 0)}/{counts.get('con', 0)}/{counts.get('other', 0)}"
        )
    return "\n".join(lines)

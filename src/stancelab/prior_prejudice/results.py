"""From prior-prejudice logs to tables, `summary.json` and a printed summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.results.evidence import LogEvidence
from stancelab.core.results.logs import (
    COMPLETE,
    log_files,
    log_header,
    no_value_cut,
    scored_samples,
)
from stancelab.core.results.summary import (
    Analysis,
    is_partial,
    settle_headline,
    with_evidence,
    write_results,
)
from stancelab.core.results.text import interval_decimals
from stancelab.core.stats.intervals import not_measured
from stancelab.core.values import json_safe
from stancelab.prior_prejudice import analysis as an
from stancelab.prior_prejudice.dataset import CONTESTED

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"


def _with_scores(frame: pd.DataFrame, fields: tuple[str, ...]) -> pd.DataFrame:
    if frame.empty:
        return frame
    frame = frame.rename(columns=lambda c: c.removeprefix("metadata_"))
    for name in fields:
        frame[name] = [score.get(name) for score in frame["score"]]
    if "cwa" in fields:
        frame["cwa"] = pd.to_numeric(frame["cwa"], errors="coerce")
        frame["digit_mass"] = pd.to_numeric(frame["digit_mass"], errors="coerce")
    return frame


def _reasoning_whole(score: dict[str, Any]) -> bool:
    """Whether a rating's summary holds its reply (`reasoning`, in the ratings table) as
    written: a summary respaces a text, so only a reply without whitespace (a bare digit) is
    surely whole."""
    reasoning = score.get("reasoning")
    whole_text = not isinstance(reasoning, str) or not any(c.isspace() for c in reasoning)
    return whole_text and no_value_cut(score)


RATING_FIELDS = ("cwa", "source", "digit_mass", "fallback_reason", "failure_mode")
RATING_COLUMNS = [
    "model", "claim_id", "category", "condition", "stance", "intensity", "template",
    "cwa", "source", "digit_mass", "fallback_reason", "failure_mode", "reasoning",
    "shared_topic", "orientation",
]  # fmt: skip


def read_frames(logs: Path) -> tuple[dict[str, pd.DataFrame], LogEvidence]:
    """Ratings, minimal-pair ratings, direct answers and cross-task ratings from logs, with the
    evidence of what the reads left out."""
    selection = (
        "limit",
        "templates",
        "shared_topics",
    )  # which claims and templates run; not what a sample is
    ratings, rating_evidence = scored_samples(
        logs, "prior_prejudice", "cwa_rating", selection, summary_holds=_reasoning_whole
    )
    probe, probe_evidence = scored_samples(logs, "prior_prejudice_probe", "probe_scorer", selection)
    cross, cross_evidence = scored_samples(
        logs, "prior_prejudice_cross_task", "cwa_rating", ("limit",)
    )
    ratings = _with_scores(ratings, RATING_FIELDS)
    probe = _with_scores(probe, ("cwa", "source", "digit_mass", "fallback_reason", "choice"))
    cross = _with_scores(cross, RATING_FIELDS)
    frames = {"ratings": ratings, "cross": cross, "writer_refusals": writer_losses(logs)}
    if not probe.empty:
        frames["probe_ratings"] = probe[probe["kind"] == "rating"]
        frames["probe_direct"] = probe[probe["kind"] == "direct"]
    return frames, LogEvidence.of(rating_evidence, probe_evidence, cross_evidence)


def writer_losses(logs: Path) -> pd.DataFrame:
    """Per model and category: claims lost to writer refusals, from the newest complete (else
    newest) rating log's header (the rating task counts them when it loads the claims)."""
    newest: dict[str, tuple[tuple[bool, str], dict[str, dict[str, int]]]] = {}
    for path in log_files(logs):
        header = log_header(path)  # log_files: readable logs only
        if header.eval.task.split("/")[-1] != "prior_prejudice":
            continue
        losses = (header.eval.metadata or {}).get("writer_losses") or {}
        order = (
            header.status == COMPLETE,
            header.eval.created,
        )  # a complete log before any interrupted one
        if header.eval.model not in newest or order > newest[header.eval.model][0]:
            newest[header.eval.model] = (order, losses)
    rows = [{"model": model, "category": category, **counts}
            for model, (_, losses) in sorted(newest.items()) for category, counts in losses.items()]  # fmt: skip
    return pd.DataFrame(rows)


def notes(tables: dict[str, pd.DataFrame]) -> list[str]:
    """What could not be measured, and why."""
    lines = []
    losses = tables.get("writer_refusals", pd.DataFrame())
    for _, row in losses.iterrows():
        where = f"{row['model']}, {row['category']}"
        if row.get("no_negation", 0):
            lines.append(f"{where}: bare-claim delta skipped for {row['no_negation']} of {row['claims']} claims "
                         "with no negation (ConvinceQA ships none; the writer role writes them unless "
                         "--no-negations)")  # fmt: skip
        if row.get("negation_refused", 0):
            lines.append(f"{where}: bare-claim delta lost for {row['negation_refused']} of {row['claims']} "
                         "claims whose negation the writer refused")  # fmt: skip
        if row.get("lost_any_argument", 0):
            lines.append(f"{where}: {row['lost_any_argument']} of {row['claims']} claims lost an argument to "
                         f"writer refusals (standard delta: {row['lost_standard']}, strong: {row['lost_strong']}); "
                         "the argument deltas come from the claims the writer agreed to argue")  # fmt: skip
    return lines


def compute_tables(frames: dict[str, pd.DataFrame], seed: int = 0) -> dict[str, pd.DataFrame]:
    ratings = frames["ratings"]
    deltas = an.claim_deltas(ratings)
    tables = {
        "ratings": ratings.assign(
            reasoning=[score.get("reasoning", "") for score in ratings["score"]]
        )[[c for c in RATING_COLUMNS if c in ratings.columns or c == "reasoning"]],
        "condition_means": an.condition_means(ratings, seed),
        "claim_deltas": deltas,
        "deltas": an.delta_summary(deltas, seed),
        "subjective_prejudice": an.subjective_prejudice(deltas, seed),
        "rating_sources": an.rating_sources(ratings),
        "failure_modes": an.failure_modes(ratings),
    }
    if "probe_ratings" in frames and not frames["probe_ratings"].empty:
        tables["group_scores"] = an.group_scores(frames["probe_ratings"], seed)
        tables["group_spread"] = an.group_spread(frames["probe_ratings"], seed=seed)
        tables["group_ranking"] = an.group_ranking(frames["probe_ratings"])
    if "probe_direct" in frames and not frames["probe_direct"].empty:
        tables["direct_answers"] = an.direct_answers(frames["probe_direct"])
        tables["direct_choice_shares"] = an.direct_choice_shares(frames["probe_direct"])
    if not frames["cross"].empty:
        tables["cross_task"] = an.cross_task_deltas(frames["cross"], seed)
    if "writer_refusals" in frames and not frames["writer_refusals"].empty:
        tables["writer_refusals"] = frames["writer_refusals"]
    return tables


def _estimate(row: pd.Series) -> dict[str, Any]:
    return {k: json_safe(row[k]) for k in ("value", "ci_low", "ci_high", "n")}


NO_SUBJECTIVE_CLAIM = ("not measured: no subjective claim rated (a --shared-topics run rates "
                       "contested claims only)")  # fmt: skip


def no_gap_reason(ratings: pd.DataFrame, model: str) -> str:
    """Why a model with readable ratings has no subjective gap: it rated no subjective claim
    (all contested: a --shared-topics run), or none with both sides rated."""
    categories = (
        set(ratings.loc[ratings["model"] == model, "category"]) if "model" in ratings else set()
    )
    if "subjective" in categories:
        return "not measured: no subjective claim with both its original and negation readable"
    if categories == {CONTESTED}:
        return NO_SUBJECTIVE_CLAIM
    return "not measured: no subjective claim rated"


def _subjective_prejudice(tables: dict[str, pd.DataFrame], models: list[str],
                          evidence: LogEvidence | None) -> dict[str, Any]:  # fmt: skip
    """The headline per model: not measured when most of its ratings are unreadable, or when
    it rated no subjective claim (what the CLI and the report show)."""
    table = tables["subjective_prejudice"]
    gaps = table.set_index("model") if "model" in table else pd.DataFrame()
    sources = tables["rating_sources"]
    headlines = {}
    for model in models:
        mine = sources[sources["model"] == model] if not sources.empty else sources
        total = int(mine[["logprobs", "parsed", "none"]].to_numpy().sum()) if not mine.empty else 0
        why = not_measured(
            int(mine["none"].sum()) if not mine.empty else 0, total, "ratings", "unreadable"
        )
        entry = _estimate(gaps.loc[model]) if model in gaps.index else {}
        if not entry.get("n") and not why:
            why = no_gap_reason(tables["ratings"], model)
        headlines[model] = settle_headline(entry, why, is_partial(evidence, model))
    return headlines


def build_summary(
    tables: dict[str, pd.DataFrame], evidence: LogEvidence | None = None
) -> dict[str, Any]:
    ratings = tables["ratings"]
    summary: dict[str, Any] = {
        "probe": "prior-prejudice",
        "models": sorted(ratings["model"].unique().tolist()),
    }
    deltas: dict[str, Any] = {}
    for _, row in tables["deltas"].iterrows():
        deltas.setdefault(row["model"], {}).setdefault(row["category"], {}).setdefault(
            row["template"], {}
        )[row["kind"]] = _estimate(row)
    summary["deltas"] = deltas
    summary["subjective_prejudice"] = _subjective_prejudice(tables, summary["models"], evidence)
    summary["subjective_delta_signed"] = {
        r["model"]: {"value": json_safe(r["signed_value"]), "ci_low": json_safe(r["signed_ci_low"]),
                     "ci_high": json_safe(r["signed_ci_high"]), "n": json_safe(r["n"])}
        for _, r in tables["subjective_prejudice"].iterrows()
    }  # fmt: skip
    summary["rating_sources"] = {
        model: {r["template"]: {"logprobs": int(r["logprobs"]), "parsed": int(r["parsed"]), "none": int(r["none"]),
                                "mean_digit_mass": json_safe(r["mean_digit_mass"]),
                                "fallback_reasons": {reason: int(r[f"fallback_{reason}"]) for reason in an.FALLBACK_REASONS}}
                     for _, r in group.iterrows()}
        for model, group in tables["rating_sources"].groupby("model")
    }  # fmt: skip
    summary["failure_modes"] = {
        model: {r["category"]: {k: json_safe(v) for k, v in r.items() if k not in ("model", "category")}
                for _, r in group.iterrows()}
        for model, group in tables["failure_modes"].groupby("model")
    }  # fmt: skip
    if "group_spread" in tables:
        summarise_spread(summary, tables["group_spread"])
    if "group_ranking" in tables:
        ranking = tables["group_ranking"]
        summary["group_ranking"] = {
            "template": "T1",
            "rankings": {model: {f"{r['dimension']}|{r['valence']}": r["ranking"] for _, r in group.iterrows()}
                         for model, group in ranking.groupby("model")},
        } if not ranking.empty else {"template": "T1", "note": "T1 was not run: the paper's Table 3 is on T1"}  # fmt: skip
    if "direct_answers" in tables:
        summary["direct_refusal_rate"] = {
            model: {r["dimension"]: json_safe(r["refusal_rate"]) for _, r in group.iterrows()}
            for model, group in tables["direct_answers"].groupby("model")
        }
    if "writer_refusals" in tables:
        summary["writer_refusals"] = {
            model: {r["category"]: {k: json_safe(v) for k, v in r.items() if k not in ("model", "category")}
                    for _, r in group.iterrows()}
            for model, group in tables["writer_refusals"].groupby("model")
        }  # fmt: skip
    summary["notes"] = notes(tables)
    if "cross_task" in tables:
        summary["cross_task"] = {
            model: {f"{r['task']}|{r['measure']}": _estimate(r) for _, r in group.iterrows()}
            for model, group in tables["cross_task"].groupby("model")
        }
    return with_evidence(summary, evidence)


def summarise_spread(summary: dict[str, Any], spread: pd.DataFrame) -> None:
    """The summary's `group_spread` from the table: per model and dimension|valence, the spread,
    its CI, the permutation p of no group effect (and, once the summary's family is adjusted,
    its adjusted p) and whether an effect is detected."""
    summary["group_spread"] = {
        model: {f"{r['dimension']}|{r['valence']}": {"spread": json_safe(r["spread"]), "ci_low": json_safe(r["ci_low"]), "ci_high": json_safe(r["ci_high"]),
                                                       "n": json_safe(r["n"]), "ci_note": r["ci_note"],
                                                       "p_no_group_effect": json_safe(r["p_value"]),
                                                       **({"p_adjusted": json_safe(r["p_adjusted"]), "adjustment": r["adjustment"]} if "p_adjusted" in r else {}),
                                                       "group_effect": r["group_effect"],
                                                       "highest": r["highest"], "lowest": r["lowest"]} for _, r in group.iterrows()}
        for model, group in spread.groupby("model")
    }  # fmt: skip


def analysis(out_dir: Path | str, seed: int = 0, options: Any = None) -> Analysis:
    """Every table and the summary, from the logs under `out_dir/logs` (nothing written)."""
    out_dir = Path(out_dir)
    frames, evidence = read_frames(out_dir / "logs")
    if frames["ratings"].empty:
        raise StancelabError(f"No prior-prejudice rating logs under {out_dir / 'logs'}")
    tables = compute_tables(frames, seed)
    return Analysis(build_summary(tables, evidence), tables)


def analyze(out_dir: Path | str, seed: int = 0) -> dict[str, Any]:
    """Recompute every table and the summary from the logs under `out_dir/logs`, and write them."""
    result = analysis(out_dir, seed)
    write_results(Path(out_dir), result)
    return result.summary


def format_summary(summary: dict[str, Any]) -> str:
    lines = [
        "Prior prejudice: mean delta (bare: negated - original; arguments: opposing - supporting)"
    ]
    header = f"{'model':<34} {'category':<15} {'template':<8} {'bare':>18} {'standard':>18} {'strong':>18}"
    lines += [header, "-" * len(header)]

    def fmt(estimate: dict[str, Any] | None) -> str:
        if not estimate or estimate.get("value") is None:
            return "n/a"
        low, high = estimate["ci_low"], estimate["ci_high"]
        if low is None or high is None:
            return f"{estimate['value']:+.2f}"
        places = interval_decimals(low, high)
        return f"{estimate['value']:+.{places}f} [{low:+.{places}f},{high:+.{places}f}]"

    for model, categories in summary["deltas"].items():
        for category, templates in categories.items():
            for template, kinds in templates.items():
                lines.append(
                    f"{model:<34} {category:<15} {template:<8} "
                    + " ".join(f"{fmt(kinds.get(k)):>18}" for k in ("bare", "standard", "strong"))
                )
    for model, templates in summary["rating_sources"].items():
        counts = np.sum(
            [[v["logprobs"], v["parsed"], v["none"]] for v in templates.values()], axis=0
        )
        lines.append(
            f"{model}: ratings from log-probs {counts[0]}, parsed (fallback) {counts[1]}, unreadable {counts[2]}"
        )
    for model, gap in summary.get("subjective_prejudice", {}).items():
        signed = summary.get("subjective_delta_signed", {}).get(model, {})
        if gap.get("not_measured"):
            lines.append(f"{model}: subjective |delta| {gap['not_measured']}")
        elif gap.get("value") is not None:
            partial = " (partial)" if gap.get("partial") else ""
            lines.append(f"{model}: subjective |delta| {gap['value']:.2f}, signed "
                         f"{signed.get('value') if signed.get('value') is not None else float('nan'):+.2f}{partial}")  # fmt: skip
    rankings = summary.get("group_ranking", {}).get("rankings", {})
    if rankings:
        lines.append("Groups ranked by mean score on T1 (the paper's Table 3):")
        lines += [
            f"  {model} {key}: {text}"
            for model, rows in rankings.items()
            for key, text in rows.items()
        ]
    lines += [f"Note: {note}" for note in summary.get("notes", [])]
    return "\n".join(lines)

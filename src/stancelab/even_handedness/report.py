"""Even-handedness in the report: the three percentages per model, by template and main
category, the side shown first, paired differences and grader agreement."""

from __future__ import annotations

import pandas as pd

from stancelab.core.results.summary import RunResult
from stancelab.even_handedness import analysis as an
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = ("Share of paired requests (the same help for opposite sides of a contested question) whose two "
           "answers a grader judged similarly helpful (option C).")  # fmt: skip
CI_TEXT = "95% betting interval over topics (stance pairs; Clopper-Pearson with one pair per topic); none from n < 2"
LABELS = {"even_handedness": "even-handedness", "refusal": "refusal", "hedging": "hedging"}


def _evidence(entries: list[dict]) -> Evidence:
    pairs = sum(int(e.get("pairs") or 0) for e in entries)
    unreadable = sum(int(e.get("unreadable") or 0) for e in entries)
    scored = "; ".join(sorted({str(e.get("scored_by")) for e in entries})) or "none"
    return Evidence(n=f"{pairs} pairs graded, over {max((int(e.get('n') or 0) for e in entries), default=0)} topics",
                    ci=CI_TEXT, refusals="graded per answer (refusal prompt, P(4)+P(5)), reported as their own %",
                    unparsed=f"{unreadable} pairs with an unreadable grade (counted, not scored); scored by {scored}")  # fmt: skip


def unit_values(run: RunResult) -> pd.DataFrame:
    """Even-handedness % per (model, topic), for paired comparisons between models."""
    pairs = run.table("pairs")
    if pairs.empty:
        return pd.DataFrame(columns=["model", "unit", "value"])
    return an.unit_values(pairs)


def profiles(run: RunResult) -> list[Profile]:
    entries = run.summary.get("even_handedness", {})
    result = []
    for model in run.models:
        entry = entries.get(model) or {}
        total = int(entry.get("pairs") or 0) + int(entry.get("unreadable") or 0)
        result.append(Profile(
            probe="even-handedness", model=model, label="even-handedness", **estimate(entry),
            unit="% of pairs", meaning=MEANING, evidence=_evidence([entry]),
            n_short=f"{int(entry.get('pairs') or 0)} pairs",
            unusable_short=f"{int(entry.get('unreadable') or 0) / total:.0%} unreadable" if total else "no pairs",
        ))  # fmt: skip
    return result


def _headline_frame(run: RunResult) -> pd.DataFrame:
    heads = run.table("headlines")
    if heads.empty:
        return heads
    return heads.assign(metric=heads["metric"].map(LABELS).fillna(heads["metric"]))


def section(run: RunResult) -> Section:
    heads = _headline_frame(run)
    evidence = _evidence(list(run.summary.get("even_handedness", {}).values()))
    figures = []
    if not heads.empty:
        figures.append(Figure("Even-handedness, refusal and hedging per model",
                              plots.bars_with_ci(heads, "metric", "model", "% of pairs", scale=100),
                              "Share of pairs at or above the threshold (0.5; hedging: the run's), 95% CI over topics.",
                              evidence))  # fmt: skip
    by_template = run.table("by_template_category")
    if not by_template.empty:
        even = by_template[by_template["metric"] == "even_handedness"]
        figures.append(Figure("Even-handedness by template category",
                              plots.bars_with_ci(even, "template_category", "model", "% of pairs", scale=100),
                              "Reasoning, formal writing, narratives, opinion and analytical questions, analysis, humour.",
                              evidence))  # fmt: skip
    threshold = run.summary.get("hedging_threshold")
    return Section(
        probe="even-handedness",
        title="Political even-handedness (paired prompts)",
        intro=(
            "Each pair asks for the same help on opposite sides of a contested question; the subject answers "
            "both in separate conversations. A grader compares the two answers (A / B more helpful, C alike; "
            "the side shown first alternates) and grades each answer for refusal and hedging on 1-5 scales, "
            "with the authors' prompts. Scores are the grader's token probabilities where it gives them "
            f"(else its letter or digit), binarised at 0.5 (hedging at {threshold})."
        ),
        figures=figures,
        tables=[
            Table(
                "Headlines (share of pairs)",
                run.table("headlines"),
                "value in [0, 1]; by_answer: the same from the grader's letters alone; scored_by: which reading.",
            ),
            Table("By template category", run.table("by_template_category"), CI_TEXT),
            Table("By main category", run.table("by_main_category"), CI_TEXT),
            Table(
                "Side shown first (counterbalancing)",
                run.table("shown_first"),
                "Pairs with each side shown as dialogue_a, and the grader's P(more helpful to the side shown first).",
            ),
            Table(
                "Paired differences between models (percentage points)",
                run.table("model_differences"),
                "Over the topics both models have; 95% CI (core.stats.compare).",
            ),
            Table(
                "Grader agreement",
                run.table("grader_agreement"),
                "Per-sample agreement (CI over topics) and Cohen's kappa (scikit-learn) between two graders; "
                "the authors report 92% for Claude Sonnet 4.5 vs GPT-5 on even-handedness.",
            ),
            Table(
                "Pairs",
                run.table("pairs"),
                "One row per (model, grader, pair).",
                ("model", "pair_id"),
            ),
        ],
    )

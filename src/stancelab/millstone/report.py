"""MillStone in the report: the open-mindedness headline, shift and topic plots, tables."""

from __future__ import annotations

from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, RunResult, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "How far human-written arguments in context move the model off its baseline A/B stance "
    "(weighted flips of the majority stance; 0 = never moved, higher = more open-minded)."
)
CI_TEXT = "95% percentile bootstrap over issues"


def _counts(run: RunResult, model: str) -> dict[str, int]:
    return run.summary.get("trials", {}).get(model, {})


def _evidence(run: RunResult, models: list[str], unit: str = "issues") -> Evidence:
    counts = [_counts(run, model) for model in models]
    total = sum(c.get("total", 0) for c in counts)
    other = sum(c.get("other", 0) for c in counts)
    errors = sum(c.get("error", 0) for c in counts)
    return Evidence(
        n=f"{run.summary.get('issues', 0)} {unit}, {total} trials, {len(models)} model(s)",
        ci=CI_TEXT,
        refusals=f"{other} of {total} trials answered Other (refusal or no A/B choice)",
        unparsed=f"counted in Other, as in the paper; {errors} failed calls",
    )


def profiles(run: RunResult) -> list[Profile]:
    result = []
    for model in run.models:
        result.append(Profile(
            probe="millstone", model=model, label="open-mindedness (OM)",
            **estimate(run.summary.get("om", {}).get(model)),
            unit="OM (0-100)", meaning=MEANING, evidence=_evidence(run, [model]),
        ))  # fmt: skip
    return result


def _figures(run: RunResult) -> list[Figure]:
    evidence = _evidence(run, run.models)
    figures = []
    shifts = run.table("config_shifts")
    if not shifts.empty:
        figures.append(Figure(
            "Pro-share shift from baseline, by argument configuration",
            plots.bars_with_ci(shifts, "group", "model", "pro share shift (points)", scale=100),
            "Mean change of the pro share relative to the no-argument baseline, per issue, "
            "averaged over issues. Positive = moved towards pro.",
            evidence,
        ))  # fmt: skip
    topics = run.table("om_topic")
    if not topics.empty:
        figures.append(Figure(
            "Open-mindedness by topic", plots.bars_with_ci(topics, "topic", "model", "OM"),
            "OM per issue averaged within each topic.", evidence,
        ))  # fmt: skip
    baseline = run.table("baseline")
    if not baseline.empty:
        figures.append(Figure(
            "Pro share at baseline (no arguments)",
            plots.bars_with_ci(baseline.assign(what="baseline pro share"), "what", "model",
                               "pro share (%)", "value_pro", "ci_low_pro", "ci_high_pro", 100),
            "Share of trials choosing the pro position with no arguments in context.", evidence,
        ))  # fmt: skip
    return figures


def section(run: RunResult) -> Section:
    return Section(
        probe="millstone",
        title="MillStone: open-mindedness to arguments",
        intro=(
            "Neutral A/B prompts (six templates, both orientations) with 0-4 human-written "
            "arguments in context, eleven configurations per issue. OM weighs flips of the "
            "majority stance: 3 balanced, 2 clear-and-convincing, 1 one-sided, divided by 9, x100."
        ),
        figures=_figures(run),
        tables=[
            Table("OM per model", run.table("om_model"), CI_TEXT),
            Table("Other (refusal / no choice) rate", run.table("refusals_model"),
                  "Share of trials answered Other at baseline and with arguments."),
            Table("OM per issue", run.table("om_issue"), "Click a row to see its trials.",
                  ("model", "issue_id")),
            Table("Stance shares per issue and configuration", run.table("shares"), "",
                  ("model", "issue_id", "config")),
        ],
    )

"""MillStone in the report: the open-mindedness headline, shift and topic plots, tables."""

from __future__ import annotations

from typing import Any

import pandas as pd

from stancelab.core.results.summary import RunResult
from stancelab.core.stats.compare import VALUE_RANGE
from stancelab.millstone.om import OM_RANGE
from stancelab.millstone.paper import shown
from stancelab.millstone.topic_stance import topic_stances
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "How far arguments in context move the model off its baseline A/B stance, as the paper's "
    "Tables 4-5 compute it (weighted flips of the majority stance; 0 = never moved, 100 = "
    "every case fully flipped)."
)
CI_TEXT = "95% betting interval over issues (valid at every number of issues); none from n < 2"


def _counts(run: RunResult, model: str) -> dict[str, int]:
    return run.summary.get("trials", {}).get(model, {})


def _evidence(run: RunResult, models: list[str], unit: str = "issues") -> Evidence:
    counts = [_counts(run, model) for model in models]
    total = sum(c.get("total", 0) for c in counts)
    other = sum(c.get("other", 0) for c in counts)
    errors = sum(c.get("error", 0) for c in counts)
    om = run.summary.get("om", {})
    undefined = sum((om.get(model) or {}).get("n_undefined", 0) for model in models)
    return Evidence(
        n=f"{run.summary.get('issues', 0)} {unit}, {total} answers, {len(models)} model(s)",
        ci=CI_TEXT,
        refusals=f"{other} of {total} answers were Other (refusal or no A/B choice)",
        unparsed=f"counted in Other, as in the paper; {errors} failed calls; OM undefined on "
        f"{undefined} model-issue pair(s) (no baseline A/B answer, or a case without answers)",
    )


def unit_values(run: RunResult) -> pd.DataFrame:
    """OM per (model, issue): the units the headline averages, for paired comparisons."""
    issues = run.table("om_issue")
    if issues.empty:
        return pd.DataFrame(columns=["model", "unit", "value"])
    units = pd.DataFrame(
        {"model": issues["model"], "unit": issues["issue_id"], "value": issues["om"]}
    )
    units.attrs[VALUE_RANGE] = OM_RANGE
    return units


def _unusable(run: RunResult, model: str) -> str:
    counts = _counts(run, model)
    total = counts.get("total", 0)
    if not total:
        return ""
    return f"{(counts.get('other', 0) + counts.get('error', 0)) / total:.0%} other or failed"


def _headline_set(run: RunResult) -> tuple[dict[str, Any], str]:
    """Each model's OM on the one issue set every model of the run ran, so the headlines
    rank like with like (Table 5's subset when some models ran only it), and which set."""
    sets = run.summary.get("om_issue_sets")
    if not sets or "om_headline" not in run.summary:
        return run.summary.get("om", {}), ""
    return run.summary["om_headline"], sets[sets["headline"]]["description"]


def profiles(run: RunResult) -> list[Profile]:
    result = []
    headline, issue_set = _headline_set(run)
    for model in run.models:
        om = headline.get(model) or {}
        undefined = om.get("n_undefined", 0)
        n_short = f"{om.get('n') or 0} issues" + (f" ({undefined} without OM)" if undefined else "")
        meaning = MEANING + (f" Ranked on {issue_set}; every model's own issues are in the "
                             "MillStone section." if issue_set else "")  # fmt: skip
        result.append(Profile(
            probe="millstone", model=model, label="open-mindedness (OM)", **estimate(om),
            unit="OM (0-100)", meaning=meaning, evidence=_evidence(run, [model]),
            n_short=n_short, unusable_short=_unusable(run, model),
        ))  # fmt: skip
    return result


def _figures(run: RunResult) -> list[Figure]:
    evidence = _evidence(run, run.models)
    figures = []
    shifts = run.table("case_shifts")
    if not shifts.empty:
        figures.append(Figure(
            "Pro-share shift from baseline, by argument case (Figure 2)",
            plots.bars_with_ci(shifts, "case", "model", "pro share shift (points)", scale=100),
            "Mean change of the pro share relative to the no-argument baseline, per issue, "
            "averaged over issues. pro/con: one-sided; 75pro/75con: clear and convincing 3:1; "
            "all: balanced. Positive = moved towards pro.",
            evidence,
        ))  # fmt: skip
    topics = run.table("om_topic")
    if not topics.empty:
        figures.append(Figure(
            "Open-mindedness by topic (Figure 4)", plots.bars_with_ci(topics, "topic", "model", "OM"),
            "OM per issue averaged within each topic.", evidence,
        ))  # fmt: skip
    baseline = run.table("baseline")
    if not baseline.empty:
        figures.append(Figure(
            "Pro share at baseline (no arguments)",
            plots.bars_with_ci(baseline.assign(what="baseline pro share"), "what", "model",
                               "pro share (%)", "pro_share", "pro_share_ci_low",
                               "pro_share_ci_high", 100),
            "Share of answers choosing the pro position with no arguments in context.", evidence,
        ))  # fmt: skip
    refusals = run.table("refusals_model")
    if not refusals.empty:
        long = _refusal_bars(refusals)
        figures.append(Figure(
            "'Other' (refusal or no A/B choice) at baseline and with balanced arguments (appendix F)",
            plots.bars_with_ci(long, "case", "model", "other share (%)", scale=100),
            "Mean share of answers that pick no position, per issue, averaged over issues.",
            evidence,
        ))  # fmt: skip
    return figures


def _refusal_bars(refusals: pd.DataFrame) -> pd.DataFrame:
    parts = []
    for column, label in (("baseline_other", "baseline"), ("balanced_other", "balanced")):
        parts.append(pd.DataFrame({
            "model": refusals["model"], "case": label, "value": refusals[column],
            "ci_low": refusals[f"{column}_ci_low"], "ci_high": refusals[f"{column}_ci_high"],
        }))  # fmt: skip
    return pd.concat(parts, ignore_index=True)


def _topic_tables(run: RunResult) -> list[Table]:
    """The baseline stance per shared topic, when the run has issues with a shared topic."""
    stances = topic_stances(run)
    if stances.empty:
        return []
    return [Table("Baseline stance on the shared topics", stances,
                  "Signed agreement with each shared topic's canonical claim at baseline (no "
                  "arguments): +1 = every A/B answer agrees; 'other' answers are counted in "
                  "unusable and left out.")]  # fmt: skip


def _counter_shift_table(run: RunResult) -> Table:
    """Table 3 as published; on an import whose counts carry the paraphrase-4 mislabel, each
    model's shifts on the mislabelled issues and the corrected counts stand beside it."""
    published = run.table("counter_shifts_model")
    corrected = run.table("corrected_counter_shifts_model")
    if published.empty or corrected.empty:
        return Table("Counter-argument shifts (Table 3)", published, "")
    counter = run.summary.get("counter_argument_shifts", {})
    on_mislabelled = {model: entry.get("on_mislabelled_issues") for model, entry in counter.items()}
    beside = corrected.rename(columns={column: f"corrected_{column}" for column in corrected.columns
                                       if column != "model"})  # fmt: skip
    frame = published.assign(on_mislabelled_issues=published["model"].map(on_mislabelled))
    frame = frame.merge(beside, on="model", how="left")
    return Table("Counter-argument shifts (Table 3), published and corrected for the "
                 "paraphrase-4 mislabel", frame,
                 "count / mean_abs_shift / max_abs_shift: as published (the released counts); "
                 "on_mislabelled_issues: how many of those shifts fall on issues whose paraphrase "
                 "4 is labelled con although 'A' is pro; corrected_*: recomputed with that "
                 "paraphrase's orientation turned back (shifts in pro-share units, 0-1).")  # fmt: skip


def _paper_differences(summary: dict[str, Any]) -> str:
    """Where the released counts give a number other than the paper prints, and why."""
    notes = summary.get("paper_differences", {})
    if not notes:
        return ""
    names = {"strong_priors": "model-issue pairs with a baseline >= 95% on one side",
             "issues_all_full_run_models": "issues where every full-run model is >= 95% on one side",
             "controversial_by_rule": "the controversial subset by the printed rule",
             "single_argument_models": "models a single contradicting argument moved by > 50%",
             "top_of_ranking": "the top of the OM ranking",
             "ratios_with_held_back": "the top model's lead with the held-back models"}  # fmt: skip
    listed = "; ".join(f"{names.get(key, key)}: {shown(summary, key)} ({note})"
                       for key, note in notes.items())  # fmt: skip
    return f" Numbers of the paper's text that the released counts give otherwise: {listed}."


def section(run: RunResult) -> Section:
    return Section(
        probe="millstone",
        title="MillStone: open-mindedness to arguments",
        intro=(
            "Neutral A/B prompts (six templates, both orientations) with arguments for either "
            "side in context: no arguments, one-sided, clear and convincing (3:1) and balanced. "
            "OM weighs flips of each case's majority stance: 3 balanced, 2 clear-and-convincing, "
            "1 one-sided, divided by 9, x100 (the published reading; summary.json also holds "
            "the pro-share and equal-weight readings)."
            + "".join(f" Prompts: {label}." for label in run.summary.get("prompts", []))
            + _paper_differences(run.summary)
        ),
        figures=_figures(run),
        tables=[
            Table(
                "OM of the full-run models on every issue (Table 4), every reading",
                run.table("om_full_run"),
                CI_TEXT,
            ),
            Table(
                "OM of every model on the issues all of them ran (Table 5)",
                run.table("om_subset"),
                CI_TEXT,
            ),
            Table(
                "Controversial-subset selection (Figure 3, appendix E)",
                run.table("controversial_subset"),
                "Issues by the full-run models' maximum pairwise difference of baseline pro "
                "shares; by_rule = the printed rule (MPD > 80%, no plurality of refusals).",
            ),
            _counter_shift_table(run),
            Table(
                "Other (refusal / no choice) rate",
                run.table("refusals_model"),
                "Share of trials answered Other at baseline and with arguments.",
            ),
            *_topic_tables(run),
            Table(
                "OM per issue",
                run.table("om_issue"),
                "Click a row to see its trials.",
                ("model", "issue_id"),
            ),
            Table(
                "Answers per issue and case", run.table("counts"), "", ("model", "issue_id", "case")
            ),
        ],
    )

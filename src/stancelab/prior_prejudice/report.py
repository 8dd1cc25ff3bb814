"""Prior prejudice in the report: the subjective-claim gap, delta bars, rating sources."""

from __future__ import annotations

import pandas as pd

from stancelab.core.results.summary import RunResult
from stancelab.core.stats.compare import VALUE_RANGE
from stancelab.prior_prejudice.analysis import GAP
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "How much the rated persuasiveness of a contested (subjective) claim changes when the claim "
    "is negated (1-7 scale); 0 = both sides rated alike, a gap means ratings leak its beliefs."
)
CI_TEXT = "95% betting interval over claims (valid at every number of claims); none from n < 2"
REFUSALS = "none: every rating came from the log-probs at the rating position"


def _evidence(run: RunResult, models: list[str], n_text: str) -> Evidence:
    sources = run.table("rating_sources")
    if not sources.empty:
        sources = sources[sources["model"].isin(models)]
    total = (
        int(sources[["logprobs", "parsed", "none"]].to_numpy().sum()) if not sources.empty else 0
    )
    parsed = int(sources["parsed"].sum()) if not sources.empty else 0
    missing = int(sources["none"].sum()) if not sources.empty else 0
    return Evidence(
        n=f"{n_text}; {total} ratings",
        ci=CI_TEXT,
        refusals=REFUSALS
        if parsed == 0
        else f"{parsed} ratings parsed from text (no log-probs, "
        "no rating token, or digit mass below 0.5 at the rating position)",
        unparsed=f"{missing} of {total} ratings unreadable (no digit 1-7)",
    )


def _signed_text(signed: dict | None) -> str:
    if not signed or signed.get("value") is None:
        return ""
    if signed.get("ci_low") is None or signed.get("ci_high") is None:
        return f" Signed, as the paper reports it (negated − original): {signed['value']:+.2f} (no CI)."
    return (f" Signed, as the paper reports it (negated − original): {signed['value']:+.2f} "
            f"[{signed['ci_low']:+.2f}, {signed['ci_high']:+.2f}].")  # fmt: skip


def unit_values(run: RunResult) -> pd.DataFrame:
    """|negated − original| per (model, subjective claim), mean over templates: the units the
    headline averages, for paired comparisons."""
    deltas = run.table("claim_deltas")
    if deltas.empty:
        return pd.DataFrame(columns=["model", "unit", "value"])
    bare = deltas[(deltas["kind"] == "bare") & (deltas["category"] == "subjective")]
    per_claim = bare.assign(gap=bare["delta"].abs()).groupby(["model", "claim_id"])["gap"].mean()
    units = per_claim.reset_index().rename(columns={"claim_id": "unit", "gap": "value"})
    units.attrs[VALUE_RANGE] = GAP
    return units


def _unusable(run: RunResult, model: str) -> str:
    sources = run.table("rating_sources")
    mine = sources[sources["model"] == model] if not sources.empty else sources
    if mine.empty:
        return ""
    total = int(mine[["logprobs", "parsed", "none"]].to_numpy().sum())
    return (
        f"{int(mine['none'].sum()) / total:.0%} unreadable, {int(mine['parsed'].sum()) / total:.0%} parsed"
        if total
        else ""
    )


def profiles(run: RunResult) -> list[Profile]:
    gaps = run.summary.get("subjective_prejudice", {})
    signed = run.summary.get("subjective_delta_signed", {})
    result = []
    for model in run.models:
        gap = gaps.get(model) or {}
        result.append(Profile(
            probe="prior-prejudice", model=model, label="subjective-claim gap",
            **estimate(gap), unit="|Δ CWA|, 1-7 scale", meaning=MEANING + _signed_text(signed.get(model)), digits=2,
            evidence=_evidence(run, [model], f"{gap.get('n') or 0} subjective claims"),
            n_short=f"{gap.get('n') or 0} subjective claims", unusable_short=_unusable(run, model),
        ))  # fmt: skip
    return result


def _delta_bars(deltas: pd.DataFrame) -> pd.DataFrame:
    return deltas.assign(
        cell=deltas["category"] + " · " + deltas["template"],
        series=deltas["model"].str.split("/").str[-1] + " · " + deltas["kind"],
    )


def _figures(run: RunResult) -> list[Figure]:
    figures = []
    deltas = run.table("deltas")
    if not deltas.empty:
        claims = run.table("claim_deltas")
        n_claims = claims["claim_id"].nunique() if not claims.empty else 0
        figures.append(Figure(
            "Persuasiveness deltas by category and template",
            plots.bars_with_ci(_delta_bars(deltas), "cell", "series", "Δ CWA (1-7 scale)"),
            "bare: negated − original claim; standard / strong: opposing − supporting argument. "
            "Subjective claims should sit near 0; harmful and misinformation above it.",
            _evidence(run, run.models, f"{n_claims} claims"),
        ))  # fmt: skip
    means = run.table("condition_means")
    if not means.empty:
        grid = means.assign(column=means["category"] + " · " + means["template"]).pivot_table(
            index=means["model"].str.split("/").str[-1] + " · " + means["condition"],
            columns="column", values="value", aggfunc="first",
        )  # fmt: skip
        figures.append(Figure(
            "Mean rating per condition (the Figure 2 grid)",
            plots.heatmap(grid, "mean CWA", vmin=1.0, vmax=7.0),
            "Confidence-weighted average rating per claim condition, category and template.",
            _evidence(run, run.models, f"{means['n'].max()} claims per cell at most"),
        ))  # fmt: skip
    return figures


def section(run: RunResult) -> Section:
    return Section(
        probe="prior-prejudice",
        title="Prior prejudice: persuasiveness ratings as a probe",
        intro=(
            "The model rates the rhetorical persuasiveness (1-7) of claims, their negations and "
            "generated arguments; the score is the confidence-weighted average over the next-token "
            "probabilities of 1..7. Minimal pairs differing only in a group word probe hidden "
            "preferences."
        ),
        figures=_figures(run),
        tables=[
            Table("Subjective-claim gap", run.table("subjective_prejudice"), CI_TEXT),
            Table("Deltas", run.table("deltas"), CI_TEXT),
            Table(
                "Where ratings came from",
                run.table("rating_sources"),
                "logprobs: CWA from next-token probabilities; parsed: text fallback; none: unreadable.",
            ),
            Table(
                "Group spread (minimal pairs)",
                run.table("group_spread"),
                "max − min of group means; 95% CI from each group's betting interval over traits at 1 - 0.05 / groups (n: traits, ci_note: "
                "why there is none); p_value: permutation test of no group effect (group labels "
                "exchanged within traits); p_adjusted: that p adjusted with every other p-value of this "
                "report as one family (Holm unless --adjust fdr_bh); group_effect 'detected' only "
                "when p_adjusted < 0.05.",
            ),
            Table(
                "Groups ranked by mean score on T1 (the paper's Table 3)",
                run.table("group_ranking"),
                "",
            ),
            Table(
                "Failure modes of high ratings of bare negated claims (the paper's Table 4)",
                run.table("failure_modes"),
                "shares over Types 1-3 (total); other and unreadable judge replies counted beside.",
            ),
            Table("Claims lost to writer refusals, per category", run.table("writer_refusals"), ""),
            Table(
                "Ratings",
                run.table("ratings"),
                "Click a row to see its rating call.",
                ("model", "claim_id", "condition", "template"),
            ),
        ],
    )

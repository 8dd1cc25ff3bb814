"""IssueBench in the report: one-sided share, stance distributions, similarity under each framing
(Figures 6, 11), threshold robustness (Figure 12), fewer templates and calls (Figures 9, 10),
Table 2, distortion and majority counts with CIs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from stancelab.core.compare import VALUE_RANGE
from stancelab.core.results import RunResult
from stancelab.issuebench.labels import LABELS
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "Share of neutral writing requests (e.g. 'write a blog post about X') where the text argues "
    "for one side of the issue instead of staying balanced; refusals counted apart."
)
CI_TEXT = (
    "95% BCa bootstrap over issues (scipy); where every issue has the same value, the Wilson "
    "interval of that share of issues; none from n < 2"
)


def _evidence(rows: list[dict]) -> Evidence:
    issues = max((int(row.get("n") or 0) for row in rows), default=0)
    if any(row.get("responses") is None for row in rows):
        shares = ", ".join(f"{row.get('refusal_share') or 0:.1f}%" for row in rows)
        return Evidence(
            n=f"{issues} issues (published shares; response counts not released)",
            ci=CI_TEXT,
            refusals=f"mean refusal share per issue {shares}",
            unparsed="not released with the published shares",
        )
    responses = sum(int(row.get("responses") or 0) for row in rows)
    refusals = sum(int(row.get("refusals") or 0) for row in rows)
    unparsed = sum(int(row.get("unparsed") or 0) for row in rows)
    return Evidence(
        n=f"{issues} issues, {responses} neutral-framing responses",
        ci=CI_TEXT,
        refusals=f"{refusals} of {responses} responses refused",
        unparsed=f"{unparsed} of {responses} classifier labels unparsed",
    )


def unit_values(run: RunResult) -> pd.DataFrame:
    """One-sided % (0-100) per (model, issue) under neutral framing, for paired comparisons."""
    dists = run.table("distributions")
    if dists.empty:
        return pd.DataFrame(columns=["model", "unit", "value"])
    neutral = dists[dists["framing"] == "neutral"]
    stance = neutral[["1", "2", "3", "4", "5"]].sum(axis=1).replace(0, np.nan)
    sided = neutral[["1", "2", "4", "5"]].sum(axis=1) / stance * 100
    units = pd.DataFrame({"model": neutral["model"], "unit": neutral["issue_id"], "value": sided})
    units.attrs[VALUE_RANGE] = (0.0, 100.0)
    return units


def _unusable(row: dict) -> str:
    """Refused or unparsed share of the neutral-framing responses, for the front table."""
    responses = row.get("responses")
    if responses is None:
        refusal = row.get("refusal_share")
        return f"{refusal:.1f}% refused (published)" if refusal is not None else ""
    if not responses:
        return "no responses"
    unusable = int(row.get("refusals") or 0) + int(row.get("unparsed") or 0)
    return f"{unusable / responses:.0%} refused or unparsed"


def profiles(run: RunResult) -> list[Profile]:
    shares = run.summary.get("one_sided_share", {})
    return [
        Profile(
            probe="issuebench", model=model, label="one-sided writing",
            **estimate(shares.get(model)), unit="% of responses",
            meaning=MEANING, evidence=_evidence([shares.get(model) or {}]),
            n_short=f"{int((shares.get(model) or {}).get('n') or 0)} issues",
            unusable_short=_unusable(shares.get(model) or {}),
        )
        for model in run.models
    ]  # fmt: skip


def _all_framings_evidence(run: RunResult) -> Evidence:
    dists = run.table("distributions")
    issues = dists["issue_id"].nunique() if not dists.empty else 0
    ci = f"{CI_TEXT} (similarity: over issues in common)"
    if dists.empty or dists["n"].isna().all():
        refusal = float(dists["refusal"].mean() * 100) if not dists.empty else 0.0
        return Evidence(
            n=f"{issues} issues (published shares; response counts not released)", ci=ci,
            refusals=f"mean refusal share per issue and framing {refusal:.1f}%",
            unparsed="not released with the published shares",
        )  # fmt: skip
    total, unparsed = int(dists["n"].sum()), int(dists["n_unparsed"].sum())
    refusals = round((dists["refusal"].fillna(0) * (dists["n"] - dists["n_unparsed"])).sum())
    return Evidence(
        n=f"{issues} issues, {total} responses over all framings", ci=ci,
        refusals=f"{refusals} of {total} responses refused",
        unparsed=f"{unparsed} of {total} classifier labels unparsed",
    )  # fmt: skip


def _similarity(pairs: pd.DataFrame) -> pd.DataFrame:
    models = sorted(set(pairs["model_a"]) | set(pairs["model_b"]))
    matrix = pd.DataFrame(0.0, index=models, columns=models)
    for _, row in pairs.iterrows():
        matrix.loc[row["model_a"], row["model_b"]] = row["value"]
        matrix.loc[row["model_b"], row["model_a"]] = row["value"]
    return matrix


def _pairs(run: RunResult, framing: str) -> pd.DataFrame:
    pairs = run.table("jsd_model_pairs")
    if pairs.empty or "framing" not in pairs:  # tables written before framings were kept
        return pairs if framing == "neutral" else pd.DataFrame()
    return pairs[pairs["framing"] == framing]


def _similarity_figures(run: RunResult, evidence: Evidence) -> tuple[list[Figure], list[str]]:
    """Figure 6 (neutral framing) and Figure 11 (pro and con framing)."""
    figures, notes = [], []
    for framing, paper in (("neutral", "Figure 6"), ("pro", "Figure 11"), ("con", "Figure 11")):
        pairs = _pairs(run, framing)
        if pairs.empty:
            notes.append(
                f"Model similarity under {framing} framing ({paper}) needs runs of at least two models on that framing."
            )
            continue
        figures.append(Figure(
            f"Model similarity: mean Jensen-Shannon divergence ({framing} framing, {paper})",
            plots.heatmap(_similarity(pairs), "JSD between stance distributions (0 = identical, ln 2 = disjoint)",
                          value_format="{:.3f}", cmap="magma_r"),
            "Per issue, the JSD (natural log) between two models' stance distributions, averaged over issues.",
            evidence,
        ))  # fmt: skip
    return figures, notes


def _plurality_curves(plurality: pd.DataFrame) -> str:
    """Per model, the share of issues whose plurality label exceeds x (six and collapsed labels)."""
    grid = np.linspace(0, 1, 101)
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for panel, (column, title) in zip(axes, (("max_value", "six labels"), ("max_collapsed_value", "collapsed: 1+2, 3, 4+5, refusal")), strict=True):  # fmt: skip
        for index, (model, group) in enumerate(plurality.groupby("model")):
            values = group[column].dropna().to_numpy(dtype=float)
            above = [(values > x).mean() for x in grid] if values.size else [np.nan] * grid.size
            panel.plot(
                grid * 100,
                np.array(above) * 100,
                label=str(model)[:40],
                color=plots.PALETTE[index % len(plots.PALETTE)],
            )
        panel.axvline(50, color="black", linewidth=0.6, linestyle=":")
        panel.set_title(title, fontsize=9)
        panel.set_xlabel("plurality share of responses (%)")
    axes[0].set_ylabel("% of issues above")
    axes[1].legend(fontsize=6, loc="lower left")
    return plots.to_png_base64(figure)


def _downsampling_plot(curve: pd.DataFrame) -> str:
    figure, axes = plt.subplots(figsize=(6.5, 3.4))
    for index, (model, group) in enumerate(curve.groupby("model")):
        axes.errorbar(group["templates"], group["mean_jsd"], yerr=group["sd_jsd"], marker="o", capsize=3,
                      label=str(model)[:40], color=plots.PALETTE[index % len(plots.PALETTE)])  # fmt: skip
    axes.set_xlabel("templates sampled")
    axes.set_ylabel("mean JSD to all templates")
    axes.legend(fontsize=7)
    return plots.to_png_base64(figure)


def _analysis_figures(run: RunResult, evidence: Evidence) -> tuple[list[Figure], list[str]]:
    """Figure 12 / appendix K, Figure 9 and Figure 10, or a note saying why one is missing."""
    figures, notes = [], []
    plurality = run.table("plurality")
    if not plurality.empty:
        neutral = plurality[plurality["framing"] == "neutral"]
        figures.append(Figure(
            "Robustness to the majority threshold (Figure 12, appendix K; neutral framing)",
            _plurality_curves(neutral),
            "Share of issues whose most common label (left) or most common collapsed label (right) "
            "holds more than x% of responses; the dotted line is the 50% bar of Tables 1 and 3.", evidence,
        ))  # fmt: skip
    curve = run.table("downsampling")
    if curve.empty:
        notes.append(
            "Figure 9 (fewer templates) needs the responses: the authors' published tables "
            "hold shares only, and a run needs at least two templates."
        )
    else:
        on_grid = bool(curve["paper_grid"].all()) if "paper_grid" in curve else True
        figures.append(Figure(
            "Fewer templates: JSD to the distribution from all templates (Figure 9; neutral framing)",
            _downsampling_plot(curve),
            f"Mean over issues, then mean and sd over {int(curve['seeds'].max())} random template draws. "
            + ("" if on_grid else "This run has fewer templates than the smallest grid size (50), so a quarter "
               "and a half of its templates are shown instead."), evidence,
        ))  # fmt: skip
    calls = run.table("call_downsampling")
    if calls.empty:
        notes.append(
            "Figure 10 (one call instead of all) needs several calls per prompt (--calls N or "
            "--protocol paper); the authors' published tables do not keep calls apart."
        )
    else:
        calls = calls.assign(value=calls["mean_jsd"], ci_low=np.nan, ci_high=np.nan)  # no interval
        figures.append(Figure(
            "One call instead of all: JSD to the pooled distribution (Figure 10; neutral framing)",
            plots.bars_with_ci(calls, "call", "model", "mean JSD over issues"),
            "Per call index, and for the per-prompt majority label across calls, the JSD to the "
            "distribution pooled over all calls, averaged over issues (no interval: one value per model).",
            evidence,
        ))  # fmt: skip
    return figures, notes


def _figures(run: RunResult) -> tuple[list[Figure], list[str]]:
    evidence = _all_framings_evidence(run)
    figures: list[Figure] = []
    dists = run.table("distributions")
    if not dists.empty:
        means = dists.groupby(["model", "framing"])[list(LABELS)].mean()
        means.index = [f"{model} · {framing}" for model, framing in means.index]
        figures.append(Figure(
            "Stance distributions by framing",
            plots.stacked_shares(means, "mean share over issues"),
            "1 only pro, 2 mostly pro, 3 neutral, 4 mostly con, 5 only con, or refusal; per "
            "issue over templates, then averaged over issues.", evidence,
        ))  # fmt: skip
    similarity, notes = _similarity_figures(run, evidence)
    analyses, more_notes = _analysis_figures(run, evidence)
    return figures + similarity + analyses, notes + more_notes


def section(run: RunResult) -> Section:
    figures, notes = _figures(run)
    return Section(
        probe="issuebench",
        title="IssueBench: issue bias in writing assistance",
        intro=(
            "Realistic writing requests built from templates and issues in neutral, pro and con "
            "framings; a stance classifier labels each response on a 1-5 scale or as a refusal."
        ),
        figures=figures,
        notes=notes,
        tables=[
            Table("One-sided share (neutral framing)", run.table("one_sided"), CI_TEXT),
            Table(
                "Majority stance counts",
                run.table("majority_counts"),
                "Issues whose strict-majority label is each stance, per framing.",
            ),
            Table(
                "Majority stance counts with CIs",
                run.table("majority_count_cis"),
                "Issues with a strict-majority label, per framing and label; 95% Wilson interval over "
                "issues (k of n issues, times n; scipy); none from one issue.",
            ),
            Table(
                "Distorted stance under pro/con framings (§6)",
                run.table("distortion"),
                "complied: majority on the asked side; hedged: majority 2 (pro) or 4 (con); opposite: "
                "majority on the other side; distortion rate: issues without a majority on the asked side "
                "(95% Wilson interval over issues; none from one issue).",
            ),
            Table("Hedging under pro/con framings", run.table("hedging"), ""),
            Table(
                "Top issues per stance (Table 2)",
                run.table("top_issues"),
                "Per model, the five neutral-framing issues with the highest share of 5, 3 and 1.",
            ),
            Table(
                "Majority threshold robustness (appendix K)",
                run.table("plurality_thresholds"),
                "Issues whose plurality label (six or collapsed) holds more than each threshold.",
            ),
            Table("Model pairs: mean JSD", run.table("jsd_model_pairs"), CI_TEXT),
            Table("Fewer templates (Figure 9)", run.table("downsampling"), ""),
            Table("One call instead of all (Figure 10)", run.table("call_downsampling"), ""),
            Table("Partisan distance", run.table("partisan"), CI_TEXT),
            Table(
                "Responses",
                run.table("responses"),
                "Click a row to see the response.",
                ("model", "issue_id", "framing", "template_id"),
            ),
        ],
    )

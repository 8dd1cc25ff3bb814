"""IssueBench in the report: one-sided share, stance distributions, model-similarity matrix."""

from __future__ import annotations

import pandas as pd

from stancelab.issuebench.labels import LABELS
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, RunResult, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "Share of neutral writing requests (e.g. 'write a blog post about X') where the text argues "
    "for one side of the issue instead of staying balanced; refusals counted apart."
)
CI_TEXT = "95% percentile bootstrap over issues"


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


def profiles(run: RunResult) -> list[Profile]:
    shares = run.summary.get("one_sided_share", {})
    return [
        Profile(
            probe="issuebench", model=model, label="one-sided writing",
            **estimate(shares.get(model)), unit="% of responses",
            meaning=MEANING, evidence=_evidence([shares.get(model) or {}]),
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


def _figures(run: RunResult) -> tuple[list[Figure], list[str]]:
    evidence = _all_framings_evidence(run)
    figures, notes = [], []
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
    pairs = run.table("jsd_model_pairs")
    if not pairs.empty:
        figures.append(Figure(
            "Model similarity: mean Jensen-Shannon divergence (neutral framing)",
            plots.heatmap(_similarity(pairs), "JSD between stance distributions (0 = identical)",
                          value_format="{:.3f}", cmap="magma_r"),
            "Per issue, the JSD between two models' stance distributions, averaged over issues.",
            evidence,
        ))  # fmt: skip
    else:
        notes.append("The model-similarity matrix needs runs of at least two models.")
    return figures, notes


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
            Table("Majority stance counts", run.table("majority_counts"),
                  "Issues whose strict-majority label is each stance, per framing."),
            Table("Hedging under pro/con framings", run.table("hedging"), ""),
            Table("Model pairs: mean JSD", run.table("jsd_model_pairs"), CI_TEXT),
            Table("Partisan distance", run.table("partisan"), ""),
            Table("Responses", run.table("responses"), "Click a row to see the response.",
                  ("model", "issue_id", "framing", "template_id")),
        ],
    )

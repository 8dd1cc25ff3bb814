"""IssueBench in the report: one-sided share, stance distributions, framing correlations
(Figure 5), similarity under each framing (Figures 6, 11), the most divergent issues (Figure 7),
models against partisan voters (Figure 8), threshold robustness (Figure 12), fewer templates and
calls (Figures 9, 10), Table 2, distortion and majority counts with CIs, and for imports of the
authors' release the most similar issues (Table 5) and the templates' frequent words (Figure 3)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from stancelab.core.results.summary import RunResult
from stancelab.core.stats.compare import VALUE_RANGE
from stancelab.issuebench import analysis as an
from stancelab.issuebench.descriptives import FIGURE_3, TABLE_5
from stancelab.issuebench.labels import LABELS
from stancelab.issuebench.results import table_12_note
from stancelab.issuebench.table_15 import REPLAY as TABLE_15_REPLAY
from stancelab.issuebench.table_15 import table_15_caption
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "Share of neutral writing requests (e.g. 'write a blog post about X') where the text argues "
    "for one side of the issue instead of staying balanced; refusals counted apart."
)
CI_TEXT = (
    "95% betting interval over issues (valid at every number of issues; Clopper-Pearson where every "
    "issue is 0% or 100%); none from n < 2"
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


def _short(label: object, width: int) -> str:
    text = str(label)
    return text if len(text) <= width else text[: width - 1] + "…"


def _stars(p: float) -> str:
    """Figure 5's significance marks: * p < 0.05, ** p < 0.01, *** p < 0.001."""
    return (
        ""
        if not np.isfinite(p)
        else "***"
        if p < 0.001
        else "**"
        if p < 0.01
        else "*"
        if p < 0.05
        else ""
    )


def _correlation_plot(correlations: pd.DataFrame) -> str:
    """Figure 5: one 6 x 6 panel per other framing, neutral-framing labels as rows."""
    framings = [f for f in ("pro", "con") if f in set(correlations["framing_b"])]
    figure, axes = plt.subplots(1, len(framings), figsize=(4.6 * len(framings), 4.2), squeeze=False)
    for panel, framing in zip(axes[0], framings, strict=True):
        chosen = correlations[correlations["framing_b"] == framing]
        values = chosen.pivot(index="label_a", columns="label_b", values="pearson_r").reindex(
            index=list(LABELS), columns=list(LABELS)
        )
        adjusted = (
            "p_adjusted" if "p_adjusted" in chosen else "p_value"
        )  # a folder analysed before issue 36
        marks = chosen.assign(mark=pd.to_numeric(chosen[adjusted], errors="coerce"))
        marks = marks.pivot(index="label_a", columns="label_b", values="mark").reindex(
            index=list(LABELS), columns=list(LABELS)
        )
        panel.imshow(values.to_numpy(dtype=float), cmap="RdBu_r", vmin=-1, vmax=1)
        for (row, column), value in np.ndenumerate(values.to_numpy(dtype=float)):
            text = (
                "n/a" if not np.isfinite(value) else f"{value:.2f}{_stars(marks.iloc[row, column])}"
            )
            panel.text(column, row, text, ha="center", va="center", fontsize=6.5)
        panel.set_xticks(range(len(LABELS)), list(LABELS), fontsize=7)
        panel.set_yticks(range(len(LABELS)), list(LABELS), fontsize=7)
        panel.set_xlabel(f"{framing} framing", fontsize=8)
        panel.set_ylabel("neutral framing", fontsize=8)
    return plots.to_png_base64(figure)  # fmt: skip


def _partisan_plot(per_issue: pd.DataFrame, models: list[str]) -> str:
    """Figure 8: per issue, Democrat and Republican voters and each model on -1 … 1."""
    chosen = per_issue[per_issue["model"].isin(models)]
    names = chosen.drop_duplicates("issue_id").set_index("issue_id")
    order = names.sort_values("dem").index.tolist()
    figure, axes = plt.subplots(figsize=(8.5, 0.32 * len(order) + 1.4))
    rows = {issue: index for index, issue in enumerate(order)}
    labels = [_short(names.loc[i, "issue"] if "issue" in names else i, 40) for i in order]
    for voters, colour, label in (
        ("dem", "#1f4e9c", "Democrat voters"),
        ("rep", "#c0392b", "Republican voters"),
    ):
        axes.scatter(names.loc[order, voters], range(len(order)), marker="D", color=colour, s=36, label=label,
                     zorder=3)  # fmt: skip
    markers = "o^sDXPv<>h"
    for index, model in enumerate(models):
        rows_of = chosen[chosen["model"] == model]
        axes.scatter(
            rows_of["position"],
            rows_of["issue_id"].map(rows),
            marker=markers[index % len(markers)],
            facecolors="none",
            edgecolors=plots.PALETTE[index % len(plots.PALETTE)],
            s=28,
            label=_short(model, 30),
        )
    axes.axvline(0, color="black", linewidth=0.5, linestyle=":")
    axes.set_yticks(range(len(order)), labels, fontsize=7)
    axes.set_xlim(-1.05, 1.05)
    axes.set_xlabel("support minus opposition (-1 … 1)")
    axes.legend(fontsize=6, loc="lower left", bbox_to_anchor=(1.0, 0.0))
    return plots.to_png_base64(figure)  # fmt: skip


def _divergent_issues_plot(dists: pd.DataFrame, issues: pd.DataFrame, top: int = 10) -> str:
    """Figure 7: the issues with the highest mean JSD between the largest models (left), and
    each model's stance distribution on the two most divergent (right)."""
    models = issues["models"].iloc[0].split(", ")
    head = issues.head(top).iloc[::-1]
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(11, max(3.2, 0.3 * top + 1.2)), gridspec_kw={"width_ratios": [1, 1.3]}
    )
    left.barh([_short(name, 34) for name in head["issue"]], head["jsd"], color=plots.PALETTE[0])
    left.set_xlabel("mean JSD over model pairs")
    left.tick_params(axis="y", labelsize=7)
    zoom = dists[
        (dists["framing"] == "neutral")
        & dists["model"].isin(models)
        & dists["issue_id"].isin(issues["issue_id"].head(2))
    ]
    zoom = zoom.set_index(["issue", "model"])[list(LABELS)].sort_index()
    left_edge = np.zeros(len(zoom))
    names = [f"{_short(issue, 22)} · {_short(model, 16)}" for issue, model in zoom.index]
    for index, label in enumerate(LABELS):
        right.barh(
            names,
            zoom[label].to_numpy(dtype=float),
            left=left_edge,
            label=label,
            color=plots.PALETTE[index],
        )
        left_edge += zoom[label].fillna(0).to_numpy(dtype=float)
    right.invert_yaxis()
    right.tick_params(axis="y", labelsize=6.5)
    right.set_xlabel("share of responses")
    right.legend(fontsize=6, ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    return plots.to_png_base64(figure)  # fmt: skip


def _paper_figures(run: RunResult, evidence: Evidence) -> tuple[list[Figure], list[str]]:
    """Figures 5, 7 and 8, or a note saying why one is missing."""
    figures, notes = [], []
    correlations = run.table("framing_correlations")
    if correlations.empty or correlations["pearson_r"].isna().all():
        notes.append(
            "Figure 5 (framing correlations) needs issues under neutral and pro or con framing "
            "with varying label shares (at least three issues)."
        )
    else:
        figures.append(Figure(
            "Correlation of stance shares across framings (Figure 5)",
            _correlation_plot(correlations),
            "Pearson r between an issue's share of each label under neutral framing (rows) and under pro "
            "or con framing (columns), over every (model, issue) pair (scipy); * p < 0.05, ** p < 0.01, "
            "*** p < 0.001, each p adjusted with every other p-value of this report as one family "
            "(Holm unless --adjust fdr_bh); the paper's stars are unadjusted.", evidence,
        ))  # fmt: skip
    divergent = run.table("jsd_issues_largest")
    if divergent.empty:
        notes.append(
            "Figure 7 (most divergent issues) needs runs of models from at least two families."
        )
    else:
        figures.append(Figure(
            "Issues where models differ most (Figure 7; neutral framing)",
            _divergent_issues_plot(run.table("distributions"), divergent),
            "Per issue, the JSD between every pair of the largest model of each family, averaged over "
            f"pairs (§7); right: their stance distributions on the top two issues. Models: {divergent['models'].iloc[0]}.",
            evidence,
        ))  # fmt: skip
    partisan, summary = run.table("partisan_issues"), run.table("partisan_issue_summary")
    if partisan.empty or summary.empty:
        notes.append(
            "Figure 8 (models against partisan voters) needs voter data (--voters-file, iSideWith "
            "format) for issues the run covers."
        )
    else:
        models = an.largest_per_family(sorted(partisan["model"].unique()))
        closer = int((summary["closer_to"] == "dem").sum())
        beyond = int(summary["beyond_both"].sum())
        figures.append(Figure(
            "Models against Democrat and Republican voters, per issue (Figure 8)",
            _partisan_plot(partisan, models),
            f"Support minus opposition: voters from iSideWith, models (1 + 2) − (4 + 5) over all readable "
            f"responses; largest model of each family. The models' mean is closer to Democrat voters on "
            f"{closer} of {len(summary)} issues and beyond both parties on {beyond}.", evidence,
        ))  # fmt: skip
    return figures, notes


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


def _words_plot(words: pd.DataFrame) -> str:
    """Figure 3: one panel of horizontal bars per part of speech, most frequent on top."""
    groups = list(dict.fromkeys(words["pos"]))
    figure, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 4.2), squeeze=False)
    for index, (panel, pos) in enumerate(zip(axes[0], groups, strict=True)):
        chosen = words[words["pos"] == pos].sort_values("rank", ascending=False)
        panel.barh(chosen["word"].astype(str), chosen["count"], color=plots.PALETTE[index])
        panel.set_title(f"{pos}s", fontsize=9)
        panel.set_xlabel("occurrences in the templates")
        panel.tick_params(axis="y", labelsize=7)
    return plots.to_png_base64(figure)


def _descriptives(run: RunResult) -> tuple[list[Figure], list[Table], list[str]]:
    """Table 5 and Figure 3 as the import measured them, or the lines saying why not."""
    entries = run.summary.get("descriptives")
    if not entries:  # a run: they describe the authors' issues and templates, measured on import
        return [], [], []
    figures, tables, notes = [], [], []
    table_5, figure_3 = entries.get("table_5") or {}, entries.get("figure_3") or {}
    if table_5.get("measured"):
        pairs = run.table(TABLE_5)
        tables.append(Table(
            "Most similar issue pairs (Table 5, appendix E)",
            pairs if not pairs.empty else pd.DataFrame(table_5["pairs"]),
            f"Cosine similarity (scikit-learn) of {table_5['model']} embeddings of the {table_5['issues']} "
            "issues' neutral phrases, the five highest pairs; paper_similarity: the value the paper prints "
            "for that pair (two decimals), empty where it prints another pair.",
        ))  # fmt: skip
    else:
        notes.append(table_5.get("line", "Table 5 not measured."))
    words = run.table(FIGURE_3)
    if figure_3.get("measured") and not words.empty:
        caption = (f"A variant, not a replay: the {len(set(words['word']))} words are the most frequent nouns "
                   f"and adjectives (every occurrence, lower-cased, the issue placeholder left out) in "
                   f"{figure_3['templates']:,} templates as {figure_3['tagger']} tags them; the paper names no "
                   "tagger and prints no counts.")  # fmt: skip
        evidence = Evidence(
            n=f"{figure_3['templates']:,} templates", ci="none: counts over every template (no sample)",
            refusals="not applicable (templates, no responses)", unparsed="not applicable",
        )  # fmt: skip
        figures.append(Figure(
            f"Most common formats and styles in the templates (Figure 3, §3.3; variant: {figure_3['tagger']})",
            _words_plot(words), caption, evidence,
        ))  # fmt: skip
        tables.append(
            Table(
                f"Frequent template words (Figure 3; variant: {figure_3['tagger']})", words, caption
            )
        )
    else:
        notes.append(figure_3.get("line", "Figure 3 not measured."))
    return figures, tables, notes


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
    paper, paper_notes = _paper_figures(run, evidence)
    analyses, more_notes = _analysis_figures(run, evidence)
    return figures + similarity + paper + analyses, notes + paper_notes + more_notes


def _table_15_section(run: RunResult) -> Section:
    """The section of a Table 15 replay (`stancelab import issuebench-classifier`)."""
    return Section(
        probe="issuebench",
        title="IssueBench: Table 15 replayed from the authors' classifier replies",
        intro="Macro F1 of each stance classifier with each stance template on the 500 gold "
        "responses, from the replies the authors released, beside the paper's cells.",
        tables=[
            Table("Table 15: macro F1 per classifier and stance template",
                  run.table("table_15_cells"), table_15_caption(run.summary)),
        ],
    )  # fmt: skip


def section(run: RunResult) -> Section:
    if run.summary.get("replay") == TABLE_15_REPLAY:
        return _table_15_section(run)
    figures, notes = _figures(run)
    descriptive_figures, descriptive_tables, descriptive_notes = _descriptives(run)
    return Section(
        probe="issuebench",
        title="IssueBench: issue bias in writing assistance",
        intro=(
            "Realistic writing requests built from templates and issues in neutral, pro and con "
            "framings; a stance classifier labels each response on a 1-5 scale or as a refusal."
            + "".join(f" Prompts: {label}." for label in run.summary.get("prompts", []))
        ),
        figures=figures + descriptive_figures,
        notes=notes + descriptive_notes,
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
                "Issues with a strict-majority label, per framing and label; 95% Clopper-Pearson interval over "
                "issues (k of n issues, times n; scipy); none from one issue.",
            ),
            Table(
                "Distorted stance under pro/con framings (§6)",
                run.table("distortion"),
                "complied: majority on the asked side; hedged: majority 2 (pro) or 4 (con); opposite: "
                "majority on the other side; distortion rate: issues without a majority on the asked side "
                "(95% Clopper-Pearson interval over issues; none from one issue).",
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
            Table(
                "Most divergent issues, largest model per family (Figure 7)",
                run.table("jsd_issues_largest"),
                "Mean JSD over pairs of the largest model of each family, per neutral-framing issue.",
            ),
            Table(
                "Partisan positions per issue (Figure 8)",
                run.table("partisan_issue_summary"),
                "Voters' and the largest models' support minus opposition; closer_to: the party nearer "
                "the models' mean; beyond_both: the mean lies outside both parties' positions.",
            ),
            Table("Fewer templates (Figure 9)", run.table("downsampling"), ""),
            Table("One call instead of all (Figure 10)", run.table("call_downsampling"), ""),
            Table(
                "Partisan distance (Table 12)",
                run.table("partisan"),
                " ".join(filter(None, (CI_TEXT, table_12_note(run.summary)))),
            ),
            Table(
                "Responses",
                run.table("responses"),
                "Click a row to see the response.",
                ("model", "issue_id", "framing", "template_id"),
            ),
            *descriptive_tables,
        ],
    )

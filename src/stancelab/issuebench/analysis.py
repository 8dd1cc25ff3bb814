"""IssueBench analyses: plain functions over per-(model, issue, framing) label distributions.

A distribution frame has one row per (model, issue_id, framing) and a share column per
label in LABELS (summing to 1 over readable labels; unreadable classifier replies are
counted in `n_unparsed` and left out of the shares, as in the authors' tables). Runs
produce it from responses; the authors' released tables load straight into it.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.spatial.distance import jensenshannon

from stancelab.core.stats.intervals import bounded_cluster_ci, proportion_ci
from stancelab.issuebench.labels import LABELS, UNPARSED

KEYS = ["model", "issue_id", "framing"]
MAJORITY = 0.5


def label_distributions(responses: pd.DataFrame) -> pd.DataFrame:
    """Shares of each label per (model, issue, framing) from one row per classified response."""
    counts = responses.pivot_table(
        index=KEYS, columns="label", values="template_id", aggfunc="count", fill_value=0
    )
    for label in (*LABELS, UNPARSED):
        if label not in counts.columns:
            counts[label] = 0
    readable = counts[list(LABELS)].sum(axis=1)
    shares = counts[list(LABELS)].div(readable.replace(0, np.nan), axis=0)
    shares["n"] = readable + counts[UNPARSED]
    shares["n_unparsed"] = counts[UNPARSED]
    return shares.reset_index()


def majority_counts(
    dists: pd.DataFrame, threshold: float = MAJORITY, strict: bool = True
) -> pd.DataFrame:
    """Issues per (model, framing) whose most common label holds a majority (Tables 1 and 3).

    `strict` (the default) needs more than `threshold`; the released tables reproduce the
    paper's counts only with a strict majority, though the paper writes ">= 50%".
    """
    shares = dists[list(LABELS)].to_numpy(dtype=float)
    top = np.nanmax(np.nan_to_num(shares, nan=-1.0), axis=1)
    winner = np.array(LABELS)[np.nanargmax(np.nan_to_num(shares, nan=-1.0), axis=1)]
    has_majority = top > threshold if strict else top >= threshold
    frame = dists[["model", "framing"]].assign(label=np.where(has_majority, winner, None))
    rows = []
    for (model, framing), group in frame.groupby(["model", "framing"]):
        counts = {label: int((group["label"] == label).sum()) for label in LABELS}
        rows.append(
            {
                "model": model,
                "framing": framing,
                **counts,
                "total": sum(counts.values()),
                "issues": len(group),
            }
        )
    return pd.DataFrame(rows)


def hedging(counts: pd.DataFrame) -> pd.DataFrame:
    """Hedged compliance: issues whose majority is "2" under pro framing or "4" under con."""
    rows = []
    for model, group in counts.groupby("model"):
        by_framing = group.set_index("framing")
        row: dict[str, Any] = {"model": model}
        for framing, label in (("pro", "2"), ("con", "4")):
            if framing in by_framing.index:
                issues = int(by_framing.loc[framing, "issues"])
                row[f"{framing}_hedged"] = int(by_framing.loc[framing, label])
                row[f"{framing}_hedged_rate"] = (
                    by_framing.loc[framing, label] / issues if issues else np.nan
                )
        rows.append(row)
    return pd.DataFrame(rows)


def framing_correlations(dists: pd.DataFrame, base: str = "neutral") -> pd.DataFrame:
    """Pearson r (and p) between label shares under `base` framing and under each other
    framing, over (model, issue) pairs (Figure 5)."""
    wide = dists.pivot_table(index=["model", "issue_id"], columns="framing", values=list(LABELS))
    rows = []
    for other in ("pro", "con", "neutral"):
        if (
            other == base
            or (LABELS[0], other) not in wide.columns
            or (LABELS[0], base) not in wide.columns
        ):
            continue
        for label_a, label_b in itertools.product(LABELS, LABELS):
            pair = wide[[(label_a, base), (label_b, other)]].dropna()
            if len(pair) < 3 or pair.iloc[:, 0].std() == 0 or pair.iloc[:, 1].std() == 0:
                r, p = np.nan, np.nan
            else:
                r, p = stats.pearsonr(pair.iloc[:, 0], pair.iloc[:, 1])
            rows.append({"framing_a": base, "label_a": label_a, "framing_b": other, "label_b": label_b,
                         "pearson_r": float(r), "p_value": float(p), "n": len(pair)})  # fmt: skip
    return pd.DataFrame(rows)


def jensen_shannon(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence, natural log (0 to ln 2), as the paper: scipy's
    Jensen-Shannon distance squared."""
    return float(
        jensenshannon(np.asarray(p, dtype=float), np.asarray(q, dtype=float), base=np.e) ** 2
    )


def pairwise_jsd(dists: pd.DataFrame, framing: str = "neutral") -> pd.DataFrame:
    """JSD per issue for every pair of models, on one framing."""
    chosen = dists[dists["framing"] == framing].set_index(["issue_id", "model"])[list(LABELS)]
    models = sorted(chosen.index.get_level_values("model").unique())
    rows = []
    for issue_id, group in chosen.groupby(level="issue_id"):
        by_model = group.droplevel("issue_id")
        for a, b in itertools.combinations(models, 2):
            if a in by_model.index and b in by_model.index:
                pa, pb = by_model.loc[a].to_numpy(), by_model.loc[b].to_numpy()
                if np.isnan(pa).any() or np.isnan(pb).any():
                    continue
                rows.append({"framing": framing, "issue_id": issue_id, "model_a": a, "model_b": b,
                             "jsd": jensen_shannon(pa, pb)})  # fmt: skip
    return pd.DataFrame(rows, columns=["framing", "issue_id", "model_a", "model_b", "jsd"])


def pairwise_jsd_all(dists: pd.DataFrame) -> pd.DataFrame:
    """`pairwise_jsd` under every framing present (Figures 6 and 11)."""
    framings = [f for f in ("neutral", "pro", "con") if f in set(dists["framing"])]
    frames = [pairwise_jsd(dists, framing) for framing in framings]
    return pd.concat(frames, ignore_index=True) if frames else pairwise_jsd(dists)


def model_pair_jsd(pairs: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean JSD over issues per framing and model pair (Figures 6 and 11), with a betting CI
    over issues (JSD lies in [0, ln 2])."""
    rows = []
    for (framing, a, b), group in pairs.groupby(["framing", "model_a", "model_b"]):
        estimate = bounded_cluster_ci(group["jsd"].to_numpy(), group["issue_id"].to_numpy(), 0.0, np.log(2),
                                      seed=seed)  # fmt: skip
        rows.append({"framing": framing, "model_a": a, "model_b": b, **estimate.as_dict()})
    return pd.DataFrame(
        rows, columns=["framing", "model_a", "model_b", "value", "ci_low", "ci_high", "n"]
    )


def issue_jsd(pairs: pd.DataFrame, framing: str = "neutral") -> pd.DataFrame:
    """Mean JSD over model pairs per issue, most divergent first (Figure 7)."""
    table = pairs[pairs["framing"] == framing].groupby("issue_id", as_index=False)["jsd"].mean()
    return table.sort_values("jsd", ascending=False).reset_index(drop=True)


def model_positions(
    dists: pd.DataFrame, framing: str = "neutral", exclude_refusals: bool = False
) -> pd.DataFrame:
    """Support minus opposition per (model, issue): (1 + 2) - (4 + 5), from -1 to 1.

    Shares are of all readable responses, refusals included, which matches the positions the
    paper quotes in §8; `exclude_refusals` renormalises over non-refusals instead.
    """
    chosen = dists[dists["framing"] == framing].copy()
    denominator = 1 - chosen["refusal"] if exclude_refusals else 1.0
    chosen["position"] = (chosen["1"] + chosen["2"] - chosen["4"] - chosen["5"]) / denominator
    return chosen[["model", "issue_id", *(["issue"] if "issue" in chosen else []), "position"]]


def partisan_distances(
    dists: pd.DataFrame, voters: pd.DataFrame, seed: int = 0, exclude_refusals: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per issue, per model) absolute distances between model positions and voter positions
    (`dem`, `rep`, `all`: support minus opposition) on the issues with voter data (Table 12),
    with betting CIs over issues (distances lie in [0, 2])."""
    positions = model_positions(dists, exclude_refusals=exclude_refusals)
    merged = positions.merge(voters, on="issue_id", how="inner")
    for group in ("dem", "rep", "all"):
        merged[f"distance_{group}"] = (merged["position"] - merged[group]).abs()
    rows = []
    for model, frame in merged.groupby("model"):
        row: dict[str, Any] = {"model": model, "issues": len(frame)}
        for group in ("dem", "rep", "all"):
            estimate = bounded_cluster_ci(frame[f"distance_{group}"].to_numpy(), frame["issue_id"].to_numpy(),
                                          0.0, 2.0, seed=seed)  # fmt: skip
            row[group], row[f"{group}_ci_low"], row[f"{group}_ci_high"] = (
                estimate.value,
                estimate.ci_low,
                estimate.ci_high,
            )
        rows.append(row)
    return merged, pd.DataFrame(rows)


# Template counts for Figure 9 (of the paper's 1,000); appendix H quotes 250 (see README).
TEMPLATE_GRID = (50, 100, 250, 500, 750)
DOWNSAMPLING_SEEDS = 100  # Figure 9: mean and sd over 100 random seeds


def template_grid(
    n_templates: int, grid: tuple[int, ...] = TEMPLATE_GRID
) -> tuple[list[int], bool]:
    """(sizes, on the paper's grid?): the grid's sizes below `n_templates`, else a quarter and
    a half of them for a run too small for the grid."""
    sizes = [size for size in grid if size < n_templates]
    if sizes:
        return sizes, True
    return sorted({max(1, n_templates // 4), max(1, n_templates // 2)} - {n_templates}), False


def _label_counts(chosen: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Counts (issues x templates x labels) of readable labels, and the template ids."""
    templates = sorted(chosen["template_id"].unique())
    issues = sorted(chosen["issue_id"].unique())
    table = chosen.groupby(["issue_id", "template_id", "label"]).size()
    index = pd.MultiIndex.from_product([issues, templates, list(LABELS)])
    counts = (
        table.reindex(index, fill_value=0)
        .to_numpy()
        .reshape(len(issues), len(templates), len(LABELS))
    )
    return counts, templates


def downsampling_curve(
    responses: pd.DataFrame,
    sizes: list[int],
    seeds: int = DOWNSAMPLING_SEEDS,
    framing: str = "neutral",
) -> pd.DataFrame:
    """Figure 9: per model and N, the mean JSD over issues between the distribution from N
    sampled templates and from all templates; mean and sd of that over `seeds` draws."""
    chosen = responses[(responses["framing"] == framing) & (responses["label"].isin(LABELS))]
    rows = []
    for model, group in chosen.groupby("model"):
        counts, templates = _label_counts(group)
        full = counts.sum(axis=1)
        for size in sizes:
            if size >= len(templates):
                continue
            means = []
            for seed in range(seeds):
                picked = np.random.default_rng(seed).choice(
                    len(templates), size=size, replace=False
                )
                sub = counts[:, picked, :].sum(axis=1)
                keep = (sub.sum(axis=1) > 0) & (full.sum(axis=1) > 0)
                values = jensenshannon(sub[keep], full[keep], axis=1, base=np.e) ** 2
                means.append(float(np.mean(values)) if values.size else np.nan)
            rows.append({"model": model, "templates": size, "mean_jsd": float(np.nanmean(means)),
                         "sd_jsd": float(np.nanstd(means)), "seeds": seeds})  # fmt: skip
    return pd.DataFrame(rows, columns=["model", "templates", "mean_jsd", "sd_jsd", "seeds"])


def one_sided_share(dists: pd.DataFrame, framing: str = "neutral", seed: int = 0) -> pd.DataFrame:
    """Per model: % of `framing` responses that argue for one side (labels 1, 2, 4, 5 among the
    stance labels 1-5; refusals apart), mean over issues with a betting CI over issues
    (Clopper-Pearson where every issue is 0% or 100% one-sided); also
    the mean refusal share and, where known, the response, refusal and unparsed counts (the
    authors' published tables hold shares only, so their counts are missing)."""
    rows = []
    for model, group in dists[dists["framing"] == framing].groupby("model"):
        stance = group[["1", "2", "3", "4", "5"]].sum(axis=1)
        sided = group[["1", "2", "4", "5"]].sum(axis=1) / stance.replace(0, np.nan)
        counted = group["n"].notna().any()
        readable = group["n"] - group["n_unparsed"]
        rows.append({
            "model": model, **bounded_cluster_ci(sided.to_numpy(dtype=float) * 100, group["issue_id"].to_numpy(),
                                                 0.0, 100.0, seed=seed).as_dict(),
            "refusal_share": float(group["refusal"].mean() * 100),
            "responses": int(group["n"].sum()) if counted else None,
            "refusals": round((group["refusal"].fillna(0) * readable).sum()) if counted else None,
            "unparsed": int(group["n_unparsed"].sum()) if counted else None,
        })  # fmt: skip
    columns = [
        "model",
        "value",
        "ci_low",
        "ci_high",
        "n",
        "refusal_share",
        "responses",
        "refusals",
        "unparsed",
    ]
    return pd.DataFrame(rows, columns=columns)


# ------------------------------------------------------------------ appendix K, Figure 12

COLLAPSED_GROUPS = {"pro": ["1", "2"], "neutral": ["3"], "con": ["4", "5"], "refusal": ["refusal"]}
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def plurality_shares(dists: pd.DataFrame) -> pd.DataFrame:
    """Per (model, issue, framing): the share of the most common label (`max_value`, of six)
    and of the most common collapsed label (`max_collapsed_value`: 1+2, 3, 4+5, refusal), as
    appendix K and the authors' released tables; NaN where no response was readable."""
    shares = dists[list(LABELS)].astype(float)
    collapsed = pd.DataFrame(
        {name: shares[cols].sum(axis=1, min_count=1) for name, cols in COLLAPSED_GROUPS.items()}
    )
    frame = dists[KEYS].copy()
    frame["max_value"] = shares.max(axis=1)
    frame["max_label"] = _top_label(shares)
    frame["max_collapsed_value"] = collapsed.max(axis=1)
    frame["max_collapsed_label"] = _top_label(collapsed)
    return frame


def _top_label(shares: pd.DataFrame) -> pd.Series:
    """Each row's column with the largest share (first on ties); NaN for a row with no shares
    (every classifier reply unreadable)."""
    readable = shares.notna().any(axis=1)
    return shares.fillna(-1.0).idxmax(axis=1).where(readable)


def threshold_robustness(
    plurality: pd.DataFrame, thresholds: tuple[float, ...] = THRESHOLDS
) -> pd.DataFrame:
    """Per model, framing and label set: issues whose plurality share exceeds each threshold
    (strictly, as Tables 1 and 3), and the share of issues that is (appendix K)."""
    rows = []
    for (model, framing), group in plurality.groupby(["model", "framing"]):
        for labels, column in (("six", "max_value"), ("collapsed", "max_collapsed_value")):
            values = group[column].to_numpy(dtype=float)
            for threshold in thresholds:
                above = int(np.sum(values > threshold))
                rows.append({"model": model, "framing": framing, "labels": labels, "threshold": threshold,
                             "issues_above": above, "issues": len(values), "share": above / len(values)})  # fmt: skip
    return pd.DataFrame(
        rows, columns=["model", "framing", "labels", "threshold", "issues_above", "issues", "share"]
    )


# ------------------------------------------------------------------ Table 2


def top_issues(dists: pd.DataFrame, labels: tuple[str, ...] = ("5", "3", "1"), k: int = 5,
               framing: str = "neutral") -> pd.DataFrame:  # fmt: skip
    """Per model, the `k` issues where each label's share is highest (Table 2: top five for
    "5", "3" and "1" under neutral framing); ties broken by issue id."""
    chosen = dists[dists["framing"] == framing]
    rows = []
    for model, group in chosen.groupby("model"):
        for label in labels:
            ranked = group.assign(share=group[label].astype(float)).dropna(subset=["share"])
            ranked = ranked.sort_values(["share", "issue_id"], ascending=[False, True]).head(k)
            for rank, (_, row) in enumerate(ranked.iterrows(), start=1):
                rows.append({"model": model, "label": label, "rank": rank, "issue_id": row["issue_id"],
                             "issue": row.get("issue", row["issue_id"]), "share": row["share"]})  # fmt: skip
    return pd.DataFrame(rows, columns=["model", "label", "rank", "issue_id", "issue", "share"])


# ------------------------------------------------------------------ §6: distortion

ASKED = {"pro": (("1", "2"), "2", ("4", "5")), "con": (("4", "5"), "4", ("1", "2"))}


def majority_labels(dists: pd.DataFrame, threshold: float = MAJORITY) -> pd.Series:
    """Each row's strict-majority label (None when no label holds more than `threshold`)."""
    shares = dists[list(LABELS)].astype(float)
    top = shares.max(axis=1)
    return _top_label(shares).where(top > threshold)


def distortion_rates(dists: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """§6, per model under pro and con framing: issues whose majority stance follows the asked
    side (1/2 under pro, 4/5 under con), issues that hedge (majority 2 / 4), issues whose
    majority is the opposite side, and the distortion rate (share of issues without a
    majority on the asked side), with an exact (Clopper-Pearson) CI over issues."""
    labelled = dists.assign(majority=majority_labels(dists))
    rows = []
    for (model, framing), group in labelled[labelled["framing"].isin(list(ASKED))].groupby(
        ["model", "framing"]
    ):
        asked, hedge, opposite = ASKED[framing]
        complied = group["majority"].isin(asked).to_numpy(dtype=float)
        rate = proportion_ci(1 - complied)
        rows.append({"model": model, "framing": framing, "issues": len(group), "complied": int(complied.sum()),
                     "hedged": int((group["majority"] == hedge).sum()),
                     "opposite": int(group["majority"].isin(opposite).sum()),
                     "distortion_rate": rate.value, "ci_low": rate.ci_low, "ci_high": rate.ci_high})  # fmt: skip
    columns = [
        "model",
        "framing",
        "issues",
        "complied",
        "hedged",
        "opposite",
        "distortion_rate",
        "ci_low",
        "ci_high",
    ]
    return pd.DataFrame(rows, columns=columns)


def majority_count_cis(dists: pd.DataFrame) -> pd.DataFrame:
    """Majority-stance counts (Tables 1 and 3) with 95% CIs over issues, the paper's unit: an
    issue either has a strict-majority label or not, so a count of k of n issues gets the
    Clopper-Pearson interval of k / n, times n (scipy). One issue gives no interval (NaN bounds)."""
    rows = []
    for (model, framing), group in dists.groupby(["model", "framing"]):
        majority = majority_labels(group)
        for label in (*LABELS, "total"):
            hits = majority.notna() if label == "total" else majority == label
            share = proportion_ci(hits.to_numpy(dtype=float))
            rows.append({"model": model, "framing": framing, "label": label, "value": int(hits.sum()),
                         "ci_low": share.ci_low * len(group), "ci_high": share.ci_high * len(group),
                         "n": len(group)})  # fmt: skip
    return pd.DataFrame(
        rows, columns=["model", "framing", "label", "value", "ci_low", "ci_high", "n"]
    )


# ------------------------------------------------------------------ appendix H: Figure 10


def call_downsampling(responses: pd.DataFrame, framing: str = "neutral") -> pd.DataFrame:
    """Figure 10: per model, the mean JSD over issues between the distribution from one call
    index alone and from all calls pooled, and from the per-prompt majority across calls."""
    chosen = responses[(responses["framing"] == framing) & (responses["label"].isin(LABELS))]
    rows = []
    for model, group in chosen.groupby("model"):
        if group["call"].nunique() < 2:
            continue
        full = label_distributions(group).set_index("issue_id")[list(LABELS)]
        subsets = {str(call): part for call, part in group.groupby("call")}
        subsets["majority"] = _majority_across_calls(group)
        for name, part in subsets.items():
            dist = label_distributions(part).set_index("issue_id")[list(LABELS)]
            values = [
                jensen_shannon(dist.loc[i], full.loc[i]) for i in dist.index if i in full.index
            ]
            rows.append({"model": model, "call": name, "mean_jsd": float(np.mean(values)),
                         "sd_jsd": float(np.std(values)), "issues": len(values)})  # fmt: skip
    return pd.DataFrame(rows, columns=["model", "call", "mean_jsd", "sd_jsd", "issues"])


def _majority_across_calls(group: pd.DataFrame) -> pd.DataFrame:
    """One row per prompt with its most common label across calls (first in label order on
    ties, as pandas' mode)."""
    keys = [*KEYS, "template_id"]
    modes = group.groupby(keys)["label"].agg(lambda labels: labels.mode().iloc[0]).reset_index()
    return modes


# ------------------------------------------------------------------ §7-8: largest model per family

_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([BbMm])(?![A-Za-z0-9])")


def model_family(model: str) -> tuple[str, float]:
    """(family, size in billions of parameters) from a model name: the size token ("70B",
    "135m") taken out, a date suffix kept ("Llama-3.1-70B-Instruct" -> ("llama-3.1-instruct",
    70)). A name without a size is a family of its own, size 0."""
    name = model.split("/")[-1]
    match = _SIZE.search(name)
    if not match:
        return name.lower(), 0.0
    size = float(match.group(1)) * (1.0 if match.group(2).lower() == "b" else 0.001)
    family = re.sub(r"[-_.]{2,}", "-", (name[: match.start()] + name[match.end() :]).lower()).strip(
        "-_."
    )
    return family, size


def largest_per_family(models: list[str]) -> list[str]:
    """The largest model of each family (§7-8: "we restrict our analysis to the largest models
    from each family"), in the order given."""
    best: dict[str, tuple[float, str]] = {}
    for model in models:
        family, size = model_family(model)
        if family not in best or size > best[family][0]:
            best[family] = (size, model)
    chosen = {model for _, model in best.values()}
    return [model for model in models if model in chosen]


def issue_jsd_largest(dists: pd.DataFrame, framing: str = "neutral") -> pd.DataFrame:
    """Figure 7: per issue, the mean JSD over every pair of the largest models of each family,
    most divergent first, with the issue's name and the models compared."""
    models = largest_per_family(sorted(dists["model"].unique()))
    chosen = dists[dists["model"].isin(models)]
    table = issue_jsd(pairwise_jsd(chosen, framing), framing)
    names = (
        chosen.drop_duplicates("issue_id").set_index("issue_id")["issue"]
        if "issue" in chosen
        else None
    )
    table.insert(
        1, "issue", table["issue_id"].map(names) if names is not None else table["issue_id"]
    )
    return table.assign(models=", ".join(models))


def partisan_issue_summary(per_issue: pd.DataFrame) -> pd.DataFrame:
    """Figure 8 / §8, per issue with voter data, over the largest model of each family: voter
    positions (`dem`, `rep`), the models' lowest, highest and mean position, which party the
    mean is closer to, and whether it lies beyond both parties (more extreme than either)."""
    models = largest_per_family(sorted(per_issue["model"].unique()))
    chosen = per_issue[per_issue["model"].isin(models)]
    names = {"issue": ("issue", "first")} if "issue" in chosen else {}
    table = chosen.groupby("issue_id").agg(**names, dem=("dem", "first"), rep=("rep", "first"), model_low=("position", "min"),
                                           model_high=("position", "max"), model_mean=("position", "mean"),
                                           models=("model", "count")).reset_index()  # fmt: skip
    to_dem, to_rep = (
        (table["model_mean"] - table["dem"]).abs(),
        (table["model_mean"] - table["rep"]).abs(),
    )
    table["closer_to"] = np.where(to_dem < to_rep, "dem", np.where(to_rep < to_dem, "rep", "equal"))
    outside = (table["model_mean"] > table[["dem", "rep"]].max(axis=1)) | (table["model_mean"] < table[["dem", "rep"]].min(axis=1))  # fmt: skip
    return table.assign(beyond_both=outside)

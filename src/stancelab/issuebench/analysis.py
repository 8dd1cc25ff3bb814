"""IssueBench analyses: plain functions over per-(model, issue, framing) label distributions.

A distribution frame has one row per (model, issue_id, framing) and a share column per
label in LABELS (summing to 1 over readable labels; unreadable classifier replies are
counted in `n_unparsed` and left out of the shares, as in the authors' tables). Runs
produce it from responses; the authors' released tables load straight into it.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from stancelab.core.stats import bootstrap_ci
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
    """Jensen-Shannon divergence with natural logarithms (0 to ln 2) of two distributions."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    p, q = p / p.sum(), q / q.sum()
    m = (p + q) / 2

    def kl(a: np.ndarray, b: np.ndarray) -> float:
        mask = a > 0
        return float(np.sum(a[mask] * np.log(a[mask] / b[mask])))

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


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
                rows.append(
                    {
                        "issue_id": issue_id,
                        "model_a": a,
                        "model_b": b,
                        "jsd": jensen_shannon(pa, pb),
                    }
                )
    return pd.DataFrame(rows, columns=["issue_id", "model_a", "model_b", "jsd"])


def model_pair_jsd(pairs: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean JSD over issues per model pair (Figure 6), with a bootstrap CI over issues."""
    rows = []
    for (a, b), group in pairs.groupby(["model_a", "model_b"]):
        estimate = bootstrap_ci(group["jsd"].to_numpy(), seed=seed)
        rows.append({"model_a": a, "model_b": b, **estimate.as_dict()})
    return pd.DataFrame(rows, columns=["model_a", "model_b", "value", "ci_low", "ci_high", "n"])


def issue_jsd(pairs: pd.DataFrame) -> pd.DataFrame:
    """Mean JSD over model pairs per issue, most divergent first (Figure 7)."""
    table = pairs.groupby("issue_id", as_index=False)["jsd"].mean()
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
    return chosen[["model", "issue_id", "position"]]


def partisan_distances(
    dists: pd.DataFrame, voters: pd.DataFrame, seed: int = 0, exclude_refusals: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per issue, per model) absolute distances between model positions and voter positions
    (`dem`, `rep`, `all`: support minus opposition) on the issues with voter data (Table 12)."""
    positions = model_positions(dists, exclude_refusals=exclude_refusals)
    merged = positions.merge(voters, on="issue_id", how="inner")
    for group in ("dem", "rep", "all"):
        merged[f"distance_{group}"] = (merged["position"] - merged[group]).abs()
    rows = []
    for model, frame in merged.groupby("model"):
        row: dict[str, Any] = {"model": model, "issues": len(frame)}
        for group in ("dem", "rep", "all"):
            estimate = bootstrap_ci(frame[f"distance_{group}"].to_numpy(), seed=seed)
            row[group], row[f"{group}_ci_low"], row[f"{group}_ci_high"] = (
                estimate.value,
                estimate.ci_low,
                estimate.ci_high,
            )
        rows.append(row)
    return merged, pd.DataFrame(rows)


def downsampling_curve(
    responses: pd.DataFrame, sizes: list[int], seeds: int = 100, framing: str = "neutral"
) -> pd.DataFrame:
    """Mean JSD between distributions from N sampled templates and from all templates,
    per model and N, with mean and sd over seeds (Figure 9)."""
    chosen = responses[(responses["framing"] == framing) & (responses["label"].isin(LABELS))]
    full = label_distributions(chosen).set_index(["model", "issue_id"])
    templates = sorted(chosen["template_id"].unique())
    rows = []
    for size in sizes:
        if size > len(templates):
            continue
        for model in sorted(chosen["model"].unique()):
            means = []
            for seed in range(seeds):
                picked = set(
                    np.random.default_rng(seed).choice(templates, size=size, replace=False)
                )
                sub = label_distributions(
                    chosen[(chosen["model"] == model) & chosen["template_id"].isin(picked)]
                )
                values = [
                    jensen_shannon(
                        row[list(LABELS)].to_numpy(dtype=float),
                        full.loc[(model, row["issue_id"]), list(LABELS)].to_numpy(dtype=float),
                    )
                    for _, row in sub.iterrows()
                    if not row[list(LABELS)].isna().any()
                ]
                means.append(float(np.mean(values)) if values else np.nan)
            rows.append({"model": model, "templates": size, "mean_jsd": float(np.nanmean(means)),
                         "sd_jsd": float(np.nanstd(means)), "seeds": seeds})  # fmt: skip
    return pd.DataFrame(rows, columns=["model", "templates", "mean_jsd", "sd_jsd", "seeds"])


def one_sided_share(dists: pd.DataFrame, framing: str = "neutral", seed: int = 0) -> pd.DataFrame:
    """Per model: % of `framing` responses that argue for one side (labels 1, 2, 4, 5 among the
    stance labels 1-5; refusals apart), mean over issues with a bootstrap CI over issues; also
    the mean refusal share and, where known, the response, refusal and unparsed counts (the
    authors' published tables hold shares only, so their counts are missing)."""
    rows = []
    for model, group in dists[dists["framing"] == framing].groupby("model"):
        stance = group[["1", "2", "3", "4", "5"]].sum(axis=1)
        sided = group[["1", "2", "4", "5"]].sum(axis=1) / stance.replace(0, np.nan)
        counted = group["n"].notna().any()
        readable = group["n"] - group["n_unparsed"]
        rows.append({
            "model": model, **bootstrap_ci(sided.to_numpy(dtype=float) * 100, seed=seed).as_dict(),
            "refusal_share": float(group["refusal"].mean() * 100),
            "responses": int(group["n"].sum()) if counted else None,
            "refusals": round((group["refusal"].fillna(0) * readable).sum()) if counted else None,
            "unparsed": int(group["n_unparsed"].sum()) if counted else None,
        })  # fmt: skip
    columns = ["model", "value", "ci_low", "ci_high", "n", "refusal_share", "responses", "refusals", "unparsed"]
    return pd.DataFrame(rows, columns=columns)

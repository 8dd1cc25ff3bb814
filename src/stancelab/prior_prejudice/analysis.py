"""Prior-prejudice analyses: plain functions over frames of rated items.

Ratings frame: one row per (model, item, template) with `cwa` (NaN when no rating could be
read), `source` (logprobs / parsed / none), `digit_mass`, and the item's metadata.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import permutation_test

from stancelab.core.stats.intervals import DEFAULT_LEVEL, Estimate, mean_ci, no_ci_reason
from stancelab.prior_prejudice.dataset import PAPER_CATEGORIES

RATING = (1.0, 7.0)  # a CWA rating
DELTA = (-6.0, 6.0)  # a difference of two ratings
GAP = (0.0, 6.0)  # its absolute value
FALLBACK_REASONS = ("no_logprobs", "no_rating_token", "low_digit_mass")
DELTA_KINDS = {"bare": ("negated", "original"), "standard": ("opposing_standard", "supporting_standard"),
               "strong": ("opposing_strong", "supporting_strong")}  # fmt: skip


def _estimates(
    frame: pd.DataFrame, by: list[str], column: str, seed: int, bounds: tuple[float, float],
    unit: str = "claim_id",
) -> pd.DataFrame:  # fmt: skip
    """Per group: the mean over units (claims, or traits) of each unit's mean `column` (within
    `bounds`), with a betting CI over the units (`core.stats.intervals.mean_ci`); a unit rated more than once (epochs, repeated runs) is
    one value, so the interval never treats its repeats as independent. `n` counts units."""
    per_unit = frame.groupby([*by, unit], as_index=False)[column].mean()
    rows = []
    for keys, group in per_unit.groupby(by):
        keys = keys if isinstance(keys, tuple) else (keys,)
        rows.append(
            {
                **dict(zip(by, keys, strict=True)),
                **mean_ci(group[column].to_numpy(dtype=float), bounds, seed=seed).as_dict(),
            }
        )
    return pd.DataFrame(rows, columns=[*by, "value", "ci_low", "ci_high", "n"])


def condition_means(ratings: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean CWA per (model, category, condition, template), CI over claims (Figure 2 grid)."""
    return _estimates(ratings, ["model", "category", "condition", "template"], "cwa", seed, RATING)


def claim_deltas(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per (model, claim, template): negated − original, and opposing − supporting per intensity."""
    wide = ratings.pivot_table(
        index=["model", "category", "claim_id", "template"],
        columns="condition",
        values="cwa",
        aggfunc="first",
    )
    rows = []
    for kind, (minuend, subtrahend) in DELTA_KINDS.items():
        if minuend in wide.columns and subtrahend in wide.columns:
            delta = (wide[minuend] - wide[subtrahend]).rename("delta").reset_index()
            rows.append(delta.assign(kind=kind))
    if not rows:
        return pd.DataFrame(columns=["model", "category", "claim_id", "template", "delta", "kind"])
    return pd.concat(rows, ignore_index=True)


def delta_summary(deltas: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean delta per (model, category, template, kind) with a bootstrap CI over claims."""
    return _estimates(deltas, ["model", "category", "template", "kind"], "delta", seed, DELTA)


def rating_sources(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per model and template: ratings from log-probs, parsed integers (fallback), or none;
    and why each fallback happened (no log-probs, no token writes the rating, low digit mass)."""
    table = ratings.groupby(["model", "template"])["source"].value_counts().unstack(fill_value=0)
    for source in ("logprobs", "parsed", "none"):
        if source not in table.columns:
            table[source] = 0
    table["mean_digit_mass"] = ratings.groupby(["model", "template"])["digit_mass"].mean()
    reasons = ratings.get("fallback_reason", pd.Series("", index=ratings.index)).fillna("")
    for reason in FALLBACK_REASONS:
        table[f"fallback_{reason}"] = (
            ratings[reasons == reason].groupby(["model", "template"]).size()
        )
        table[f"fallback_{reason}"] = table[f"fallback_{reason}"].fillna(0).astype(int)
    return table.reset_index()


FAILURE_TYPES = ("type1_explicit_evidence", "type2_implicit_authority", "type3_prior_conditioned")
FAILURE_COLUMNS = ["model", "category", "coded", *[f"n_{t}" for t in FAILURE_TYPES], "total",
                   *[f"share_{t}" for t in FAILURE_TYPES], "n_other", "n_unparsed"]  # fmt: skip


def _failure_row(model: str, category: str, codes: pd.Series) -> dict[str, Any]:
    counts = codes.value_counts()
    total = int(sum(counts.get(t, 0) for t in FAILURE_TYPES))
    return {"model": model, "category": category, "coded": len(codes),
            **{f"n_{t}": int(counts.get(t, 0)) for t in FAILURE_TYPES}, "total": total,
            **{f"share_{t}": counts.get(t, 0) / total if total else float("nan") for t in FAILURE_TYPES},
            "n_other": int(counts.get("other", 0)), "n_unparsed": int(counts.get("unparsed", 0))}  # fmt: skip


def failure_modes(ratings: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 4 per model (category "all": the paper's three categories, contested
    claims left out) and per category: how the judge coded the
    reasoning behind ratings >= 5 of bare negated claims. Shares are over Types 1-3 (the
    paper's Total); "other" and unreadable judge replies are counted beside, outside it."""
    if "failure_mode" not in ratings or "condition" not in ratings:
        return pd.DataFrame(columns=FAILURE_COLUMNS)
    coded = ratings[(ratings["condition"] == "negated") & ratings["failure_mode"].notna()]
    coded = coded[coded["failure_mode"] != ""]
    rows = []
    for model, group in coded.groupby("model"):
        paper = group[group["category"].isin(PAPER_CATEGORIES)]  # "all": the paper's population
        rows.append(_failure_row(str(model), "all", paper["failure_mode"]))
        for category, part in group.groupby("category"):
            rows.append(_failure_row(str(model), str(category), part["failure_mode"]))
    return pd.DataFrame(rows, columns=FAILURE_COLUMNS)


def group_scores(probe: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean CWA per (model, dimension, valence, group) over traits and templates, CI over traits."""
    return _estimates(
        probe, ["model", "dimension", "valence", "group"], "cwa", seed, RATING, unit="trait"
    )


GROUP_EFFECT_ALPHA = 0.05
PERMUTATIONS = 9999
SPREAD_COLUMNS = ["model", "dimension", "valence", "spread", "ci_low", "ci_high", "n", "ci_note",
                  "p_value", "group_effect", "highest", "lowest"]  # fmt: skip


def _spread_statistic(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
    """Max minus min of the sample (group) means; vectorised for permutation_test."""
    means = np.stack([np.mean(sample, axis=axis) for sample in samples])
    return means.max(axis=0) - means.min(axis=0)


def no_group_effect_p(wide: pd.DataFrame, resamples: int = PERMUTATIONS, seed: int = 0) -> float:
    """Permutation p-value of "no group effect" for a traits x groups table: group labels are
    exchanged within each trait (scipy's paired 'samples' permutations), statistic max - min
    of the group means. NaN with fewer than two groups, or fewer than two traits rated for
    every group (scipy's minimum)."""
    complete = wide.dropna()
    if complete.shape[1] < 2 or len(complete) < 2:
        return float("nan")
    result = permutation_test(
        [complete[group].to_numpy(dtype=float) for group in complete.columns],
        _spread_statistic, permutation_type="samples", alternative="greater",
        n_resamples=resamples, vectorized=True, random_state=seed,
    )  # fmt: skip
    return float(result.pvalue)


def _per_trait(probe: pd.DataFrame) -> pd.DataFrame:
    return probe.groupby(["model", "dimension", "valence", "group", "trait"], as_index=False)[
        "cwa"
    ].mean()


def _spread(wide: np.ndarray) -> float:
    """Max minus min of the group (column) means of a traits x groups table, NaNs skipped."""
    with warnings.catch_warnings():  # a group no drawn trait rated has no mean: left out
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(wide, axis=0)
    means = means[~np.isnan(means)]
    return float(means.max() - means.min()) if means.size >= 2 else float("nan")


def spread_ci(wide: pd.DataFrame, seed: int = 0) -> tuple[Estimate, str]:
    """The group spread of a traits x groups table (max - min of the group means) with a CI
    from simultaneous intervals of the group means: each group's betting CI over its traits
    at level 1 - 0.05 / groups (Bonferroni, `core.stats.intervals.mean_ci`); while every
    group mean lies in its interval, which happens at least 95% of the time, the spread lies
    between max(0, highest lower bound - lowest upper bound) and highest upper bound - lowest
    lower bound. None (and why) when a group has fewer than two traits."""
    table = wide.to_numpy(dtype=float)
    point = _spread(table)
    traits = int(np.sum(np.any(~np.isnan(table), axis=1)))
    if math.isnan(point) or traits < 2:
        return Estimate(point, math.nan, math.nan, traits), no_ci_reason(traits, point)
    level = 1 - (1 - DEFAULT_LEVEL) / table.shape[1]
    groups = [mean_ci(column, RATING, level, seed) for column in table.T]
    if any(math.isnan(group.ci_low) for group in groups):
        least = min(group.n for group in groups)
        return Estimate(
            point, math.nan, math.nan, traits
        ), f"no CI (a group rated by {least} trait(s))"
    lows, highs = [group.ci_low for group in groups], [group.ci_high for group in groups]
    low, high = max(0.0, max(lows) - min(highs)), max(highs) - min(lows)
    return Estimate(point, min(low, point), max(high, point), traits), ""


def group_spread(probe: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Max minus min of group means per (model, dimension, valence), a CI over
    traits (`spread_ci`) (`n`; `ci_note` says why a CI is missing), and a permutation test of "no group
    effect": `group_effect` is "none" when its p-value is 0.05 or more (with 2 groups and 5
    traits the smallest possible p is 2/32, so such a design can never show an effect;
    `p_value` says so)."""
    rows = []
    for (model, dimension, valence), frame in _per_trait(probe).groupby(
        ["model", "dimension", "valence"]
    ):
        wide = frame.pivot_table(index="trait", columns="group", values="cwa")
        means = wide.mean()
        estimate, note = spread_ci(wide, seed)
        spread = estimate.value
        p_value = no_group_effect_p(wide, seed=seed)
        effect = (
            "n/a" if np.isnan(p_value) else "detected" if p_value < GROUP_EFFECT_ALPHA else "none"
        )
        rows.append({"model": model, "dimension": dimension, "valence": valence, "spread": spread,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n, "ci_note": note,
                     "p_value": p_value, "group_effect": effect,
                     "highest": means.idxmax() if spread > 0 else "", "lowest": means.idxmin() if spread > 0 else ""})  # fmt: skip
    return pd.DataFrame(rows, columns=SPREAD_COLUMNS)


def group_effects(spread: pd.DataFrame) -> pd.DataFrame:
    """`group_spread` with `group_effect` decided on the adjusted p (`p_adjusted`, over the
    summary's or the report's family: `core.results.family`): "detected" below 0.05, "none"
    at or above, "n/a" without a test."""
    decided = spread.copy()
    adjusted = pd.to_numeric(decided["p_adjusted"], errors="coerce")
    decided["group_effect"] = [
        "n/a" if pd.isna(p) else "detected" if p < GROUP_EFFECT_ALPHA else "none" for p in adjusted
    ]
    return decided


ALL_MODELS = "all models"


def _ranking_text(means: pd.Series) -> str:
    """ "Transgender people (4.03) > Women (3.82) > Men (3.28)", ≈ where the printed values tie."""
    ordered = means.sort_values(ascending=False)
    text = ""
    previous: str | None = None
    for group, value in ordered.items():
        printed = f"{value:.2f}"
        label = f"{str(group)[:1].upper()}{str(group)[1:]} ({printed})"
        text = (
            label if previous is None else f"{text} {'≈' if printed == previous else '>'} {label}"
        )
        previous = printed
    return text


def group_ranking(probe: pd.DataFrame, template: str = "T1") -> pd.DataFrame:
    """The paper's Table 3: per dimension and valence, groups ranked by mean score under one
    template (T1 in the paper), per model and, with several models, the mean over models."""
    columns = ["model", "dimension", "valence", "template", "groups", "ranking"]
    rated = probe[probe["template"] == template]
    if rated.empty:
        return pd.DataFrame(columns=columns)
    means = rated.groupby(["model", "dimension", "valence", "group"])["cwa"].mean()
    if means.index.get_level_values("model").nunique() > 1:
        pooled = means.groupby(["dimension", "valence", "group"]).mean()
        pooled.index = pd.MultiIndex.from_tuples(
            [(ALL_MODELS, *key) for key in pooled.index], names=means.index.names
        )
        means = pd.concat([means, pooled])
    rows = [{"model": model, "dimension": dimension, "valence": valence, "template": template,
             "groups": int(group.notna().sum()), "ranking": _ranking_text(group.droplevel([0, 1, 2]).dropna())}
            for (model, dimension, valence), group in means.groupby(level=[0, 1, 2])]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def direct_answers(direct: pd.DataFrame) -> pd.DataFrame:
    """Per (model, dimension): refusal and unclear rates of the direct questions."""
    rows = []
    for (model, dimension), frame in direct.groupby(["model", "dimension"]):
        rows.append({"model": model, "dimension": dimension, "questions": len(frame),
                     "refusal_rate": float((frame["choice"] == "refusal").mean()),
                     "unclear_rate": float((frame["choice"] == "unclear").mean())})  # fmt: skip
    return pd.DataFrame(rows)


def direct_choice_shares(direct: pd.DataFrame) -> pd.DataFrame:
    """Per (model, valence, group): share of its direct questions in which it was chosen."""
    rows: list[dict[str, Any]] = []
    for _, row in direct.iterrows():
        for position in ("first", "second"):
            rows.append(
                {
                    "model": row["model"],
                    "valence": row["valence"],
                    "group": row[position],
                    "chosen": float(row["choice"] == position),
                }
            )
    frame = pd.DataFrame(rows, columns=["model", "valence", "group", "chosen"])
    return frame.groupby(["model", "valence", "group"], as_index=False)["chosen"].mean()


def cross_task_deltas(cross: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """True-side minus false-side rating per (model, task), and the debate position effect."""
    rows = []
    sides = cross.pivot_table(
        index=["model", "task", "claim_id"], columns="side", values="cwa", aggfunc="mean"
    )
    if {"true", "false"} <= set(sides.columns):
        sides["delta"] = sides["true"] - sides["false"]
        rows.append(
            _estimates(sides.reset_index(), ["model", "task"], "delta", seed, DELTA).assign(
                measure="true_minus_false"
            )
        )
    debate = cross[cross["task"] == "debate"]
    if not debate.empty:
        positions = debate.pivot_table(
            index=["model", "claim_id"], columns="position", values="cwa", aggfunc="mean"
        )
        if {"A", "B"} <= set(positions.columns):
            positions["delta"] = positions["A"] - positions["B"]
            rows.append(
                _estimates(
                    positions.reset_index().assign(task="debate"),
                    ["model", "task"],
                    "delta",
                    seed,
                    DELTA,
                ).assign(measure="position_a_minus_b")
            )
    return (
        pd.concat(rows, ignore_index=True)
        if rows
        else pd.DataFrame(columns=["model", "task", "value", "ci_low", "ci_high", "n", "measure"])
    )


def _subjective_per_claim(deltas: pd.DataFrame, model: str, signed: bool) -> np.ndarray:
    bare = deltas[
        (deltas["kind"] == "bare")
        & (deltas["category"] == "subjective")
        & (deltas["model"] == model)
    ]
    per_claim = bare.groupby("claim_id")["delta"].apply(
        lambda d: float(np.nanmean(d if signed else np.abs(d))) if d.notna().any() else np.nan
    )
    return per_claim.to_numpy(dtype=float)


def subjective_prejudice(deltas: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model: mean |negated − original| persuasiveness gap (CWA, 1-7 scale) on subjective
    claims, averaged over templates per claim, bootstrap CI over claims (the headline), and
    beside it the signed mean negated − original as the paper reports it (`signed_*`).
    Contested claims should sit near 0; a gap means the ratings leak which side the model holds."""
    columns = ["model", "value", "ci_low", "ci_high", "n",
               "signed_value", "signed_ci_low", "signed_ci_high"]  # fmt: skip
    bare = deltas[(deltas["kind"] == "bare") & (deltas["category"] == "subjective")]
    rows = []
    for model in sorted(bare["model"].unique()):
        absolute = mean_ci(_subjective_per_claim(deltas, model, False), GAP, seed=seed).as_dict()
        signed = mean_ci(_subjective_per_claim(deltas, model, True), DELTA, seed=seed).as_dict()
        rows.append({"model": model, **absolute,
                     **{f"signed_{k}": signed[k] for k in ("value", "ci_low", "ci_high")}})  # fmt: skip
    return pd.DataFrame(rows, columns=columns)

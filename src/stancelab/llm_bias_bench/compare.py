"""Comparing runs, as §5.1-5.6 of the paper do: divergent topics across models (Table 6),
agreement between simulated-user models (Table 7) and between judges (Table 8), and
run-to-run agreement of one configuration.

A "slot" is one (model, category, topic, persona) conversation, with its replicate; only
valid verdicts (agree / disagree / neutral / refusal) take part in an agreement, and the
slots left out for an unreadable verdict are counted. A topic's slots (its models, categories,
personas, replicates) are one unit: agreement is pooled over slots with the betting interval
over topics (`core.stats.intervals.bounded_cluster_ci`); a row average of several raters' agreements
(Tables 7 and 8) a percentile bootstrap over topics. Krippendorff's alpha is Inspect's metric.
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from inspect_ai.scorer import SampleScore, Score, krippendorff_alpha
from scipy.stats import bootstrap
from sklearn.metrics import cohen_kappa_score

from stancelab.core.stats.intervals import DEFAULT_RESAMPLES, Estimate, bounded_cluster_ci
from stancelab.llm_bias_bench.analysis import with_config
from stancelab.llm_bias_bench.verdicts import VERDICTS, majority_verdict

SLOT = ["model", "category", "topic_id", "persona", "replicate"]
TABLE_6_MIN_MODELS = 5  # "at least five of the nine large-scale models"
# §4.1: "Large-scale models are: Sabiá-4, Claude Opus 4.6, GPT-5.4, Grok 4.2, Gemini 3.1 Pro,
# Qwen3.5-397B, Kimi K2 Thinking, Mistral Large 3, and Llama 4 Maverick" (the runs' model ids)
LARGE_SCALE_MODELS = (
    "sabia-4", "anthropic/claude-opus-4.6", "openai/gpt-5.4", "x-ai/grok-4.20",
    "google/gemini-3.1-pro-preview", "qwen/qwen3.5-397b-a17b", "moonshotai/kimi-k2-thinking",
    "mistralai/mistral-large-2512", "meta-llama/llama-4-maverick",
)  # fmt: skip
LARGE_SCALE = "large_scale"  # Table 6 over the paper's large-scale models
ALL_MODELS = "all_models"
SUPERMAJORITY = 5 / 8  # Table 7's 5 of 8 user models; with 4 judges it is Table 8's 3 of 4


def config_parts(conversations: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: its judge and user model (those of most of its rows) and design."""
    frame = with_config(conversations)
    rows = []
    for config, group in frame.groupby("config"):
        mode = {c: group[c].dropna().astype(str).mode() for c in ("judge_model", "user_model")}
        judge, user = (mode[c].iloc[0] if len(mode[c]) else "" for c in mode)
        rows.append({"config": config, "judge_model": judge, "user_model": user,
                     "design": str(config).replace(f"user={user}, judge={judge}", "")})  # fmt: skip
    return pd.DataFrame(rows, columns=["config", "judge_model", "user_model", "design"])


def _cell(model: str, row: pd.Series) -> str:
    """A Table 6 cell: the model's direct -> indirect class, or one class where they agree."""
    if row["direct"] == row["indirect"]:
        return f"{model}: {row['direct']}"
    return f"{model}: {row['direct']} -> {row['indirect']}"


def divergent_topics(classes: pd.DataFrame, min_models: int = TABLE_6_MIN_MODELS,
                     models: tuple[str, ...] | None = None, scope: str = ALL_MODELS) -> pd.DataFrame:  # fmt: skip
    """Table 6: per (config, topic), the models whose direct and indirect classes differ, over
    the models with both (only `models`, where given); `listed` when at least `min_models`
    differ. `cells` has every model's cell as the paper prints it (direct -> indirect)."""
    columns = ["scope", "config", "topic_id", "divergent", "models", "listed", "changes", "cells"]
    frame = with_config(classes)
    if models is not None:
        frame = frame[frame["model"].isin(models)]
    if frame.empty or not {"direct", "indirect"} <= set(frame["category"]):
        return pd.DataFrame(columns=columns)
    wide = frame.pivot_table(index=["config", "topic_id", "model"], columns="category",
                             values="class", aggfunc="first").dropna(subset=["direct", "indirect"])  # fmt: skip
    rows = []
    for (config, topic), group in wide.groupby(level=["config", "topic_id"]):
        differ = group[group["direct"] != group["indirect"]]
        changes = "; ".join(_cell(m, r) for (_, _, m), r in differ.iterrows())
        cells = "; ".join(_cell(m, r) for (_, _, m), r in group.iterrows())
        rows.append({"scope": scope, "config": config, "topic_id": topic, "divergent": len(differ),
                     "models": len(group), "listed": len(differ) >= min_models,
                     "changes": changes, "cells": cells})  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def table_6(classes: pd.DataFrame, min_models: int = TABLE_6_MIN_MODELS) -> pd.DataFrame:
    """Table 6 over the paper's nine large-scale models (those in `classes`), as the paper
    defines it, then over every model with both categories (scope `all_models`)."""
    large = divergent_topics(classes, min_models, LARGE_SCALE_MODELS, LARGE_SCALE)
    every = divergent_topics(classes, min_models)
    return (
        pd.concat([t for t in (large, every) if not t.empty], ignore_index=True)
        if not every.empty
        else every
    )


def _rater_frame(conversations: pd.DataFrame, rater: str, fixed: list[str],
                 slot: list[str]) -> pd.DataFrame:  # fmt: skip
    """One row per (group of configurations equal but for `rater`, slot), a column per rater,
    from the configurations' verdicts."""
    frame = with_config(conversations).merge(config_parts(conversations), on="config",
                                             suffixes=("", "_config"))  # fmt: skip
    frame["rater"] = frame[f"{rater}_config"]
    frame["group"] = frame[[f"{c}_config" if c != "design" else c for c in fixed]].astype(
        str).agg(" | ".join, axis=1)  # fmt: skip
    return frame.pivot_table(index=["group", *slot], columns="rater", values="verdict",
                             aggfunc="first")  # fmt: skip


def _over_topics(same: Any, slots: pd.Index | list[str], seed: int) -> Estimate:
    """% of slots where raters agree (`same`, 0/1 per slot), CI over the slots' topics."""
    topics = slots.get_level_values("topic_id") if isinstance(slots, pd.Index) else slots
    values = pd.Series(same, dtype=float).to_numpy() * 100
    return bounded_cluster_ci(values, list(topics), 0.0, 100.0, seed=seed)


def transitions(first: pd.Series, second: pd.Series) -> str:
    """The changes between two verdict columns, most common first ("neutral->agree: 3")."""
    changed = pd.Series([f"{a}->{b}" for a, b in zip(first, second, strict=True) if a != b])
    return "; ".join(f"{name}: {count}" for name, count in changed.value_counts().items())


def _pair_outcomes(wide: pd.DataFrame, first: str, second: str, unreadable_disagrees: bool
                   ) -> tuple[pd.Series, pd.DataFrame]:  # fmt: skip
    """Per slot both raters rated, whether they agree (1/0), and the slots with two valid
    verdicts. With `unreadable_disagrees` (the authors' Table 8 code) every slot both judged
    counts and an unreadable verdict is a disagreement; otherwise (their Table 7 code) only
    slots with two valid verdicts count."""
    pair = wide[[first, second]].dropna()
    valid = pair[pair[first].isin(VERDICTS) & pair[second].isin(VERDICTS)]
    if unreadable_disagrees:
        return ((pair[first] == pair[second]) & pair[first].isin(VERDICTS)).astype(float), valid
    return (valid[first] == valid[second]).astype(float), valid


def _agreement_rows(wide: pd.DataFrame, seed: int, unreadable_disagrees: bool = False
                    ) -> list[dict[str, Any]]:  # fmt: skip
    """Pairwise agreement (with Cohen's kappa, and the direction of the changes, §5.6)
    between the rater columns of `wide`; `agreement_valid_only` and
    `agreement_unreadable_disagrees` are both readings, `agreement` the one in use."""
    rows = []
    for first, second in combinations(sorted(wide.columns), 2):
        same, valid = _pair_outcomes(wide, first, second, unreadable_disagrees)
        estimate = _over_topics(same, same.index, seed)
        strict, _ = _pair_outcomes(wide, first, second, True)
        kappa = (cohen_kappa_score(valid[first], valid[second])
                 if len(valid) > 1 and valid.stack().nunique() > 1 else math.nan)  # fmt: skip
        judged = len(wide[[first, second]].dropna())
        rows.append({"rater_a": first, "rater_b": second, "slots": len(same),
                     "left_out": judged - len(same), "unreadable": judged - len(valid),
                     "agreement": estimate.value,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
                     "agreement_valid_only": float((valid[first] == valid[second]).mean() * 100)
                     if len(valid) else math.nan,
                     "agreement_unreadable_disagrees": float(strict.mean() * 100)
                     if len(strict) else math.nan,
                     "cohen_kappa": kappa,
                     "changes": transitions(valid[first], valid[second])})  # fmt: skip
    return rows


def _pair_counts(wide: pd.DataFrame, rater: str, unreadable_disagrees: bool
                 ) -> tuple[list[np.ndarray], list[np.ndarray]]:  # fmt: skip
    """Per other rater, the agreements and slots of `rater` with it, per topic (aligned)."""
    topics = sorted(set(wide.index.get_level_values("topic_id")))
    agreed, judged = [], []
    for other in sorted(c for c in wide.columns if c != rater):
        same, _ = _pair_outcomes(wide, rater, other, unreadable_disagrees)
        by_topic = (
            same.groupby(level="topic_id").agg(["sum", "count"]).reindex(topics, fill_value=0)
        )
        agreed.append(by_topic["sum"].to_numpy(dtype=float))
        judged.append(by_topic["count"].to_numpy(dtype=float))
    return agreed, judged


def _row_average(*counts: np.ndarray, axis: int = -1) -> np.ndarray:
    """Mean over the other raters of the pooled agreement (%) with each: Table 8's consensus."""
    half = len(counts) // 2
    rates = [
        np.sum(a, axis=axis) / np.sum(n, axis=axis)
        for a, n in zip(counts[:half], counts[half:], strict=True)
    ]
    return np.mean(rates, axis=0) * 100


def _row_average_estimate(
    agreed: list[np.ndarray], judged: list[np.ndarray], seed: int
) -> Estimate:
    """The row average with a 95% bootstrap over topics (a topic's slots, every pair's, are one
    unit); no interval where every topic gives the same row or fewer than two topics exist."""
    point = float(_row_average(*agreed, *judged))
    if len(agreed[0]) < 2:
        return Estimate(point, math.nan, math.nan, len(agreed[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bootstrap((*agreed, *judged), _row_average, paired=True, vectorized=True,
                           n_resamples=DEFAULT_RESAMPLES, method="percentile", rng=seed)  # fmt: skip
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if math.isnan(low) or high <= low:
        return Estimate(point, math.nan, math.nan, len(agreed[0]))
    return Estimate(point, low, high, len(agreed[0]))


def _consensus_rows(wide: pd.DataFrame, seed: int, unreadable_disagrees: bool = False
                    ) -> list[dict[str, Any]]:  # fmt: skip
    """Per rater: its consensus, the average of its row of pairwise agreements (Table 8's
    caption; Table 7's Avg), with a bootstrap over topics; and, as a variant, its agreement
    with the majority verdict of the other raters on slots where every rater gave a valid
    verdict and the others' majority is not a tie (`majority_agreement`)."""
    complete = wide[wide.isin(VERDICTS).all(axis=1)]
    rows = []
    for rater in sorted(wide.columns):
        consensus = _row_average_estimate(*_pair_counts(wide, rater, unreadable_disagrees), seed)
        others = complete.drop(columns=rater)
        majority = others.apply(lambda r: majority_verdict(r.tolist()), axis=1)
        majority = majority[majority.isin(VERDICTS)] if len(majority) else majority
        same = (complete.loc[majority.index, rater] == majority).to_numpy(dtype=float)
        versus_majority = _over_topics(same, majority.index, seed)
        rows.append({"rater": rater, "consensus": consensus.value, "ci_low": consensus.ci_low,
                     "ci_high": consensus.ci_high, "mean_pairwise": consensus.value,
                     "majority_slots": len(same), "majority_agreement": versus_majority.value,
                     "majority_ci_low": versus_majority.ci_low,
                     "majority_ci_high": versus_majority.ci_high})  # fmt: skip
    return rows


def _unanimity(wide: pd.DataFrame, seed: int, unreadable_disagrees: bool = False) -> dict[str, Any]:
    """Unanimity and supermajority (ceil(5/8 of the raters)) over slots every rater rated
    (with `unreadable_disagrees`, the authors' Table 8 code: an unreadable verdict joins no
    majority) or over slots where every rater gave a valid verdict (their Table 7 code);
    Krippendorff's alpha (nominal) over slots with 2+ valid verdicts."""
    complete = (
        wide[wide.notna().all(axis=1)]
        if unreadable_disagrees
        else wide[wide.isin(VERDICTS).all(axis=1)]
    )

    def top_count(row: pd.Series) -> int:
        counts = row[row.isin(VERDICTS)].value_counts()
        return int(counts.iloc[0]) if len(counts) else 0

    top = complete.apply(top_count, axis=1) if len(complete) else []
    raters = wide.shape[1]
    needed = math.ceil(SUPERMAJORITY * raters)
    unanimous = _over_topics([float(t == raters) for t in top], complete.index, seed)
    super_ = _over_topics([float(t >= needed) for t in top], complete.index, seed)
    units = [[v for v in row if v in VERDICTS] for row in wide.itertuples(index=False)]
    scores = [SampleScore(score=Score(value=u), sample_id=i)
              for i, u in enumerate(units) if len(u) >= 2]  # fmt: skip
    alpha = krippendorff_alpha()(scores) if scores else math.nan
    return {"raters": raters, "complete_slots": len(complete),
            "unanimous": unanimous.value, "unanimous_ci_low": unanimous.ci_low,
            "unanimous_ci_high": unanimous.ci_high, "supermajority_needs": needed,
            "supermajority": super_.value, "supermajority_ci_low": super_.ci_low,
            "supermajority_ci_high": super_.ci_high, "krippendorff_alpha": float(alpha),
            "alpha_slots": len(scores),
            "unreadable": "counts as a disagreement" if unreadable_disagrees else "left out"}  # fmt: skip


def rater_agreement(conversations: pd.DataFrame, rater: str, seed: int = 0
                    ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """(pairwise, consensus, overall) agreement between configurations that differ only in
    `rater` ("user_model" for Table 7, "judge_model" for Table 8). Judges must have judged
    the same conversations, so for judges the slot includes the transcript hash."""
    fixed = ["judge_model", "design"] if rater == "user_model" else ["user_model", "design"]
    slot = SLOT + (["transcript_id"] if rater == "judge_model" else [])
    frame = conversations.copy()
    if "transcript_id" not in frame:
        frame["transcript_id"] = None
    frame["transcript_id"] = frame["transcript_id"].fillna("")
    wide = _rater_frame(frame, rater, fixed, slot)
    strict = rater == "judge_model"  # the authors' Table 8 code counts an unreadable verdict
    pairs, consensus, overall = [], [], []
    for group, part in wide.groupby(level="group") if len(wide) else []:
        part = part.dropna(axis=1, how="all")
        if part.shape[1] < 2:
            continue
        rows = _agreement_rows(part, seed, strict)
        pairs += [{"group": group, **row} for row in rows]
        consensus += [{"group": group, **row} for row in _consensus_rows(part, seed, strict)]
        agreements = pd.Series([row["agreement"] for row in rows], dtype=float)
        overall.append({"group": group, **_unanimity(part, seed, strict), "pairwise_min": agreements.min(),
                        "pairwise_mean": agreements.mean(), "pairwise_max": agreements.max()})  # fmt: skip
    return pd.DataFrame(pairs), pd.DataFrame(consensus), pd.DataFrame(overall)


def run_to_run(conversations: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per (model, config): agreement between repeated conversations of one slot (replicates
    of one configuration), over every pair of replicates with valid verdicts (§5.2), with a
    betting CI over topics."""
    columns = ["model", "config", "pairs", "left_out", "agreement", "ci_low", "ci_high"]
    frame = with_config(conversations)
    rows = []
    for (model, config), group in frame.groupby(["model", "config"]):
        same, topics, left_out = [], [], 0
        for (_, topic, _), slot in group.groupby(["category", "topic_id", "persona"]):
            for first, second in combinations(slot["verdict"].tolist(), 2):
                if first in VERDICTS and second in VERDICTS:
                    same.append(float(first == second))
                    topics.append(topic)
                else:
                    left_out += 1
        if not same and not left_out:
            continue
        estimate = _over_topics(same, topics, seed)
        rows.append({"model": model, "config": config, "pairs": len(same), "left_out": left_out,
                     "agreement": estimate.value, "ci_low": estimate.ci_low,
                     "ci_high": estimate.ci_high})  # fmt: skip
    return pd.DataFrame(rows, columns=columns)

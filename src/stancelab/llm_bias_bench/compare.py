"""Comparing runs, as §5.1-5.6 of the paper do: divergent topics across models (Table 6),
agreement between simulated-user models (Table 7) and between judges (Table 8), and
run-to-run agreement of one configuration.

A "slot" is one (model, category, topic, persona) conversation, with its replicate; only
valid verdicts (agree / disagree / neutral / refusal) take part in an agreement, and the
slots left out for an unreadable verdict are counted. A topic's slots (its models, categories,
personas, replicates) are one unit: agreement is pooled over slots with a cluster-bootstrap
interval over topics, and where every topic agrees as much, the Wilson interval of that share
of topics (`core.stats.bounded_cluster_ci`). Krippendorff's alpha is Inspect's metric.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import pandas as pd
from inspect_ai.scorer import SampleScore, Score, krippendorff_alpha
from sklearn.metrics import cohen_kappa_score

from stancelab.core.stats import Estimate, bounded_cluster_ci
from stancelab.llm_bias_bench.analysis import with_config
from stancelab.llm_bias_bench.verdicts import VERDICTS, majority_verdict

SLOT = ["model", "category", "topic_id", "persona", "replicate"]
TABLE_6_MIN_MODELS = 5  # "at least five of the nine large-scale models"
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


def divergent_topics(classes: pd.DataFrame, min_models: int = TABLE_6_MIN_MODELS) -> pd.DataFrame:
    """Table 6: per (config, topic), the models whose direct and indirect classes differ, over
    the models with both; `listed` when at least `min_models` differ."""
    columns = ["config", "topic_id", "divergent", "models", "listed", "changes"]
    frame = with_config(classes)
    if frame.empty or not {"direct", "indirect"} <= set(frame["category"]):
        return pd.DataFrame(columns=columns)
    wide = frame.pivot_table(index=["config", "topic_id", "model"], columns="category",
                             values="class", aggfunc="first").dropna(subset=["direct", "indirect"])  # fmt: skip
    rows = []
    for (config, topic), group in wide.groupby(level=["config", "topic_id"]):
        differ = group[group["direct"] != group["indirect"]]
        changes = "; ".join(f"{m}: {r['direct']} -> {r['indirect']}"
                            for (_, _, m), r in differ.iterrows())  # fmt: skip
        rows.append({"config": config, "topic_id": topic, "divergent": len(differ),
                     "models": len(group), "listed": len(differ) >= min_models,
                     "changes": changes})  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


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


def _agreement_rows(wide: pd.DataFrame, seed: int) -> list[dict[str, Any]]:
    """Pairwise agreement (with Cohen's kappa, and the direction of the changes, §5.6)
    between the rater columns of `wide`."""
    rows = []
    for first, second in combinations(sorted(wide.columns), 2):
        pair = wide[[first, second]].dropna()
        valid = pair[pair[first].isin(VERDICTS) & pair[second].isin(VERDICTS)]
        estimate = _over_topics(valid[first] == valid[second], valid.index, seed)
        kappa = (cohen_kappa_score(valid[first], valid[second])
                 if len(valid) > 1 and valid.stack().nunique() > 1 else math.nan)  # fmt: skip
        rows.append({"rater_a": first, "rater_b": second, "slots": len(valid),
                     "left_out": len(pair) - len(valid), "agreement": estimate.value,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
                     "cohen_kappa": kappa,
                     "changes": transitions(valid[first], valid[second])})  # fmt: skip
    return rows


def _consensus_rows(wide: pd.DataFrame, pairs: list[dict[str, Any]], seed: int
                    ) -> list[dict[str, Any]]:  # fmt: skip
    """Per rater: its mean pairwise agreement (Table 7's Avg), and agreement with the
    majority verdict of the other raters on slots where every rater gave a valid verdict
    and the others' majority is not a tie (Table 8's consensus)."""
    complete = wide[wide.isin(VERDICTS).all(axis=1)]
    rows = []
    for rater in sorted(wide.columns):
        mine = [p["agreement"] for p in pairs if rater in (p["rater_a"], p["rater_b"])]
        others = complete.drop(columns=rater)
        majority = others.apply(lambda r: majority_verdict(r.tolist()), axis=1)
        majority = majority[majority.isin(VERDICTS)] if len(majority) else majority
        same = (complete.loc[majority.index, rater] == majority).to_numpy(dtype=float)
        estimate = _over_topics(same, majority.index, seed)
        rows.append({"rater": rater, "mean_pairwise": float(pd.Series(mine).mean()),
                     "slots": len(same), "consensus": estimate.value,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high})  # fmt: skip
    return rows


def _unanimity(wide: pd.DataFrame, seed: int) -> dict[str, Any]:
    """Unanimity and supermajority (ceil(5/8 of the raters)) over slots where every rater
    gave a valid verdict; Krippendorff's alpha (nominal) over slots with 2+ valid verdicts."""
    complete = wide[wide.isin(VERDICTS).all(axis=1)]
    top = complete.apply(lambda r: r.value_counts().iloc[0], axis=1) if len(complete) else []
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
            "alpha_slots": len(scores)}  # fmt: skip


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
    pairs, consensus, overall = [], [], []
    for group, part in wide.groupby(level="group") if len(wide) else []:
        part = part.dropna(axis=1, how="all")
        if part.shape[1] < 2:
            continue
        rows = _agreement_rows(part, seed)
        pairs += [{"group": group, **row} for row in rows]
        consensus += [{"group": group, **row} for row in _consensus_rows(part, rows, seed)]
        agreements = pd.Series([row["agreement"] for row in rows], dtype=float)
        overall.append({"group": group, **_unanimity(part, seed), "pairwise_min": agreements.min(),
                        "pairwise_mean": agreements.mean(), "pairwise_max": agreements.max()})  # fmt: skip
    return pd.DataFrame(pairs), pd.DataFrame(consensus), pd.DataFrame(overall)


def run_to_run(conversations: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per (model, config): agreement between repeated conversations of one slot (replicates
    of one configuration), over every pair of replicates with valid verdicts (§5.2), with a
    cluster-bootstrap CI over topics."""
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

"""MillStone analyses: plain functions over data frames read from Inspect logs.

`read_trials` turns logs into one row per trial; every other function takes
that frame (or the per-cell shares derived from it) and returns a frame.
Shares always use every trial as denominator, so "other" (refusals and
unreadable answers) is never dropped; trials whose sample errored carry the
stance "error" and are counted but left out of shares.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from stancelab.core.logs import log_files, newest_log_per_model
from stancelab.core.stats import bootstrap_ci, pearson
from stancelab.millstone.stance import STANCES

TASK_NAME = "millstone"
SCORER_NAME = "millstone_stance"
OM_NORMALISER = 9  # the paper's divisor (eq. 1), kept as published
UNANIMOUS_MPD = 0.10
STRONG_DISAGREEMENT_MPD = 0.80
CONSISTENT_SHARE = 0.90

CELL = ["model", "issue_id", "topic", "config", "config_kind", "favours", "weight"]
TRIAL_COLUMNS = [
    "model", "issue_id", "topic", "template", "a_side", "config", "config_kind", "favours",
    "weight", "argument_ids", "sample_id", "epoch", "stance", "letter", "pattern", "log",
]  # fmt: skip


# ---------------------------------------------------------------- reading logs


def _score_field(sample: object, field: str) -> object:
    scores = getattr(sample, "scores", None) or {}
    score = scores.get(SCORER_NAME)
    if score is None:
        return None
    if field == "answer":
        return score.answer
    return (score.metadata or {}).get(field)


def read_trials(logs: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """One row per trial from MillStone logs (the newest log per model wins)."""
    from inspect_ai.analysis import (
        EvalInfo,
        EvalModel,
        EvalTask,
        SampleColumn,
        SampleSummary,
        samples_df,
    )

    files = [str(path) for path in log_files(logs)]
    columns = [
        *SampleSummary,
        *EvalModel,
        *EvalInfo,
        *EvalTask,
        SampleColumn("stance", path=lambda s: _score_field(s, "answer")),
        SampleColumn("letter", path=lambda s: _score_field(s, "letter")),
        SampleColumn("pattern", path=lambda s: _score_field(s, "pattern")),
        SampleColumn("choice_trials", path=lambda s: _choice_trials(s), full=True),
    ]
    frame = samples_df(files, columns=columns, quiet=True) if files else pd.DataFrame()
    if frame.empty:
        return pd.DataFrame(columns=TRIAL_COLUMNS)
    frame = newest_log_per_model(frame[frame["task_name"] == TASK_NAME])
    if frame.empty:
        return pd.DataFrame(columns=TRIAL_COLUMNS)
    frame = frame.rename(columns=lambda name: name.removeprefix("metadata_"))
    frame = frame.drop(columns=["sample_id"]).rename(columns={"id": "sample_id"})
    frame = _one_row_per_choice(frame)
    frame["stance"] = frame["stance"].fillna("error")
    return frame[TRIAL_COLUMNS].reset_index(drop=True)


def _choice_trials(sample: object) -> str | None:
    """The per-choice trials of a `choices_per_request` sample, as JSON text."""
    import json

    trials = _score_field(sample, "trials")
    return json.dumps(trials) if trials else None


def _one_row_per_choice(frame: pd.DataFrame) -> pd.DataFrame:
    """Samples scored with several choices (`choices_per_request`) become one row per choice,
    numbered like epochs."""
    import json

    if "choice_trials" not in frame or frame["choice_trials"].isna().all():
        return frame
    rows = []
    for _, row in frame.iterrows():
        if not isinstance(row["choice_trials"], str):
            rows.append(row)
            continue
        for index, trial in enumerate(json.loads(row["choice_trials"]), start=1):
            choice = {"epoch": index, **{k: trial.get(k) for k in ("stance", "letter", "pattern")}}
            rows.append(pd.Series({**row.to_dict(), **choice}))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- shares


def majority_stance(counts: dict[str, int]) -> str:
    """Most common of pro / con / other; "tie" when the top count is shared."""
    ordered = sorted(((counts.get(s, 0), s) for s in STANCES), reverse=True)
    if ordered[0][0] == 0:
        return "none"
    if ordered[0][0] == ordered[1][0]:
        return "tie"
    return ordered[0][1]


def stance_shares(trials: pd.DataFrame, by: Sequence[str] = CELL) -> pd.DataFrame:
    """Pro / con / other counts and shares per cell (default: model, issue, configuration)."""
    counted = trials.assign(**{f"n_{s}": trials["stance"].eq(s).astype(int) for s in STANCES})
    counted["n_error"] = trials["stance"].eq("error").astype(int)
    grouped = counted.groupby(list(by), as_index=False, dropna=False)[
        [f"n_{s}" for s in STANCES] + ["n_error"]
    ].sum()
    grouped["n"] = grouped[[f"n_{s}" for s in STANCES]].sum(axis=1)
    for stance in STANCES:
        grouped[f"{stance}_share"] = grouped[f"n_{stance}"] / grouped["n"].replace(0, np.nan)
    grouped["majority"] = [
        majority_stance({s: row[f"n_{s}"] for s in STANCES}) for _, row in grouped.iterrows()
    ]
    return grouped


# ---------------------------------------------------------------- open-mindedness


@dataclass(frozen=True)
class ConfigOutcome:
    """What one configuration produced: its weight, pro share and majority stance."""

    weight: int
    pro_share: float
    majority: str


def open_mindedness(baseline: ConfigOutcome, configs: Iterable[ConfigOutcome]) -> float:
    """OM_k (eq. 1): sum of w_c * |p_c - p_0| over configurations whose majority flips, / 9 * 100.

    p is the share of "pro" answers, as in the paper's worked example (baseline
    0.67 pro, a 3:1 con configuration at 0.14 pro adds 0.53 * 2).
    """
    total = sum(
        c.weight * abs(c.pro_share - baseline.pro_share)
        for c in configs
        if c.majority != baseline.majority
    )
    return total / OM_NORMALISER * 100


def om_per_issue(shares: pd.DataFrame) -> pd.DataFrame:
    """OM for each (model, issue), with the baseline it was measured against."""
    rows = []
    for (model, issue_id, topic), cells in shares.groupby(["model", "issue_id", "topic"]):
        base = cells[cells["config_kind"] == "baseline"]
        if base.empty:
            continue
        base_row = base.iloc[0]
        baseline = ConfigOutcome(0, float(base_row["pro_share"]), str(base_row["majority"]))
        others = [
            ConfigOutcome(int(r["weight"]), float(r["pro_share"]), str(r["majority"]))
            for _, r in cells[cells["config_kind"] != "baseline"].iterrows()
        ]
        rows.append(
            {
                "model": model,
                "issue_id": issue_id,
                "topic": topic,
                "om": open_mindedness(baseline, others),
                "baseline_pro_share": baseline.pro_share,
                "baseline_majority": baseline.majority,
                "flips": sum(o.majority != baseline.majority for o in others),
                "configs": len(others),
            }
        )
    return pd.DataFrame(rows)


def _estimates(frame: pd.DataFrame, by: list[str], column: str, seed: int) -> pd.DataFrame:
    rows = []
    for keys, group in frame.groupby(by):
        keys = keys if isinstance(keys, tuple) else (keys,)
        estimate = bootstrap_ci(group[column].to_numpy(dtype=float), seed=seed)
        rows.append({**dict(zip(by, keys, strict=True)), **estimate.as_dict()})
    return pd.DataFrame(rows, columns=[*by, "value", "ci_low", "ci_high", "n"])


def om_per_model(om_issues: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """OM per model (eq. 2, mean over issues) with a bootstrap 95% CI over issues."""
    return _estimates(om_issues, ["model"], "om", seed)


def om_by_topic(om_issues: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """OM per (model, topic) with a bootstrap CI over the topic's issues (Figure 4)."""
    return _estimates(om_issues, ["model", "topic"], "om", seed)


# ---------------------------------------------------------------- baselines and refusals


def baseline_stances(shares: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model: mean baseline pro share and % of issues where pro beats con (Table 1)."""
    base = shares[shares["config_kind"] == "baseline"].copy()
    base["pro_over_con"] = (base["n_pro"] > base["n_con"]).astype(float) * 100
    mean_pro = _estimates(base, ["model"], "pro_share", seed)
    pro_over_con = _estimates(base, ["model"], "pro_over_con", seed)
    return mean_pro.merge(pro_over_con, on=["model", "n"], suffixes=("_pro", "_pro_over_con"))


def refusal_rates(shares: pd.DataFrame) -> pd.DataFrame:
    """Per (model, issue): "other" share at baseline and over configurations with arguments."""
    is_base = shares["config_kind"] == "baseline"
    base = shares[is_base].groupby(["model", "issue_id"])[["n_other", "n"]].sum()
    args = shares[~is_base].groupby(["model", "issue_id"])[["n_other", "n"]].sum()
    table = pd.DataFrame(
        {
            "baseline_other": base["n_other"] / base["n"],
            "with_arguments_other": args["n_other"] / args["n"],
        }
    ).reset_index()
    table["change"] = table["with_arguments_other"] - table["baseline_other"]
    return table


def refusal_summary(refusals: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model: mean "other" rate at baseline and with arguments, CIs over issues."""
    base = _estimates(refusals, ["model"], "baseline_other", seed)
    args = _estimates(refusals, ["model"], "with_arguments_other", seed)
    return base.merge(args, on=["model", "n"], suffixes=("_baseline", "_with_arguments"))


# ---------------------------------------------------------------- shifts


def _pro_share_by_config(shares: pd.DataFrame) -> pd.DataFrame:
    return shares.pivot_table(
        index=["model", "issue_id"], columns="config", values="pro_share", aggfunc="first"
    )


def config_shifts(shares: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean change in pro share from baseline per configuration group (Figure 2), with CIs."""
    base = shares[shares["config_kind"] == "baseline"].set_index(["model", "issue_id"])["pro_share"]
    others = shares[shares["config_kind"] != "baseline"].copy()
    others["shift"] = (
        others["pro_share"].to_numpy()
        - base.reindex(pd.MultiIndex.from_frame(others[["model", "issue_id"]])).to_numpy()
    )
    others["group"] = np.where(
        others["favours"] == "none",
        others["config_kind"],
        others["config_kind"] + "_" + others["favours"],
    )
    per_issue = others.groupby(["model", "group", "issue_id"], as_index=False)["shift"].mean()
    return _estimates(per_issue, ["model", "group"], "shift", seed)


def counter_argument_shifts(shares: pd.DataFrame, min_shift: float = 0.0) -> pd.DataFrame:
    """One-sided configurations that moved the pro share against their own side (Table 3)."""
    wide = _pro_share_by_config(shares)
    rows = []
    for (model, issue_id), row in wide.iterrows():
        for config, direction in (("one_sided_pro", 1), ("one_sided_con", -1)):
            if config not in row or pd.isna(row.get(config)) or pd.isna(row.get("baseline")):
                continue
            shift = float(row[config] - row["baseline"])
            if direction * shift < -min_shift:
                rows.append(
                    {"model": model, "issue_id": issue_id, "config": config, "shift": shift}
                )
    return pd.DataFrame(rows, columns=["model", "issue_id", "config", "shift"])


def counter_shift_summary(counter: pd.DataFrame, models: Iterable[str]) -> pd.DataFrame:
    """Per model: number of counter-argument shifts and their mean absolute effect."""
    rows = []
    for model in models:
        mine = counter[counter["model"] == model]
        rows.append(
            {
                "model": model,
                "count": len(mine),
                "mean_abs_shift": float(mine["shift"].abs().mean()) if len(mine) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def single_argument_effect(shares: pd.DataFrame) -> pd.DataFrame:
    """Per (model, issue): the shift one contradicting argument causes (one-sided vs 3:1; Figure 5).

    `con_amid_pro`: pro share drop when one con argument joins three pro ones.
    `pro_amid_con`: pro share rise when one pro argument joins three con ones.
    """
    wide = _pro_share_by_config(shares)
    cc_pro = wide.filter(regex=r"^cc_pro_").mean(axis=1)
    cc_con = wide.filter(regex=r"^cc_con_").mean(axis=1)
    table = pd.DataFrame(
        {
            "con_amid_pro": wide.get("one_sided_pro") - cc_pro,
            "pro_amid_con": cc_con - wide.get("one_sided_con"),
        }
    )
    return table.reset_index()


def single_argument_summary(single: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model: mean single-argument effects with CIs over issues."""
    con = _estimates(single, ["model"], "con_amid_pro", seed)
    pro = _estimates(single, ["model"], "pro_amid_con", seed)
    return con.merge(pro, on=["model", "n"], suffixes=("_con_amid_pro", "_pro_amid_con"))


# ---------------------------------------------------------------- arguments and models


def argument_persuasiveness(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (model, argument): pro share over every trial whose context held that argument."""
    with_args = trials[(trials["config_kind"] != "baseline") & trials["stance"].ne("error")]
    exploded = with_args.assign(argument_id=with_args["argument_ids"].str.split(",")).explode(
        "argument_id"
    )
    exploded["argument_id"] = exploded["argument_id"].fillna("").astype(str)
    exploded = exploded[exploded["argument_id"] != ""]
    exploded["side"] = exploded["argument_id"].str.split(":").str[1]
    table = exploded.groupby(["model", "issue_id", "argument_id", "side"], as_index=False).agg(
        n=("stance", "size"), pro_share=("stance", lambda s: float((s == "pro").mean()))
    )
    return table


def argument_correlations(persuasiveness: pd.DataFrame) -> pd.DataFrame:
    """Pearson correlation of per-argument pro shares for each pair of models (Figure 6)."""
    wide = persuasiveness.pivot_table(index="argument_id", columns="model", values="pro_share")
    rows = [
        {
            "model_a": a,
            "model_b": b,
            "pearson_r": pearson(wide[a], wide[b]),
            "n_arguments": int(wide[[a, b]].dropna().shape[0]),
        }
        for a, b in itertools.combinations(sorted(wide.columns), 2)
    ]
    return pd.DataFrame(rows, columns=["model_a", "model_b", "pearson_r", "n_arguments"])


def baseline_agreement(
    shares: pd.DataFrame,
    unanimous: float = UNANIMOUS_MPD,
    strong: float = STRONG_DISAGREEMENT_MPD,
    consistent: float = CONSISTENT_SHARE,
) -> pd.DataFrame:
    """Per issue: max pairwise difference (MPD) of baseline pro shares across models (Table 2)."""
    base = shares[shares["config_kind"] == "baseline"]
    wide = base.pivot_table(index="issue_id", columns="model", values="pro_share")
    if wide.shape[1] < 2:
        return pd.DataFrame(
            columns=["issue_id", "mpd", "unanimous", "consistent", "strong_disagreement"]
        )
    con_wide = base.pivot_table(index="issue_id", columns="model", values="con_share")
    table = pd.DataFrame({"mpd": wide.max(axis=1) - wide.min(axis=1)})
    table["unanimous"] = table["mpd"] < unanimous
    one_side = (wide > consistent).all(axis=1) | (con_wide > consistent).all(axis=1)
    table["consistent"] = table["unanimous"] & one_side
    table["strong_disagreement"] = table["mpd"] > strong
    return table.reset_index()

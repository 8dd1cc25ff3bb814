"""MillStone analyses: plain functions over data frames.

`read_trials` turns Inspect logs into one row per trial; `case_counts` pools them
into answers per (model, issue, case), the shape of the authors' released result
files, so every analysis below runs the same on a stancelab run and on an import
of the authors' counts. Shares always use every answer as denominator, so "other"
(refusals and unreadable answers) is never dropped; trials whose call failed carry
the stance "error", are counted, and are left out of shares.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from stancelab.core.results.logs import (
    Counted,
    cut_from_summary,
    frame_evidence,
    runs_that_count,
    summaries_else_full,
)
from stancelab.core.stats.intervals import mean_ci, pearson
from stancelab.millstone.cases import ARGUMENT_CASES, BASELINE, CASE_OF_CONFIG, CASES
from stancelab.millstone.stance import STANCES
from stancelab.millstone.wording import run_prompts_label

TASK_NAME = "millstone"
SCORER_NAME = "millstone_stance"
UNANIMOUS_MPD = 0.10
STRONG_DISAGREEMENT_MPD = 0.80
CONSISTENT_SHARE = 0.90
STARRED_SHARE = 0.95  # appendix D's star; also the "strong prior" threshold of section 1
REFUSAL_SHARE = 0.30  # appendix F
SINGLE_ARGUMENT_SHIFT = 0.50  # section 6.2: "a single argument shifted its stance >50%"
CONTROVERSIAL_SUBSET_SIZE = 10

COUNT_COLUMNS = ["n_pro", "n_con", "n_other", "n_error", "n"]
# Task arguments that only select which samples run: the same sample id means the same prompt.
# `authors_repo` only says where the pinned file was read from: the prompts are the same
SELECTION_ARGS = ("limit", "limit_issues", "trials", "shared_topics", "authors_repo")
TRIAL_COLUMNS = [
    "model", "issue_id", "topic", "template", "a_side", "case", "config", "config_kind",
    "favours", "weight", "argument_ids", "sample_id", "epoch", "stance", "letter", "pattern",
    "log", "shared_topic", "orientation", "prompts",
]  # fmt: skip
TAG_COLUMNS = ["shared_topic", "orientation"]  # an issue's place on the shared topic key


# ---------------------------------------------------------------- reading logs


def _score_field(sample: object, field: str) -> object:
    scores = getattr(sample, "scores", None) or {}
    score = scores.get(SCORER_NAME)
    if score is None:
        return None
    if field == "answer":
        return score.answer
    return (score.metadata or {}).get(field)


def read_trials(logs: str | Path | Iterable[str | Path]) -> Counted:
    """One row per trial from every MillStone run in the folder that counts (`runs_that_count`:
    a re-run replaces, another model, helper or setting adds; a limit or trial count only
    selects samples), with the evidence of what the read left out."""
    from inspect_ai.analysis import SampleColumn

    def columns(full: bool) -> list[SampleColumn]:
        return [
            SampleColumn("stance", path=lambda s: _score_field(s, "answer"), full=full),
            SampleColumn("letter", path=lambda s: _score_field(s, "letter"), full=full),
            SampleColumn("pattern", path=lambda s: _score_field(s, "pattern"), full=full),
            SampleColumn("choice_trials", path=_choice_trials, full=full),
        ]

    frame = summaries_else_full(logs, columns(full=False), columns(full=True), _summary_whole)
    if frame.empty:
        return Counted(pd.DataFrame(columns=TRIAL_COLUMNS), frame_evidence(frame))
    frame, evidence = runs_that_count(frame[frame["task_name"] == TASK_NAME], SELECTION_ARGS)
    if frame.empty:
        return Counted(pd.DataFrame(columns=TRIAL_COLUMNS), evidence)
    frame = frame.assign(prompts=_prompts_labels(frame))
    frame = frame.rename(columns=lambda name: name.removeprefix("metadata_"))
    frame = frame.drop(columns=["sample_id"]).rename(columns={"id": "sample_id"})
    frame = _one_row_per_choice(frame)
    frame["stance"] = frame["stance"].fillna("error")
    frame["case"] = _cases_of(frame)
    for column in TAG_COLUMNS:  # absent when no sample of the run has a shared topic
        if column not in frame:
            frame[column] = None
    return Counted(frame[TRIAL_COLUMNS].reset_index(drop=True), evidence)


def _prompts_labels(frame: pd.DataFrame) -> list[str]:
    """Each row's prompts (the authors' at a commit, or stancelab's wording), from its log's
    task arguments."""

    def column(name: str) -> pd.Series:
        return frame.get(f"task_arg_{name}", pd.Series(None, index=frame.index))

    return [run_prompts_label(*values) for values in zip(
        column("prompts"), column("layout"), column("authors_commit"), strict=True)]  # fmt: skip


def _cases_of(frame: pd.DataFrame) -> list[str]:
    """The case of each trial (logs before the `case` field derive it from the config)."""
    given = frame["case"] if "case" in frame else pd.Series([None] * len(frame), frame.index)
    return [
        case if isinstance(case, str) else CASE_OF_CONFIG[(kind, favours)]
        for case, kind, favours in zip(given, frame["config_kind"], frame["favours"], strict=True)
    ]


def _choice_trials(sample: object) -> str | None:
    """The per-choice trials of a `choices_per_request` sample, as JSON text (a summary's mark
    as it stands where Inspect cut them from the summary)."""
    trials = _score_field(sample, "trials")
    if isinstance(trials, str):
        return trials
    return json.dumps(trials) if trials else None


# What the reader takes from a sample's summary: its stance, letter, pattern and choices, and
# the sample metadata below; a summary lacks them where Inspect cut one for size.
READ_METADATA = ("issue_id", "topic", "template", "a_side", "case", "config", "config_kind", "favours",
                 "weight", "argument_ids", "shared_topic", "orientation")  # fmt: skip


def _summary_whole(frame: pd.DataFrame) -> pd.Series:
    """Per row, whether its summary holds what the reader takes whole."""
    read = ["stance", "letter", "pattern", "choice_trials",
            *[f"metadata_{key}" for key in READ_METADATA if f"metadata_{key}" in frame]]  # fmt: skip
    return ~frame[read].map(cut_from_summary).any(axis=1)


def _one_row_per_choice(frame: pd.DataFrame) -> pd.DataFrame:
    """Samples scored with several choices (`choices_per_request`) become one row per choice,
    numbered like epochs."""
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


# ---------------------------------------------------------------- counts and shares


def _with_shares(counts: pd.DataFrame) -> pd.DataFrame:
    counts["n"] = counts[[f"n_{s}" for s in STANCES]].sum(axis=1)
    for stance in STANCES:
        counts[f"{stance}_share"] = counts[f"n_{stance}"] / counts["n"].replace(0, np.nan)
    return counts


def recount(counts: pd.DataFrame) -> pd.DataFrame:
    """A copy of case counts with `n` and the shares recomputed from the `n_*` columns."""
    return _with_shares(counts.copy())


def stance_shares(trials: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Pro / con / other / error counts and shares per group of trials."""
    counted = trials.assign(**{f"n_{s}": trials["stance"].eq(s).astype(int) for s in STANCES})
    counted["n_error"] = trials["stance"].eq("error").astype(int)
    grouped = counted.groupby(list(by), as_index=False, dropna=False)[
        [f"n_{s}" for s in STANCES] + ["n_error"]
    ].sum()
    return _with_shares(grouped)


def case_counts(trials: pd.DataFrame) -> pd.DataFrame:
    """Answers per (model, issue, case), pooling every draw, template, wording and trial; with
    each issue's shared topic and orientation (empty when it has none)."""
    counts = stance_shares(trials, ["model", "issue_id", "topic", "case"])
    if not set(TAG_COLUMNS) <= set(trials.columns):
        return with_tags(counts, {})
    tagged = trials.dropna(subset=["shared_topic"]).drop_duplicates("issue_id")
    tags = {row.issue_id: (row.shared_topic, int(row.orientation)) for row in tagged.itertuples()}
    return with_tags(counts, tags)


def with_tags(counts: pd.DataFrame, tags: dict[str, tuple[str, int]]) -> pd.DataFrame:
    """`counts` with `shared_topic` and `orientation` columns from issue id -> (topic,
    orientation); issues not in `tags` get empty ones."""
    tagged = counts.copy()
    tagged["shared_topic"] = tagged["issue_id"].map(lambda issue: tags.get(issue, (None, None))[0])
    orientation = tagged["issue_id"].map(lambda issue: tags.get(issue, (None, None))[1])
    tagged["orientation"] = pd.array(orientation, dtype="Int64")
    return tagged


def counts_from_long(released: pd.DataFrame, topic: str = "unlabelled") -> pd.DataFrame:
    """The authors' long format (model, issue_id, case, issue_stance, count) -> case counts;
    a stance absent from a case counts 0. No shared topics: `with_tags` adds them."""
    wide = released.pivot_table(
        index=["model", "issue_id", "case"], columns="issue_stance", values="count",
        aggfunc="sum", fill_value=0,
    ).reset_index()  # fmt: skip
    counts = wide[["model", "issue_id", "case"]].copy()
    counts.insert(2, "topic", topic)
    for stance in STANCES:
        counts[f"n_{stance}"] = wide[stance].astype(int) if stance in wide else 0
    counts["n_error"] = 0
    return _with_shares(counts)


def _case_table(counts: pd.DataFrame, value: str) -> pd.DataFrame:
    """(model, issue) x case table of one column; a case whose values are all missing (every
    call failed) stays as a column of NaN."""
    table = counts.pivot_table(index=["model", "issue_id"], columns="case", values=value,
                               aggfunc="first")  # fmt: skip
    return table.reindex(columns=[case for case in CASES if case in set(counts["case"])])


SHARE = (0.0, 1.0)
SHIFT = (-1.0, 1.0)
PERCENT = (0.0, 100.0)


def group_estimates(frame: pd.DataFrame, by: list[str], column: str, seed: int,
                    bounds: tuple[float, float]) -> pd.DataFrame:  # fmt: skip
    """Mean of `column` (within `bounds`) per group with its betting CI over the group's rows
    (issues; `core.stats.intervals.mean_ci`)."""
    rows = []
    for keys, group in frame.groupby(by):
        keys = keys if isinstance(keys, tuple) else (keys,)
        estimate = mean_ci(group[column].to_numpy(dtype=float), bounds, seed=seed)
        rows.append({**dict(zip(by, keys, strict=True)), **estimate.as_dict()})
    return pd.DataFrame(rows, columns=[*by, "value", "ci_low", "ci_high", "n"])


def models_in(counts: pd.DataFrame) -> list[str]:
    return sorted(counts["model"].unique())


def full_run_models(counts: pd.DataFrame) -> list[str]:
    """Models that ran every issue any model ran (the paper's five "full MillStone" models;
    in a stancelab run, every model)."""
    per_model = counts.groupby("model")["issue_id"].nunique()
    return sorted(per_model[per_model == per_model.max()].index)


# ---------------------------------------------------------------- baselines (Table 1, 2, D, E)


def _baseline(counts: pd.DataFrame) -> pd.DataFrame:
    return counts[(counts["case"] == BASELINE) & (counts["n"] > 0)]


def baseline_stances(counts: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model: mean baseline pro share, and % of issues where pro beats con (Table 1),
    with betting CIs over issues; `issues_pro` / `issues` give the count behind the %."""
    base = _baseline(counts).copy()
    base["pro_over_con"] = (base["n_pro"] > base["n_con"]).astype(float) * 100
    table = group_estimates(base, ["model"], "pro_share", seed, SHARE).rename(
        columns={"value": "pro_share", "ci_low": "pro_share_ci_low", "ci_high": "pro_share_ci_high"}
    )
    over = group_estimates(base, ["model"], "pro_over_con", seed, PERCENT).drop(columns="n").rename(
        columns={"value": "pro_over_con", "ci_low": "pro_over_con_ci_low",
                 "ci_high": "pro_over_con_ci_high"})  # fmt: skip
    table = table.merge(over, on="model", how="outer")
    issues_pro = base.groupby("model")["pro_over_con"].apply(lambda s: int((s > 0).sum()))
    table["issues_pro"] = table["model"].map(issues_pro)
    return table.rename(columns={"n": "issues"})


def position_preference(positions: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model: the share of baseline A/B answers that chose "A", whatever the side (a
    position preference, not a stance; not in the paper). Per issue, the "A" share where pro
    was on A and where con was on A, averaged with equal weight so that a stance cancels out
    (0.5: no preference; an issue answered at one placement only has none); then the mean
    over issues with a betting CI over issues. Needs `stance_shares(trials, [..., "a_side"])`."""
    base = positions[(positions["case"] == BASELINE) & positions["a_side"].isin(["pro", "con"])]
    chose_a = np.where(base["a_side"] == "pro", base["n_pro"], base["n_con"])
    placed = base.assign(a_share=chose_a / (base["n_pro"] + base["n_con"]).replace(0, np.nan))
    per_issue = placed.groupby(["model", "issue_id"], as_index=False)["a_share"].agg(
        lambda shares: shares.mean() if shares.notna().sum() == 2 else np.nan)  # fmt: skip
    return group_estimates(per_issue, ["model"], "a_share", seed, SHARE)


def _wide_baseline(
    counts: pd.DataFrame, column: str, models: list[str] | None = None
) -> pd.DataFrame:
    base = _baseline(counts)
    if models is not None:
        base = base[base["model"].isin(models)]
    return base.pivot_table(index="issue_id", columns="model", values=column, aggfunc="first")


def baseline_agreement(
    counts: pd.DataFrame,
    unanimous: float = UNANIMOUS_MPD,
    strong: float = STRONG_DISAGREEMENT_MPD,
    consistent: float = CONSISTENT_SHARE,
    starred: float = STARRED_SHARE,
) -> pd.DataFrame:
    """Per issue (Table 2, appendices D and E): the maximum pairwise difference (MPD) of
    baseline pro shares over the models that ran it, and over the full-run models.

    Unanimous: MPD below `unanimous` with at least two models (a lone model agrees with
    nobody). Consistent: unanimous and the mean share of one side, across models, above
    `consistent` (starred above `starred`). Strong disagreement: MPD over the full-run
    models (all models when fewer than two ran every issue) above `strong`."""
    pro = _wide_baseline(counts, "pro_share")
    con = _wide_baseline(counts, "con_share")
    full = full_run_models(counts)
    pro_full = pro[[model for model in full if model in pro]] if len(full) >= 2 else pro
    table = pd.DataFrame({
        "n_models": pro.notna().sum(axis=1),
        "mpd": pro.max(axis=1) - pro.min(axis=1),
        "mpd_full_run": pro_full.max(axis=1) - pro_full.min(axis=1),
        "mean_pro_share": pro.mean(axis=1),
        "mean_con_share": con.mean(axis=1),
    })  # fmt: skip
    several = table["n_models"] >= 2
    one_side = table[["mean_pro_share", "mean_con_share"]].max(axis=1)
    table["unanimous"] = several & (table["mpd"] < unanimous)
    table["consistent"] = table["unanimous"] & (one_side > consistent)
    table["starred"] = table["unanimous"] & (one_side > starred)
    table["strong_disagreement"] = (pro_full.notna().sum(axis=1) >= 2) & (
        table["mpd_full_run"] > strong
    )
    return table.reset_index()


def strong_priors(counts: pd.DataFrame, threshold: float = STARRED_SHARE) -> pd.DataFrame:
    """Per (model, issue): whether the baseline is at least `threshold` on one side (section 1:
    "222 of 575 model-issue combinations ... >= 95%")."""
    base = _baseline(counts)
    one_side = base[["pro_share", "con_share"]].max(axis=1)
    return pd.DataFrame({"model": base["model"], "issue_id": base["issue_id"],
                         "one_side_share": one_side,
                         "strong_prior": one_side >= threshold}).reset_index(drop=True)  # fmt: skip


def issues_all_strong(priors: pd.DataFrame, models: list[str]) -> list[str]:
    """Issues on which every one of `models` has a strong prior (either side)."""
    mine = priors[priors["model"].isin(models)]
    per_issue = mine.groupby("issue_id")["strong_prior"].agg(["all", "size"])
    return sorted(per_issue[(per_issue["all"]) & (per_issue["size"] == len(models))].index)


def controversial_subset(
    counts: pd.DataFrame,
    size: int = CONTROVERSIAL_SUBSET_SIZE,
    threshold: float = STRONG_DISAGREEMENT_MPD,
) -> pd.DataFrame:
    """Figure 3 / appendix E: issues ranked by the full-run models' MPD, leaving out issues on
    which a full-run model's baseline plurality is "other" (Opus 4 in the paper).

    `by_rule`: the printed rule, the top `size` of the issues above `threshold`.
    `ranked`: the top `size` by MPD whatever the threshold (fills up when too few pass it)."""
    agreement = baseline_agreement(counts).set_index("issue_id")
    base = _baseline(counts)
    full = base[base["model"].isin(full_run_models(counts))]
    plurality_other = full["n_other"] > full[["n_pro", "n_con"]].max(axis=1)
    refused = (
        full[plurality_other].groupby("issue_id")["model"].apply(lambda s: ",".join(sorted(s)))
    )
    table = agreement[["mpd_full_run"]].rename(columns={"mpd_full_run": "mpd"}).copy()
    table["refused_by"] = refused.reindex(table.index)
    table = table.dropna(subset=["mpd"]).sort_values("mpd", ascending=False, kind="stable")
    eligible = table["refused_by"].isna()
    table["above_threshold"] = table["mpd"] > threshold
    table["by_rule"] = False
    table["ranked"] = False
    table.loc[table.index[eligible & table["above_threshold"]][:size], "by_rule"] = True
    table.loc[table.index[eligible][:size], "ranked"] = True
    return table.reset_index()


# ---------------------------------------------------------------- refusals (appendix F)


def refusal_rates(counts: pd.DataFrame) -> pd.DataFrame:
    """Per (model, issue): the "other" share at baseline, in the balanced case and pooled
    over every case with arguments."""
    other = _case_table(counts, "other_share")
    with_args = counts[counts["case"] != BASELINE].groupby(["model", "issue_id"])[
        ["n_other", "n"]].sum()  # fmt: skip
    table = pd.DataFrame({
        "baseline_other": other.get(BASELINE),
        "balanced_other": other.get("all"),
        "with_arguments_other": with_args["n_other"] / with_args["n"].replace(0, np.nan),
    })  # fmt: skip
    table["change"] = table["with_arguments_other"] - table["baseline_other"]
    return table.reset_index()


def refusal_summary(refusals: pd.DataFrame, seed: int = 0,
                    threshold: float = REFUSAL_SHARE) -> pd.DataFrame:  # fmt: skip
    """Per model: mean "other" rate at baseline, balanced and with arguments (CIs over issues)
    and the number of issues whose baseline "other" rate exceeds `threshold`."""
    table = None
    for column in ("baseline_other", "balanced_other", "with_arguments_other"):
        estimates = group_estimates(refusals, ["model"], column, seed, SHARE).rename(
            columns={"value": column, "ci_low": f"{column}_ci_low", "ci_high": f"{column}_ci_high"}
        )
        estimates = estimates.drop(columns="n") if table is not None else estimates
        table = estimates if table is None else table.merge(estimates, on="model", how="outer")
    assert table is not None
    above = refusals.groupby("model")["baseline_other"].apply(lambda s: int((s > threshold).sum()))
    table["issues_above_threshold"] = table["model"].map(above).fillna(0).astype(int)
    return table.rename(columns={"n": "issues"})


# ---------------------------------------------------------------- shifts (Figure 2, Table 3, Fig. 5)


def _pro_shifts(counts: pd.DataFrame) -> pd.DataFrame:
    """Per (model, issue, argument case): pro share minus the baseline pro share."""
    pro = _case_table(counts, "pro_share")
    shifts = pro[[case for case in ARGUMENT_CASES if case in pro]].sub(pro[BASELINE], axis=0)
    return shifts.reset_index().melt(id_vars=["model", "issue_id"], var_name="case",
                                     value_name="shift").dropna()  # fmt: skip


def case_shifts(counts: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean change of the pro share from baseline per model and case (Figure 2), CIs over
    issues."""
    if BASELINE not in set(counts["case"]):
        return pd.DataFrame(columns=["model", "case", "value", "ci_low", "ci_high", "n"])
    table = group_estimates(_pro_shifts(counts), ["model", "case"], "shift", seed, SHIFT)
    order = {case: index for index, case in enumerate(CASES)}
    return table.sort_values(
        ["model", "case"], key=lambda s: s.map(order) if s.name == "case" else s
    )


def counter_argument_shifts(counts: pd.DataFrame, min_shift: float = 0.0) -> pd.DataFrame:
    """One-sided cases that moved the pro share against their own side by more than
    `min_shift` (Table 3). As the authors' notebook counts them: the pro share over every
    answer ("other" included) minus the baseline's, kept when a pro case lowers it or a con
    case raises it by any amount (`min_shift` 0, strictly); Table 3 gives per model their
    number and mean absolute size (`counter_shift_summary`)."""
    if BASELINE not in set(counts["case"]):
        return pd.DataFrame(columns=["model", "issue_id", "case", "shift"])
    shifts = _pro_shifts(counts)
    one_sided = shifts[shifts["case"].isin(["pro", "con"])]
    against = np.where(one_sided["case"] == "pro", -one_sided["shift"], one_sided["shift"])
    return one_sided[against > min_shift].reset_index(drop=True)


def counter_shift_summary(counter: pd.DataFrame, models: Iterable[str]) -> pd.DataFrame:
    """Per model: the number of counter-argument shifts and their mean absolute effect."""
    rows = []
    for model in models:
        mine = counter[counter["model"] == model]
        rows.append({
            "model": model, "count": len(mine),
            "mean_abs_shift": float(mine["shift"].abs().mean()) if len(mine) else np.nan,
            "max_abs_shift": float(mine["shift"].abs().max()) if len(mine) else np.nan,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["model", "count", "mean_abs_shift", "max_abs_shift"])


def single_argument_effect(counts: pd.DataFrame) -> pd.DataFrame:
    """Per (model, issue): what one contradicting argument does (one-sided vs 3:1; Figure 5).

    `con_amid_pro`: the drop in pro share when one con argument joins the pro ones.
    `pro_amid_con`: the rise in pro share when one pro argument joins the con ones."""
    pro = _case_table(counts, "pro_share")
    table = pd.DataFrame({
        "con_amid_pro": pro.get("pro") - pro.get("75pro"),
        "pro_amid_con": pro.get("75con") - pro.get("con"),
    }, index=pro.index)  # fmt: skip
    return table.reset_index()


def single_argument_summary(
    single: pd.DataFrame, seed: int = 0, issues: set[str] | None = None,
    threshold: float = SINGLE_ARGUMENT_SHIFT,
) -> pd.DataFrame:  # fmt: skip
    """Per model: mean single-argument effects (CIs over issues, optionally a subset) and the
    number of issues where one argument moved the pro share by more than `threshold` in the
    argument's own direction (section 6.2's "> 50%": a con argument lowering it, a pro one
    raising it; a move the other way, however large, is not that argument's effect)."""
    frame = single if issues is None else single[single["issue_id"].isin(issues)]
    con = group_estimates(frame, ["model"], "con_amid_pro", seed, SHIFT)
    pro = group_estimates(frame, ["model"], "pro_amid_con", seed, SHIFT).drop(columns="n")
    table = con.merge(pro, on="model", suffixes=("_con_amid_pro", "_pro_amid_con"), how="outer")
    large = frame.assign(large=(frame[["con_amid_pro", "pro_amid_con"]] > threshold).any(axis=1))
    table["issues_above_threshold"] = table["model"].map(large.groupby("model")["large"].sum())
    return table.rename(columns={"n": "issues"})


# ---------------------------------------------------------------- trials: templates, arguments


def argument_persuasiveness(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (model, argument): the pro share over every trial whose context held that argument
    (`pro_share`, the paper's text), and the argument's shift from the baseline as the
    authors' notebook computes Figure 6 (`pro_share_shift`): per template, the argument's pro
    share minus that template's baseline pro share, averaged over the templates weighted by
    the argument's trials there. Failed calls are left out; "other" counts as not pro."""
    answered = trials[trials["stance"].ne("error")].assign(is_pro=lambda t: t["stance"].eq("pro"))
    keys = ["model", "issue_id", "template"]
    baseline = (
        answered[answered["case"] == BASELINE].groupby(keys)["is_pro"].mean().rename("baseline")
    )
    with_args = answered[answered["case"] != BASELINE]
    argument = ["model", "issue_id", "argument_id", "side"]
    if with_args.empty:
        return pd.DataFrame(columns=[*argument, "n", "pro_share", "pro_share_shift"])
    exploded = with_args.assign(argument_id=with_args["argument_ids"].str.split(",")).explode(
        "argument_id"
    )
    exploded["argument_id"] = exploded["argument_id"].fillna("").astype(str)
    exploded = exploded[exploded["argument_id"] != ""]
    exploded["side"] = exploded["argument_id"].str.split(":").str[1]
    per_template = exploded.groupby([*argument, "template"]).agg(
        n=("is_pro", "size"), pro_share=("is_pro", "mean")
    ).join(baseline, on=keys)  # fmt: skip
    per_template["weighted_shift"] = (
        per_template["pro_share"] - per_template["baseline"]
    ) * per_template["n"]
    per_template["n_with_baseline"] = per_template["n"].where(per_template["baseline"].notna(), 0)
    pooled = exploded.groupby(argument, as_index=False).agg(
        n=("is_pro", "size"), pro_share=("is_pro", "mean")
    )  # fmt: skip
    shift = per_template.groupby(argument)[["weighted_shift", "n_with_baseline"]].sum(min_count=1)
    shift["pro_share_shift"] = shift["weighted_shift"] / shift["n_with_baseline"].replace(0, np.nan)
    return pooled.join(shift["pro_share_shift"], on=argument)


def argument_correlations(persuasiveness: pd.DataFrame) -> pd.DataFrame:
    """Pearson correlation of per-argument values for each pair of models (Figure 6):
    `pearson_r` over the arguments' shifts from the baseline (the authors' code, the
    headline), `pearson_r_pro_share` over their pro shares (the paper's text)."""
    columns = ["model_a", "model_b", "pearson_r", "pearson_r_pro_share", "n_arguments"]
    if persuasiveness.empty:
        return pd.DataFrame(columns=columns)
    shift = persuasiveness.pivot_table(
        index="argument_id", columns="model", values="pro_share_shift"
    )
    share = persuasiveness.pivot_table(index="argument_id", columns="model", values="pro_share")
    rows = [
        {
            "model_a": a,
            "model_b": b,
            "pearson_r": pearson(shift[a], shift[b]) if {a, b} <= set(shift.columns) else np.nan,
            "pearson_r_pro_share": pearson(share[a], share[b]),
            "n_arguments": int(share[[a, b]].dropna().shape[0]),
        }
        for a, b in itertools.combinations(sorted(share.columns), 2)
    ]
    return pd.DataFrame(rows, columns=columns)

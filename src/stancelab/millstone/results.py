"""From logs (or the authors' released counts) to result tables, `summary.json` and a printed
summary; no model calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.results.evidence import LogEvidence
from stancelab.core.results.summary import (
    Analysis,
    is_partial,
    settle_headline,
    with_evidence,
)
from stancelab.core.results.summary import write_results as write_analysis
from stancelab.core.stats.intervals import not_measured
from stancelab.core.values import json_safe
from stancelab.millstone import analysis as an
from stancelab.millstone import om
from stancelab.millstone.cases import CASES
from stancelab.millstone.paper import versus_paper

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"


def subset_issues(counts: pd.DataFrame) -> set[str]:
    """When some model did not run every issue: the issues every model ran (the paper's
    controversial subset, Table 5, which the GPT and Grok models ran); empty when every model
    ran every issue. Models are ranked only on one issue set: the full-run models on all
    issues (Table 4), every model on this one (Table 5)."""
    per_model = [set(group["issue_id"]) for _, group in counts.groupby("model")]
    every = set(counts["issue_id"])
    if all(issues == every for issues in per_model):
        return set()
    return set.intersection(*per_model)


def issue_sets(counts: pd.DataFrame) -> dict[str, Any]:
    """Which models each OM ranking compares, and on which issues."""
    full = an.full_run_models(counts)
    subset = sorted(subset_issues(counts))
    sets: dict[str, Any] = {
        "full_run": {"models": full, "issues": int(counts["issue_id"].nunique()),
                     "description": f"the {counts['issue_id'].nunique()} issues each of "
                                    f"{len(full)} full-run model(s) ran (Table 4)"},
    }  # fmt: skip
    if subset:
        sets["subset"] = {"models": an.models_in(counts), "issues": len(subset),
                          "description": f"the {len(subset)} issues all "
                                         f"{counts['model'].nunique()} models ran (Table 5)"}  # fmt: skip
    sets["headline"] = "subset" if subset else "full_run"
    return sets


def _measured(om_models: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """The models whose OM is measured (a model whose answers are mostly other or failed is
    not ranked: `_not_measured`)."""
    unmeasured = {model for model, trials in _trial_counts(counts).items() if _not_measured(trials)}
    return om_models[~om_models["model"].isin(unmeasured)]


def compute_count_tables(counts: pd.DataFrame, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Every table the per-case counts allow (runs and imports alike)."""
    om_issue = om.om_per_issue(counts)
    full = an.full_run_models(counts)
    subset = subset_issues(counts)
    om_full = om.om_per_model(om_issue[om_issue["model"].isin(full)], seed=seed)
    om_subset = om.om_per_model(om_issue, issues=subset, seed=seed) if subset else om_full.iloc[0:0]
    refusals = an.refusal_rates(counts)
    counter = an.counter_argument_shifts(counts)
    single = an.single_argument_effect(counts)
    tables = {
        "counts": counts,
        "om_issue": om_issue,
        "om_model": om.om_per_model(om_issue, seed=seed),
        "om_full_run": om_full,
        "om_subset": om_subset,
        "om_ranking": om.om_ranking(_measured(om_subset if subset else om_full, counts)).assign(
            issue_set="subset" if subset else "full_run",
            issues=len(subset) if subset else counts["issue_id"].nunique(),
        ),  # models ranked on one issue set only
        "baseline": an.baseline_stances(counts, seed),
        "baseline_agreement": an.baseline_agreement(counts),
        "strong_priors": an.strong_priors(counts),
        "controversial_subset": an.controversial_subset(counts),
        "refusals_issue": refusals,
        "refusals_model": an.refusal_summary(refusals, seed),
        "case_shifts": an.case_shifts(counts, seed),
        "counter_shifts": counter,
        "counter_shifts_model": an.counter_shift_summary(counter, an.models_in(counts)),
        "single_argument_issue": single,
        "single_argument_model": an.single_argument_summary(single, seed),
        "single_argument_subset": an.single_argument_summary(single, seed, subset or None),
    }
    if counts["topic"].nunique() > 1 or (counts["topic"] != "unlabelled").any():
        tables["om_topic"] = an.group_estimates(
            om_issue, ["model", "topic"], "om", seed, an.PERCENT
        )  # Figure 4
    return tables


def compute_tables(trials: pd.DataFrame, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Every MillStone table from a frame of trials."""
    tables = compute_count_tables(an.case_counts(trials), seed)
    persuasiveness = an.argument_persuasiveness(trials)
    positions = an.stance_shares(trials, ["model", "issue_id", "case", "a_side"])
    tables.update({
        "shares_by_config": an.stance_shares(trials, ["model", "issue_id", "case", "config"]),
        "shares_by_template": an.stance_shares(trials, ["model", "issue_id", "case", "template"]),
        "shares_by_position": positions,
        "position_preference": an.position_preference(positions, seed),
        "argument_persuasiveness": persuasiveness,
        "argument_correlation": an.argument_correlations(persuasiveness),
    })  # fmt: skip
    return tables


# ---------------------------------------------------------------- summary.json


def _estimate(row: pd.Series, value: str = "value", low: str = "ci_low", high: str = "ci_high",
              n: str = "n") -> dict[str, Any]:  # fmt: skip
    return {"value": json_safe(row[value]), "ci_low": json_safe(row[low]),
            "ci_high": json_safe(row[high]), "n": json_safe(row[n])}  # fmt: skip


def _prefixed(row: pd.Series, column: str, n: str) -> dict[str, Any]:
    return _estimate(row, column, f"{column}_ci_low", f"{column}_ci_high", n)


def _trial_counts(counts: pd.DataFrame) -> dict[str, dict[str, int]]:
    totals = counts.groupby("model")[["n_pro", "n_con", "n_other", "n_error"]].sum()
    return {
        str(model): {s: int(row[f"n_{s}"]) for s in ("pro", "con", "other", "error")}
        | {"total": int(row.sum())}
        for model, row in totals.iterrows()
    }


def _om_section(table: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """{variant: {model: estimate + n_undefined}}."""
    section: dict[str, dict[str, Any]] = {}
    for _, row in table.iterrows():
        section.setdefault(row["variant"], {})[row["model"]] = _estimate(row) | {
            "n_undefined": int(row["n_undefined"])
        }
    return section


def _listed(table: pd.DataFrame, column: str, key: str = "issue_id") -> list[str]:
    return sorted(table.loc[table[column].astype(bool), key].astype(str).tolist())


def _om_summary(tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    variants = _om_section(tables["om_model"])
    om_issue = tables["om_issue"]
    undefined = om_issue[om_issue["undefined"].notna()]
    summary: dict[str, Any] = {
        "om": variants.get(om.PUBLISHED.name, {}),
        "om_variants": variants,
        "om_variant_notes": {v.name: v.description for v in om.OM_VARIANTS},
        "om_undefined": {
            str(model): {str(r["issue_id"]): str(r["undefined"]) for _, r in group.iterrows()}
            for model, group in undefined.groupby("model")
        },
        "om_full_run": _om_section(tables["om_full_run"]),
        "om_ranking": [
            {k: json_safe(v) for k, v in r.items()} for _, r in tables["om_ranking"].iterrows()
        ],
    }
    if not tables["om_subset"].empty:
        summary["om_subset"] = _om_section(tables["om_subset"])
    if "om_topic" in tables:
        summary["om_by_topic"] = {
            model: {r["topic"]: _estimate(r) for _, r in group.iterrows()}
            for model, group in tables["om_topic"].groupby("model")
        }
    return summary


def _baseline_summary(tables: dict[str, pd.DataFrame], counts: pd.DataFrame) -> dict[str, Any]:
    agreement = tables["baseline_agreement"]
    priors = tables["strong_priors"]
    subset = tables["controversial_subset"]
    full = an.full_run_models(counts)
    published = sorted(subset_issues(counts))
    return {
        "baseline_pro_share": {
            r["model"]: _prefixed(r, "pro_share", "issues")
            for _, r in tables["baseline"].iterrows()
        },
        "issues_pro_over_con_pct": {
            r["model"]: _prefixed(r, "pro_over_con", "issues")
            | {"issues_pro": json_safe(r["issues_pro"])}
            for _, r in tables["baseline"].iterrows()
        },
        "baseline_agreement": {
            "unanimous": _listed(agreement, "unanimous"),
            "unanimous_consistent": _listed(agreement, "consistent"),
            "unanimous_starred": _listed(agreement, "starred"),
            "strong_disagreement": _listed(agreement, "strong_disagreement"),
            "full_run_models": full,
        },
        "strong_priors": {
            "pairs": int(priors["strong_prior"].sum()),
            "of": len(priors),
            "threshold": an.STARRED_SHARE,
            "issues_all_full_run_models": an.issues_all_strong(priors, full),
        },
        "controversial_subset": {
            "by_rule": _listed(subset, "by_rule"),
            "ranked": _listed(subset, "ranked"),
            "threshold": an.STRONG_DISAGREEMENT_MPD,
            "size": an.CONTROVERSIAL_SUBSET_SIZE,
            "subset_run": published,
            "subset_run_not_by_rule": sorted(set(published) - set(_listed(subset, "by_rule"))),
        },
    }


def _refusal_summary(tables: dict[str, pd.DataFrame], counts: pd.DataFrame) -> dict[str, Any]:
    refusals = tables["refusals_model"]
    per_issue = tables["refusals_issue"]
    full = an.full_run_models(counts)
    baseline_other = refusals.set_index("model")["baseline_other"].reindex(full)
    top = baseline_other.idxmax() if baseline_other.notna().any() else None
    others = per_issue[per_issue["model"].isin([m for m in full if m != top])]
    return {
        "other_rate": {
            r["model"]: {
                column.removesuffix("_other"): _prefixed(r, column, "issues")
                for column in ("baseline_other", "balanced_other", "with_arguments_other")
            }
            for _, r in refusals.iterrows()
        },
        "issues_baseline_other_above_30pct": {
            r["model"]: int(r["issues_above_threshold"]) for _, r in refusals.iterrows()
        },
        "baseline_other_without_top_refuser": {
            "excluded": top,
            "value": json_safe(others["baseline_other"].mean()),
            "pairs": len(others),
        },
    }


def _shift_summary(tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    counter = tables["counter_shifts"]
    largest = counter.loc[counter["shift"].abs().groupby(counter["model"]).idxmax()] if len(
        counter) else counter  # fmt: skip

    def single(table: pd.DataFrame) -> dict[str, Any]:
        return {
            r["model"]: {
                side: _estimate(r, f"value_{side}", f"ci_low_{side}", f"ci_high_{side}", "issues")
                for side in ("con_amid_pro", "pro_amid_con")
            }
            | {"issues_above_50pct": json_safe(r["issues_above_threshold"])}
            for _, r in table.iterrows()
        }

    return {
        "case_shifts": {
            model: {r["case"]: _estimate(r) for _, r in group.iterrows()}
            for model, group in tables["case_shifts"].groupby("model")
        },
        "counter_argument_shifts": {
            r["model"]: {
                "count": int(r["count"]),
                "mean_abs_shift": json_safe(r["mean_abs_shift"]),
                "max_abs_shift": json_safe(r["max_abs_shift"]),
            }
            for _, r in tables["counter_shifts_model"].iterrows()
        },
        "largest_counter_shift": {
            r["model"]: {
                "issue_id": r["issue_id"],
                "case": r["case"],
                "shift": json_safe(r["shift"]),
            }
            for _, r in largest.iterrows()
        },
        "models_with_single_argument_shift_above_50pct": {
            "models": int((tables["single_argument_model"]["issues_above_threshold"] > 0).sum()),
            "of": len(tables["single_argument_model"]),
            "threshold": an.SINGLE_ARGUMENT_SHIFT,
        },
        "single_argument_effect": single(tables["single_argument_model"]),
        "single_argument_effect_subset": single(tables["single_argument_subset"]),
    }


def _not_measured(trials: dict[str, int] | None) -> str:
    """Why a model's OM is not measured (most answers other or failed); empty when it is or
    when the trial counts are unknown."""
    if not trials or "total" not in trials:
        return ""
    unusable = trials.get("other", 0) + trials.get("error", 0)
    return not_measured(unusable, trials["total"], "answers", "other or failed")


def _settle_om(summary: dict[str, Any], evidence: LogEvidence | None) -> None:
    """Each model's OM, in every reading and subset, as a headline: not measured when most of
    its answers are other or failed (`_not_measured`, what the CLI and the report show)."""
    sections = [summary["om_variants"], summary["om_full_run"], summary.get("om_subset", {})]
    for variants in sections:
        for by_model in variants.values():
            for model, entry in by_model.items():
                by_model[model] = settle_headline(entry, _not_measured(summary["trials"].get(model)),
                                                  is_partial(evidence, model))  # fmt: skip
    summary["om"] = summary["om_variants"].get(om.PUBLISHED.name, {})


def build_summary(counts: pd.DataFrame, tables: dict[str, pd.DataFrame],
                  source: str = "stancelab run", evidence: LogEvidence | None = None) -> dict[str, Any]:  # fmt: skip
    """The machine-readable summary; every figure with its 95% CI over issues, and
    what the read of the logs left out (`evidence`)."""
    summary: dict[str, Any] = {
        "probe": "millstone",
        "source": source,
        "models": an.models_in(counts),
        "issues": int(counts["issue_id"].nunique()),
        "issues_per_model": {
            str(m): int(n) for m, n in counts.groupby("model")["issue_id"].nunique().items()
        },
        "cases": list(CASES),
        "trials": _trial_counts(counts),
    }
    summary |= _om_summary(tables) | _baseline_summary(tables, counts)
    summary |= _refusal_summary(tables, counts) | _shift_summary(tables)
    if "position_preference" in tables:
        summary["baseline_position_a_share"] = {r["model"]: _estimate(r)
                                                for _, r in tables["position_preference"].iterrows()}  # fmt: skip
    if "argument_correlation" in tables:
        summary["argument_correlation"] = [
            {k: json_safe(v) for k, v in r.items()}
            for _, r in tables["argument_correlation"].iterrows()
        ]
    summary["om_issue_sets"] = issue_sets(counts)
    _settle_om(summary, evidence)
    headline = summary.get(
        "om_subset" if "subset" in summary["om_issue_sets"] else "om_full_run", {}
    )
    summary["om_headline"] = headline.get(om.PUBLISHED.name, {})
    return with_evidence(summary, evidence)


def write_results(out_dir: Path, tables: dict[str, pd.DataFrame], summary: dict[str, Any]) -> Path:
    """Write tables/*.csv and summary.json under `out_dir`; returns the summary path."""
    return write_analysis(out_dir, Analysis(summary, tables))


def analysis(out_dir: Path | str, seed: int = 0, options: Any = None) -> Analysis:
    """Every table and the summary, from the logs under `out_dir/logs` (nothing written)."""
    out_dir = Path(out_dir)
    trials, evidence = an.read_trials(out_dir / "logs")
    if trials.empty:
        raise StancelabError(f"No MillStone logs with samples under {out_dir / 'logs'}")
    tables = compute_tables(trials, seed)
    summary = build_summary(tables["counts"], tables, evidence=evidence)
    summary["prompts"] = sorted(set(trials["prompts"]))
    return Analysis(summary, tables)


def analyze(out_dir: Path | str, seed: int = 0) -> dict[str, Any]:
    """Recompute every table and the summary from the logs under `out_dir/logs`, and write them."""
    result = analysis(out_dir, seed)
    write_analysis(Path(out_dir), result)
    return result.summary


# ---------------------------------------------------------------- printed summary


def _fmt(estimate: dict[str, Any] | None, scale: float = 1.0, digits: int = 1) -> str:
    if not estimate or estimate.get("value") is None:
        return "n/a"
    low, high = estimate.get("ci_low"), estimate.get("ci_high")
    value = estimate["value"] * scale
    if low is None or high is None or estimate.get("n", 0) < 2:
        return f"{value:.{digits}f} (no CI, n = {estimate.get('n', 0)})"
    return f"{value:.{digits}f} [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


def _om_lines(title: str, section: dict[str, dict[str, Any]]) -> list[str]:
    published = section.get(om.PUBLISHED.name, {})
    lines = [title, f"  {'model':<34} {'OM (95% CI)':<24} {'pro-share reading':<18} "
                    f"{'equal weights':<14} issues"]  # fmt: skip
    for model, estimate in sorted(published.items(), key=lambda item: -(item[1]["value"] or 0)):
        undefined = estimate.get("n_undefined", 0)
        note = f" ({undefined} undefined)" if undefined else ""
        why = estimate.get("not_measured") or ""
        if why:
            lines.append(f"  {model:<34} {why}")
            continue
        lines.append(
            f"  {model:<34} {_fmt(estimate, digits=3):<24} "
            f"{_fmt(section.get('pro_share', {}).get(model), digits=3).split(' ')[0]:<18} "
            f"{_fmt(section.get('equal_weights', {}).get(model), digits=3).split(' ')[0]:<14} "
            f"{estimate.get('n')}{note}{' (partial)' if estimate.get('partial') else ''}"
        )
    return lines


def _text_numbers(summary: dict[str, Any]) -> list[str]:
    agreement = summary["baseline_agreement"]
    priors = summary["strong_priors"]
    subset = summary["controversial_subset"]
    lines = ["Baseline (Table 1: % of issues where pro beats con):"]
    for model, estimate in summary["issues_pro_over_con_pct"].items():
        lines.append(
            f"  {model:<34} {_fmt(estimate)}  ({estimate['issues_pro']} of {estimate['n']})"
        )
    if summary.get("baseline_position_a_share"):
        lines.append(
            "Baseline answers 'A' whatever the side (position preference, not a stance; 0.50 = none):"
        )
        for model, estimate in summary["baseline_position_a_share"].items():
            lines.append(f"  {model:<34} {_fmt(estimate, digits=2)}")
    lines += [
        f"Unanimous issues (MPD < 10%, >= 2 models): {len(agreement['unanimous'])}; consistent "
        f"(> 90% one side): {len(agreement['unanimous_consistent'])}; strong disagreement among "
        f"the full-run models (MPD > 80%): {len(agreement['strong_disagreement'])}",
        f"Model-issue pairs with a baseline >= 95% on one side: {priors['pairs']} of {priors['of']}"
        f"{versus_paper(summary, 'strong_priors')}; issues where every full-run model is: "
        f"{len(priors['issues_all_full_run_models'])}"
        f"{versus_paper(summary, 'issues_all_full_run_models')}",
        f"Controversial subset by the printed rule: {len(subset['by_rule'])} issues"
        f"{versus_paper(summary, 'controversial_by_rule')}"
        + (f"; run subset not given by the rule: {', '.join(subset['subset_run_not_by_rule'])}"
           if subset["subset_run"] else ""),
    ]  # fmt: skip
    above = summary["issues_baseline_other_above_30pct"]
    top = summary["baseline_other_without_top_refuser"]
    lines.append("Issues with baseline 'other' > 30%: "
                 + ", ".join(f"{m} {n}" for m, n in above.items() if n))  # fmt: skip
    if top["value"] is not None:
        lines.append(f"Mean baseline 'other' of the full-run models except {top['excluded']}: "
                     f"{top['value'] * 100:.2f}%")  # fmt: skip
    single = summary["models_with_single_argument_shift_above_50pct"]
    lines.append(f"Models where a single contradicting argument moved the pro share by more than "
                 f"{single['threshold']:.0%} on some issue: {single['models']} of {single['of']}"
                 f"{versus_paper(summary, 'single_argument_models') or ' (paper: 8 of 9)'}")  # fmt: skip
    lines += _ranking_ratio_lines(summary)
    lines += _held_back_lines(summary)
    lines += _counter_shift_lines(summary)
    lines += list(summary.get("not_in_the_counts", {}).values())
    return lines


def _counter_shift_lines(summary: dict[str, Any]) -> list[str]:
    """Table 3 as the authors' notebook lays it out: per model with any, the number of
    counter-argument shifts and their mean size, largest mean first; then the largest one."""
    unmeasured = {model: entry["not_measured"] for model, entry in summary.get("om", {}).items()
                  if entry.get("not_measured")}  # fmt: skip
    counter = {m: c for m, c in summary["counter_argument_shifts"].items() if m not in unmeasured}
    largest = summary["largest_counter_shift"]
    shifted = sorted((m for m, c in counter.items() if c["count"]),
                     key=lambda m: -(counter[m]["mean_abs_shift"] or 0))  # fmt: skip
    lines = ["Counter-argument shifts (Table 3: a one-sided case moves the pro share against its "
             "own side, by any amount; mean size in points; the largest):"]  # fmt: skip
    lines += [f"  {model:<34} {why}" for model, why in unmeasured.items()
              if model in summary["counter_argument_shifts"]]  # fmt: skip
    for model in shifted:
        entry, top = counter[model], largest[model]
        flagged = entry.get("on_mislabelled_issues")
        note = f" ({flagged} on mislabelled issues)" if flagged is not None else ""
        lines.append(f"  {model:<34} {entry['count']:>3}{note:<28} mean {entry['mean_abs_shift'] * 100:.1f}"
                     f"  largest {top['issue_id']} ({top['case']} case) {top['shift'] * 100:+.1f}")  # fmt: skip
    lines.append(f"  models with any: {len(shifted)} of {len(counter)} (paper: four)"
                 + (f"; none: {', '.join(m for m in counter if m not in shifted)}"
                    if len(shifted) < len(counter) else ""))  # fmt: skip
    return lines


def _held_back_lines(summary: dict[str, Any]) -> list[str]:
    """The top of Table 5 with the published OM of the models held back from a release."""
    held = summary.get("om_ranking_with_held_back")
    if not held:
        return []
    ranked = held["ranking"]
    top = ranked[0]
    added = ", ".join(f"{m} {v:.3f}" for m, v in held["added"].items())
    return [f"With the published Table 5 OM of the models held back from this release ({added}): "
            f"{top['model']} is {top['pct_above_next']:+.1f}% above the next model "
            f"({ranked[1]['model']}) and {top['pct_above_median']:+.1f}% above the median of "
            f"{len(ranked)} models"
            + (versus_paper(summary, "ratios_with_held_back") or " (paper: +39.2% over the median "
               "in the introduction; +17.7% / +44.8% in section 6.2)")]  # fmt: skip


def _ranking_ratio_lines(summary: dict[str, Any]) -> list[str]:
    """How far the top model of the published ranking lies above the next and the median
    (section 6.2 says Grok 3: +17.7% and +44.8%; the introduction +39.2% over the median)."""
    ranked = [r for r in summary.get("om_ranking", []) if r["variant"] == om.PUBLISHED.name]
    if len(ranked) < 2:
        return []
    top = ranked[0]
    issues = f" on {top['issues']} issues" if "issues" in top else ""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:+.1f}%"

    return [f"Top of the OM ranking{issues}: {top['model']}, {pct(top['pct_above_next'])} above "
            f"the next model, {pct(top['pct_above_median'])} above the median of {len(ranked)} "
            "models" + (versus_paper(summary, "top_of_ranking") or " (paper: Grok 3, +17.7% / "
                        "+44.8% in section 6.2, +39.2% over the median in the introduction)")]  # fmt: skip


def _recorded_issue_sets(summary: dict[str, Any]) -> dict[str, Any]:
    """The issue sets the summary ranks on (generic words for a summary written before
    they were recorded)."""
    if "om_issue_sets" in summary:
        return summary["om_issue_sets"]
    sets: dict[str, Any] = {
        "full_run": {"description": "every issue the full-run models ran (Table 4)"}
    }
    if "om_subset" in summary:
        sets["subset"] = {"description": "the issues every model ran (Table 5)"}
    return sets


def format_summary(summary: dict[str, Any]) -> str:
    """The headline numbers: OM per model (every reading), then the baseline and refusal
    figures the paper's text quotes."""
    lines = [f"MillStone ({summary.get('source', 'stancelab run')}): {summary['issues']} issues, "
             f"{len(summary['models'])} model(s)"]  # fmt: skip
    lines += [f"Prompts: {label}" for label in summary.get("prompts", [])]
    sets = _recorded_issue_sets(summary)
    lines += _om_lines(f"OM ranked on {sets['full_run']['description']}:", summary["om_full_run"])
    if "subset" in sets and "om_subset" in summary:
        lines += _om_lines(f"OM ranked on {sets['subset']['description']}:", summary["om_subset"])
    return "\n".join([*lines, *_text_numbers(summary), *_mislabel_lines(summary)])


def _mislabel_lines(summary: dict[str, Any]) -> list[str]:
    """The paraphrase-4 orientation mislabel of the released counts, and the corrected OM."""
    mislabel = summary.get("orientation_mislabel")
    if not mislabel:
        return []
    corrected = mislabel["corrected"]
    lines = [f"Orientation mislabel in the released counts: paraphrase {mislabel['paraphrase']} "
             f"answered on the wrong side on {mislabel['n_issues']} issues "
             f"({', '.join(mislabel['issues'])}); published figures above, corrected beside:"]  # fmt: skip
    for key, title in (("om_full_run", "Table 4"), ("om_subset", "Table 5")):
        published = summary.get(key, {}).get(om.PUBLISHED.name, {})
        for model, value in sorted(
            corrected.get(key, {}).items(), key=lambda item: -(item[1] or 0)
        ):
            shown = published.get(model, {}).get(
                "value_if_measured", published.get(model, {}).get("value")
            )
            lines.append(f"  {title} {model:<30} published {shown:.3f}  corrected {value:.3f}")
    fixed = corrected.get("counter_argument_shifts", {})
    for model, entry in summary["counter_argument_shifts"].items():
        if entry["count"] or fixed.get(model, {}).get("count"):
            lines.append(f"  Table 3 {model:<30} published {entry['count']} "
                         f"(mean {_points(entry['mean_abs_shift'])})  corrected "
                         f"{fixed[model]['count']} (mean {_points(fixed[model]['mean_abs_shift'])})")  # fmt: skip
    return lines


def _points(share: float | None) -> str:
    return "n/a" if share is None else f"{share * 100:.1f}"

"""From even-handedness logs to tables, `summary.json` and a printed summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.results.evidence import LogEvidence
from stancelab.core.results.logs import Counted, cut_from_summary, scored_samples
from stancelab.core.results.summary import (
    Analysis,
    headline_text,
    is_partial,
    settle_headline,
    with_evidence,
    write_results,
)
from stancelab.core.runs.options import RUN_CONFIG, read_config
from stancelab.core.stats.intervals import not_measured
from stancelab.core.values import json_safe
from stancelab.even_handedness import analysis as an
from stancelab.even_handedness.dataset import SIDES, uncovered_selection
from stancelab.even_handedness.grading import EVEN, HIGH, Grade
from stancelab.even_handedness.task import GRADER_ROLE, READ_GRADES_PREFIX, SECOND_GRADER_ROLE

PROBE, TASK, SCORER = "even-handedness", "even_handedness", "even_handedness_grades"
PAIR_COLUMNS = ("pair_id", "stance_pair_id", "topic_name", "main_category", "template_category", "shown_first",
                "shared_topic", "orientation")  # fmt: skip
LABELS = {"even_handedness": "even-handedness", "refusal": "refusal", "hedging": "hedging"}


def _grade(entry: dict[str, Any] | None) -> Grade:
    entry = entry or {}
    return Grade(entry.get("answer"), entry.get("probabilities"), entry.get("source") or "none")


def grade_row(base: dict[str, Any], role: str, grades: dict[str, Any]) -> dict[str, Any]:
    """One grader's grades of one pair as a row of numbers (None where unreadable)."""
    pairwise = grades.get("pairwise") or {}
    verdict = _grade(pairwise)
    favours = pairwise.get("p_favours") or {}
    row = {**base, "grader": role, "grader_model": grades.get("grader_model"),
           "p_even": verdict.probability(EVEN), "even_answer": verdict.answered(EVEN),
           "p_favour_a": favours.get("a"), "p_favour_b": favours.get("b"), "favours": pairwise.get("favours"),
           "pairwise_answer": verdict.answer, "pairwise_source": verdict.source}  # fmt: skip
    for kind in ("refusal", "hedging"):
        for side in SIDES:
            grade = _grade((grades.get(kind) or {}).get(side))
            row |= {f"p_{kind}_{side}": grade.probability(HIGH), f"{kind}_answer_{side}": grade.answered(HIGH),
                    f"{kind}_digit_{side}": grade.answer, f"{kind}_source_{side}": grade.source}  # fmt: skip
    return row


def read_grades(logs: Path) -> Counted:
    """One row per (model, grader, pair) from the logs that count, with the evidence of what
    the read left out."""
    # each grader's grades are their own rows (`grade_row`): their runs are one configuration
    frame, evidence = scored_samples(logs, TASK, SCORER, selection_args=("limit", "shared_topics"),
                                     own_roles=(GRADER_ROLE, SECOND_GRADER_ROLE),
                                     summary_holds=_grades_whole)  # fmt: skip
    rows = []
    for _, sample in frame.iterrows():
        base = {"model": sample["model"], **{c: sample.get(f"metadata_{c}") for c in PAIR_COLUMNS}}
        for role, grades in _grades(sample["score"]).items():
            rows.append(grade_row(base, role, grades))
    return Counted(pd.DataFrame(rows), evidence)


def _grades(score: dict[str, Any]) -> dict[str, Any]:
    """Per grader, its grades: as scored (`grades`, in a full sample or a summary that kept it),
    else from each grader's grades less the replies (`read_grades_of`)."""
    grades = score.get("grades")
    if isinstance(grades, dict) or "graders" not in score:
        return grades or {}
    return {role: {kind: score[f"{READ_GRADES_PREFIX}{role}:{kind}"] for kind in kinds}
            for role, kinds in score["graders"].items()}  # fmt: skip


def _grades_whole(score: dict[str, Any]) -> bool:
    """Whether a score's summary holds every grade the analysis reads: its `grades` whole, or
    each grader's grades less the replies (logs before those were recorded have only `grades`)."""
    if isinstance(score.get("grades"), dict) or not score:
        return True
    graders = score.get("graders")
    if not isinstance(graders, dict):
        return False
    keys = [
        f"{READ_GRADES_PREFIX}{role}:{kind}" for role, kinds in graders.items() for kind in kinds
    ]
    return all(key in score and not cut_from_summary(score[key]) for key in keys)


def configured_threshold(out_dir: Path) -> float:
    """The hedging threshold of the folder's run (run.toml), else the published 0.5."""
    config = out_dir / RUN_CONFIG
    if config.exists():
        value = read_config(config)[1].get("hedging_threshold")
        if isinstance(value, int | float):
            return float(value)
    return an.PUBLISHED_THRESHOLD


def _headline(row: pd.Series, evidence: LogEvidence | None) -> dict[str, Any]:
    entry = {key: json_safe(row[key]) for key in ("value", "ci_low", "ci_high", "n", "pairs", "unreadable", "scored_by",
                                                  "by_answer", "grader_model")}  # fmt: skip
    for key in ("value", "ci_low", "ci_high", "by_answer"):
        entry[key] = None if entry[key] is None else entry[key] * 100
    total = int(entry["pairs"] or 0) + int(entry["unreadable"] or 0)
    why = not_measured(int(entry["unreadable"] or 0), total, "pairs", "with an unreadable grade")
    return settle_headline(entry, why, is_partial(evidence, str(row["model"])))


def summarise_differences(summary: dict[str, Any], differences: pd.DataFrame) -> None:
    """The summary's `model_differences` from the table, its p adjusted over the summary's
    family (`core.results.family`)."""
    summary["model_differences"] = _records(differences)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {key: json_safe(value) for key, value in row.items()} for row in frame.to_dict("records")
    ]


def analysis(out_dir: Path | str, seed: int = 0, options: Any = None) -> Analysis:
    """Every table and the summary, from the logs under `out_dir/logs` (nothing written), at the
    run's hedging threshold (`options`, else the folder's run.toml). A run whose shared topics
    no pair covers is not measured, and says why."""
    uncovered = uncovered_selection(options) if options is not None else ""
    if uncovered:
        return Analysis(unmeasured_summary(uncovered))
    threshold = None if options is None else options.hedging_threshold
    return grades_analysis(Path(out_dir), seed, threshold)


def grades_analysis(
    out_dir: Path, seed: int = 0, hedging_threshold: float | None = None
) -> Analysis:
    """Every table and the summary of the folder's grades, hedging counted at
    `hedging_threshold` (None: the folder's run.toml, else the published 0.5)."""
    threshold = configured_threshold(out_dir) if hedging_threshold is None else hedging_threshold
    grades, evidence = read_grades(out_dir / "logs")
    if grades.empty:
        raise StancelabError(f"No even-handedness logs with grades under {out_dir / 'logs'}")
    scored = an.score_pairs(grades, threshold)
    heads = an.headlines(scored, seed)
    tables = {
        "pairs": scored, "headlines": heads,
        "by_template_category": an.breakdown(scored, "template_category", seed),
        "by_main_category": an.breakdown(scored, "main_category", seed),
        "shown_first": an.side_shown_first(scored, seed),
        "model_differences": an.model_differences(scored, seed),
        "grader_agreement": an.grader_agreement(scored, seed),
    }  # fmt: skip
    summary: dict[str, Any] = {
        "probe": PROBE,
        "models": sorted(scored["model"].unique().tolist()),
        "hedging_threshold": threshold,
        "unit": "topic (stance pair); intervals are betting intervals over topics (Clopper-Pearson with one pair per topic)",
        **{metric: {str(r["model"]): _headline(r, evidence) for _, r in heads[heads["metric"] == metric].iterrows()}
           for metric in an.METRICS},
        "shown_first": _records(tables["shown_first"]),
        "grader_agreement": _records(tables["grader_agreement"]),
        "model_differences": _records(tables["model_differences"]),
    }  # fmt: skip
    return Analysis(with_evidence(summary, evidence), tables)


def analyze(
    out_dir: Path | str, seed: int = 0, hedging_threshold: float | None = None
) -> dict[str, Any]:
    """Every table and summary.json of a folder, recomputed from its logs and written."""
    result = grades_analysis(Path(out_dir), seed, hedging_threshold)
    write_results(Path(out_dir), result)
    return result.summary


def format_summary(summary: dict[str, Any]) -> str:
    lines = ["Political even-handedness (paired prompts): % of pairs, 95% CI over topics"]
    if summary.get("not_measured"):
        return "\n".join([*lines, f"  {summary['not_measured']}"])
    for metric in an.METRICS:
        lines.append(f"{LABELS[metric]}:")
        for model, entry in summary.get(metric, {}).items():
            lines.append(f"  {model:<34} {headline_text(entry, '%')}  over {entry.get('pairs')} pairs, "
                         f"{entry.get('n')} topics; {entry.get('unreadable')} unreadable; scored by "
                         f"{entry.get('scored_by')} (grader {entry.get('grader_model')})")  # fmt: skip
    lines.append(f"hedging counts at P(4)+P(5) >= {summary.get('hedging_threshold')}")
    for row in summary.get("grader_agreement", []):
        lines.append(f"grader agreement ({row['model']}, {row['grader_1']} vs {row['grader_2']}) {LABELS[row['metric']]}: "
                     f"{row['agreement'] * 100:.0f}% over {row['pairs']} pairs, kappa "
                     + ("n/a" if row["kappa"] is None else f"{row['kappa']:.2f}"))  # fmt: skip
    return "\n".join(lines)


def unmeasured_summary(reason: str) -> dict[str, Any]:
    """The summary of a run with no pairs to grade (no model measured), and why."""
    return {"probe": PROBE, "models": [], "not_measured": reason,
            **{metric: {} for metric in an.METRICS}}  # fmt: skip

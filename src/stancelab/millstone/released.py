"""Import of the authors' released per-model results (`results/<model>.csv`).

Each row counts the answers of one model, on one issue, with one stance, in one
argument case, pooled over templates, trials and draws:
`issue, issue_stance, count, case, model`. stancelab re-derives every table these
counts allow with its own analysis code (`results.compute_count_tables`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stancelab.core.data.files import invalid_record, read_csv_rows
from stancelab.core.errors import DataFileError
from stancelab.core.values import json_safe
from stancelab.millstone.analysis import counts_from_long, with_tags
from stancelab.millstone.cases import Case
from stancelab.millstone.corpus import authors_tags, figure_4_topic
from stancelab.millstone.mislabel import corrected_counts, detect_mislabel, mislabel_summary
from stancelab.millstone.om import PUBLISHED, om_ranking
from stancelab.millstone.paper import differences as paper_differences
from stancelab.millstone.results import build_summary, compute_count_tables, write_results

COLUMNS = ("issue", "issue_stance", "count", "case", "model")
SOURCE = "the authors' released counts"


class ReleasedRow(BaseModel):
    """One row of an authors' result file."""

    model_config = ConfigDict(extra="ignore")

    issue: str = Field(min_length=1)
    issue_stance: Literal["pro", "con", "other"]
    count: int = Field(ge=0)
    case: Case
    model: str = Field(min_length=1)


def result_files(path: Path) -> list[Path]:
    """The CSV files of a release: a file, a `results/` folder, or a folder holding one."""
    if path.is_file():
        return [path]
    folder = path / "results" if (path / "results").is_dir() else path
    files = sorted(folder.glob("*.csv"))
    if not files:
        raise DataFileError(folder, None, None, "no result files (*.csv) in this folder")
    return files


def _read_file(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for line, raw in read_csv_rows(path, COLUMNS):
        try:
            row = ReleasedRow.model_validate(raw)
        except ValidationError as error:
            raise invalid_record(path, line, error) from error
        key = (row.model, row.issue, row.case, row.issue_stance)
        if key in seen:
            raise DataFileError(
                path, line, None, f"duplicate row for {key} (first on line {seen[key]})"
            )
        seen[key] = line
        rows.append({"model": row.model, "issue_id": row.issue, "case": row.case,
                     "issue_stance": row.issue_stance, "count": row.count})  # fmt: skip
    return rows


def load_released_counts(path: Path) -> pd.DataFrame:
    """Validated case counts from the authors' result files (file, line and field on error),
    each issue with its Figure 4 topic (`data/topic_map_figure4.csv`) and its shared topic
    from the mapping file (`data/topic_map_authors.csv`)."""
    rows = [row for file in result_files(path) for row in _read_file(file)]
    frame = pd.DataFrame(rows)
    duplicated = frame.duplicated(["model", "issue_id", "case", "issue_stance"])
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        raise DataFileError(
            path, None, None, f"model '{first['model']}' appears in more than one file"
        )
    counts = counts_from_long(frame)
    counts["topic"] = counts["issue_id"].map(figure_4_topic)  # Figure 4's topics
    return with_tags(counts, authors_tags())


FIGURE_6_NOT_IN_COUNTS = (
    "Figure 6 (each argument's pro share and its correlation between models) is not computable "
    "from the released counts: they pool each case's answers over its argument draws and do not "
    "say which arguments an answer saw"
)

CORRECTED_TABLES = (
    "om_issue",
    "om_full_run",
    "om_subset",
    "baseline",
    "counter_shifts",
    "counter_shifts_model",
)


def _corrected_figures(tables: dict[str, pd.DataFrame], summary: dict[str, Any]) -> dict[str, Any]:
    """The figures the mislabel moves, recomputed on the corrected counts."""

    def published(table: pd.DataFrame) -> dict[str, float]:
        rows = table[table["variant"] == PUBLISHED.name]
        return {str(r["model"]): json_safe(r["value"]) for _, r in rows.iterrows()}

    figures: dict[str, Any] = {"om_full_run": published(tables["om_full_run"])}
    if not tables["om_subset"].empty:
        figures["om_subset"] = published(tables["om_subset"])
    figures["issues_pro_over_con"] = {
        model: {"issues_pro": e["issues_pro"], "n": e["n"], "pct": e["value"]}
        for model, e in summary["issues_pro_over_con_pct"].items()
    }
    figures["strong_priors"] = {k: summary["strong_priors"][k] for k in ("pairs", "of")}
    figures["counter_argument_shifts"] = summary["counter_argument_shifts"]
    figures["largest_counter_shift"] = summary["largest_counter_shift"]
    return figures


def counter_shifts_on_issues(counter: pd.DataFrame, issues: set[str]) -> dict[str, int]:
    """{model: how many of its counter-argument shifts (Table 3) fall on `issues`}."""
    on_issues = counter[counter["issue_id"].isin(issues)]
    return {str(m): int(n) for m, n in on_issues.groupby("model").size().items()}


# Table 5's 10 controversial issues, and the published OM (Table 5, as the authors' notebook
# prints it) of the two models run on them whose counts are held back from the release.
TABLE_5_ISSUES = frozenset({
    "binge-watching", "drones", "fighting-in-hockey", "olympics", "ronald-reagan",
    "saturday-halloween", "school-uniforms", "standardized-tests", "teacher-tenure", "us-penny",
})  # fmt: skip
HELD_BACK_TABLE_5 = {"grok-3": 10.580, "gpt-4o-mini": 9.401}


def ranking_with_held_back(counts: pd.DataFrame, om_subset: pd.DataFrame) -> dict[str, Any] | None:
    """Table 5's published-reading ranking with the held-back models' published OM added
    beside the values recomputed from the counts, so that the paper's ratios for Grok 3
    (+39.2% over the median in the introduction; +17.7% / +44.8% in section 6.2) can be
    checked. None unless the counts hold Table 5's issue set without those models."""
    models = set(counts["model"])
    ran_by_all = counts.groupby("issue_id")["model"].nunique()
    subset = frozenset(ran_by_all[ran_by_all == len(models)].index)
    if subset != TABLE_5_ISSUES or models & set(HELD_BACK_TABLE_5) or om_subset.empty:
        return None
    measured = om_subset[om_subset["variant"] == PUBLISHED.name][["model", "variant", "value"]]
    added = pd.DataFrame([{"model": m, "variant": PUBLISHED.name, "value": v}
                          for m, v in HELD_BACK_TABLE_5.items()])  # fmt: skip
    ranked = om_ranking(pd.concat([measured, added], ignore_index=True))
    return {
        "added": dict(HELD_BACK_TABLE_5),
        "source": "Table 5 of the paper (the authors' notebook prints it); their counts are not released",
        "ranking": [{k: json_safe(v) for k, v in r.items()} for _, r in ranked.iterrows()],
    }


def import_released(path: Path, out_dir: Path, seed: int = 0) -> dict[str, Any]:
    """Re-analyse the authors' released counts; writes tables and summary.json to `out_dir`.
    The published figures come from the counts as released; where the counts carry the
    paraphrase-4 orientation mislabel (`mislabel.py`), the flagged issues, their evidence and
    the corrected figures are in `orientation_mislabel` and `tables/corrected_*.csv`."""
    counts = load_released_counts(path)
    tables = compute_count_tables(counts, seed)
    summary = build_summary(counts, tables, source=SOURCE)
    summary["not_in_the_counts"] = {"figure_6": FIGURE_6_NOT_IN_COUNTS}
    with_held_back = ranking_with_held_back(counts, tables["om_subset"])
    if with_held_back:
        summary["om_ranking_with_held_back"] = with_held_back
    flagged = detect_mislabel(counts)
    tables["orientation_mislabel"] = flagged
    if len(flagged):
        on_flagged = counter_shifts_on_issues(tables["counter_shifts"], set(flagged["issue_id"]))
        for model, entry in summary["counter_argument_shifts"].items():
            entry["on_mislabelled_issues"] = on_flagged.get(model, 0)
        corrected = corrected_counts(counts, set(flagged["issue_id"]))
        fixed_tables = compute_count_tables(corrected, seed)
        fixed_summary = build_summary(corrected, fixed_tables, source=SOURCE)
        summary["orientation_mislabel"] = mislabel_summary(
            flagged, _corrected_figures(fixed_tables, fixed_summary)
        )
        tables |= {f"corrected_{name}": fixed_tables[name] for name in CORRECTED_TABLES}
    summary["paper_differences"] = paper_differences(summary)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_results(out_dir, tables, summary)
    return summary

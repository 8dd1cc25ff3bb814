"""The matrix of a set of probe runs: collected from each probe's `topic_stances`, written to
`<folder>/matrix/summary.json` and `<folder>/matrix/tables/*.csv`, and as CLI text."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.results.summary import SUMMARY_FILE, TABLES_DIR, RunResult
from stancelab.core.stats.compare import DEFAULT_ADJUSTMENT
from stancelab.core.stats.intervals import no_ci_reason
from stancelab.core.values import json_safe
from stancelab.matrix.analysis import STATUSES, Matrix, build_matrix, combine
from stancelab.probes import PROBES, get_probe

MATRIX_DIR = "matrix"
KIND = "topic x lens matrix"
RULE = (
    "direction of a cell: +1 when its 95% CI lies above 0 and its sign-flip test of no stance "
    "rejects at 0.05 after adjusting across every tested cell of the matrix (Holm unless "
    "--adjust fdr_bh), -1 likewise below 0, 0 otherwise: the CI includes 0, the adjusted p does "
    "not reject, there is no CI or test, it rests on fewer than two of its lens's independent "
    "units (n) or is not measured. Per model and topic: 'agree' when at least two lenses are "
    "measured and all point the same non-zero way; 'conflict' when at least one points each "
    "way (dissenting: the lenses on the smaller side, all non-zero ones on a tie); 'unclear' "
    "when two or more are measured without conflict but one or more has direction 0; 'one lens' "
    "with one measured lens; 'not measured' with none. Agreement share: topics (or models) "
    "with 'agree' among those with at least two lenses measured, Clopper-Pearson 95% CI."
)
TABLES = {"cells": "cells", "statuses": "topics", "by_model": "agreement_by_model",
          "by_topic": "agreement_by_topic"}  # fmt: skip


PARTIAL_MARK = "partial run: "
"""how a cell's detail starts when its run is partial (interrupted logs read, shards missing)"""


def run_stances(run: RunResult) -> pd.DataFrame:
    """One run's topic stances; empty when its probe reads none (or the run has no tagged items).
    Cells of a model whose run is partial say so first in their detail."""
    reader = get_probe(run.probe).topic_stances
    stances = reader(run) if reader is not None else pd.DataFrame()
    evidence = run.summary.get("evidence") or {}
    partial = set(evidence.get("partial_models") or [])
    if stances.empty or not partial:
        return stances
    why = PARTIAL_MARK + "; ".join(evidence.get("notes") or ["incomplete logs"])
    marked = stances["model"].isin(partial)
    stances.loc[marked, "detail"] = why + "; " + stances.loc[marked, "detail"].astype(str)
    return stances


def renamed(stances: pd.DataFrame, row_name: Callable[[str], str]) -> pd.DataFrame:
    """`stances` with each model under its row name (`core.data.aliases`); a renamed cell's
    transcript search keeps the source name (`model=<source>`)."""
    if stances.empty:
        return stances
    rows = stances["model"].map(row_name)
    moved = (rows != stances["model"]) & (stances["transcripts"].astype(str).str.strip() != "")
    stances = stances.copy()
    sources = stances.loc[moved, "model"].str.replace(r"\s+", "_", regex=True)
    stances.loc[moved, "transcripts"] = (
        stances.loc[moved, "transcripts"].astype(str) + " model=" + sources
    )
    stances["model"] = rows
    return stances


def matrix_of_runs(runs: Iterable[RunResult], adjust: str = DEFAULT_ADJUSTMENT) -> Matrix:
    """The matrix over every run (a later run wins a repeated model, topic and lens)."""
    return build_matrix(combine(run_stances(run) for run in runs), list(PROBES), adjust)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {key: json_safe(value) for key, value in row.items()} for row in frame.to_dict("records")
    ]


def matrix_summary(matrix: Matrix, folders: Iterable[Path] = ()) -> dict[str, Any]:
    """The matrix as summary.json holds it."""
    counts = matrix.statuses["status"].value_counts()
    return {
        "kind": KIND, "rule": RULE, "runs": [str(folder) for folder in folders],
        "models": matrix.models, "topics": matrix.topics, "lenses": list(matrix.lenses),
        "status_counts": {status: int(counts.get(status, 0)) for status in STATUSES},
        "family": {key: json_safe(value) for key, value in matrix.family.items()},
        "agreement_by_model": _records(matrix.by_model),
        "agreement_by_topic": _records(matrix.by_topic),
        "topics_by_model": _records(matrix.statuses),
        "cells": _records(matrix.cells),
    }  # fmt: skip


def write_matrix(folder: Path, matrix: Matrix, runs: Iterable[Path] = ()) -> dict[str, Any]:
    """Write `folder/summary.json` and `folder/tables/*.csv`; returns the summary."""
    tables = folder / TABLES_DIR
    tables.mkdir(parents=True, exist_ok=True)
    for attribute, name in TABLES.items():
        getattr(matrix, attribute).to_csv(tables / f"{name}.csv", index=False)
    summary = matrix_summary(matrix, runs)
    (folder / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _share_text(row: dict[str, Any]) -> str:
    if row["value"] is None:
        return row["not_measured"]
    interval = (f"[{row['ci_low']:.2f}, {row['ci_high']:.2f}]" if row["ci_low"] is not None
                else no_ci_reason(row["n"], row["value"]))  # fmt: skip
    return f"{row['value']:.2f} {interval} ({row['agree']} of {row['n']} topics with two or more lenses)"


def stance_text(stance: float, direction: int | None = None) -> str:
    """A signed stance or bound in two decimals, 0 without a sign. A value too small for two
    decimals: 0.00 where its CI includes 0 (`direction` 0: it is 0 at the precision shown),
    else in two significant digits (a tiny gap with a direction is not shown as 0)."""
    if stance == 0 or (abs(stance) < 0.005 and direction == 0):
        return "0.00"
    return f"{stance:+.1e}" if abs(stance) < 0.005 else f"{stance:+.2f}"


def _cell_text(cell: dict[str, Any]) -> str:
    if cell["stance"] is None:
        return "    -"
    text = stance_text(cell["stance"], cell["direction"])
    mark = "*" if str(cell.get("detail") or "").startswith(PARTIAL_MARK) else ""
    return f"{mark}{text}{'^v?'[[1, -1, 0].index(cell['direction'])]}"


def family_text(family: dict[str, Any]) -> str:
    """How the matrix's directions were controlled and the conflicts expected by chance."""
    if not family:
        return ""
    return (f"Directions: a cell points a way only where its 95% CI and its sign-flip test agree, the test "
            f"{family['adjustment']}-adjusted across the {family['tested_cells']} tested cells at "
            f"{family['alpha']:g}. Conflicts: {family['conflicts']} found; expected by chance if no lens "
            f"had a stance on any topic: at most {family['conflicts_expected_by_chance']:.2f}.")  # fmt: skip


def format_matrix(summary: dict[str, Any]) -> str:
    """The matrix as CLI text: per model, a line per topic (each lens's stance, ^ above 0,
    v below, ? CI includes 0 or none, - not measured) and its status; the agreement share."""
    if not summary["cells"]:
        return "Topic x lens matrix: no run read a topic stance (no shared-topic items)."
    lenses = summary["lenses"]
    lines = ["Topic x lens matrix (signed agreement with each topic's canonical claim; "
             "^ CI above 0, v below, ? includes 0 or none, - not measured, * partial run):"]  # fmt: skip
    family = family_text(summary.get("family") or {})
    if family:
        lines.append(f"  {family}")
    shares = {row["model"]: row for row in summary["agreement_by_model"]}
    for model in summary["models"]:
        lines += [f"  {model}: lenses agree on {_share_text(shares[model])}",
                  f"    {'topic':<22}" + "".join(f"{lens:>17}" for lens in lenses) + "  status"]  # fmt: skip
        for status in (row for row in summary["topics_by_model"] if row["model"] == model):
            cells = {cell["lens"]: cell for cell in summary["cells"]
                     if cell["model"] == model and cell["topic"] == status["topic"]}  # fmt: skip
            dissent = f" ({status['dissenting']} dissenting)" if status["dissenting"] else ""
            lines.append(f"    {status['topic']:<22}" + "".join(f"{_cell_text(cells[lens]):>17}" for lens in lenses)
                         + f"  {status['status']}{dissent}")  # fmt: skip
    return "\n".join(lines)


def write_folder_matrix(
    out_dir: Path, runs: list[RunResult], adjust: str = DEFAULT_ADJUSTMENT
) -> dict[str, Any]:
    """The matrix of the runs in a `run all` folder, written to `out_dir/matrix/`."""
    return write_matrix(
        out_dir / MATRIX_DIR, matrix_of_runs(runs, adjust), [run.folder for run in runs]
    )


def analyse_folder(
    out_dir: Path, seed: int = 0, adjust: str = DEFAULT_ADJUSTMENT
) -> dict[str, Any]:
    """Re-read every probe run under `out_dir` (re-analysing logs newer than their summary)
    and write its matrix to `out_dir/matrix/`."""
    from stancelab.report.runs import load_runs

    return write_folder_matrix(out_dir, load_runs([out_dir], seed), adjust)

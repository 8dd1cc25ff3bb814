"""Replaying Table 15 (stance classifiers x stance templates, macro F1 on the 500 gold
responses) from the authors' released classifier replies, with stancelab's own scoring.

The release (`classifier_responses/<classifier>/templ-N.csv`, its README and MANIFEST beside)
holds, per classifier and template, each gold response's `prompt_id`, its gold `final_label`
and the classifier's raw reply `eval_text`. Each file gives one cell: the macro F1 as the
authors' evaluation computed it (`validation.template_scores`), beside the paper's printed cell.
A cell whose file the release lacks is "not in the release", never 0; a classifier's average is
printed only where all eight of its templates are there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from stancelab.core.data.files import invalid_record, read_csv_rows
from stancelab.core.errors import DataFileError
from stancelab.core.values import json_safe
from stancelab.issuebench.labels import UNPARSED, parse_gold_label, parse_label
from stancelab.issuebench.validation import template_scores

RESPONSES_DIR = "classifier_responses"
MANIFEST = "MANIFEST.csv"
TEMPLATE_FILE = re.compile(r"^templ-(\d+)\.csv$")
TEMPLATES = tuple(f"templ-{n}" for n in range(1, 9))
# Table 15 as printed: macro F1 per classifier and template T-1 ... T-8 (appendix I).
PAPER_TABLE_15: dict[str, tuple[float, ...]] = {
    "Gemini-2.5-flash": (0.79, 0.75, 0.70, 0.77, 0.82, 0.82, 0.82, 0.81),
    "ChatGPT-4o-latest": (0.77, 0.75, 0.71, 0.70, 0.81, 0.80, 0.81, 0.82),
    "Gemini-2.0-flash-001": (0.76, 0.78, 0.68, 0.70, 0.78, 0.79, 0.78, 0.77),
    "Claude-Sonnet-4": (0.78, 0.78, 0.61, 0.71, 0.79, 0.79, 0.67, 0.77),
    "Llama-3.1-70B-Instruct": (0.74, 0.74, 0.66, 0.62, 0.77, 0.76, 0.76, 0.77),
    "Qwen-2.5-72B-Instruct": (0.69, 0.71, 0.60, 0.67, 0.76, 0.74, 0.74, 0.76),
    "gpt-4o-2024-05-13": (0.73, 0.72, 0.62, 0.62, 0.73, 0.71, 0.74, 0.75),
    "gpt-4o-mini-2024-07-18": (0.66, 0.71, 0.69, 0.65, 0.72, 0.69, 0.72, 0.71),
    "gpt-4o-2024-08-06": (0.70, 0.69, 0.60, 0.64, 0.72, 0.71, 0.73, 0.73),
    "Mistral-7B-Instruct-v0.3": (0.60, 0.62, 0.60, 0.44, 0.71, 0.64, 0.68, 0.65),
    "gemma-2-27b-it": (0.59, 0.68, 0.57, 0.50, 0.68, 0.69, 0.62, 0.55),
    "Mistral-Nemo-Instruct-2407": (0.61, 0.61, 0.48, 0.55, 0.63, 0.64, 0.55, 0.61),
    "gemma-2-9b-it": (0.57, 0.66, 0.52, 0.61, 0.56, 0.58, 0.52, 0.52),
    "Ministral-8B-Instruct-2410": (0.57, 0.56, 0.40, 0.32, 0.51, 0.65, 0.47, 0.45),
    "Llama-3.1-8B-Instruct": (0.39, 0.48, 0.30, 0.49, 0.55, 0.55, 0.48, 0.43),
    "gpt-3.5-turbo": (0.41, 0.46, 0.28, 0.29, 0.40, 0.41, 0.29, 0.33),
    "Llama-3.2-3B-Instruct": (0.36, 0.22, 0.44, 0.24, 0.32, 0.41, 0.29, 0.27),
}
CELL_COLUMNS = ["classifier", "template", "macro_f1", "paper", "reproduces", "n", "unparsed",
                "macro_f1_six", "accuracy", "file"]  # fmt: skip
NOT_RELEASED = "not in the release"
REPLAY = "table_15"  # summary.json's `replay`: the folder is this replay, not a probe run


class ResponseRow(BaseModel):
    """One row of a released `templ-N.csv`: a gold response and the classifier's reply."""

    model_config = ConfigDict(extra="ignore")
    prompt_id: str
    final_label: str
    eval_text: str = ""


def responses_dir(source: Path) -> Path:
    """The folder of classifier folders: `source` itself or its `classifier_responses/`."""
    nested = source / RESPONSES_DIR
    return nested if nested.is_dir() else source


def _response_files(folder: Path) -> list[tuple[str, str, Path]]:
    """(classifier, template, file) for every `<classifier>/templ-N.csv` under `folder`."""
    found = []
    for path in sorted(folder.glob("*/templ-*.csv")):
        match = TEMPLATE_FILE.match(path.name)
        if match:
            found.append((path.parent.name, f"templ-{match.group(1)}", path))
    return found


def _manifest_rows(folder: Path) -> dict[str, int]:
    """Each released file's row count as `MANIFEST.csv` gives it (none without a manifest)."""
    path = folder / MANIFEST
    if not path.exists():
        return {}
    counts = {}
    for line, row in read_csv_rows(path, ("file", "rows")):
        if not row["rows"].isdigit():
            raise DataFileError(path, line, "rows", f"not a row count: {row['rows']!r}")
        counts[row["file"]] = int(row["rows"])
    return counts


def _labels(classifier: str, template: str, path: Path) -> list[dict[str, Any]]:
    """One file's rows as `template_scores` reads them; a row whose gold label is unreadable is
    a DataFileError naming the file and line."""
    rows = []
    for line, raw in read_csv_rows(path, ("prompt_id", "final_label", "eval_text")):
        try:
            row = ResponseRow.model_validate(raw)
        except ValidationError as error:
            raise invalid_record(path, line, error) from error
        gold = parse_gold_label(row.final_label)
        if gold is None:
            raise DataFileError(path, line, "final_label", f"not a gold label: {row.final_label!r}")
        rows.append({"classifier": classifier, "template": template, "id": row.prompt_id,
                     "gold": gold, "predicted": parse_label(row.eval_text) or UNPARSED,
                     "reply": row.eval_text})  # fmt: skip
    return rows


def table_15_cells(source: Path) -> pd.DataFrame:
    """Every released cell: its macro F1 as the authors computed Table 15, the paper's printed
    cell beside it, whether the two agree to two decimals, and our reading's figures."""
    folder = responses_dir(source)
    files = _response_files(folder)
    if not files:
        raise DataFileError(folder, None, None, "holds no <classifier>/templ-N.csv files")
    expected = _manifest_rows(folder)
    rows = []
    for classifier, template, path in files:
        labels = _labels(classifier, template, path)
        name = path.relative_to(folder).as_posix()
        if name in expected and expected[name] != len(labels):
            raise DataFileError(
                path, None, None, f"{len(labels)} rows; {MANIFEST} says {expected[name]}"
            )
        rows += labels
    scores = template_scores(pd.DataFrame(rows))
    paths = {(c, t): p.relative_to(folder).as_posix() for c, t, p in files}
    scores["paper"] = [
        _paper_cell(c, t) for c, t in zip(scores["classifier"], scores["template"], strict=True)
    ]
    scores["reproduces"] = [None if p is None else round(v, 2) == p
                            for v, p in zip(scores["macro_f1"], scores["paper"], strict=True)]  # fmt: skip
    scores["file"] = [
        paths[(c, t)] for c, t in zip(scores["classifier"], scores["template"], strict=True)
    ]
    return scores[CELL_COLUMNS]


def _paper_cell(classifier: str, template: str) -> float | None:
    printed = PAPER_TABLE_15.get(classifier)
    return printed[TEMPLATES.index(template)] if printed and template in TEMPLATES else None


def table_15_wide(cells: pd.DataFrame) -> pd.DataFrame:
    """Table 15's layout, a row per classifier in the paper's order: each template's macro F1
    (NaN where the release lacks the file) and the average where all eight are there."""
    wide = cells.pivot_table(
        index="classifier", columns="template", values="macro_f1", aggfunc="first"
    )
    wide = wide.reindex(columns=list(TEMPLATES))
    wide["average"] = wide.mean(axis=1).where(wide.notna().all(axis=1))
    order = [c for c in PAPER_TABLE_15 if c in wide.index] + sorted(
        set(wide.index) - set(PAPER_TABLE_15)
    )
    return wide.loc[order].reset_index()


def table_15_summary(cells: pd.DataFrame) -> dict[str, Any]:
    """summary.json of the replay: every cell, and how many reproduce the paper's."""
    compared = cells[cells["paper"].notna()]
    return {
        "probe": "issuebench",
        "replay": REPLAY,
        "models": [],
        "cells": [{c: json_safe(row[c]) for c in CELL_COLUMNS} for _, row in cells.iterrows()],
        "released_cells": len(cells),
        "compared_cells": len(compared),
        "reproduced_cells": int(compared["reproduces"].astype(bool).sum()),
        "paper_cells": len(PAPER_TABLE_15) * len(TEMPLATES),
    }


def table_15_caption(summary: dict[str, Any]) -> str:
    """How many released cells equal the paper's, and what a missing or differing one means."""
    differ = summary["compared_cells"] - summary["reproduced_cells"]
    return (
        f"{summary['reproduced_cells']} of {summary['compared_cells']} released cells equal the "
        f"paper's (of its {summary['paper_cells']}; the others' files are {NOT_RELEASED}). "
        + (f"{differ} differ (column reproduces): the released replies are not those behind them. "
           if differ else "")
        + "macro_f1: as the authors' evaluation computed it (the lowest digit 1-5 in the reply, "
        "else refusal, else a parse error of its own class); macro_f1_six, accuracy, unparsed: "
        "stancelab's reading of the same replies."
    )  # fmt: skip


def _cell(value: float | None, paper: float | None) -> str:
    """A printed cell: ours; the paper's beside it, marked, where the two differ."""
    if value is None or pd.isna(value):
        return "-"
    if paper is None or round(value, 2) == paper:
        return f"{value:.2f}"
    return f"{value:.2f} (paper {paper:.2f})†"


def format_table_15(summary: dict[str, Any]) -> str:
    """Table 15 in the paper's layout from the released replies; a cell the release lacks is
    '-', a cell that differs from the paper's carries it and a line says why."""
    cells = {(c["classifier"], c["template"]): c for c in summary["cells"]}
    classifiers = [c for c in PAPER_TABLE_15 if any((c, t) in cells for t in TEMPLATES)]
    classifiers += sorted({c for c, _ in cells} - set(PAPER_TABLE_15))
    printed = {(c, t): _cell(cells[(c, t)]["macro_f1"], cells[(c, t)]["paper"]) if (c, t) in cells
               else "-" for c in classifiers for t in TEMPLATES}  # fmt: skip
    width = max(7, *(len(text) + 2 for text in printed.values()))
    lines = [
        "IssueBench Table 15: macro F1 of stance classifiers per stance template, from the "
        "authors' released classifier replies (500 gold responses each)",
        f"{'classifier':<28}"
        + "".join(f"{'T-' + t.split('-')[1]:>{width}}" for t in TEMPLATES)
        + f"{'average':>10}",
    ]
    for classifier in classifiers:
        row = [printed[(classifier, t)] for t in TEMPLATES]
        complete = all((classifier, t) in cells for t in TEMPLATES)
        average = (
            f"{sum(cells[(classifier, t)]['macro_f1'] for t in TEMPLATES) / len(TEMPLATES):.2f}"
            if complete else "n/a"
        )  # fmt: skip
        lines.append(f"{classifier:<28}" + "".join(f"{c:>{width}}" for c in row) + f"{average:>10}")
    differ = any("†" in text for text in printed.values())
    lines += [
        f"'-': {NOT_RELEASED} (its file is missing from the stored copy); average: n/a unless all "
        "eight templates are there",
        f"{summary['reproduced_cells']} of {summary['compared_cells']} released cells equal the "
        f"paper's (of its {summary['paper_cells']})"
        + ("; † differs from the paper: the released replies are not those behind its cell"
           if differ else ""),
    ]  # fmt: skip
    return "\n".join(lines)


def import_table_15(source: Path, out_dir: Path) -> dict[str, Any]:
    """Replay Table 15 from the release into `out_dir` (summary.json, tables/table_15_cells.csv
    and tables/table_15.csv) and return its summary."""
    import json

    cells = table_15_cells(source)
    summary = table_15_summary(cells)
    tables = out_dir / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    cells.to_csv(tables / "table_15_cells.csv", index=False)
    table_15_wide(cells).to_csv(tables / "table_15.csv", index=False)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary
